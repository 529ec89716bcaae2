"""Self-check: fresh questions from the bank (new seeds), a score kept in the session, progress code and file.

The question on screen is also in the address (`?question=<id>:<seed>`): a reload, or a new session after a server
restart, shows the same question (its answer still typed in), not another one."""

import random

import streamlit as st

from steplab.i18n import t
from steplab.teaching import quiz
from steplab.teaching.lessons import lesson_numbers
from steplab_ui.shell.page import page
from steplab_ui.shell.progress import get_progress, keep_progress
from steplab_ui.views.quiz import render_progress, render_question

CURRENT = "selfcheck_current"  # (question id, seed) of the question on screen
QUESTION = "question"  # the URL parameter holding the question on screen (`Question.token`)
LESSONS_KEY = "selfcheck_lessons"
ALL_LESSONS = list(lesson_numbers())

lang = page("selfcheck").lang  # the questions do not use the sidebar setup; the shell keeps the app consistent


def new_question(bank: list[quiz.QuestionSpec]) -> None:
    """Draw a fresh question (a new seed) from the chosen lessons, not the same one twice in a row."""
    lessons = set(st.session_state.get(LESSONS_KEY) or [])
    current = st.session_state.get(CURRENT)
    question = quiz.draw(bank, random.SystemRandom(), lessons=lessons, avoid=current[0] if current else None)
    st.session_state[CURRENT] = (question.id, question.seed) if question else None


try:
    bank = quiz.load_bank()
except quiz.QuizError as problem:
    st.error(t(lang, "quiz.bank_error", error=problem), icon=":material/error:")
    st.stop()

specs = {spec.id: spec for spec in bank}
if CURRENT not in st.session_state and (linked := st.query_params.get(QUESTION)):  # a new session on this address
    st.session_state[CURRENT] = quiz.from_token(linked, specs)
    if st.session_state[CURRENT] is None:
        st.warning(t(lang, "quiz.link_question", value=linked[:40].replace("`", "'")), icon=":material/link_off:")
st.pills(t(lang, "quiz.pick_lessons"), ALL_LESSONS, selection_mode="multi", default=ALL_LESSONS, key=LESSONS_KEY,
         format_func=lambda n: t(lang, f"quiz.lesson_short.{n}", number=n), help=t(lang, "quiz.pick_lessons_help"))
chosen = set(st.session_state.get(LESSONS_KEY) or [])
current = st.session_state.get(CURRENT)
if current is None or current[0] not in specs or specs[current[0]].lesson not in chosen:
    new_question(bank)
    current = st.session_state.get(CURRENT)

if current is None:
    st.query_params.pop(QUESTION, None)
elif st.query_params.get(QUESTION) != f"{current[0]}:{current[1]}":
    st.query_params[QUESTION] = f"{current[0]}:{current[1]}"

progress = get_progress()
score, button = st.columns([3, 2], vertical_alignment="bottom")
score.metric(t(lang, "quiz.score"), t(lang, "quiz.score_value", correct=progress.selfstudy_correct,
                                       attempts=progress.selfstudy_attempts), help=t(lang, "quiz.score_help"))
if button.button(t(lang, "quiz.new_question"), key="selfcheck_new", icon=":material/refresh:", disabled=not chosen,
                 width="stretch"):  # handled here, not in a callback: a new session's first run calls none
    new_question(bank)
    st.rerun()

if current is None:
    st.info(t(lang, "quiz.no_lessons"), icon=":material/info:")
else:
    render_question(quiz.generate(specs[current[0]], current[1]), lang, key="selfcheck", source="selfstudy")

st.divider()
render_progress(lang, key="selfcheck_progress")
keep_progress(lang)  # this browser keeps the progress; after a reload it comes back
