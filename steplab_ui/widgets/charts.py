"""Figures drawn from a plan (plain plotly; the data comes from the engine)."""

from __future__ import annotations

from functools import lru_cache

import plotly.graph_objects as go

from steplab.i18n import fmt_int, sentences, t
from steplab.trainer.events import events, interval, rhythm
from steplab.trainer.plan import Plan
from steplab_ui.shell.layout import COLOURS
from steplab_ui.shell.presenter import figure_layout
from steplab_ui.widgets.frozen_figure import frozen

MAX_MARKERS = 2000


@lru_cache(maxsize=256)
def timeline(plan: Plan, lang: str, presenter: bool = False) -> go.Figure:
    """Optimizer steps on one axis: epoch boundaries, warmup, evaluations, checkpoints and the last step.

    Built from plain dicts without plotly's per-property validation (the tests validate it), and cached per
    (plan, language, presenter view) for every session: building it was a fifth of a calculator rerun. Draw it,
    never change it. `presenter`: projector-sized words and a taller strip.
    """
    last = max(plan.optimizer_steps, 1)
    horizon = max(plan.max_steps, last)
    shapes, annotations = [], []
    if plan.warmup_steps:
        shapes.append({"type": "rect", "xref": "x", "yref": "paper", "x0": 0, "x1": min(plan.warmup_steps, horizon),
                       "y0": 0, "y1": 1, "fillcolor": COLOURS["accumulation"], "opacity": 0.15, "line": {"width": 0},
                       "layer": "below"})
        annotations.append({"xref": "x", "yref": "paper", "x": 0, "y": 1, "xanchor": "left", "yanchor": "top",
                            "showarrow": False, "text": t(lang, "timeline.warmup")})
    ends = plan.epoch_end_steps(MAX_MARKERS)
    traces = [{
        "type": "scatter", "x": ends, "y": [0.5] * len(ends), "mode": "markers", "name": t(lang, "timeline.epoch_end"),
        "marker": {"symbol": "line-ns-open", "size": 40, "color": COLOURS["epoch"], "line": {"width": 3}},
        "hovertemplate": t(lang, "timeline.epoch_hover") + "<extra></extra>",
        "customdata": list(range(1, len(ends) + 1)),
    }]
    for kind, y, symbol, colour in (("eval", 0.75, "diamond", "eval"), ("save", 0.25, "square", "checkpoint")):
        steps = events(plan, kind).steps(limit=MAX_MARKERS)
        traces.append({
            "type": "scatter", "x": steps, "y": [y] * len(steps), "mode": "markers", "name": t(lang, f"timeline.{kind}"),
            "marker": {"symbol": symbol, "size": 12, "color": COLOURS[colour]},
            "hovertemplate": t(lang, f"timeline.{kind}_hover") + "<extra></extra>",
        })
    traces.append({
        "type": "scatter", "x": [plan.optimizer_steps], "y": [0.5], "mode": "markers+text",
        "name": t(lang, "timeline.stop"), "marker": {"symbol": "x", "size": 14, "color": COLOURS["update"]},
        "text": [t(lang, "timeline.stop_label", step=fmt_int(plan.optimizer_steps))], "textposition": "top left",
        "hovertemplate": t(lang, "timeline.stop_hover") + "<extra></extra>",
    })
    layout = {
        # the legend stands on the strip and grows upwards when it wraps (at 420 px) instead of hanging down over
        # the warmup label and the markers; the strip is 30 px taller to keep its lanes' room
        "height": 240, "margin": {"l": 10, "r": 10, "t": 30, "b": 40}, "showlegend": True,
        "legend": {"orientation": "h", "yanchor": "bottom", "y": 1.04, "x": 0},
        "xaxis": {"title": {"text": t(lang, "timeline.x")}, "range": [0, horizon * 1.03 + 1], "separatethousands": True},
        "yaxis": {"visible": False, "range": [0, 1.2]},
        "shapes": shapes, "annotations": annotations,
    }
    if presenter:
        layout = figure_layout({**layout, "height": 350, "margin": {"l": 10, "r": 10, "t": 60, "b": 70}})
    return frozen({"data": traces, "layout": layout})


def timeline_sentence(plan: Plan, lang: str) -> str:
    """The strip in one sentence (also its text alternative)."""
    per_epoch = plan.num_update_steps_per_epoch
    parts = [t(lang, "timeline.summary", steps=fmt_int(plan.optimizer_steps), per_epoch=fmt_int(per_epoch),
               epochs=f"{plan.final_epoch:.3g}", count=plan.optimizer_steps)]
    if plan.setup.eval_strategy == "steps" and (every := interval(plan, "eval")):
        parts.append(t(lang, "timeline.eval_rhythm", every=fmt_int(every), rhythm=rhythm(plan).get(lang), count=every))
    elif plan.setup.eval_strategy == "epoch":
        parts.append(t(lang, "timeline.eval_epoch"))
    return sentences(lang, *parts)
