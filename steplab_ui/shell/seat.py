"""A student's seat in a live class: in the session, in every page's address (`?seat=<token>`) and in the database,
so that it outlives the session. A server restart or another replica starts a new session on the same address:
that session takes the seat back from the address, with the progress the seat last reported (`keep`).

The class database is opened only when there is a seat (a learner who never joined a class pays nothing).
"""

from __future__ import annotations

import streamlit as st

from steplab.classroom.store import ClassError
from steplab.teaching.progress import Progress

SEAT_PARAM = "seat"  # the URL parameter holding the seat's token, on every page once a student joined
SEAT_KEY = "class_seat"  # the seat's token in this session
REPORTED_KEY = "class_reported"  # the progress last sent to the class, so an unchanged one is not sent again


def token() -> str | None:
    """This session's seat token (None: not in a class)."""
    return st.session_state.get(SEAT_KEY)


def take(seat_token: str, reported: Progress | None = None) -> None:
    """Sit in a seat: this session's, and this page's address (`reported`: what the class already has)."""
    st.session_state[SEAT_KEY] = seat_token
    if reported is not None:
        st.session_state[REPORTED_KEY] = reported.to_dict()
    if st.query_params.get(SEAT_PARAM) != seat_token:
        st.query_params[SEAT_PARAM] = seat_token


def leave() -> None:
    """Leave the seat: out of the session and out of the address."""
    st.session_state.pop(SEAT_KEY, None)
    st.session_state.pop(REPORTED_KEY, None)
    st.query_params.pop(SEAT_PARAM, None)


def keep(lang: str) -> Progress | None:
    """Every page's run: keep the session's seat in the address (a page change starts from a bare address), or, in a
    session without one, take the seat the address names back from the database.

    Returns the progress the seat last reported when this run took it back (the caller restores it), else None. A
    seat that no longer works (class deleted or over) leaves the address with a warning saying why; a database that
    does not answer leaves it in the address, to be taken back on a later run.
    """
    held = token()
    if held is not None:
        take(held)
        return None
    wanted = st.query_params.get(SEAT_PARAM)
    if not wanted:
        return None
    from steplab_ui.shell import class_database as database  # the database and its driver: only in a class

    try:
        seat = database.open_store().seat(wanted)
    except ClassError as error:
        leave()
        st.warning(error.message(lang), icon=":material/event_busy:")
        return None
    except database.DATABASE_ERRORS:
        return None
    stored = seat.progress or Progress()
    take(wanted, reported=stored)
    return stored


def report_progress(progress: Progress) -> None:
    """Send the learner's progress to their class, if this session sits in a seat and the progress changed.

    Called whenever the progress changes (lessons, checks, a restored code). A seat that no longer works (class
    deleted or ended) is left; a database that does not answer is tried again at the next change.
    """
    held = token()
    payload = progress.to_dict()
    if not held or st.session_state.get(REPORTED_KEY) == payload:
        return
    from steplab_ui.shell import class_database as database

    try:
        database.open_store().report_progress(held, progress)
    except ClassError:
        leave()
        return
    except database.DATABASE_ERRORS:
        return
    st.session_state[REPORTED_KEY] = payload
