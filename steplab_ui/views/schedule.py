"""The schedule page's parts: the scheduler and its arguments (controls that edit the shared setup), the
comparison overlays, the notes beside the chart, the plateau case and the export. Each draws one part; the
curve and its words come from `steplab.simulation.lr_curve`, the overlays from `lr_overlays`, the export from `lr_export`,
the arguments' edits from `steplab.trainer.schedule_arguments`, how each argument is edited from its schedule's entry
(`steplab.trainer.schedules.widget`)."""

from __future__ import annotations

import json
from functools import partial

import streamlit as st

from steplab.errors import SetupError, TrainerRefusal
from steplab.i18n import code, fmt_int, fmt_lr, t
from steplab.simulation import lr_curve, lr_export, lr_overlays
from steplab.trainer import schedule_arguments
from steplab.trainer.events import events
from steplab.trainer.plan import Plan, make_plan
from steplab.trainer.schedules import METRIC_DRIVEN, SCHEDULER_TYPES, Choice, scheduler_kwargs, widget
from steplab.trainer.setup import TrainingSetup
from steplab_ui.shell import layout, state
from steplab_ui.widgets import schedule_chart

NOTICE = "sched_notice"
OVERLAYS = 3


# ---- scheduler and its arguments: page controls that edit the shared setup -----------------------------------


def _apply(current: TrainingSetup, **changes) -> None:
    state.apply_values({**current.to_dict(), **changes})


def type_changed(current: TrainingSetup) -> None:
    name = st.session_state["sched_type"]
    if name is None:  # cleared: the next run shows the setup's scheduler again
        return
    warmup, total = schedule_arguments.horizon(current) or (0, 0)
    switch = schedule_arguments.adapt_kwargs(name, current.scheduler_kwargs, current.trainer, warmup, total,
                                   previous=current.lr_scheduler_type)
    _apply(current, lr_scheduler_type=name, lr_scheduler_kwargs=switch.kwargs)
    st.session_state[NOTICE] = (name, current.lr_scheduler_type, switch)


def kwarg_changed(current: TrainingSetup, key: str) -> None:
    kwargs = schedule_arguments.set_kwarg(current.scheduler_kwargs, key, st.session_state[f"sched_kw_{key}"])
    _apply(current, lr_scheduler_kwargs=kwargs)


def _shown(name: str, key: str, value: object) -> object:
    """A kwarg's value as its widget holds it (None: unset, or nothing the widget can show)."""
    edited = widget(name, key)
    if isinstance(edited, Choice):
        return value if value in edited.options else None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def _default_text(value: object, lang: str) -> str:
    if value is None:
        return t(lang, "schedule.unset")
    return t(lang, "schedule.default", value=value)


def _keys(keys: list[str]) -> str:
    return ", ".join(f"`{key}`" for key in keys)


def _switched(switch: schedule_arguments.Switch, name: str, previous: str, lang: str) -> None:
    """What the switch did to each argument: none is carried over without a word."""
    if switch.removed:
        st.caption(t(lang, "schedule.switched_removed", name=name, keys=_keys(switch.removed)))
    if switch.reset:
        st.caption(t(lang, "schedule.switched_reset", name=name, previous=previous, keys=_keys(switch.reset)))
    if switch.kept:
        st.caption(t(lang, "schedule.switched_kept", name=name, previous=previous, keys=_keys(switch.kept)))
    if switch.added:
        st.caption(t(lang, "schedule.switched_added", name=name, keys=_keys(switch.added)))


def scheduler_controls(current: TrainingSetup, lang: str) -> None:
    name, profile = current.lr_scheduler_type, current.trainer
    kwargs = current.scheduler_kwargs
    accepted = schedule_arguments.accepted_kwargs(name, profile) if name in SCHEDULER_TYPES else {}
    st.session_state["sched_type"] = name
    for key in accepted:
        st.session_state[f"sched_kw_{key}"] = _shown(name, key, kwargs.get(key))
    with st.container(border=True, key="sched_controls"):
        # as many columns as there are controls: empty columns stack into an empty gap on a phone
        columns = st.columns([1.4, 1, 1, 1][:1 + len(accepted)]) if accepted else [st.container()]
        with columns[0]:
            st.selectbox(t(lang, "schedule.field.type"), list(SCHEDULER_TYPES), index=None, key="sched_type",
                         on_change=type_changed, args=(current,), help=t(lang, "help.lr_scheduler_type"))
        for index, (key, default) in enumerate(accepted.items(), start=1):
            with columns[index % 4]:
                label, help_text = f"`{key}`", t(lang, f"schedule.kw.{key}")
                common = {"key": f"sched_kw_{key}", "on_change": kwarg_changed, "args": (current, key),
                          "help": help_text, "placeholder": _default_text(default, lang)}
                edited = widget(name, key)
                if isinstance(edited, Choice):
                    st.selectbox(label, list(edited.options), index=None, **common)
                else:
                    st.number_input(label, value=None, step=edited.step, format=edited.format, **common)
        notice = st.session_state.pop(NOTICE, None)
        if notice and notice[0] == name:
            _switched(notice[2], name, notice[1], lang)
        if name in METRIC_DRIVEN:
            st.caption(t(lang, "schedule.kwargs_plateau"))
        elif schedule_arguments.kwargs_dropped(name, profile):
            st.caption(t(lang, "schedule.kwargs_dropped", name=name, trainer=profile))
        elif not accepted:
            st.caption(t(lang, "schedule.kwargs_none", name=name))
        shown = f"`{json.dumps(kwargs)}`" if kwargs else t(lang, "schedule.kwargs_empty")
        st.caption(t(lang, "schedule.kwargs_now", kwargs=shown))


# ---- comparison overlays -----------------------------------------------------------------------------------------


def _kind_label(kind: str, lang: str) -> str:
    return t(lang, f"schedule.kind.{kind}")


def overlay_controls(base: Plan, lang: str) -> list[schedule_chart.Overlay]:
    st.subheader(t(lang, "schedule.compare"))
    st.caption(t(lang, "schedule.compare_hint"))
    profile = base.profile.id
    names = lr_overlays.overlay_schedulers(profile)
    other = next((n for n in ("cosine", "linear", *names) if n != base.setup.lr_scheduler_type and n in names), None)
    epochs = base.setup.num_train_epochs
    overlays, problems = [], []
    for index, column in enumerate(st.columns(OVERLAYS)):
        with column:
            kind = st.selectbox(t(lang, "schedule.overlay", n=index + 1), ["none", *lr_overlays.OVERLAY_KINDS],
                                format_func=partial(_kind_label, lang=lang), key=f"sched_cmp_{index}_kind", help=t(lang, "schedule.kind_help"))
            if kind == "scheduler":
                value = st.selectbox(t(lang, "schedule.overlay_scheduler"), list(names), key=f"sched_cmp_{index}_scheduler",
                                     index=names.index(other) if other in names else 0)
            elif kind == "max_steps":
                value = st.number_input(t(lang, "schedule.overlay_max_steps"), min_value=1, max_value=10**9,
                                        value=max(1, 2 * base.max_steps), step=1, key=f"sched_cmp_{index}_max_steps")
            elif kind == "epochs":
                value = st.number_input(t(lang, "schedule.overlay_epochs"), min_value=0.01, max_value=1e6,
                                        value=float(epochs * 2 if not base.setup.uses_max_steps else epochs),
                                        step=0.5, format="%g", key=f"sched_cmp_{index}_epochs")
            else:
                continue
            if value is None:
                continue
            try:
                other_plan = make_plan(lr_overlays.variant(base, kind, value))
            except (TrainerRefusal, SetupError) as problem:
                text = (problem.message(lang) if isinstance(problem, SetupError)
                        else code(f"{problem.error_type}: {problem.message}"))  # the Trainer's words as typed
                problems.append(t(lang, "schedule.overlay_refused", n=index + 1, message=text))
                continue
            name = lr_overlays.variant_label(kind, value, other_plan).get(lang)
            if other_plan.optimizer_steps < other_plan.max_steps:
                name += t(lang, "schedule.overlay_stops", runs=fmt_int(other_plan.optimizer_steps))
            overlays.append(schedule_chart.Overlay(name, lr_curve.curve(other_plan, schedule_chart.OVERLAY_CAP,
                                                                         schedule_chart.OVERLAY_EXACT_LIMIT)))
    for problem in problems:
        st.warning(problem, icon=":material/block:")
    return overlays


# ---- presenter view's key numbers ---------------------------------------------------------------------------------


def headline(result: lr_curve.Curve, lang: str) -> None:
    """The curve's key numbers as cards above the chart (presenter view): horizon, warmup, peak, first, last."""
    plan = result.plan
    cards = [
        ("card.total_steps", fmt_int(plan.max_steps)),
        ("card.warmup", fmt_int(result.warmup)),
        ("schedule.card.peak", fmt_lr(result.peak)),
        ("schedule.card.first", "—" if result.first is None else fmt_lr(result.first)),
        ("schedule.card.last", "—" if result.last is None else fmt_lr(result.last)),
    ]
    with st.container(horizontal=True, gap="small", key=f"{layout.CARDS_KEY}_schedule"):
        for name, value in cards:
            st.metric(t(lang, name), value, border=True)


# ---- notes next to the chart --------------------------------------------------------------------------------------


def stop_note(result: lr_curve.Curve, lang: str) -> None:
    runs, total = result.plan.optimizer_steps, result.plan.max_steps
    if runs < total:
        st.warning(t(lang, "schedule.note_stops", trainer=result.plan.profile.matched, total=fmt_int(total),
                     runs=fmt_int(runs)), icon=":material/content_cut:")


def notes(result: lr_curve.Curve, lang: str) -> None:
    """Why update 1 runs at LR 0 with warmup, why `constant` ignores warmup, and what the logs print."""
    name = result.plan.setup.lr_scheduler_type
    left, right = st.columns(2, gap="large")
    with left:
        st.markdown(t(lang, "schedule.note_reading"))
        if result.warmup and result.first == 0:
            st.markdown(t(lang, "schedule.note_first_zero", warmup=fmt_int(result.warmup),
                          peak=fmt_int(result.peak_step)))
        elif not result.warmup and result.first is not None:  # no warmup: update 1 runs at the schedule's start
            st.markdown(t(lang, "schedule.note_first_no_warmup", first=fmt_lr(result.first)))
        elif result.first is not None:
            st.markdown(t(lang, "schedule.note_first_general", first=fmt_lr(result.first)))
            if name == "cosine_warmup_with_min_lr" and result.warmup and result.first is not None:
                st.markdown(t(lang, "schedule.note_shifted", first=fmt_lr(result.first)))
            elif name == "warmup_stable_decay" and result.warmup and result.first:
                st.markdown(t(lang, "schedule.note_wsd_floor", first=fmt_lr(result.first)))
    with right:
        if name == "constant":
            st.markdown(t(lang, "schedule.note_constant", warmup=fmt_int(result.plan.warmup_steps)))
        else:
            with st.expander(t(lang, "schedule.note_constant_title")):
                st.markdown(t(lang, "schedule.note_constant", warmup=fmt_int(result.plan.warmup_steps)))
        if result.plan.profile.framework == "transformers":
            st.caption(t(lang, f"schedule.note_log_{result.plan.profile.logged_rate}",
                         trainer=result.plan.profile.matched))
        if not result.every_update:
            st.caption(t(lang, "schedule.note_grid", count=fmt_int(lr_curve.EXACT_LIMIT)))


def plateau(current_plan: Plan, lang: str) -> None:
    kwargs = {**scheduler_kwargs("reduce_lr_on_plateau", current_plan.profile.id), **current_plan.setup.scheduler_kwargs}
    st.info(t(lang, "schedule.plateau", factor=kwargs.get("factor"), patience=kwargs.get("patience"),
              lr=fmt_lr(current_plan.setup.learning_rate)), icon=":material/trending_down:")
    evaluations = events(current_plan, "eval")
    if count := evaluations.count():
        shown = evaluations.preview(12, t(lang, "schedule.list_separator"), "…")
        st.markdown(t(lang, "schedule.plateau_evals", count=fmt_int(count), steps=shown))
    else:
        st.markdown(t(lang, "schedule.plateau_no_evals", runs=fmt_int(current_plan.optimizer_steps),
                      count=current_plan.optimizer_steps))


# ---- export ------------------------------------------------------------------------------------------------------


def export(current_plan: Plan, lang: str) -> None:
    st.subheader(t(lang, "schedule.export"))
    left, right = st.columns(2)
    runs = current_plan.optimizer_steps
    with left:
        if lr_curve.drawable(current_plan) and runs <= lr_export.CSV_LIMIT:
            st.download_button(t(lang, "schedule.csv"), data=partial(lr_export.csv_text, current_plan),
                               file_name="steplab-learning-rates.csv", mime="text/csv", key="sched_csv",
                               on_click="ignore", icon=":material/table:",
                               help=t(lang, "schedule.csv_help", rows=fmt_int(runs), count=runs))
        elif lr_curve.drawable(current_plan):
            st.caption(t(lang, "schedule.csv_too_long", rows=fmt_int(runs), limit=fmt_int(lr_export.CSV_LIMIT)))
    yaml_text = lr_export.setup_yaml(current_plan.setup, lang)
    with right:
        st.download_button(t(lang, "schedule.yaml"), data=yaml_text, file_name="steplab-setup.yaml",
                           mime="application/x-yaml", key="sched_yaml", on_click="ignore",
                           icon=":material/description:", help=t(lang, "schedule.yaml_help"))
    st.caption(t(lang, "schedule.snippets_hint" if lr_curve.drawable(current_plan) else "schedule.snippets_hint_plateau"))
    hf, torch_tab, yaml_tab = st.tabs([t(lang, "schedule.tab_hf"), t(lang, "schedule.tab_torch"),
                                       t(lang, "schedule.tab_yaml")])
    with hf:
        st.code(lr_export.get_scheduler_snippet(current_plan, lang), language="python")  # wrapped Python misleads
    with torch_tab:
        st.code(lr_export.torch_snippet(current_plan, lang), language="python")
    with yaml_tab:
        st.code(yaml_text, language="yaml", wrap_lines=True)


