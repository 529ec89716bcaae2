"""The learning-rate schedule figure: the LR every update uses, warmup, epochs, events, the stop, overlays.

Plain plotly; every number comes from `steplab.simulation.lr_curve`. No trace carries more than `lr_curve.CAP` points.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from steplab.i18n import fmt_int, t
from steplab.simulation import lr_curve
from steplab.simulation.lr_curve import Curve
from steplab.trainer import geometry
from steplab.trainer.events import events
from steplab_ui.shell.layout import COLOURS, FIGURE_TEXT
from steplab_ui.shell.presenter import figure_layout

OVERLAY_DASHES = ("dot", "dashdot", "longdash")
OVERLAY_COLOURS = ("#0072B2", "#9B59B6", "#8C6D1F")  # blue, purple, olive: apart from the run's vermilion
OVERLAY_CAP = 800  # points per overlay curve (the main curve gets lr_curve.CAP): keeps 3 overlays under 200 KB
OVERLAY_EXACT_LIMIT = 200_000  # an overlay evaluates at most this many updates (an even grid beyond)
MARKER_CAP = 400  # evaluation / checkpoint markers drawn at most (every n-th one beyond that)
PLANNED_COLOUR = COLOURS["sample"]


@dataclass(frozen=True)
class Overlay:
    """Another curve drawn for comparison, with its legend name."""

    name: str
    curve: Curve


def _lr_hover(lang: str, samples: bool = True) -> str:
    parts = ["step", "epoch", "samples", "lr"] if samples else ["step", "epoch", "lr"]
    return "<br>".join(t(lang, f"schedule.hover.{part}") for part in parts)


def _customdata(trace: lr_curve.Trace) -> np.ndarray:
    return np.column_stack([trace.epochs, trace.samples])


def _spread(steps: np.ndarray, gap: float) -> np.ndarray:
    """Indices of `steps` (sorted) at least `gap` apart, from the first; of equal steps the last one counts."""
    kept: list[int] = []
    last = -np.inf
    for index, step in enumerate(steps.tolist()):
        if index + 1 < len(steps) and steps[index + 1] == step:
            continue
        if step - last >= gap:
            kept.append(index)
            last = step
    return np.asarray(kept, dtype=np.int64)


def _epoch_lines(result: Curve, lang: str, top: float, right: float) -> tuple[list[dict], dict | None]:
    """A dotted green line where epochs end and their numbers on a top axis, spread out so they stay readable."""
    numbers, steps = geometry.epoch_boundaries(result.plan)
    if not len(steps):
        return [], None
    lines = _spread(steps, right / 80)
    shown, count = len(lines), geometry.completed_epochs(result.plan)
    x = np.repeat(steps[lines].astype(np.float64), 3)
    x[2::3] = np.nan
    y = np.tile([0.0, top, np.nan], shown)
    name = t(lang, "schedule.epoch_ends")
    if shown < count:
        name += t(lang, "schedule.thinned", shown=fmt_int(shown), count=fmt_int(count))
    trace = {"type": "scatter", "x": x, "y": y, "mode": "lines", "name": name, "hoverinfo": "skip", "xaxis": "x2",
             "line": {"color": COLOURS["epoch"], "width": 1, "dash": "dot"}}
    labels = _spread(steps, right / 10)
    axis = {
        "overlaying": "x", "side": "top", "matches": "x", "tickmode": "array", "showgrid": False,
        "tickvals": steps[labels].tolist(), "ticktext": [fmt_int(int(n)) for n in numbers[labels]],
        "title": {"text": t(lang, "schedule.axis_epoch"), "standoff": 2}, "tickfont": {"color": FIGURE_TEXT["epoch"][0]},
    }
    return [trace], axis


EVAL_MARKER = {"symbol": "diamond", "size": 9, "color": COLOURS["eval"], "line": {"width": 0}}
CHECKPOINT_MARKER = {"symbol": "square-open", "size": 15, "color": COLOURS["checkpoint"],
                     "line": {"width": 2, "color": COLOURS["checkpoint"]}}


def _event_traces(result: Curve, lang: str) -> list[dict]:
    plan = result.plan
    traces = []
    # Checkpoints first, as open squares larger than the diamonds, so that an evaluation at a checkpoint's step (the
    # course saves and evaluates every 50 steps) shows its diamond inside the square instead of under it.
    for kind, marker in (("save", CHECKPOINT_MARKER), ("eval", EVAL_MARKER)):
        steps = lr_curve.event_steps(plan, kind, MARKER_CAP)
        if not len(steps):
            continue
        name = t(lang, f"schedule.{kind}")
        count = events(plan, kind).count()
        if count > len(steps):
            name += t(lang, "schedule.thinned", shown=fmt_int(len(steps)), count=fmt_int(count))
        traces.append({
            "type": "scatter", "x": steps, "y": lr_curve.rates_at(plan, steps), "mode": "markers", "name": name,
            "marker": marker,
            "hovertemplate": t(lang, f"schedule.{kind}_hover") + "<extra></extra>",
        })
    return traces


HORIZON_LABEL_GAP = 10
"""Pixels between the `max_steps = …` label and its dashed line (and the epoch line often drawn on the same step)."""


def figure(result: Curve, lang: str, overlays: Sequence[Overlay] = (), presenter: bool = False) -> go.Figure:
    """The schedule of `result` with its warmup, epochs, evaluations, checkpoints, stop and horizon.

    Built from plain dicts (plotly's per-property validation would cost more than the whole engine).
    `presenter`: projector-sized words, a thicker curve and a legend with room for them.
    """
    plan = result.plan
    runs, horizon = plan.optimizer_steps, plan.max_steps
    peaks = [result.peak, *(o.curve.peak for o in overlays)]
    top = max([p for p in peaks if np.isfinite(p)] + [plan.setup.learning_rate, 1e-12]) * 1.08
    right = max([runs, horizon, 1] + [o.curve.plan.optimizer_steps for o in overlays])
    shapes, annotations = [], []
    if result.warmup:
        end = min(result.warmup, max(runs, horizon))
        shapes.append({"type": "rect", "name": "warmup", "xref": "x", "yref": "paper", "x0": 0, "x1": end, "y0": 0,
                       "y1": 1, "fillcolor": COLOURS["accumulation"], "opacity": 0.15, "line": {"width": 0},
                       "layer": "below"})
        annotations.append({"xref": "x", "yref": "paper", "x": 0, "y": 1, "xanchor": "left", "yanchor": "top",
                            "showarrow": False, "text": t(lang, "schedule.warmup_band", steps=fmt_int(result.warmup), count=result.warmup)})
    shapes.append({"type": "line", "name": "horizon", "xref": "x", "yref": "paper", "x0": horizon, "x1": horizon,
                   "y0": 0, "y1": 1, "line": {"color": PLANNED_COLOUR, "width": 1.5, "dash": "dash"}})
    # beside the line, on its left and halfway up, a clear gap away (`HORIZON_LABEL_GAP`): the last epoch's end often
    # sits on the same step (a dotted epoch line there, which the label used to touch), and the curve ends low on
    # the right
    annotations.append({"xref": "x", "yref": "paper", "x": horizon, "xshift": -HORIZON_LABEL_GAP, "y": 0.55,
                        "xanchor": "right",
                        "yanchor": "middle", "textangle": -90, "showarrow": False, "name": "horizon_label",
                        "font": {"color": FIGURE_TEXT["muted"][0]},
                        "text": t(lang, "schedule.horizon", steps=fmt_int(horizon))})
    traces, epoch_axis = _epoch_lines(result, lang, top, right)
    for index, overlay in enumerate(overlays):
        trace = overlay.curve.run
        traces.append({
            "type": "scatter", "x": trace.steps, "y": trace.rates, "customdata": trace.epochs[:, None],
            "mode": "lines", "name": overlay.name, "opacity": 0.8,
            "line": {"color": OVERLAY_COLOURS[index % len(OVERLAY_COLOURS)], "width": 2,
                     "dash": OVERLAY_DASHES[index % len(OVERLAY_DASHES)]},
            "hovertemplate": "<b>" + overlay.name + "</b><br>" + _lr_hover(lang, samples=False) + "<extra></extra>",
        })
    if result.planned is not None:
        traces.append({
            "type": "scatter", "x": result.planned.steps, "y": result.planned.rates, "mode": "lines",
            "name": t(lang, "schedule.planned"), "line": {"color": PLANNED_COLOUR, "width": 2, "dash": "dash"},
            "hovertemplate": t(lang, "schedule.planned_hover") + "<extra></extra>",
        })
    if runs:
        traces.append({
            "type": "scatter", "x": result.run.steps, "y": result.run.rates, "customdata": _customdata(result.run),
            "mode": "lines", "name": t(lang, "schedule.run"), "line": {"color": COLOURS["update"], "width": 3},
            "hovertemplate": _lr_hover(lang) + "<extra></extra>",
        })
    if runs:  # under the markers of the evaluation and checkpoint that often fall on the last update
        traces.append({
            "type": "scatter", "x": [runs], "y": [result.last], "mode": "markers", "name": t(lang, "schedule.stop"),
            "marker": {"symbol": "x", "size": 13, "color": COLOURS["update"], "line": {"width": 0}},
            "hovertemplate": t(lang, "schedule.stop_hover") + "<extra></extra>",
        })
    traces += _event_traces(result, lang)
    layout = {
        "height": 440, "margin": {"l": 10, "r": 10, "t": 60, "b": 10}, "hovermode": "closest",
        "legend": {"orientation": "h", "yanchor": "top", "y": -0.16, "x": 0},
        "xaxis": {"title": {"text": t(lang, "schedule.axis_step")}, "range": [0, right * 1.04 + 1], "tickformat": ",d"},
        "yaxis": {"title": {"text": t(lang, "schedule.axis_lr")}, "range": [0, top], "exponentformat": "e"},
        "shapes": shapes, "annotations": annotations, "uirevision": f"{plan.setup.lr_scheduler_type}-{horizon}",
    }
    if epoch_axis:
        layout["xaxis2"] = epoch_axis
    if presenter:
        layout = figure_layout({**layout, "height": 560, "margin": {"l": 10, "r": 10, "t": 90, "b": 10},
                                "legend": {**layout["legend"], "y": -0.2}})
        for trace in traces:
            if trace.get("mode") == "lines" and trace["line"].get("width", 0) >= 2:
                trace["line"] = {**trace["line"], "width": trace["line"]["width"] * 1.5}
    return go.Figure(data=traces, layout=layout, _validate=False)
