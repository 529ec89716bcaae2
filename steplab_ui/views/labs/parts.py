"""What every lab view draws with: cards, notices, the labs' figure frame and the drawing helpers.

`sci` and `ratio` are the labs' two readings of a measured number (a difference that may be rounding, how many
times as far), written by `steplab.i18n`'s formatters.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import plotly.graph_objects as go
import streamlit as st

from steplab.i18n import fmt_exponent, fmt_fixed, fmt_significant, t
from steplab_ui.shell import layout, presenter

MISSING = "—"  # a table cell with no value (no single gradient to compare)
SCIENTIFIC_BELOW = 1e-3  # smaller numbers are written as 4.2e-17
RATIO_GROUPED_FROM = 100  # ratios from here on are written without decimals (1,024×)


@dataclass(frozen=True)
class Card:
    """One `st.metric`: its label, value, help and (optionally) a delta."""

    label: str
    value: str
    help: str
    delta: str | None = None
    delta_color: Literal["normal", "inverse", "off"] = "normal"
    delta_arrow: Literal["auto", "up", "down", "off"] = "auto"


@dataclass(frozen=True)
class Notice:
    """A coloured message box: which kind (`st.success`, `st.info`, ...), its text and its icon."""

    kind: Literal["success", "info", "warning", "error"]
    text: str
    icon: str


def sci(value: float) -> str:
    """Small numbers in scientific notation (4.2e-17), others with three significant digits (0.08)."""
    if value == 0:
        return "0"
    return fmt_exponent(value, 1) if abs(value) < SCIENTIFIC_BELOW else fmt_significant(value, 3)


def ratio(value: float) -> str:
    """A ratio as a multiple: 8.00×, or 1,024× when large."""
    return fmt_fixed(value, 2 if value < RATIO_GROUPED_FROM else 0) + "×"


def framed(figure: go.Figure, height: int = 340, legend_below: bool = False) -> go.Figure:
    """The labs' figure frame: height, margins and a horizontal legend (below the plot when it is long,
    so that on a phone it does not squeeze the plot from above)."""
    legend = ({"orientation": "h", "y": -0.2, "yanchor": "top", "x": 0} if legend_below
              else {"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0})
    figure.update_layout(height=height, margin={"l": 10, "r": 10, "t": 30 if legend_below else 40, "b": 40},
                         legend=legend)
    return figure


# --- Streamlit: the drawing helpers -----------------------------------------------------------------------

def chart(figure: go.Figure, key: str, sentence: str) -> None:
    """Draw a figure with its text alternative as `alt` and as a visible caption (presenter view: a copy with
    projector-sized words)."""
    layout.chart(presenter.enlarged(figure) if presenter.is_on() else figure, key, sentence)
    st.caption(sentence)


def show(notice: Notice | None) -> None:
    """Draw a notice in its box (nothing for None)."""
    if notice is not None:
        getattr(st, notice.kind)(notice.text, icon=notice.icon)


def show_cards(cards: Sequence[Card]) -> None:
    """Draw cards side by side, one column each."""
    for column, card in zip(st.columns(len(cards)), cards, strict=True):
        column.metric(card.label, card.value, delta=card.delta, delta_color=card.delta_color,
                      delta_arrow=card.delta_arrow, border=True, help=card.help)


def method(text: str, lang: str) -> None:
    """A lab's method, folded away."""
    with st.expander(t(lang, "labs.method"), icon=":material/science:"):
        st.markdown(text)
