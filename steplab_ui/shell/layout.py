"""Page chrome shared by the pages: title, the plan or a clear message, and the palette."""

from __future__ import annotations

import base64
import html
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from steplab.errors import SetupError, TrainerRefusal
from steplab.i18n import t
from steplab.teaching.warnings import Warning
from steplab.trainer.plan import Plan, make_plan
from steplab.trainer.setup import TrainingSetup

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from steplab.teaching.explain import Line

# The browser tab's icon, a file of the app (a `:material/…:` icon is fetched from fonts.gstatic.com, and a class
# may be offline), handed to Streamlit as a data URL read once: given a path, `st.set_page_config` reopened,
# decoded and re-registered the image on every run (5 % of a calculator rerun's server CPU under load).
FAVICON = "data:image/png;base64," + base64.b64encode(
    (Path(__file__).parents[1] / "assets" / "favicon.png").read_bytes()).decode("ascii")

# One colour per concept, the same everywhere (Okabe–Ito).
COLOURS = {
    "sample": "#999999",
    "micro_batch": "#0072B2",
    "accumulation": "#E69F00",
    "update": "#D55E00",
    "epoch": "#009E73",
    "eval": "#CC79A7",
    "checkpoint": "#56B4E9",
}

# Readability the theme options of .streamlit/config.toml cannot reach (WCAG AA contrast is 4.5:1):
# - syntax-highlighted comments in st.code are grey at 3.6:1 in the light theme: draw them in the code's ink;
# - a wrapped code line continues 4 columns in (hanging indent), so wrapped Python never looks dedented;
# - the dark theme's primary colour is light (so selected tabs and options read on dark grounds), so the
#   text on primary buttons (form submit buttons too: `stBaseButton-primaryFormSubmit`) turns dark; the dark
#   theme is the one that follows a dark system setting;
# - Streamlit's light chart theme writes figure text in CHART_GREY (3.8:1 on white): it becomes CHART_INK;
# - coloured or grey words a figure draws itself use FIGURE_TEXT: its light variant reads at 4.5:1 on white,
#   and a dark system setting turns it into its dark variant (no one colour reads on both grounds). The
#   browser decides: it always knows the theme it shows, the server may not (st.context.theme on a first run).
# A console's text (`console_text`: a log block, the playground's console) is a <pre> in the code font on a
# grey ground that reads on both themes, wrapped (no sideways scroll region) with each line's continuation 4
# columns in; it is not an st.code block, whose syntax highlighter costs a new visitor's browser about 0.25 s to
# load for text it would not colour.
# And two layout rules: result cards (containers keyed `CARDS_KEY…`) share a wrapping row evenly, at least 13rem
# each: three a row on a wide page, one a row on a phone; the page's first row (`FIRST_ROW_KEY`: the heading, then
# the presenter switch) keeps the heading at least 18rem wide, so on a phone the switch wraps below the title; a
# labelled row (`LABELLED_ROW_KEY…`: a label, then what it labels) gives its label 48 % in the caption's size
# and wraps it there.
CARDS_KEY = "steplab_cards"
LABELLED_ROW_KEY = "steplab_labelled_row"
FIRST_ROW_KEY = "presenter_bar"
CONSOLE_CLASS = "steplab-console"
CHART_GREY = "#808495"
CHART_INK = "#555966"
# Words drawn inside figures, by concept: (on the light ground, on the dark ground), each >= 4.5:1 on its own.
FIGURE_TEXT = {
    "ink": ("#0a0a0a", "#ffffff"),  # presenter mode's full contrast
    "muted": ("#6b6b6b", "#a3a3a3"),
    "epoch": ("#007a5a", COLOURS["epoch"]),
    "update": ("#b34700", "#ff7f2a"),
}


# Every figure a page draws goes through `chart`, with this one plotly config (tests/test_layout.py finds no other
# `plotly_chart` call): the mode bar shows on hover (no plotly logo; Streamlit adds its full-screen button), a
# scroll never zooms (a page scrolls over its figures), the figure follows its column's width, and the camera
# button saves a PNG at twice the size, named after the figure. Streamlit's chart theme colours the figure for
# the light or dark theme; the words' size in presenter view is the figure builders' (`presenter.figure_layout`),
# as a cached figure is drawn as it was built (`frozen_figure`).
CHART_CONFIG: dict[str, Any] = {"displaylogo": False, "scrollZoom": False, "responsive": True}
# Below this width (Streamlit's own phone breakpoint) a figure has no mode bar: a phone has no hover, so plotly
# kept it drawn over the top of the figure, where the legends are; its zoom and pan fight the page's scrolling.
PHONE_WIDTH = 640
PNG_SCALE = 2


def chart_config(file_name: str) -> dict[str, Any]:
    """The one plotly config, its PNG saved as `steplab-<file_name>.png` (the animation's HTML export uses it too)."""
    return {**CHART_CONFIG, "toImageButtonOptions": {"filename": f"steplab-{file_name}", "scale": PNG_SCALE}}


def chart(figure: go.Figure, key: str, alt: str, file_name: str | None = None) -> None:
    """Draw a plotly figure the one way: `alt` its text alternative, saved as `steplab-<file_name or key>.png`."""
    st.plotly_chart(figure, key=key, alt=alt, theme="streamlit", config=chart_config(file_name or key))


def svg_fill(colour: str) -> str:
    """`#rrggbb` as plotly writes it into an SVG text's style attribute."""
    return "fill: rgb({}, {}, {})".format(*(int(colour[i:i + 2], 16) for i in (1, 3, 5)))


def _readability_css() -> str:
    css = """<style>
[data-testid='stCode'] .token.comment { color: inherit; font-style: italic; }
[data-testid='stCode'] code[style*='pre-wrap'] > span { display: block; padding-left: 4ch; text-indent: -4ch; }
@media (prefers-color-scheme: dark) {
  [data-testid^='stBaseButton-primary']:not(:disabled),
  [data-testid^='stBaseButton-primary']:not(:disabled) * { color: #1d0b0e; }
  [data-testid='stMultiSelectTagsContainer'] [data-tag], [data-testid='stMultiSelectTagsContainer'] [data-tag] * { color: #1d0b0e !important; }
FIGURE_TEXT_DARK
}
.stPlotlyChart text[style*='CHART_GREY_FILL'] { fill: CHART_INK !important; }
.CONSOLE_CLASS { font-family: "Source Code Pro", monospace; font-size: 0.875rem; line-height: 1.6; margin: 0;
  padding: 1rem; border-radius: 0.5rem; background: rgba(128, 128, 128, 0.12); white-space: pre-wrap;
  overflow-wrap: anywhere; }
.CONSOLE_CLASS > span { display: block; min-height: 1.6em; padding-left: 4ch; text-indent: -4ch; }
[class*='st-key-CARDS_KEY'] > .stElementContainer { flex: 1 1 13rem; }
.st-key-FIRST_ROW_KEY > :first-child { flex: 1 1 18rem !important; min-width: 0; }
[class*='st-key-LABELLED_ROW_KEY'] > :first-child { flex: 0 1 48% !important; min-width: 0; }
[class*='st-key-LABELLED_ROW_KEY'] > :first-child p { font-size: 0.875rem; }
[class*='st-key-LABELLED_ROW_KEY'] > :last-child { flex: 1 1 0 !important; min-width: 0; }
@media (max-width: PHONE_WIDTHpx) { .stPlotlyChart .modebar-container { display: none !important; } }
</style>"""
    dark_text = "\n".join(f"  .stPlotlyChart text[style*='{svg_fill(light)}'] {{ fill: {dark} !important; }}"
                          for light, dark in FIGURE_TEXT.values())
    for name, value in (("CONSOLE_CLASS", CONSOLE_CLASS), ("CARDS_KEY", CARDS_KEY), ("FIRST_ROW_KEY", FIRST_ROW_KEY),
                        ("LABELLED_ROW_KEY", LABELLED_ROW_KEY), ("FIGURE_TEXT_DARK", dark_text),
                        ("CHART_GREY_FILL", svg_fill(CHART_GREY)), ("CHART_INK", CHART_INK),
                        ("PHONE_WIDTH", str(PHONE_WIDTH))):
        css = css.replace(name, value)
    return css


READABILITY_CSS = _readability_css()


def readability_fixes() -> None:
    """Style-only HTML: Streamlit adds it to the page without taking space."""
    st.html(READABILITY_CSS)


def console_text(text: str) -> None:
    """Plain text as a console prints it (monospaced, every line kept, wrapped at the column's edge), escaped;
    each line a block of its own, for the hanging indent."""
    lines = "".join(f"<span>{html.escape(line)}</span>" for line in text.split("\n"))
    st.html(f"<pre class='{CONSOLE_CLASS}'>{lines}</pre>")


def header(lang: str, page: str, heading: DeltaGenerator | None = None, intro: bool = True) -> None:
    """The page's title (into `heading`, the first row's slot beside the presenter switch) and its intro below."""
    (heading or st).title(t(lang, f"page.{page}.title"))
    if intro:
        st.caption(t(lang, f"page.{page}.intro"))


def show_setup_error(error: SetupError, lang: str) -> None:
    st.error(t(lang, "error.setup", message=error.message(lang)), icon=":material/error:")


def show_refusal(refusal: TrainerRefusal, lang: str) -> None:
    st.error(t(lang, "error.refusal"), icon=":material/block:")
    st.code(f"{refusal.error_type}: {refusal.message}", language="text", wrap_lines=True)
    st.caption(refusal.fix.get(lang) if refusal.fix is not None else t(lang, "error.refusal_hint"))


def plan_or_message(setup: TrainingSetup | None, error: SetupError | None, lang: str) -> Plan | None:
    """The plan of the shared setup, or a clear message in the user's language (never a traceback). A link that
    names a TRL trainer class is said to be counted as the plain Trainer counts it here (GRPO has its own page)."""
    if error is not None or setup is None:
        show_setup_error(error, lang)
        return None
    if setup.trainer_class == "GRPOTrainer":
        st.info(t(lang, "plan.trainer_class_grpo"), icon=":material/info:")
        page_link("app_pages/grpo.py", "grpo", t(lang, "page.grpo.title"), ":material/auto_awesome:")
    elif setup.trainer_class != "Trainer":
        st.info(t(lang, "plan.trainer_class", name=setup.trainer_class), icon=":material/info:")
    try:
        return make_plan(setup)
    except TrainerRefusal as refusal:
        show_refusal(refusal, lang)
    except SetupError as problem:
        show_setup_error(problem, lang)
    return None


def worked_markdown(lines: Iterable[Line], lang: str) -> str:
    """The engine's worked arithmetic as one Markdown element: a paragraph a line, the label in bold, the formula
    as code, the note after a dash (the calculator, /grpo, a lesson's widgets and a class reveal all write it so)."""
    colon, dash = ("：", "——") if lang == "zh" else (": ", " — ")
    return "\n\n".join(f"**{line.label.get(lang)}**{colon}`{line.formula}`"
                         + (f"{dash}{line.note.get(lang)}" if line.note else "") for line in lines)


def show_warnings(warnings: list[Warning], lang: str) -> None:
    if not warnings:
        st.success(t(lang, "warnings.none"), icon=":material/check_circle:")
        return
    for warning in warnings:
        st.warning(f"**{warning.text.get(lang)}**  \n{warning.fix.get(lang)}", icon=":material/warning:")


def page_link(path: str, url_path: str, label: str, icon: str) -> None:
    """A link to another page; when a page runs alone (no `st.navigation` yet), a plain link that keeps the setup."""
    from urllib.parse import urlencode

    from streamlit.errors import StreamlitAPIException

    try:
        st.page_link(path, label=label, icon=icon)
    except StreamlitAPIException:
        query = urlencode(st.query_params.to_dict())
        st.markdown(f"[{label}](/{url_path}{'?' + query if query else ''})")
