"""Live class, the instructor's side: open a class, put its join code and QR code on the projector, ask the room
a question, watch the answers arrive, reveal, and keep the class table. Everything behind the instructor's secret
link (`?host=<token>`); students join on `/join`."""

import os
import random

import streamlit as st

from steplab.classroom import links, polls
from steplab.classroom.polls import MAX_SEED, Poll, PollError
from steplab.classroom.store import CLASS_LIFETIME, CODE_LIFETIME, ClassError, roster_cells, roster_csv
from steplab.i18n import fmt_int, sentences, t
from steplab_ui.shell.page import page
from steplab_ui.views import classroom as view

HOST = "host"  # the URL parameter holding the instructor's token
HOSTED = "room_host"  # the same token in the session: a page change through the menu starts from a bare address
PROBLEM = "room_problem"  # a message from a callback, shown on the next run
SEED = "room_seed"  # the seed of the bank question being prepared (the instructor previews what is asked)
KINDS = ("setup", "change", "bank")

context = page("class")
lang = context.lang
room = view.store(lang)
if room is None:
    st.stop()


def remember(error: Exception) -> None:
    st.session_state[PROBLEM] = error


def open_class() -> None:
    try:
        st.query_params[HOST] = st.session_state[HOSTED] = room.open_class().host_token
    except (ClassError, *view.DATABASE_ERRORS) as error:
        remember(error)


def ask(token: str, poll: Poll) -> None:
    try:
        room.ask(token, poll)  # the panel keeps showing this very question (marked as asked) until new numbers
        st.toast(t(lang, "room.ask.asked"), icon=":material/campaign:")
    except (ClassError, PollError, *view.DATABASE_ERRORS) as error:
        remember(error)


def new_numbers() -> None:
    """The bank question of the panel drawn again with other numbers (only ever at the instructor's asking)."""
    st.session_state[SEED] = random.SystemRandom().randrange(MAX_SEED)


def reveal(token: str, poll_id: int) -> None:
    try:
        room.reveal(token, poll_id)
    except (ClassError, *view.DATABASE_ERRORS) as error:
        remember(error)


def delete(token: str) -> None:
    try:
        room.delete_class(token)
    except (ClassError, *view.DATABASE_ERRORS) as error:
        remember(error)
        return
    st.query_params.pop(HOST, None)
    st.session_state.pop(HOSTED, None)
    st.session_state["room_deleted"] = True


if (problem := st.session_state.pop(PROBLEM, None)) is not None:
    view.say_error(problem, lang)
if st.session_state.pop("room_deleted", False):
    st.success(t(lang, "room.delete.done"), icon=":material/delete:")

token = st.query_params.get(HOST) or st.session_state.get(HOSTED)
if token and st.query_params.get(HOST) != token:  # back on /class through the menu: the same class, not a new one
    st.query_params[HOST] = token
if not token:
    st.markdown(t(lang, "room.open_intro", hours=int(CLASS_LIFETIME.total_seconds() // 3600),
                  code_hours=int(CODE_LIFETIME.total_seconds() // 3600)))
    st.button(t(lang, "room.open"), on_click=open_class, type="primary", icon=":material/co_present:")
    st.stop()
try:
    info = room.host(token)
except (ClassError, *view.DATABASE_ERRORS) as error:
    if isinstance(error, ClassError):
        st.session_state.pop(HOSTED, None)
    view.say_error(error, lang)
    st.button(t(lang, "room.open_new"), on_click=open_class, icon=":material/co_present:")
    st.stop()
st.session_state[HOSTED] = token

# ---- where students join: the code, the QR code, the link --------------------------------------------------------
join = links.join_url(st.context.url, info.join_code, os.environ.get(links.PUBLIC_URL_ENV))
zone = view.reader_zone()  # times as the instructor's browser reads them, not the database's UTC
code_until = view.when(info.code_expires_at, lang, zone)


def where_to_join(qr_width: int) -> None:
    left, right = st.columns([3, 2], vertical_alignment="center")
    with left:
        st.metric(t(lang, "room.code"), info.join_code, help=t(lang, "room.code_help", time=code_until), border=True)
        st.markdown(t(lang, "room.join_at", url=f"`{join}`"))
        if not links.reachable_from_phones(join):
            st.warning(t(lang, "room.unreachable", host=st.context.url or join), icon=":material/wifi_off:")
        if not context.presenter:
            st.caption(sentences(lang, t(lang, "room.secret"), t(lang, "room.ends", time=view.when(info.expires_at, lang, zone))))
    with right:
        if join.startswith(("http://", "https://")):
            st.image(view.qr_png(join), caption=t(lang, "room.qr_alt", code=info.join_code), width=qr_width,
                     alt=t(lang, "room.qr_alt", code=info.join_code))


try:
    latest = room.current_poll(info.class_id)
except view.DATABASE_ERRORS:
    latest = None
asked = latest is not None
if context.presenter and asked:  # the projector's first screen is the question: the code folds into one line
    with st.expander(f"{t(lang, 'room.code')}: {info.join_code}", icon=":material/qr_code_2:"):
        where_to_join(qr_width=420)
else:
    where_to_join(qr_width=420 if context.presenter else 300)

# ---- ask a question ----------------------------------------------------------------------------------------------
with st.expander(t(lang, "room.ask.title"), expanded=not context.presenter, icon=":material/campaign:"):
    kind = st.segmented_control(t(lang, "room.ask.kind"), KINDS, key="room_kind", default="setup", required=True,
                                format_func=lambda name: t(lang, f"room.ask.kind.{name}"))
    poll: Poll | None = None
    try:
        if kind == "bank":
            seed = st.session_state.setdefault(SEED, random.SystemRandom().randrange(MAX_SEED))
            choice = st.selectbox(t(lang, "room.ask.bank"), polls.bank_choices(), key="room_bank",
                                  format_func=lambda qid: view.bank_label(qid, lang))
            poll = polls.poll_from_bank(choice, seed)
        elif context.setup is None:  # presenter view hides the sidebar: the instructor leaves it to change the setup
            st.warning(t(lang, "room.ask.no_setup_presenter" if context.presenter else "room.ask.no_setup"),
                       icon=":material/warning:")
        elif kind == "setup":
            poll = polls.poll_from_setup(context.setup)
            st.caption(t(lang, "room.ask.setup_note_presenter" if context.presenter else "room.ask.setup_note"))
        else:
            changes = {f"{field}={value}": polls.poll_from_change(context.setup, field, value)
                       for field, value in polls.change_choices(context.setup)}
            if not changes:
                st.info(t(lang, "room.ask.no_changes"), icon=":material/info:")
            else:
                picked = st.selectbox(t(lang, "room.ask.change"), list(changes), key="room_change",
                                      format_func=lambda name: polls.change_said(changes[name]).get(lang))
                poll = changes[picked]
    except PollError as error:
        st.warning(t(lang, "room.ask.cannot", problem=error.message(lang)), icon=":material/warning:")
    if poll is not None:
        st.markdown(view.prompt_lines(poll, lang))
        if latest is not None and latest.poll == poll and not latest.revealed:  # being answered: see below (once
            # revealed, the same question may be asked again: a room answers twice around a discussion)
            st.info(t(lang, "room.ask.is_live"), icon=":material/campaign:")
        else:
            st.button(t(lang, "room.ask.button"), on_click=ask, args=(token, poll), type="primary",
                      icon=":material/campaign:", key="room_ask")
    if kind == "bank":
        st.button(t(lang, "room.ask.new_numbers"), on_click=new_numbers, icon=":material/casino:",
                  key="room_new_numbers", help=t(lang, "room.ask.new_numbers_help"))


# ---- the question on the projector, refreshed every couple of seconds (one poll read, one tally read) ----------
@st.fragment(run_every=view.REFRESH_SECONDS)
def live() -> None:
    try:
        now = room.live(token)
    except (ClassError, *view.DATABASE_ERRORS) as error:
        view.say_error(error, lang)
        return
    current, tally = now.poll, now.tally
    with st.container(horizontal=True, gap="small", key="steplab_cards_live", vertical_alignment="center"):
        st.metric(t(lang, "room.students"), fmt_int(now.students), border=True)
        if tally is not None:
            st.metric(t(lang, "room.poll.answered"), t(lang, "room.poll.answered_value",
                                                        answered=fmt_int(tally.answered), joined=fmt_int(now.students)),
                      border=True)
        if current is not None and not current.revealed:
            st.button(t(lang, "room.poll.reveal"), on_click=reveal, args=(token, current.poll_id), type="primary",
                      icon=":material/visibility:", help=t(lang, "room.poll.reveal_help"), key="room_reveal")
    if current is None or tally is None:
        st.info(t(lang, "room.poll.none"), icon=":material/hourglass_empty:")
        return
    st.markdown(view.prompt_lines(current.poll, lang))
    st.markdown(f"**{t(lang, 'room.poll.spread')}**")
    view.show_spread(current.poll, tally, lang, key="room_spread", presenter=context.presenter)
    if current.revealed:
        view.show_reveal(current.poll, tally, lang)


live()

# ---- the class table: names and who was right, so folded (the normal view is projected too) and never drawn
# ---- in presenter view; read only while the instructor has it open ---------------------------------------------
def fresh_csv() -> bytes:
    """The class table as it is at the moment of the click (read again: the table on screen may be seconds old)."""
    return roster_csv(room.roster(token), lang, zone).encode("utf-8")


@st.fragment(run_every=view.TABLE_REFRESH_SECONDS)
def class_table() -> None:
    st.caption(t(lang, "room.table.caption"))
    try:
        rows = room.roster(token)
    except (ClassError, *view.DATABASE_ERRORS) as error:
        view.say_error(error, lang)
        return
    if not rows:
        st.info(t(lang, "room.table.empty"), icon=":material/group:")
        return
    header, cells = roster_cells(rows, lang, zone)
    st.dataframe({name: [row[i] for row in cells] for i, name in enumerate(header)}, hide_index=True,
                 width="stretch")


if not context.presenter:
    table = st.expander(t(lang, "room.table.title"), icon=":material/group:", key="room_table_open",
                        on_change="rerun")
    if table.open:
        with table:
            class_table()
            # Outside the redrawing fragment: a download button whose data is made on the click gets a new file id
            # on every run that draws it, and the old one is revoked; drawn by the table's fragment, a click in the
            # moment between a redraw on the server and its arrival in the browser asked for a revoked file, and no
            # download started. Here only a run the instructor causes draws it again.
            st.download_button(t(lang, "room.table.download"), data=fresh_csv,
                               file_name=f"steplab-class-{info.join_code}.csv", mime="text/csv",
                               icon=":material/download:", key="room_csv", on_click="ignore")
    with st.expander(t(lang, "room.delete.title"), icon=":material/delete:"):
        confirmed = st.checkbox(t(lang, "room.delete.confirm"), key="room_delete_confirm")
        st.button(t(lang, "room.delete.button"), on_click=delete, args=(token,), disabled=not confirmed,
                  key="room_delete")
