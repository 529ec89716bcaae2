"""Join a class, the student's side: the join code and an optional nickname, then the instructor's current
question, an answer, and after the reveal the feedback and the room's spread (never another student's answer or
name). The seat is in every page's address (`?seat=<token>`, `steplab_ui.shell.seat`) and in the database, so it outlives
a server restart; lessons and checks finished meanwhile reach the class."""

import streamlit as st

from steplab.classroom import polls
from steplab.classroom.store import MAX_CODE_INPUT_CHARS, MAX_NICKNAME_CHARS, ClassError, Question, Seat
from steplab.i18n import sentences, t
from steplab_ui.shell import seat as seats
from steplab_ui.shell.page import page
from steplab_ui.shell.progress import get_progress
from steplab_ui.views import classroom as view

SEEN = "join_seen"  # (poll id, revealed) of the question this page drew; the watcher reruns the page when it moves
PROBLEM = "join_problem"
REFUSED = "join_refused"  # (poll id, why) of the last Send the store refused; the answer's line says it

context = page("join")
lang = context.lang
room = view.store(lang)
if room is None:
    st.stop()


def forget(message: str | None = None) -> None:
    seats.leave()
    if message:
        st.session_state[PROBLEM] = message


def take_seat() -> None:
    """The join form's callback: a seat, kept in the session and in this page's address."""
    code = st.session_state.get("join_code", "")
    if not str(code).strip():
        st.session_state[PROBLEM] = t(lang, "join.need_code")
        return
    try:
        seat = room.join(code, st.session_state.get("join_nickname", ""), client=view.client_address())
    except ClassError as error:
        st.session_state[PROBLEM] = error.message(lang)
        return
    except view.DATABASE_ERRORS:
        st.session_state[PROBLEM] = t(lang, "room.busy")
        return
    st.query_params.pop("code", None)
    seats.take(seat.token)


def leave() -> None:
    forget()
    st.session_state[PROBLEM] = None
    st.session_state["join_left"] = True


def send(token: str, poll_id: int, key: str) -> None:
    """The answer form's callback: store the answer; a refusal is kept for the answer's line (`follow`), which says
    it until the next Send."""
    st.session_state[REFUSED] = None
    try:
        room.answer(token, poll_id, st.session_state.get(key))
    except ClassError as error:
        st.session_state[REFUSED] = (poll_id, error.message(lang))
    except view.DATABASE_ERRORS:
        st.session_state[REFUSED] = (poll_id, t(lang, "room.busy"))


if st.session_state.pop("join_left", False):
    st.info(t(lang, "join.left"), icon=":material/logout:")

token = seats.token()  # page() took it back from the address in a new session
seat: Seat | None = None
if token:
    try:
        seat = room.seat(token)
    except ClassError as error:
        forget(error.message(lang))
    except view.DATABASE_ERRORS:
        st.error(t(lang, "room.busy"), icon=":material/hourglass_empty:")
        st.stop()

if (problem := st.session_state.pop(PROBLEM, None)) is not None:
    st.error(problem, icon=":material/error:")

if seat is None:
    with st.form("join_form", border=True):
        st.text_input(t(lang, "join.code"), value=st.query_params.get("code", "")[:MAX_CODE_INPUT_CHARS],
                      max_chars=MAX_CODE_INPUT_CHARS, key="join_code", help=t(lang, "join.code_help"))
        st.text_input(t(lang, "join.nickname"), max_chars=MAX_NICKNAME_CHARS, key="join_nickname",
                      help=t(lang, "join.nickname_help", limit=MAX_NICKNAME_CHARS))
        st.form_submit_button(t(lang, "join.button"), on_click=take_seat, type="primary", icon=":material/login:")
    st.stop()

if seat.nickname:
    st.success(t(lang, "join.joined", nickname=view.literal(seat.nickname)), icon=":material/how_to_reg:")
else:
    st.success(t(lang, "join.joined_anonymous"), icon=":material/how_to_reg:")
seats.report_progress(get_progress())  # what was finished before joining counts too

try:
    question = room.question(token)
except ClassError as error:
    forget(error.message(lang))
    st.rerun()
except view.DATABASE_ERRORS:
    st.error(t(lang, "room.busy"), icon=":material/hourglass_empty:")
    question = Question(None, None)
st.session_state[SEEN] = question.seen
current = question.poll


@st.fragment(run_every=view.REFRESH_SECONDS)
def follow(poll_id: int | None) -> None:
    """Every couple of seconds, one cheap read of what the store holds for this seat: a new question or a reveal
    redraws the page (the answer form is not redrawn in between, so what a student is typing stays); under an open
    question (`poll_id`), the answer the store holds, or why the last Send was refused.

    The answer's line is drawn here, from the store, and not only by the run a Send makes: drawn only there, the
    page said "not answered yet" over an answer the store held until the next full run (the reveal) whenever that
    run's output did not reach the page (a refresh that starts a new script runner discards the events still
    queued from the one it replaces; a connection that drops). Now every refresh, at most two seconds apart,
    says what the store holds."""
    try:
        now = room.question(token)
    except ClassError:
        st.rerun()  # the seat is gone: the page says why
    except view.DATABASE_ERRORS:
        if poll_id is not None:
            st.caption(t(lang, "room.busy"))
        return
    if now.seen != st.session_state.get(SEEN):
        st.rerun()
    if poll_id is None or now.poll is None:
        return
    refusal = st.session_state.get(REFUSED)
    if refusal is not None and refusal[0] == poll_id:
        st.error(refusal[1], icon=":material/error:")
    if now.mine is not None:
        st.success(t(lang, "join.sent", value=view.answer_text(now.poll.poll, now.mine, lang)), icon=":material/done:")
    else:
        st.caption(t(lang, "join.not_answered"))


if current is None:
    st.info(t(lang, "join.waiting"), icon=":material/hourglass_empty:")
else:
    poll = current.poll
    with st.container(border=True):
        st.markdown(view.prompt_lines(poll, lang))
        if current.revealed:
            view.feedback(poll, question.mine, lang)
        else:
            key = f"join_answer_{current.poll_id}"
            with st.form(f"join_form_{current.poll_id}", border=False):
                if polls.is_numeric(poll):
                    st.text_input(t(lang, "join.answer"), key=key, max_chars=polls.MAX_TEXT_CHARS,
                                  help=t(lang, "join.answer_help" if polls.whole_answer(poll)
                                         else "join.answer_help_decimal"))
                else:
                    options = polls.options(poll)
                    st.radio(t(lang, "join.option"), range(len(options)), key=key, index=None,
                             format_func=lambda index: options[index].get(lang))
                st.form_submit_button(t(lang, "join.send"), on_click=send, args=(token, current.poll_id, key),
                                      type="primary", icon=":material/send:")
            follow(current.poll_id)
    if current.revealed:
        try:
            view.show_spread(poll, room.tally(seat.class_id, current.poll_id), lang, key="join_spread")
        except (ClassError, *view.DATABASE_ERRORS) as error:
            view.say_error(error, lang)
if current is None or current.revealed:
    follow(None)
st.caption(sentences(lang, t(lang, "join.link"), t(lang, "join.progress")))
st.button(t(lang, "join.leave"), on_click=leave, icon=":material/logout:", key="join_leave")
