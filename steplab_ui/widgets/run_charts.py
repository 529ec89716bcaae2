"""The pictures of a run on /run, each with its text alternative: the logged learning rate over StepLab's curve,
the loss with epoch boundaries, evaluations and checkpoints, `eval_loss`, and `grad_norm` with its spikes.

Plain plotly dicts (validated in the tests); every number comes from the run's files or from the engine. No trace
carries more than `CAP` points: a longer run is thinned evenly (spikes and the last row always kept).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from steplab.i18n import fmt_int, t
from steplab.runfiles.explanation import Explanation
from steplab.runfiles.patterns import grad_spikes
from steplab.runfiles.planned import last_earlier_step
from steplab.runfiles.rows import Rows
from steplab.simulation.run_log import logged_learning_rates
from steplab.trainer.events import events
from steplab_ui.shell.layout import COLOURS
from steplab_ui.shell.presenter import figure_layout
from steplab_ui.widgets.frozen_figure import FrozenFigure, frozen

CAP = 2000  # points a trace carries at most
MARKERS_CAP = 400  # epoch boundaries, evaluations or checkpoints drawn at most
LOGGED = COLOURS["micro_batch"]  # what the run logged: blue; StepLab's curve: the update's vermilion


@dataclass(frozen=True)
class Picture:
    """One figure, its tab's title and its text alternative (shown beside it, and given as `alt`)."""

    key: str
    title: str
    figure: FrozenFigure
    alt: str


def _thin(count: int, keep: np.ndarray | None = None) -> np.ndarray:
    """Indices of at most `CAP` rows, evenly spread, the last one and `keep` always among them."""
    if count <= CAP:
        return np.arange(count)
    chosen = np.unique(np.linspace(0, count - 1, CAP).round().astype(np.int64))
    return np.union1d(chosen, keep) if keep is not None and len(keep) else chosen


def _plain(values: np.ndarray) -> list:
    return [None if v != v else float(v) for v in values.tolist()]


def _layout(lang: str, x_title: str, y_title: str, presenter: bool, log_y: bool = False) -> dict:
    layout = {
        "height": 330, "margin": {"l": 10, "r": 10, "t": 30, "b": 40}, "showlegend": True,
        "legend": {"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0},
        "xaxis": {"title": {"text": x_title}, "separatethousands": True, "rangemode": "tozero"},
        "yaxis": {"title": {"text": y_title}, "exponentformat": "e" if log_y else "none"},
        "hovermode": "closest",
    }
    return figure_layout({**layout, "height": 420}) if presenter else layout


def _vertical(steps: list[int], colour: str, dash: str) -> list[dict]:
    return [{"type": "line", "xref": "x", "yref": "paper", "x0": s, "x1": s, "y0": 0, "y1": 1,
             "line": {"color": colour, "width": 1, "dash": dash}, "layer": "below"} for s in steps[:MARKERS_CAP]]


def _series(rows: Rows, column: str) -> tuple[np.ndarray, np.ndarray]:
    mask = rows.has(column) & (rows.steps >= 0)
    return rows.steps[mask], rows.column(column)[mask]


def learning_rate(ex: Explanation, lang: str, presenter: bool = False) -> Picture | None:
    """The logged learning rates as points over the rate StepLab's plan logs at every step (the earlier run's
    before a checkpoint, dashed)."""
    rows = ex.reconciliation.rows
    planned = ex.planning.planned
    if rows is None:
        return None
    steps, rates = _series(rows, "learning_rate")
    if not len(steps):
        return None
    traces = []
    if planned is not None and ex.setup.schedule_known:
        plan = planned.plan
        last = max(planned.steps_run, 1)
        grid = np.unique(np.linspace(1, last, min(last, CAP)).round().astype(np.int64))
        split = last_earlier_step(planned, "learning_rate")
        parts = [(grid[grid > (split or 0)], plan, "solid", t(lang, "run.chart.lr_plan", total=fmt_int(plan.max_steps)))]
        if split is not None and planned.earlier is not None:
            parts.insert(0, (grid[grid <= split], planned.earlier, "dash", t(lang, "run.chart.lr_earlier",
                                                                           total=fmt_int(planned.earlier.max_steps))))
        for part, source, dash, name in parts:
            if len(part):
                traces.append({"type": "scatter", "mode": "lines", "x": part.tolist(),
                               "y": logged_learning_rates(source, part).tolist(), "name": name,
                               "line": {"color": COLOURS["update"], "width": 2, "dash": dash},
                               "hovertemplate": t(lang, "run.chart.lr_hover") + "<extra></extra>"})
    chosen = _thin(len(steps))
    traces.append({"type": "scatter", "mode": "markers", "x": steps[chosen].tolist(), "y": _plain(rates[chosen]),
                   "name": t(lang, "run.chart.logged"), "marker": {"color": LOGGED, "size": 6},
                   "hovertemplate": t(lang, "run.chart.lr_hover") + "<extra></extra>"})
    layout = _layout(lang, t(lang, "run.chart.step"), t(lang, "run.chart.lr"), presenter, log_y=True)
    check = ex.reconciliation.by_name().get("learning_rates")
    if check is None or check.agree is None:
        alt = t(lang, "run.chart.lr_alt_alone", rows=fmt_int(len(steps)))
    elif check.agree:
        alt = t(lang, "run.chart.lr_alt_agree", rows=fmt_int(check.run))
    else:
        alt = t(lang, "run.chart.lr_alt_differ", rows=fmt_int(check.run), agree=fmt_int(check.steplab),
                note=check.note.get(lang) if check.note else "")
    return Picture("lr", t(lang, "run.chart.lr_tab"), frozen({"data": traces, "layout": layout}), alt)


def _event_steps(ex: Explanation, kind: str) -> list[int]:
    """Where the run evaluated or saved (as its files say), else where StepLab's plan does."""
    check = ex.reconciliation.by_name().get({"eval": "eval_steps", "save": "save_steps"}[kind])
    if check is not None and isinstance(check.run, list):
        return check.run
    planned = ex.planning.planned
    return events(planned.plan, kind).steps(MARKERS_CAP) if planned is not None else []


def loss(ex: Explanation, lang: str, presenter: bool = False) -> Picture | None:
    """The training loss, epoch boundaries (green), evaluations (purple) and checkpoints (sky blue)."""
    rows = ex.reconciliation.rows
    if rows is None:
        return None
    steps, values = _series(rows, "loss")
    if not len(steps):
        return None
    chosen = _thin(len(steps))
    traces = [{"type": "scatter", "mode": "lines+markers" if len(steps) <= 200 else "lines",
               "x": steps[chosen].tolist(), "y": _plain(values[chosen]), "name": t(lang, "run.chart.loss"),
               "line": {"color": LOGGED, "width": 2}, "marker": {"size": 5},
               "hovertemplate": t(lang, "run.chart.loss_hover") + "<extra></extra>"}]
    planned = ex.planning.planned
    boundaries = [s for s in planned.plan.epoch_end_steps(MARKERS_CAP) if s < planned.steps_run] if planned else []
    shapes = _vertical(boundaries, COLOURS["epoch"], "dot")
    finite = values[np.isfinite(values)]
    top, bottom = (float(finite.max()), float(finite.min())) if len(finite) else (1.0, 0.0)
    for kind, colour, symbol, height in (("eval", COLOURS["eval"], "diamond", top),
                                         ("save", COLOURS["checkpoint"], "square", bottom)):
        marks = _event_steps(ex, kind)[:MARKERS_CAP]
        if marks:  # evaluations along the top, checkpoints along the bottom: never on top of each other
            traces.append({"type": "scatter", "mode": "markers", "x": marks, "y": [height] * len(marks),
                           "name": t(lang, f"run.chart.{kind}"), "marker": {"color": colour, "symbol": symbol,
                                                                             "size": 9},
                           "hovertemplate": t(lang, f"run.chart.{kind}_hover") + "<extra></extra>"})
    if boundaries:  # a legend entry for the dotted lines
        traces.append({"type": "scatter", "mode": "lines", "x": [None], "y": [None], "name": t(lang, "run.chart.epochs"),
                       "line": {"color": COLOURS["epoch"], "dash": "dot"}})
    layout = {**_layout(lang, t(lang, "run.chart.step"), t(lang, "run.chart.loss"), presenter), "shapes": shapes}
    finite = np.isfinite(values)
    alt = t(lang, "run.chart.loss_alt", rows=fmt_int(len(steps)), first=float(values[finite][0]) if finite.any()
            else 0.0, last=float(values[finite][-1]) if finite.any() else 0.0, start=fmt_int(int(steps[0])),
            end=fmt_int(int(steps[-1])), epochs=fmt_int(len(boundaries) + 1))
    return Picture("loss", t(lang, "run.chart.loss_tab"), frozen({"data": traces, "layout": layout}), alt)


def eval_loss(ex: Explanation, lang: str, presenter: bool = False) -> Picture | None:
    rows = ex.reconciliation.rows
    if rows is None:
        return None
    steps, values = _series(rows, "eval_loss")
    if not len(steps):
        return None
    traces = [{"type": "scatter", "mode": "lines+markers", "x": steps.tolist(), "y": _plain(values),
               "name": t(lang, "run.chart.eval_loss"), "line": {"color": COLOURS["eval"], "width": 2},
               "marker": {"symbol": "diamond", "size": 8},
               "hovertemplate": t(lang, "run.chart.loss_hover") + "<extra></extra>"}]
    layout = _layout(lang, t(lang, "run.chart.step"), t(lang, "run.chart.eval_loss"), presenter)
    best = int(np.nanargmin(values)) if np.isfinite(values).any() else 0
    alt = t(lang, "run.chart.eval_alt", count=len(steps), first=float(values[0]), last=float(values[-1]),
            best=float(values[best]), step=fmt_int(int(steps[best])))
    return Picture("eval", t(lang, "run.chart.eval_tab"), frozen({"data": traces, "layout": layout}), alt)


def grad_norm(ex: Explanation, lang: str, presenter: bool = False) -> Picture | None:
    rows = ex.reconciliation.rows
    if rows is None:
        return None
    steps, values = _series(rows, "grad_norm")
    if not len(steps):
        return None
    spikes = grad_spikes(rows)
    chosen = _thin(len(steps), np.flatnonzero(np.isin(steps, spikes)))
    traces = [{"type": "scatter", "mode": "lines", "x": steps[chosen].tolist(), "y": _plain(values[chosen]),
               "name": t(lang, "run.chart.grad_norm"), "line": {"color": LOGGED, "width": 1.5},
               "hovertemplate": t(lang, "run.chart.grad_hover") + "<extra></extra>"}]
    if len(spikes):
        at = np.isin(steps, spikes)
        traces.append({"type": "scatter", "mode": "markers", "x": steps[at][:MARKERS_CAP].tolist(),
                       "y": _plain(values[at][:MARKERS_CAP]), "name": t(lang, "run.chart.spikes"),
                       "marker": {"color": COLOURS["update"], "symbol": "x", "size": 11},
                       "hovertemplate": t(lang, "run.chart.grad_hover") + "<extra></extra>"})
    layout = _layout(lang, t(lang, "run.chart.step"), t(lang, "run.chart.grad_norm"), presenter)
    median = float(np.nanmedian(values)) if np.isfinite(values).any() else 0.0
    alt = t(lang, "run.chart.grad_alt" if len(spikes) else "run.chart.grad_alt_none", rows=fmt_int(len(steps)),
            median=median, count=len(spikes), steps=", ".join(fmt_int(int(s)) for s in spikes[:5]))
    return Picture("grad", t(lang, "run.chart.grad_tab"), frozen({"data": traces, "layout": layout}), alt)


def pictures(ex: Explanation, lang: str, presenter: bool = False) -> list[Picture]:
    """Every picture the run's files allow, in the page's order."""
    found = [build(ex, lang, presenter) for build in (learning_rate, loss, eval_loss, grad_norm)]
    return [picture for picture in found if picture is not None]
