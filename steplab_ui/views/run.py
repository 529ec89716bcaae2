"""/run's pieces: the inputs (files, a zip, a folder, pasted text), the explanation cached per input, and its
sections: the verdict, the table "your run | StepLab", why fields differ, the pictures, what the files show, the
setup StepLab put together, and the files read. Every number comes from `steplab.runfiles`."""

from __future__ import annotations

import hashlib
from typing import Any

import streamlit as st
from streamlit.errors import StreamlitAPIException

from steplab.i18n import fmt_float, fmt_int, t
from steplab.runfiles import limits
from steplab.runfiles.apart import explain_apart
from steplab.runfiles.explanation import Explanation
from steplab.runfiles.reconcile import Check
from steplab.runfiles.reconstruct import STEPLAB
from steplab.runfiles.sources import Source
from steplab.teaching.lessons import LessonError, load_lessons
from steplab.trainer.profiles import PROFILES
from steplab_ui.shell import layout
from steplab_ui.widgets import run_charts

SOURCE_KEYS = {"assumed": "assumed", "default": "default", "fits": "fits", "--trainer": "chosen",
               "inferred": "inferred", "streaming": "streaming", "dataset stage": "dataset_stage"}
"""StepLab's own ways of giving a value (`Source.key` when StepLab is the source) and their catalogue keys."""
RESULT = "_run_explanation"  # (the inputs' fingerprint, the Explanation)
UPLOAD_MB = limits.MAX_FILE_BYTES // 2**20
PASTE_CHARACTERS = 2_000_000
ACCEPTED = ["json", "jsonl", "log", "txt", "out", "err", "yaml", "yml", "zip", "csv", "parquet", "arrow"]
"""What a folder upload sends (weights and optimizer states stay on the user's disk); files and zips may be anything."""
AUTO = "auto"
SHOWN_STEPS = 3  # steps listed before "…"
ROW_CHECKS = ("epochs_logged", "learning_rates")
SETUP_SHOWN = ("num_samples", "per_device_train_batch_size", "gradient_accumulation_steps", "world_size",
               "num_train_epochs", "max_steps", "learning_rate", "lr_scheduler_type", "warmup_steps", "warmup_ratio",
               "logging_steps", "eval_strategy", "eval_steps", "save_steps", "trainer", "resumed_from_step")


# --------------------------------------------------------------------------- inputs


def caps_sentence(lang: str) -> str:
    return t(lang, "run.caps", files=fmt_int(limits.MAX_FILES), file_mb=UPLOAD_MB,
             total_mb=limits.MAX_TOTAL_BYTES // 2**20, lines=fmt_int(limits.MAX_LINES),
             names=fmt_int(limits.MAX_ENTRIES))


def inputs(lang: str) -> dict[str, Any]:
    """The input widgets; returns what they hold: uploads (name, bytes), pasted log, pasted YAML, release."""
    files_tab, folder_tab, paste_tab = st.tabs([t(lang, "run.tab.files"), t(lang, "run.tab.folder"),
                                                t(lang, "run.tab.paste")])
    with files_tab:
        files = st.file_uploader(t(lang, "run.upload.files"), accept_multiple_files=True, key="run_files",
                                 max_upload_size=UPLOAD_MB, help=t(lang, "run.upload.files_help"))
    with folder_tab:
        folder = st.file_uploader(t(lang, "run.upload.folder"), accept_multiple_files="directory", type=ACCEPTED,
                                  key="run_folder", max_upload_size=UPLOAD_MB, help=t(lang, "run.upload.folder_help"))
    with paste_tab:
        st.text_area(t(lang, "run.paste.log"), key="run_paste", height=180, max_chars=PASTE_CHARACTERS,
                     placeholder="***** Running training *****\n  Num examples = 1,600\n  …")
        st.text_area(t(lang, "run.paste.yaml"), key="run_yaml", height=120, max_chars=PASTE_CHARACTERS,
                     placeholder="per_device_train_batch_size: 4\ngradient_accumulation_steps: 8\n…")
    st.caption(caps_sentence(lang))
    releases = [AUTO, *(p for p, profile in PROFILES.items() if profile.framework == "transformers")]
    trainer = st.selectbox(t(lang, "run.release"), releases, key="run_trainer", help=t(lang, "run.release_help"),
                           format_func=lambda p: t(lang, "run.release_auto") if p == AUTO else
                           f"{p} (transformers {PROFILES[p].releases})")
    uploads = [(f.name, f.getvalue()) for f in [*(files or []), *(folder or [])]]
    return {"uploads": uploads, "paste": st.session_state.get("run_paste") or "",
            "yaml": st.session_state.get("run_yaml") or "", "trainer": None if trainer == AUTO else trainer}


def _fingerprint(given: dict[str, Any]) -> str:
    digest = hashlib.sha256()
    for name, data in given["uploads"]:
        digest.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    for key in ("paste", "yaml", "trainer"):
        digest.update(b"\1" + str(given[key]).encode())
    return digest.hexdigest()


def explanation(given: dict[str, Any]) -> Explanation | None:
    """The explanation of what the inputs hold, made once per distinct input (None when nothing was given)."""
    if not given["uploads"] and not given["paste"].strip() and not given["yaml"].strip():
        st.session_state.pop(RESULT, None)
        return None
    key = _fingerprint(given)
    cached = st.session_state.get(RESULT)
    if cached is not None and cached[0] == key:
        return cached[1]
    result = explain_apart(given)  # a large upload in a child at the lowest priority: the others' reruns go first
    st.session_state[RESULT] = (key, result)
    return result


# --------------------------------------------------------------------------- values as the table shows them


def source_text(source: Source, lang: str) -> str:
    """Where a value came from, in the reader's language where StepLab itself is the source (assumed, a default,
    the release that fits, inferred from the run, `--trainer`)."""
    if source.file == STEPLAB or (source.line is None and source.key in ("default", "dataset stage")):
        how = t(lang, f"run.source.{SOURCE_KEYS.get(source.key or '', 'other')}")
        return t(lang, "run.source.steplab", how=how) if source.file == STEPLAB else f"{source.file} ({how})"
    if source.key == "inferred":
        where = f"{source.file}:{source.line}" if source.line is not None else source.file
        return t(lang, "run.source.inferred_from", where=where)
    return str(source)


def steps_text(steps: list[int]) -> str:
    """`5, 10, 15, …, 150 (30)`: the first few steps, the last, and how many."""
    if not steps:
        return "—"
    if len(steps) <= SHOWN_STEPS + 1:
        return ", ".join(fmt_int(s) for s in steps)
    return ", ".join(fmt_int(s) for s in steps[:SHOWN_STEPS]) + f", …, {fmt_int(steps[-1])} ({fmt_int(len(steps))})"


def value_text(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list):
        return steps_text(value)
    if isinstance(value, int):
        return fmt_int(value)
    if isinstance(value, float):
        return fmt_float(value, 4) if abs(value) >= 1e-3 or value == 0 else f"{value:.3g}"
    return str(value)


def _cells(check: Check, lang: str) -> tuple[str, str]:
    if check.name in ROW_CHECKS:
        run = t(lang, "run.rows_logged", rows=fmt_int(check.run)) if check.run is not None else "—"
        ours = t(lang, "run.rows_agree", rows=fmt_int(check.steplab)) if check.steplab is not None else "—"
        return run, ours
    return value_text(check.run), value_text(check.steplab)


MARK = {True: "✔", False: "✗", None: "—"}
ROW_HEIGHT = 35  # st.dataframe's row height in pixels: a table drawn whole, without an inner scroll


def _plain_label(text: str) -> str:
    """A label for a table cell, which shows Markdown as typed: code spans without their backticks."""
    return text.replace("`", "")


def _height(rows: int) -> int:
    return (rows + 1) * ROW_HEIGHT + 3


# --------------------------------------------------------------------------- sections


def verdict(ex: Explanation, lang: str) -> None:
    """One line on top: all agree, how many differ and the first cause, or why nothing could be compared."""
    checks = [c for c in ex.reconciliation.checks if c.agree is not None]
    wrong = [c for c in checks if c.agree is False]
    failed = [f for f in ex.findings if f.code in FAILURE]
    if failed:
        st.error("  \n".join(f.message.get(lang) for f in failed), icon=":material/error:")
    if not ex.readable:
        st.warning(" ".join(problem.get(lang) for problem in ex.files.problems) or t(lang, "runfiles.nothing_readable"),
                   icon=":material/help:")
        unread = [r for r in ex.files.reports if not r.read]
        if unread:
            st.markdown("\n".join("- " + t(lang, "run.files.unread_line", path=r.path, why=r.note.get(lang) if r.note
                                             else t(lang, "run.files.not_read")) for r in unread))
    elif failed and ex.planning.planned is None:
        return
    elif ex.different_runs:
        st.warning(next(f.message.get(lang) for f in ex.findings if f.code == "different_runs"),
                   icon=":material/difference:")
    elif ex.planning.planned is None:
        reason = next((f.message.get(lang) for f in ex.findings if f.code == "not_planned"), "")
        st.warning(t(lang, "run.verdict.unplanned", reason=reason), icon=":material/help:")
    elif not wrong:
        st.success(t(lang, "run.verdict.agrees", count=len(checks)), icon=":material/check_circle:")
    else:
        first = ex.causes[0].message.get(lang) if ex.causes else t(lang, "run.verdict.no_cause")
        st.warning(t(lang, "run.verdict.differs", count=len(wrong), total=len(checks), cause=first),
                   icon=":material/difference:")


def table(ex: Explanation, lang: str) -> None:
    """Your run | StepLab | ✔ / ✗ | where the run's value was read."""
    if not ex.reconciliation.checks:
        return
    st.subheader(t(lang, "run.table.heading"))
    rows = []
    for check in ex.reconciliation.checks:
        run, ours = _cells(check, lang)
        rows.append({t(lang, "run.table.field"): _plain_label(t(lang, f"run.field.{check.name}")),
                     t(lang, "run.table.run"): run, t(lang, "run.table.steplab"): ours,
                     t(lang, "run.table.agree"): MARK[check.agree],
                     t(lang, "run.table.source"): "" if check.source is None else source_text(check.source, lang)})
    st.dataframe(rows, hide_index=True, width="stretch", height=_height(len(rows)), key="run_table")
    if any(check.agree is None for check in ex.reconciliation.checks):
        st.caption(t(lang, "run.table.not_compared"))
    notes = [(c, c.note) for c in ex.reconciliation.checks if c.note is not None]
    for check, note in notes:
        st.caption(t(lang, "run.table.note", field=t(lang, f"run.field.{check.name}"), note=note.get(lang)))


def _lesson_titles(lang: str) -> dict[str, str]:
    try:
        return {lesson.id: f"{lesson.number}. {lesson.title.get(lang)}" for lesson in load_lessons()}
    except LessonError:
        return {}


def _lesson_link(lesson: str, title: str, lang: str) -> None:
    label = t(lang, "run.lesson_link", title=title)
    try:
        st.page_link("app_pages/lessons.py", label=label, icon=":material/menu_book:", query_params={"lesson": lesson})
    except StreamlitAPIException:  # the page runs alone (no navigation): a plain link
        st.markdown(f"[{label}](lessons?lesson={lesson})")


def why(ex: Explanation, lang: str) -> None:
    """Each likely cause once, as a card naming the differing fields it reproduces (and those it could move),
    with its rule and lesson: causes that reproduce the run first."""
    cards = ex.cause_cards()
    if not cards:
        return
    st.subheader(t(lang, "run.why.heading"))
    titles = _lesson_titles(lang)
    for index, card in enumerate(cards):
        cause = card.cause
        with st.container(border=True, key=f"run_cause_{index}"):
            verified = t(lang, "run.why.reproduces" if card.fields else "run.why.possible")
            st.markdown(f"**{verified}** {cause.message.get(lang)}")
            if card.fields:
                st.markdown(t(lang, "run.why.explains", fields=_field_names(ex, card.fields, lang)))
            if card.possible:
                st.markdown(t(lang, "run.why.could_move", fields=_field_names(ex, card.possible, lang)))
            st.caption(f"{t(lang, 'run.why.rule')} {cause.rule.get(lang)}")
            _lesson_link(cause.lesson, titles.get(cause.lesson, cause.lesson), lang)


def _field_names(ex: Explanation, names: tuple[str, ...], lang: str) -> str:
    """The fields, each as the table names it with the run's and StepLab's values."""
    checks = ex.reconciliation.by_name()
    said = []
    for name in names:
        run, ours = _cells(checks[name], lang)
        said.append(t(lang, "run.why.field", field=t(lang, f"run.field.{name}"), run=run, steplab=ours))
    return t(lang, "run.why.separator").join(said)


PICTURES = "_run_pictures"  # (the inputs' fingerprint, language, presenter view, the pictures): built once each


def pictures(ex: Explanation, lang: str, presenter: bool) -> None:
    made_for = (st.session_state.get(RESULT, ("",))[0], lang, presenter)
    cached = st.session_state.get(PICTURES)
    if cached is not None and cached[:3] == made_for:
        found = cached[3]
    else:
        found = run_charts.pictures(ex, lang, presenter)
        st.session_state[PICTURES] = (*made_for, found)
    if not found:
        return
    st.subheader(t(lang, "run.pictures.heading"))
    for tab, picture in zip(st.tabs([p.title for p in found]), found, strict=True):
        with tab:
            layout.chart(picture.figure, f"run_chart_{picture.key}", picture.alt)
            st.caption(picture.alt)


FAILURE = ("failed", "failure_matched", "failure_matched_if", "failure_other_refusal", "failure_gap", "failure_unchecked",
           "failure_stopped")
QUIET = ("agrees", "differs", "not_planned", "different_runs", *FAILURE)  # said by the verdict already


def findings(ex: Explanation, lang: str) -> None:
    if not ex.readable:
        return  # the verdict named every file with why it was not read
    cause_codes = {cause.code for cause in ex.causes}
    shown = [f for f in ex.findings if f.code not in QUIET and not (f.code in cause_codes and f.message.key.startswith(
        "runfiles.cause."))]
    if not shown:
        return
    st.subheader(t(lang, "run.findings.heading"))
    for finding in shown:
        trouble = finding.code in ("file_problem", "file_unread", "conflict", "resume_finished")
        st.markdown(f"- {'⚠️ ' if trouble else ''}{finding.message.get(lang)}")


def setup(ex: Explanation, lang: str) -> None:
    """The setup StepLab planned with, each value with its source, and the values the files disagree on."""
    values = ex.setup_values()
    rows = [{t(lang, "run.setup.field"): name, t(lang, "run.setup.value"): value_text(found.value),
             t(lang, "run.setup.source"): source_text(found.source, lang)}
            for name in SETUP_SHOWN if (found := values.get(name)) is not None and found.source.key != "default"]
    with st.expander(t(lang, "run.setup.heading"), icon=":material/tune:"):
        st.dataframe(rows, hide_index=True, width="stretch", height=_height(len(rows)), key="run_setup")
        for name, seen in ex.setup.conflicts().items():
            said = " · ".join(f"`{value_text(f.value)}` ({source_text(f.source, lang)})" for f in seen)
            st.markdown(t(lang, "run.setup.conflict", field=name, values=said))
        if ex.planning.planned is not None:
            st.button(t(lang, "run.setup.use"), key="run_use_setup", on_click=_use_setup, args=(ex,),
                      icon=":material/input:", help=t(lang, "run.setup.use_help"))
    if st.session_state.pop("_run_setup_used", False):
        st.success(t(lang, "run.setup.used"), icon=":material/check_circle:")


def _use_setup(ex: Explanation) -> None:
    """Put the setup StepLab planned the run with into the shared controls (the sidebar, every page)."""
    from steplab_ui.shell import state

    state.apply_values(ex.planning.planned.plan.setup.to_dict())
    st.session_state["_run_setup_used"] = True


def files(ex: Explanation, lang: str) -> None:
    reports = ex.files.reports
    read = sum(1 for r in reports if r.read)
    with st.expander(t(lang, "run.files.heading", read=read, skipped=len(reports) - read), icon=":material/folder:"):
        st.dataframe([{t(lang, "run.files.path"): r.path,
                       t(lang, "run.files.kind"): _plain_label(t(lang, f"run.kind.{r.kind}")),
                       t(lang, "run.files.status"): t(lang, "run.files.read") if r.read else
                       _plain_label(r.note.get(lang) if r.note else t(lang, "run.files.not_read"))} for r in reports],
                     hide_index=True, width="stretch", height=_height(min(len(reports), 30)), key="run_files_table")
