"""The class database of this process: opened once and shared by every session, and the errors a database
that does not answer raises (the class pages and a student's seat both go through this door)."""

from __future__ import annotations

import streamlit as st
from sqlalchemy.exc import SQLAlchemyError

from steplab.classroom.store import Store

DATABASE_ERRORS = (SQLAlchemyError, OSError)


@st.cache_resource(show_spinner=False)
def open_store() -> Store:
    """The class database of this process (opened once, shared by every session); raises `DATABASE_ERRORS`."""
    return Store()
