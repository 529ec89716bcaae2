"""Lab A's view: accumulation equals one big batch, and the three ways to get it wrong (`steplab.labs.accumulation`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from steplab.i18n import fmt_fixed, fmt_float, fmt_int, fmt_lr, fmt_significant, t
from steplab.labs import TOLERANCE, readings
from steplab_ui.shell.layout import COLOURS
from steplab_ui.views.labs.parts import MISSING, Card, Notice, framed, ratio, sci

if TYPE_CHECKING:
    from steplab.labs.accumulation import AccumulationResult


@st.cache_data(max_entries=256, show_spinner=False)
def run_accumulation(batch_size: int, accumulation: int) -> AccumulationResult:
    """Lab A run for real (imports the lab, and so torch), cached for every session."""
    from steplab.labs import accumulation as lab

    return lab.run(batch_size, accumulation)


def accumulation_setup(result: AccumulationResult, lang: str) -> str:
    return t(lang, "labs.a.setup", batch=result.batch_size, accumulation=result.accumulation,
             samples=fmt_int(result.samples_per_update), parameters=fmt_int(result.parameters))


def accumulation_cards(result: AccumulationResult, lang: str) -> list[Card]:
    """The correct variant's gradient and weight differences against the big batch."""
    correct = result.variant("correct")
    return [
        Card(t(lang, "labs.a.grad_diff"), sci(correct.grad_max_abs_diff),
             t(lang, "labs.a.grad_diff_help", scale=fmt_float(result.grad_max_abs, 4))),
        Card(t(lang, "labs.a.sgd_diff"), sci(correct.sgd_param_max_abs_diff), t(lang, "labs.a.param_diff_help")),
        Card(t(lang, "labs.a.adamw_diff"), sci(correct.adamw_param_max_abs_diff), t(lang, "labs.a.param_diff_help")),
    ]


def accumulation_verdict(result: AccumulationResult, lang: str) -> Notice:
    """Same update up to rounding, or how far apart the two are."""
    correct = result.variant("correct")
    worst = readings.worst_difference(correct)
    if readings.is_rounding(worst):
        return Notice("success", t(lang, "labs.a.verdict_same", diff=sci(correct.grad_max_abs_diff),
                                   scale=fmt_float(result.grad_max_abs, 4), tolerance=sci(TOLERANCE),
                                   float32=sci(result.correct_float32_grad_max_abs_diff)),
                      ":material/check_circle:")
    return Notice("warning", t(lang, "labs.a.verdict_differs", diff=sci(worst)), ":material/warning:")


def no_accumulation(result: AccumulationResult, lang: str) -> Notice | None:
    """Without accumulation every variant is the big batch: say so (None with accumulation)."""
    if result.accumulation > 1:
        return None
    return Notice("info", t(lang, "labs.a.no_accumulation"), ":material/info:")


def mistakes_table(result: AccumulationResult, lang: str) -> pd.DataFrame:
    """One row per variant: optimizer steps, gradient size and direction, update sizes against the big batch."""
    return pd.DataFrame([{
        t(lang, "labs.a.col.variant"): t(lang, f"labs.a.variant.{v.key}"),
        t(lang, "labs.a.col.steps"): fmt_int(v.optimizer_steps),
        t(lang, "labs.a.col.grad_ratio"): MISSING if v.grad_norm_ratio is None else ratio(v.grad_norm_ratio),
        t(lang, "labs.a.col.cosine"): MISSING if v.grad_cosine is None else fmt_fixed(v.grad_cosine, 3),
        t(lang, "labs.a.col.sgd"): ratio(v.sgd_update_ratio),
        t(lang, "labs.a.col.adamw"): ratio(v.adamw_update_ratio),
    } for v in result.variants])


def mistake_effects(result: AccumulationResult, lang: str) -> str:
    """Each mistake's measured effect, as a markdown list."""
    no_divide, zero_each, step_each = (result.variant(k) for k in ("no_divide", "zero_each", "step_each"))
    return "\n".join([
        "- " + t(lang, "labs.a.effect.no_divide", ratio=ratio(no_divide.grad_norm_ratio), ga=result.accumulation,
                 sgd=ratio(no_divide.sgd_update_ratio), adamw=ratio(no_divide.adamw_update_ratio)),
        "- " + t(lang, "labs.a.effect.zero_each", batch=result.batch_size,
                 samples=fmt_int(result.samples_per_update),
                 cosine=fmt_fixed(zero_each.grad_cosine, 2), ratio=ratio(zero_each.grad_norm_ratio)),
        "- " + t(lang, "labs.a.effect.step_each", steps=fmt_int(step_each.optimizer_steps),
                 sgd=ratio(step_each.sgd_update_ratio), adamw=ratio(step_each.adamw_update_ratio)),
    ])


def update_ratio_figure(result: AccumulationResult, lang: str) -> go.Figure:
    """Grouped bars, log axis: how far each variant moves the weights against one big-batch update."""
    names = [t(lang, f"labs.a.variant_short.{v.key}") for v in result.variants]
    sgd = [v.sgd_update_ratio for v in result.variants]
    adamw = [v.adamw_update_ratio for v in result.variants]
    axis = readings.log_axis(sgd + adamw)
    figure = go.Figure()
    figure.add_bar(x=names, y=sgd, name="SGD",
                   marker={"color": COLOURS["update"], "pattern": {"shape": "/"}, "opacity": 0.55})
    figure.add_bar(x=names, y=adamw, name="AdamW", marker={"color": COLOURS["update"]})
    figure.add_hline(y=1, line_dash="dot", line_color=COLOURS["sample"])
    figure.update_layout(barmode="group", yaxis={
        "type": "log", "title": t(lang, "labs.a.chart_y"), "tickvals": list(axis.ticks),
        "ticktext": [fmt_significant(x) for x in axis.ticks], "range": [axis.low, axis.high]})
    return framed(figure)


def update_ratio_sentence(result: AccumulationResult, lang: str) -> str:
    """The update-ratio figure in words (its text alternative)."""
    return t(lang, "labs.a.chart_alt", **{f"sgd_{v.key}": ratio(v.sgd_update_ratio) for v in result.variants},
             **{f"adamw_{v.key}": ratio(v.adamw_update_ratio) for v in result.variants}, same=ratio(1.0))


def accumulation_method(result: AccumulationResult, lang: str) -> str:
    from steplab.labs import accumulation as lab

    return t(lang, "labs.a.method", features=lab.FEATURES, hidden=lab.HIDDEN, classes=lab.CLASSES,
             seed=result.seed, sgd_lr=fmt_lr(lab.SGD_LR), adamw_lr=fmt_lr(lab.ADAMW_LR),
             tolerance=fmt_significant(TOLERANCE))
