"""Presenter view, on every page: one switch, kept in the URL (`?presenter=1`), and one style for a projector.

`page()` calls `sync` before anything is drawn and puts the switch at the right end of the page's first row
(`bar`): in the main area, so it is on screen at any width and with the sidebar hidden, and below nothing of
Streamlit's (presenter view hides Streamlit's header and toolbar). The switch is a button with a keyboard
shortcut (`SHORTCUT`); Tab reaches it too. A deep link with `?presenter=1` opens presenter view; the session
keeps it when a page change drops the URL value, and the URL follows the switch.

At 1920 × 1080 the style makes key numbers (`st.metric`) at least `NUMBER_PX` high and body text, labels and
figure words (`FIGURE_FONT`, passed to the figure builders) at least `TEXT_PX`.
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from steplab.i18n import t
from steplab_ui.shell import layout

PARAM = "presenter"  # ?presenter=1
ON = ("1", "true")  # `true`: the animation page's older links
OFF = ("0", "false")
STATE = "_steplab_presenter"
SWITCH = "presenter_switch"  # the button's key
BAR = layout.FIRST_ROW_KEY  # the page's first row: the heading, then the switch
SHORTCUT = "Alt+P"
TEXT_PX = 24
NUMBER_PX = 52
FIGURE_FONT = TEXT_PX  # the smallest word a figure draws in presenter view


def is_on() -> bool:
    """Whether this run draws presenter view (after `sync`)."""
    return bool(st.session_state.get(STATE, False))


def _write_url(on: bool) -> None:
    if on:
        if st.query_params.get(PARAM) != "1":
            st.query_params[PARAM] = "1"
    elif PARAM in st.query_params:
        del st.query_params[PARAM]


def sync() -> bool:
    """Once a run, before anything is drawn: the URL decides (a deep link or the switch), else the session does
    (a page change drops the URL's value); the URL then says the same."""
    raw = str(st.query_params.get(PARAM, "")).strip().lower()
    on = True if raw in ON else False if raw in OFF else is_on()
    st.session_state[STATE] = on
    _write_url(on)
    return on


def flip() -> None:
    """The switch's callback: presenter view on or off, the URL in step."""
    on = not is_on()
    st.session_state[STATE] = on
    _write_url(on)


def switch(lang: str, on: bool) -> None:
    """The one presenter switch: a real button (Tab, Enter or Space) with a shortcut, saying what it will do."""
    st.button(t(lang, "presenter.leave" if on else "presenter.enter"), key=SWITCH, on_click=flip,
              icon=":material/close_fullscreen:" if on else ":material/co_present:", shortcut=SHORTCUT,
              help=t(lang, "presenter.help", shortcut=SHORTCUT))


def bar(lang: str, on: bool) -> DeltaGenerator:
    """The page's first row: a slot for the heading (returned), then the switch at the right end."""
    with st.container(horizontal=True, vertical_alignment="center", key=BAR):
        heading = st.container()
        switch(lang, on)
    return heading


def style() -> None:
    """The presenter style (static CSS, no script); Streamlit adds it without taking space."""
    st.html(CSS)


def figure_layout(layout: dict[str, Any]) -> dict[str, Any]:
    """A plain plotly layout with presenter-sized words: every text without a size of its own, the legend, the
    axes' ticks and titles (the builders give their own sized notes `FIGURE_FONT` themselves)."""
    font = {"size": FIGURE_FONT}
    layout = {**layout, "font": {**layout.get("font", {}), **font}}
    if "legend" in layout:
        layout["legend"] = {**layout["legend"], "font": {**layout["legend"].get("font", {}), **font}}
    for name, axis in list(layout.items()):  # Streamlit's chart theme sizes ticks and axis titles itself
        if name.startswith(("xaxis", "yaxis")) and isinstance(axis, dict):
            title = axis.get("title", {})
            layout[name] = {**axis, "tickfont": {**axis.get("tickfont", {}), **font},
                            "title": {**title, "font": {**title.get("font", {}), **font}} if title else title}
    return layout


def enlarged(figure: go.Figure) -> go.Figure:
    """A copy of a built figure with presenter-sized words (the original may be cached: never changed)."""
    copy = go.Figure(figure)
    copy.update_layout(font_size=FIGURE_FONT, legend_font_size=FIGURE_FONT)
    copy.update_xaxes(tickfont_size=FIGURE_FONT, title_font_size=FIGURE_FONT)
    copy.update_yaxes(tickfont_size=FIGURE_FONT, title_font_size=FIGURE_FONT)
    copy.update_annotations(font_size=FIGURE_FONT)
    return copy


_MAIN = "[data-testid='stMain']"
CSS = """<style>
/* presenter view: no sidebar, no Streamlit header or toolbar (nothing can sit over the page's first row) */
section[data-testid='stSidebar'], [data-testid='stSidebarCollapsedControl'], [data-testid='stExpandSidebarButton'],
header[data-testid='stHeader'], [data-testid='stToolbar'], [data-testid='stDecoration'] {display: none !important;}
[data-testid='stMainBlockContainer'] {max-width: 100% !important; padding: 0.75rem 2.5rem 2rem !important;}
MAIN [data-testid='stVerticalBlock'] {gap: 0.6rem !important;}
MAIN h1 {font-size: 2.75rem !important; line-height: 1.2 !important; padding: 0.15rem 0 !important;}
MAIN h2, MAIN h3 {font-size: 2.1rem !important; line-height: 1.25 !important; padding: 0.3rem 0 0.1rem !important;}
/* words: TEXT_PX at least */
MAIN [data-testid='stMarkdownContainer'] :is(p, li, td, th), MAIN [data-testid='stWidgetLabel'] p,
MAIN [data-testid='stCaptionContainer'], MAIN [data-testid='stCaptionContainer'] p, MAIN [data-testid='stTable'] :is(td, th),
MAIN [data-testid='stExpander'] summary p, MAIN [data-testid='stMetricLabel'] p, MAIN [data-testid='stAlert'] p,
MAIN [data-testid='stSliderThumbValue'], MAIN [data-testid='stSliderTickBar'] div, MAIN [data-testid='stProgress'] p
  {font-size: TEXT_PXpx !important; line-height: 1.4 !important;}
MAIN [data-testid='stCaptionContainer'], MAIN [data-testid='stCaptionContainer'] p {color: inherit !important; opacity: 0.92 !important;}
MAIN [data-testid='stMarkdownContainer'] code, MAIN [data-testid='stCode'] code {font-size: 0.95em !important;}
MAIN [data-testid='stCode'] code, MAIN .CONSOLE {font-size: 1.35rem !important;}
MAIN [data-testid='stMetricLabel'] p {font-weight: 700 !important;}
/* a card's label wraps rather than losing its end ("训练轮（state.ep…" on /animation) */
MAIN [data-testid='stMetricLabel'], MAIN [data-testid='stMetricLabel'] *
  {white-space: normal !important; overflow: visible !important; text-overflow: clip !important; height: auto !important;}
/* key numbers: NUMBER_PX */
MAIN [data-testid='stMetric'] [data-testid='stMetricValue'], MAIN [data-testid='stMetric'] [data-testid='stMetricValue'] *
  {font-size: NUMBER_PXpx !important; font-weight: 800 !important; line-height: 1.15 !important;}
MAIN [data-testid='stMetric'] {padding: 0.5rem 1rem !important; border-width: 2px !important;}
/* controls a hand on a clicker or a mouse across the room can hit */
MAIN button {min-height: 3.25rem !important; border-width: 2px !important;}
MAIN button p, MAIN button span {font-size: TEXT_PXpx !important; font-weight: 700 !important;}
MAIN input, MAIN [data-baseweb='select'] div, MAIN [data-baseweb='select'] span
  {font-size: TEXT_PXpx !important;}
MAIN [data-baseweb='input'], MAIN [data-baseweb='select'] > div {min-height: 3.25rem !important;}
/* a choice's circle or box as large as its words (Streamlit's 1 rem beside TEXT_PX text looked like a dot) */
MAIN [data-testid='stRadioOption'] > div > div:first-child, MAIN [data-testid='stCheckbox'] label > span:first-child
  {width: 1.6rem !important; height: 1.6rem !important; min-width: 1.6rem !important; margin-top: 0.1rem !important;}
MAIN [data-testid='stRadioOption'] > div > div:first-child > div {width: 0.7rem !important; height: 0.7rem !important;}
MAIN [data-testid='stRadioOption'] > div {gap: 0.6rem !important; align-items: flex-start !important;}
/* the min and max under the track (shown on hover, in TEXT_PX) hang below the slider's box: room for them, clear of
   whatever comes next (the animation's frame caption) */
MAIN [data-testid='stSlider'] [role='group'] {padding-top: 0.9rem !important; margin-bottom: 1.6rem !important;}
MAIN [data-testid='stSlider'] [role='group'] > div {height: 3.5rem !important;}
MAIN [data-testid='stSlider'] [role='group'] > div > div:first-child {height: 0.6rem !important; border-radius: 0.3rem !important;}
MAIN [data-testid='stSlider'] [role='group'] > div > div:has(input[type='range'])
  {width: 1.9rem !important; height: 1.9rem !important; box-shadow: 0 0 0 3px rgba(128, 128, 128, 0.35) !important;}
</style>"""
for _name, _value in (("MAIN", _MAIN), ("CONSOLE", layout.CONSOLE_CLASS), ("NUMBER_PX", str(NUMBER_PX)), ("TEXT_PX", str(TEXT_PX))):
    CSS = CSS.replace(_name, _value)
