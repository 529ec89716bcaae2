"""The comparison table for any list of setups: used by the compare page and by lesson widgets."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from steplab.i18n import fmt_number, msg, t, whole
from steplab.teaching.compare import COMPARE_FIELDS, Row, compare_rows
from steplab_ui.shell import layout

HIGHLIGHT = "background-color: rgba(230,159,0,0.28); font-weight: 700"
HEADLINE = msg("comparing.row.total_steps")  # presenter view's key number of each column


def headline(rows: list[Row], lang: str, key: str = "") -> None:
    """Presenter view's key numbers: each column's total steps as a card (the table's own cells)."""
    label = HEADLINE.get(lang)
    row = next((row for row in rows if row.label == label), None)
    if row is None:
        return
    with st.container(horizontal=True, gap="small", key=f"{layout.CARDS_KEY}_compare{key}"):
        for index, cell in enumerate(row.cells):
            st.metric(t(lang, "compare.headline", n=index + 1, quantity=label), cell, border=True)


def column_names(setups: list[dict[str, Any]], lang: str) -> list[str]:
    """Each column named by what it changes from the first ("Setup 2: batch 2, accumulation 16"), so that a reader
    of the table need not scroll to the forms to know which setup is which."""
    first = setups[0] if setups else {}
    names = [t(lang, "compare.column_base", n=1)] if setups else []
    for index, values in enumerate(setups[1:], start=2):
        changes = [t(lang, f"compare.short.{field}", value=_shown(values.get(field)))
                   for field in COMPARE_FIELDS if values.get(field) != first.get(field)]
        names.append(t(lang, "compare.column_diff", n=index, changes=t(lang, "compare.list_separator").join(changes)) if changes
                     else t(lang, "compare.column_same", n=index))
    return names


def _shown(value: Any) -> Any:
    """A column's value as a header writes it: 3.0 epochs as 3, other numbers with separators."""
    if isinstance(value, float):
        value = whole(value)
    return fmt_number(value) if isinstance(value, int | float) else value


def table(setups: list[dict[str, Any]], lang: str, presenter: bool = False, key: str = "") -> None:
    """Rows of quantities, one column per setup, cells that differ from the first column highlighted,
    and one sentence per column below (the table's plain-text summary). Presenter view puts each column's
    total steps above it in cards (`key` tells apart several on one page)."""
    rows, summaries = compare_rows(setups, lang)
    if presenter:
        headline(rows, lang, key)
    headers = column_names(setups, lang)
    frame = pd.DataFrame([row.cells for row in rows], index=[row.label for row in rows], columns=headers)
    differs = pd.DataFrame([row.differs for row in rows], index=frame.index, columns=headers)
    styled = frame.style.apply(lambda _: differs.replace({True: HIGHLIGHT, False: ""}), axis=None)
    st.table(styled)  # an HTML table: its cells wrap on a phone instead of being cut off
    st.caption(t(lang, "compare.legend"))
    for sentence in summaries:
        st.markdown(f"- {sentence}")
