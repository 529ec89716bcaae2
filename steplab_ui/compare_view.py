"""The comparison table for any list of setups: used by the compare page and by lesson widgets."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from steplab.i18n import t
from steplab.teaching.compare import compare_rows

HIGHLIGHT = "background-color: rgba(230,159,0,0.28); font-weight: 700"


def table(setups: list[dict[str, Any]], lang: str) -> None:
    """Rows of quantities, one column per setup, cells that differ from the first column highlighted,
    and one sentence per column below (the table's plain-text summary)."""
    rows, summaries = compare_rows(setups, lang)
    headers = [t(lang, "compare.column", n=i + 1) for i in range(len(setups))]
    frame = pd.DataFrame([row.cells for row in rows], index=[row.label for row in rows], columns=headers)
    differs = pd.DataFrame([row.differs for row in rows], index=frame.index, columns=headers)
    styled = frame.style.apply(lambda _: differs.replace({True: HIGHLIGHT, False: ""}), axis=None)
    st.table(styled)  # an HTML table: its cells wrap on a phone instead of being cut off
    st.caption(t(lang, "compare.legend"))
    for sentence in summaries:
        st.markdown(f"- {sentence}")
