"""The learner's progress: in the session (a plain dict under `PROGRESS_KEY`; `steplab.teaching.progress`
(de)serialises it), in this browser (`keep_progress`) and in their class, when they joined one (`seat`)."""

from __future__ import annotations

import streamlit as st

from steplab.i18n import t
from steplab.teaching.progress import Progress, ProgressError, from_code, from_dict, to_code
from steplab_ui.shell import browser
from steplab_ui.shell.seat import report_progress

PROGRESS_KEY = "steplab_progress"


def get_progress() -> Progress:
    """The learner's progress in this session (empty when none, or when the stored dict is unusable)."""
    raw = st.session_state.get(PROGRESS_KEY)
    if not raw:
        return Progress()
    try:
        return from_dict(raw)
    except ProgressError:
        return Progress()


def set_progress(progress: Progress) -> None:
    """Keep the learner's progress in the session (and send it to their class, if they joined one)."""
    st.session_state[PROGRESS_KEY] = progress.to_dict()
    report_progress(progress)


def restore_from_class(stored: Progress) -> None:
    """A session that took a class seat back from its address (a new session after a server restart, or on another
    replica) starts from the progress the seat last reported; progress this session already made wins, and goes to
    the class."""
    if st.session_state.get(PROGRESS_KEY):
        report_progress(get_progress())
    else:
        st.session_state[PROGRESS_KEY] = stored.to_dict()


MEMORY_KEY = "progress_memory"
RESTORED_KEY = "_progress_from_browser"


def keep_progress(lang: str) -> None:
    """Keep the learner's progress in this browser, so a reload or a visit tomorrow finds it (`steplab_ui.shell.browser`).

    A new session with no progress yet asks the browser for the code it kept and restores it (said in a toast);
    a code that no longer reads (another version, damaged) is dropped from the browser. After that, every change
    of the progress is written back.
    """
    if st.session_state.pop(RESTORED_KEY, False):
        st.toast(t(lang, "quiz.progress.from_browser"), icon=":material/bookmark:")
    progress = get_progress()
    code = to_code(progress) if progress != Progress() else ""
    stored = browser.remember(code, MEMORY_KEY, forget=st.session_state.pop("_progress_forget", False))
    if stored and not code:
        try:
            restored = from_code(stored)
        except ProgressError:
            st.session_state["_progress_forget"] = True
            return
        set_progress(restored)
        st.session_state[RESTORED_KEY] = True
        st.rerun()  # draw the page with the progress it had


def mark_lesson_done(lesson: int, done: bool = True) -> None:
    set_progress(get_progress().with_lesson_done(lesson, done))
