"""Lab B's view: a token's weight in the loss when micro-batches hold unequal numbers of label tokens, before and
after the fix (`steplab.labs.token_weighting`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import plotly.graph_objects as go
import streamlit as st

from steplab.i18n import fmt_float, fmt_int, fmt_percent, fmt_significant, t
from steplab.labs import TOLERANCE, readings
from steplab_ui.shell.layout import COLOURS
from steplab_ui.views.labs.parts import Card, Notice, framed, sci

if TYPE_CHECKING:
    from steplab.labs.token_weighting import TokenWeightingResult

TOKEN_LAB_SEED = 0  # lab B runs with this seed (the method text says which)
LENGTHS_KEY = "labs_b_lengths"  # the lengths' text input


@st.cache_data(max_entries=256, show_spinner=False)
def run_token_weighting(lengths: tuple[int, ...], batch_size: int) -> TokenWeightingResult:
    """Lab B run for real (imports the lab, and so torch), cached for every session."""
    from steplab.labs import token_weighting as lab

    return lab.run(lengths, batch_size, seed=TOKEN_LAB_SEED)


def set_example_lengths(example: str) -> None:
    """Lab B's example buttons: put an example's lengths into the text input."""
    from steplab.labs.token_weighting import EXAMPLES

    st.session_state[LENGTHS_KEY] = EXAMPLES[example]


def token_setup(result: TokenWeightingResult, lang: str) -> str:
    counts = t(lang, "labs.list_join").join(fmt_int(n) for n in result.tokens_per_micro_batch)
    return t(lang, "labs.b.setup", sequences=len(result.lengths), batch=result.batch_size,
             accumulation=result.accumulation, counts=counts, total=fmt_int(result.total_tokens))


def token_cards(result: TokenWeightingResult, lang: str) -> list[Card]:
    """The old averaging's gradient difference (absolute and relative) and the fix's."""
    return [
        Card(t(lang, "labs.b.old_diff"), sci(result.per_micro_batch_max_abs_diff), t(lang, "labs.b.old_diff_help")),
        Card(t(lang, "labs.b.relative"), fmt_percent(result.per_micro_batch_relative_diff, 1),
             t(lang, "labs.b.relative_help")),
        Card(t(lang, "labs.b.fixed_diff"), sci(result.group_tokens_max_abs_diff), t(lang, "labs.b.fixed_diff_help")),
    ]


def token_verdict(result: TokenWeightingResult, lang: str) -> Notice:
    """Whether the old averaging gave another gradient than one batch."""
    if readings.is_rounding(result.per_micro_batch_max_abs_diff):
        return Notice("success", t(lang, "labs.b.verdict_same", diff=sci(result.per_micro_batch_max_abs_diff),
                                   tolerance=sci(TOLERANCE)), ":material/check_circle:")
    return Notice("warning", t(lang, "labs.b.verdict_differs", diff=sci(result.per_micro_batch_max_abs_diff),
                               scale=fmt_float(result.grad_max_abs, 4), fixed=sci(result.group_tokens_max_abs_diff),
                               old_loss=fmt_float(result.loss_per_micro_batch, 4),
                               loss=fmt_float(result.loss_full, 4)), ":material/warning:")


def token_weight_figure(result: TokenWeightingResult, lang: str) -> go.Figure:
    """Per micro-batch, one token's weight against its fair share: old averaging and the fix."""
    labels = [t(lang, "labs.b.bar_label", j=j, n=fmt_int(n))
              for j, n in enumerate(result.tokens_per_micro_batch, start=1)]
    figure = go.Figure()
    figure.add_bar(x=labels, y=readings.token_weights(result, fixed=False), name=t(lang, "labs.b.series_old"),
                   marker={"color": COLOURS["accumulation"]})
    figure.add_bar(x=labels, y=readings.token_weights(result, fixed=True), name=t(lang, "labs.b.series_fixed"),
                   marker={"color": COLOURS["micro_batch"]})
    figure.update_layout(barmode="group", yaxis={"title": t(lang, "labs.b.chart_y"), "rangemode": "tozero"},
                         xaxis={"title": t(lang, "labs.b.chart_x"), "type": "category"})
    return framed(figure)


def token_weight_sentence(result: TokenWeightingResult, lang: str) -> str:
    """The token-weight figure in words (its text alternative)."""
    old = readings.token_weights(result, fixed=False)
    weights = ", ".join(t(lang, "labs.b.alt_item", j=j, n=fmt_int(n), w=fmt_float(w, 2))
                        for j, (n, w) in enumerate(zip(result.tokens_per_micro_batch, old, strict=True), start=1))
    return t(lang, "labs.b.chart_alt", weights=weights)


def token_method(lang: str) -> str:
    from steplab.labs import token_weighting as lab

    return t(lang, "labs.b.method", vocab=lab.VOCAB, seed=TOKEN_LAB_SEED, ignore=lab.IGNORE,
             tolerance=fmt_significant(TOLERANCE))
