"""One question on a page (prompt, input, check button, feedback) and the learner's progress code/file UI.

Several questions can share a page: every widget key starts with the `key` given. The learner's progress
lives in `st.session_state["steplab_progress"]` as a plain dict (`steplab.teaching.progress` (de)serialises it).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from steplab.i18n import catalogue, t
from steplab.teaching.lessons import load_lessons
from steplab.teaching.progress import (
    MAX_CODE_CHARS,
    MAX_JSON_BYTES,
    Progress,
    ProgressError,
    from_code,
    from_json,
    to_code,
    to_json,
)
from steplab.teaching.quiz import Control, Feedback, Question, grade
from steplab_ui.shell.progress import get_progress, set_progress

FIRST_VERDICTS = "quiz_first_verdicts"  # question-instance token -> whether its counted (first) check was right


def record(question: Question, feedback: Feedback, key: str, source: str | None) -> str:
    """Count a graded answer once per question instance (its first check): in its lesson's check, or in self-study.

    Says how this check stands in the score, for its message to agree with it: `counted` (this check counted, or
    nothing is counted here), else the verdict of the earlier check that counted: `earlier_right`, `earlier_wrong`,
    or `earlier` (counted before this session knew its verdict: a restored progress).
    """
    if source is None or feedback.status == "invalid":
        return "counted"
    token = f"{source}:{key}:{question.token}"
    firsts = st.session_state.setdefault(FIRST_VERDICTS, {})
    if token in get_progress().seen:
        return {True: "earlier_right", False: "earlier_wrong"}.get(firsts.get(token), "earlier")
    firsts[token] = feedback.correct
    lesson = None if source == "selfstudy" else question.lesson
    set_progress(get_progress().with_answer(lesson, feedback.correct, token=token))
    return "counted"


# --------------------------------------------------------------------------- one question


def _base(question: Question, key: str) -> str:
    return f"{key}__{question.id}__{question.seed}"


def _feedback_key(key: str) -> str:
    return f"{key}__feedback"


def _checked_key(key: str) -> str:
    """Set by the check button's callback for the run it starts: the click was graded."""
    return f"{key}__checked"


def _clear(key: str) -> None:
    """An answer control changed: the last feedback no longer stands, unless a check in the same run graded it.

    A value typed and Check clicked at once (the blur's message and the click's, taken by the server as one run)
    call both callbacks before the page draws, in the order the browser listed its controls: after a server
    restart the check came first, and this wiped its grade (the check was never graded)."""
    if st.session_state.get(_checked_key(key)):
        return
    st.session_state.pop(_feedback_key(key), None)


def _response(question: Question, base: str) -> Any:
    """What the learner's widgets hold now, in the shape `grade` expects."""
    state = st.session_state
    if question.numeric:
        return state.get(f"{base}__answer")
    if question.kind == "choice":
        if question.multiple:
            return [i for i in range(len(question.options)) if state.get(f"{base}__option{i}")]
        return state.get(f"{base}__choice")
    return {c.field: state.get(f"{base}__{c.field}", c.start) for c in question.controls}


def _check(question: Question, key: str, source: str | None) -> None:
    """The check button's callback: grade before the page draws, so scores shown above are current."""
    st.session_state[_checked_key(key)] = True
    feedback = grade(question, _response(question, _base(question, key)))
    st.session_state[_feedback_key(key)] = (question.token, feedback, record(question, feedback, key, source))


def _field_label(lang: str, name: str) -> str:
    label = catalogue(lang).get(f"field.{name}")
    if not label:
        return f"`{name}`"
    if name in label:
        return label
    return f"{label}（`{name}`）" if lang == "zh" else f"{label} (`{name}`)"


def _slider(control: Control, lang: str, base: str, key: str) -> None:
    cast = int if control.is_int else float
    st.slider(
        _field_label(lang, control.field), min_value=cast(control.low), max_value=cast(control.high),
        value=cast(control.start), step=cast(control.step), key=f"{base}__{control.field}",
        on_change=_clear, args=(key,),
    )


def _input(question: Question, lang: str, base: str, key: str) -> None:
    if question.numeric:
        decimal = not question.spec.whole_answer
        st.number_input(
            t(lang, "quiz.answer_label"), value=None, step=0.1 if decimal else 1,
            format="%g" if decimal else "%d", placeholder=t(lang, "quiz.answer_placeholder"),
            key=f"{base}__answer", on_change=_clear, args=(key,),
        )
    elif question.kind == "choice" and question.multiple:
        st.caption(t(lang, "quiz.choose_all"))
        for index, option in enumerate(question.options):
            st.checkbox(option.get(lang), key=f"{base}__option{index}", on_change=_clear, args=(key,))
    elif question.kind == "choice":
        st.radio(
            t(lang, "quiz.choose_one"), options=list(range(len(question.options))), index=None,
            format_func=lambda i: question.options[i].get(lang), key=f"{base}__choice", on_change=_clear, args=(key,),
        )
    else:
        st.caption(t(lang, "quiz.set_sliders"))
        for control in question.controls:
            _slider(control, lang, base, key)


def _labelled(lang: str, label: str, text: str) -> str:
    """`**label**: text`, with a full-width colon in Chinese."""
    return f"**{label}**{'：' if lang == 'zh' else ': '}{text}"


def _lines(feedback: Feedback, lang: str) -> None:
    for line in feedback.worked:
        note = f" — {line.note.get(lang)}" if line.note else ""
        st.markdown(_labelled(lang, line.label.get(lang), f"`{line.formula}`{note}"))


def show_feedback(question: Question, feedback: Feedback, lang: str, counted: str = "counted") -> None:
    """✓/✗ with the message, the targets (sliders), the hint when wrong, the explanation and the arithmetic.

    A wrong answer keeps what would give the answer away (the arithmetic of a numeric or choice question, a
    choice's explanation) folded in an expander; the arithmetic of the learner's own slider setting is shown.
    A later check than the one that counted says so in the same box (`counted`, from `record`), so that a "✓"
    never stands beside a score that did not move.
    """
    message = feedback.message.get(lang)
    if counted != "counted":
        message = f"{message}\n\n{t(lang, f'quiz.not_counted.{counted}')}"
    if feedback.status == "correct":
        st.success(f"**{t(lang, 'quiz.correct_mark')}** · {message}")
    elif feedback.status == "wrong":
        st.error(f"**{t(lang, 'quiz.wrong_mark')}** · {message}")
    else:
        st.warning(f"**{t(lang, 'quiz.invalid_mark')}** · {message}")
        return
    for line in feedback.extra:
        st.markdown(line.get(lang))
    if feedback.hint is not None:
        st.info(_labelled(lang, t(lang, "quiz.hint"), feedback.hint.get(lang)), icon=":material/lightbulb:")
    if question.kind == "sliders":
        if feedback.explanation is not None:
            st.markdown(_labelled(lang, t(lang, "quiz.why"), feedback.explanation.get(lang)))
        if feedback.worked:
            st.caption(t(lang, "quiz.worked_yours"))
            _lines(feedback, lang)
        return
    if feedback.correct:
        if feedback.explanation is not None:
            st.markdown(_labelled(lang, t(lang, "quiz.why"), feedback.explanation.get(lang)))
        if feedback.worked:
            st.caption(t(lang, "quiz.worked"))
            _lines(feedback, lang)
    elif feedback.worked or feedback.explanation is not None:
        with st.expander(t(lang, "quiz.worked_reveal" if feedback.worked else "quiz.why_reveal")):
            if feedback.explanation is not None:
                st.markdown(_labelled(lang, t(lang, "quiz.why"), feedback.explanation.get(lang)))
            _lines(feedback, lang)


def render_question(question: Question, lang: str, key: str, *, source: str | None = "lesson",
                    titled: bool = True) -> Feedback | None:
    """Draw one question with its input, a check button and the feedback of the last check (None before one).

    `source` says where a graded answer counts: "lesson" (the question's lesson check), "selfstudy", or None
    (not counted, e.g. a presenter's demo). Each question instance counts once, at its first check. Untitled,
    its caption names its kind only (a lesson's self-check on the projector, under the lesson's own title).
    """
    base = _base(question, key)
    stored = st.session_state.get(_feedback_key(key))
    if stored is not None and stored[0] != question.token:
        _clear(key)  # a different question now uses this key
        stored = None
    with st.container(border=True, key=f"{key}__box"):
        kind = t(lang, f"quiz.kind.{question.kind}")
        st.caption(t(lang, "quiz.question_caption", lesson=lesson_title(question.lesson, lang), kind=kind)
                   if titled else kind)
        st.markdown(question.prompt.get(lang))
        _input(question, lang, base, key)
        clicked = st.button(t(lang, "quiz.check"), key=f"{base}__check", type="primary", icon=":material/check:",
                            on_click=_check, args=(question, key, source))
        checked = st.session_state.pop(_checked_key(key), False)  # this run's check (a callback's), if any
        if clicked and not checked:
            # a click the callback did not see: the first run of a new session (after a server restart the page
            # reconnects to a new session, which has no callbacks registered yet). Grade it now, and draw again.
            _check(question, key, source)
            st.rerun()
        stored = st.session_state.get(_feedback_key(key))
        if stored is None:
            return None
        show_feedback(question, stored[1], lang, stored[2])
        return stored[1]


# --------------------------------------------------------------------------- the progress code / file UI


def _restored(key: str, progress: Progress) -> None:
    seen = get_progress().seen  # questions already counted in this session stay counted once
    set_progress(Progress(progress.lessons_done, progress.lesson_scores, progress.selfstudy_correct,
                          progress.selfstudy_attempts, seen))
    st.session_state[f"{key}__message"] = ("ok", None)


def _restore_code(key: str) -> None:
    try:
        _restored(key, from_code(st.session_state.get(f"{key}__code", "")))
    except ProgressError as error:
        st.session_state[f"{key}__message"] = ("error", error.text)


def _restore_file(key: str) -> None:
    upload = st.session_state.get(f"{key}__file")
    if upload is None:
        return
    try:
        _restored(key, from_json(upload.read(MAX_JSON_BYTES + 1)))
    except ProgressError as error:
        st.session_state[f"{key}__message"] = ("error", error.text)


def render_progress(lang: str, key: str = "progress") -> None:
    """The learner's progress, its code and file, and the restore form (nothing is stored on the server)."""
    progress = get_progress()
    st.subheader(t(lang, "quiz.progress.title"))
    st.caption(t(lang, "quiz.progress.intro"))
    done = ", ".join(str(n) for n in sorted(progress.lessons_done)) or t(lang, "quiz.progress.none")
    lines = [_labelled(lang, t(lang, "quiz.progress.lessons_done"), done),
             t(lang, "quiz.progress.selfstudy", correct=progress.selfstudy_correct,
               attempts=progress.selfstudy_attempts)]
    lines += [t(lang, "quiz.progress.lesson_score", lesson=n, correct=c, attempts=a) for n, c, a in progress.lesson_scores]
    st.markdown("  \n".join(lines))
    st.caption(f"{t(lang, 'quiz.progress.code')} · {t(lang, 'quiz.progress.code_help')}")
    st.code(to_code(progress), language=None, wrap_lines=True)
    st.download_button(t(lang, "quiz.progress.download"), data=to_json(progress), file_name="steplab-progress.json",
                       mime="application/json", key=f"{key}__download", icon=":material/download:", on_click="ignore")
    message = st.session_state.pop(f"{key}__message", None)  # shown once, after the restore it reports
    with st.expander(t(lang, "quiz.progress.restore"), icon=":material/restore:", expanded=message is not None):
        st.text_input(t(lang, "quiz.progress.restore_code"), key=f"{key}__code", max_chars=MAX_CODE_CHARS,
                      placeholder="SL1-…")
        st.button(t(lang, "quiz.progress.restore_button"), key=f"{key}__restore", on_click=_restore_code, args=(key,))
        st.file_uploader(t(lang, "quiz.progress.restore_file"), type=["json"], key=f"{key}__file",
                         max_upload_size=1, on_change=_restore_file, args=(key,))  # MB; the file is a few KB
        if message is not None:
            kind, text = message
            if kind == "ok":
                st.success(t(lang, "quiz.progress.restored"), icon=":material/check_circle:")
            else:
                st.error(t(lang, "quiz.progress.error", message=text.get(lang)), icon=":material/error:")


def lesson_title(number: int, lang: str) -> str:
    """"Lesson 6 · …" with the lesson's own title (from its lesson file, never a copy)."""
    lesson = next(lesson for lesson in load_lessons() if lesson.number == number)
    return t(lang, "quiz.lesson_title", number=number, title=lesson.title.get(lang))
