"""The GRPO page's figures: one event of a GRPO run (prompts fanning out into G completions, the round's
completions cut into S micro-batches, the μ passes, the accumulation bucket, the optimizer) and the learning-rate
curve at the current update. Every number is the engine's (`steplab.simulation.grpo_run`, `steplab.trl.grpo`).
"""

from __future__ import annotations

from functools import lru_cache

import plotly.graph_objects as go

from steplab.i18n import fmt_int, fmt_lr, t
from steplab.simulation import grpo_run, lr_curve
from steplab.simulation.grpo_run import GrpoFrame, GrpoTimeline
from steplab.trl.grpo import GrpoPlan
from steplab_ui.shell.layout import COLOURS, FIGURE_TEXT
from steplab_ui.shell.presenter import FIGURE_FONT
from steplab_ui.widgets import schedule_chart
from steplab_ui.widgets.frozen_figure import frozen

MAX_PROMPTS = 6  # prompts drawn one by one; more are written as "+n"
MAX_ANSWERS = 8  # completions drawn per prompt
MAX_SLICES = 12  # micro-batch slices drawn one by one; more are drawn as a bar
MAX_SLOTS = 16  # bucket slots drawn one by one
HEIGHT, PRESENTER_HEIGHT = 360, 480
FAINT = "rgba(128,128,128,0.45)"
GENERATED = "#808080"  # prompts and completions are samples: the sample grey, strong while a round is generated
PROMPTS = (1.0, 13.0, 11.0, 50.0)  # x0, x1, y0, y1
ANSWERS_X = 33.0
SLICES = (42.0, 60.0, 13.0, 50.0)
BUCKET = (70.0, 78.0, 14.0, 44.0)
OPTIMIZER = (83.0, 99.0, 22.0, 38.0)


def _rect(x0: float, y0: float, x1: float, y1: float, **style: object) -> dict:
    return {"type": "rect", "xref": "x", "yref": "y", "x0": x0, "y0": y0, "x1": x1, "y1": y1, "layer": "below",
            **style}


def _note(x: float, y: float, text: str, size: float, **style: object) -> dict:
    font = {"size": round(size), **style.pop("font", {})}
    return {"x": x, "y": y, "xref": "x", "yref": "y", "text": text, "showarrow": False, "font": font, **style}


def _line(x0: float, y0: float, x1: float, y1: float, colour: str, width: float) -> dict:
    return {"type": "line", "xref": "x", "yref": "y", "x0": x0, "y0": y0, "x1": x1, "y1": y1,
            "line": {"color": colour, "width": width}, "layer": "below"}


def _prompts(frame: GrpoFrame, plan: GrpoPlan, lang: str, scale: float) -> tuple[list[dict], list[dict], dict]:
    """The round's prompts, each fanning out into its G completions (drawn brighter on the generation itself)."""
    x0, x1, y0, y1 = PROMPTS
    prompts, generations = plan.unique_prompts_per_round, plan.setup.num_generations
    rows = min(prompts, MAX_PROMPTS)
    band = (y1 - y0) / max(rows, 1)
    first = frame.round_in_epoch * prompts
    fresh = frame.is_generation  # the round being generated: its prompts and completions drawn strong
    edge = GENERATED if fresh else FAINT
    shapes, notes = [], []
    xs, ys = [], []
    notes.append(_note((x0 + x1) / 2, y1 + 5, f"U = {fmt_int(prompts)}", 13 * scale))
    notes.append(_note(ANSWERS_X, y1 + 5, f"G = {fmt_int(generations)}", 13 * scale))
    answers = min(generations, MAX_ANSWERS)
    for row in range(rows):
        top = y1 - band * row
        centre = top - band / 2
        more = row == rows - 1 and prompts > rows
        label = f"+{fmt_int(prompts - rows + 1)}" if more else f"#{fmt_int(first + row + 1)}"
        shapes.append(_rect(x0, centre - band * 0.34, x1, centre + band * 0.34,
                            fillcolor="rgba(153,153,153,0.45)" if fresh else "rgba(153,153,153,0.15)",
                            line={"color": edge, "width": (3 if fresh else 1.5) * scale}))
        notes.append(_note((x0 + x1) / 2, centre, label, 12 * scale))
        spread = band * 0.8
        for answer in range(answers):
            y = centre + spread / 2 - spread * (answer + 0.5) / answers
            shapes.append(_line(x1, centre, ANSWERS_X - 1.2, y, edge if fresh else FAINT, (1.5 if fresh else 1) * scale))
            xs.append(ANSWERS_X)
            ys.append(y)
        if generations > answers:
            notes.append(_note(ANSWERS_X + 2, centre, f"+{fmt_int(generations - answers)}", 11 * scale,
                               xanchor="left"))
    trace = {"type": "scatter", "mode": "markers", "x": xs, "y": ys, "hoverinfo": "skip", "showlegend": False,
             "marker": {"symbol": "circle", "size": max(4.0, min(9.0, 60 / max(rows * answers, 1) + 3)) * scale,
                        "color": COLOURS["sample"]}}
    return shapes, notes, trace


def _slices(frame: GrpoFrame, plan: GrpoPlan, lang: str, scale: float) -> tuple[list[dict], list[dict]]:
    """The round's completions as S micro-batches of B on each GPU: done this pass, the current one, the rest."""
    x0, x1, y0, y1 = SLICES
    setup = plan.setup
    steps, passes = plan.steps_per_generation, setup.num_iterations
    done = -1 if frame.is_generation else frame.slice  # slices of this pass trained on, the current one included
    notes = [_note((x0 + x1) / 2, y1 + 5, f"S = {fmt_int(steps)}", 13 * scale)]
    shapes = [_rect(x0 - 1, y0 - 1, x1 + 1, y1 + 1, line={"color": FAINT, "width": 1})]
    if steps <= MAX_SLICES:
        band = (y1 - y0) / steps
        for index in range(steps):
            top = y1 - band * index
            current = index == done
            fill = COLOURS["micro_batch"] if current else "rgba(0,114,178,0.25)" if index < done else "rgba(0,0,0,0)"
            shapes.append(_rect(x0, top - band * 0.9, x1, top - band * 0.1, fillcolor=fill,
                                line={"color": COLOURS["micro_batch"], "width": (2.5 if current else 1) * scale}))
    else:
        height = (y1 - y0) * (done + 1) / steps
        shapes.append(_rect(x0, y1 - height, x1, y1, fillcolor=COLOURS["micro_batch"], line={"width": 0},
                            visible=done >= 0))
        notes.append(_note((x0 + x1) / 2, (y0 + y1) / 2, f"{fmt_int(done + 1)} / {fmt_int(steps)}", 14 * scale))
    passes_text = t(lang, "grpo.fig.pass", i=fmt_int(frame.iteration + 1), mu=fmt_int(passes))
    notes.append(_note((x0 + x1) / 2, y0 - 4.5, passes_text, 13 * scale,
                       font={"color": FIGURE_TEXT["update"][0] if frame.reused else FIGURE_TEXT["muted"][0]}))
    notes.append({"x": x0 - 1.5, "y": (y0 + y1) / 2, "ax": ANSWERS_X + 4, "ay": (y0 + y1) / 2, "xref": "x",
                  "yref": "y", "axref": "x", "ayref": "y", "text": "", "showarrow": True, "arrowhead": 3,
                  "arrowwidth": 2 * scale, "arrowcolor": COLOURS["micro_batch"]})
    return shapes, notes


def _bucket(frame: GrpoFrame, plan: GrpoPlan, lang: str, scale: float) -> tuple[list[dict], list[dict]]:
    """The accumulation bucket: `fill / GA` micro-batches, vermillion when an update empties it."""
    x0, x1, y0, y1 = BUCKET
    ga = plan.setup.gradient_accumulation_steps
    fill = frame.micro.fill - (1 if frame.is_generation else 0)  # a generation comes before its micro-batch
    depth = max(ga, fill, 1)
    flash = frame.is_step
    shapes = [_rect(x0, y0, x1, y1, line={"color": COLOURS["update"] if flash else COLOURS["accumulation"],
                                          "width": (4 if flash else 2.5) * scale})]
    slot = (y1 - y0 - 1) / depth
    if depth <= MAX_SLOTS:
        for index in range(fill):
            bottom = y0 + 0.5 + slot * index
            colour = COLOURS["micro_batch"] if index == fill - 1 and not frame.is_generation else COLOURS["accumulation"]
            shapes.append(_rect(x0 + 0.6, bottom + slot * 0.1, x1 - 0.6, bottom + slot * 0.9, fillcolor=colour,
                                line={"width": 0}))
    elif fill:
        shapes.append(_rect(x0 + 0.6, y0 + 0.5, x1 - 0.6, y0 + 0.5 + slot * fill, fillcolor=COLOURS["accumulation"],
                            line={"width": 0}))
    notes = [_note((x0 + x1) / 2, y1 + 9.5, "GA", 13 * scale),
             _note((x0 + x1) / 2, y1 + 4, f"<b>{fmt_int(fill)} / {fmt_int(ga)}</b>", 16 * scale)]
    return shapes, notes


def _optimizer(frame: GrpoFrame, timeline: GrpoTimeline, lang: str, scale: float) -> tuple[list[dict], list[dict]]:
    """The optimizer: a vermillion flash with `optimizer.step() #k` when the micro-batch closes an update."""
    x0, x1, y0, y1 = OPTIMIZER
    centre = (x0 + x1) / 2
    lr = fmt_lr(frame.micro.lr) if frame.micro.lr is not None else "—"
    if frame.is_step:
        box = _rect(x0, y0, x1, y1, fillcolor=COLOURS["update"], line={"color": COLOURS["update"], "width": 3 * scale})
        label, ink = f"<b>step()<br>#{fmt_int(frame.step)}</b>", "#000000"  # 5.0:1 on the vermillion
    else:
        box = _rect(x0, y0, x1, y1, line={"color": FAINT, "width": 2 * scale, "dash": "dot"})
        label = f"→ #{fmt_int(frame.updates + 1)}" if frame.updates < timeline.total_steps else "—"
        ink = FIGURE_TEXT["muted"][0]
    notes = [
        _note(centre, (y0 + y1) / 2, label, 13 * scale, font={"color": ink}),
        _note(centre, y1 + 5, t(lang, "grpo.fig.optimizer"), 13 * scale),
        _note(centre, y0 - 4.5, f"lr {lr}", 12 * scale),
        _note(centre, y0 - 11, f"<b>{fmt_int(frame.updates)} / {fmt_int(timeline.total_steps)}</b>", 15 * scale),
    ]
    return [box], notes


def _progress(frame: GrpoFrame, plan: GrpoPlan, lang: str, scale: float) -> tuple[list[dict], list[dict]]:
    """The epoch's rounds: how far through this epoch's prompts the run is."""
    rounds = max(plan.rounds_per_epoch, 1)
    x0, x1, y0, y1 = 1.0, 99.0, 0.5, 2.5
    shapes = [_rect(x0, y0, x1, y1, line={"color": FAINT, "width": 1}),
              _rect(x0, y0, x0 + (x1 - x0) * (frame.round_in_epoch + 1) / rounds, y1, fillcolor=COLOURS["epoch"],
                    line={"width": 0})]
    text = t(lang, "grpo.fig.progress", epoch=frame.epoch + 1, r=fmt_int(frame.round_in_epoch + 1),
             rounds=fmt_int(rounds))
    return shapes, [_note(x0, y1 + 2.2, text, 12 * scale, xanchor="left")]


def frame_spec(timeline: GrpoTimeline, position: int, lang: str, presenter: bool = False) -> dict:
    """The figure of window position `position` as a plain plotly dict (fixed ranges: frames line up)."""
    frame, plan = timeline.frames[position], timeline.plan
    scale = 1.45 if presenter else 1.0
    shapes, notes, trace = _prompts(frame, plan, lang, scale)
    for part, source in ((_slices, plan), (_bucket, plan), (_optimizer, timeline), (_progress, plan)):
        more_shapes, more_notes = part(frame, source, lang, scale)
        shapes += more_shapes
        notes += more_notes
    if frame.is_generation:
        notes.append(_note(PROMPTS[0], PROMPTS[3] + 11, t(
            lang, "grpo.fig.generating", round=fmt_int(frame.round + 1), total=fmt_int(plan.generation_rounds)),
            14 * scale, xanchor="left"))
    if presenter:
        for note in notes:
            font = note.setdefault("font", {})
            font["size"] = max(font.get("size", 0), FIGURE_FONT)
    layout = {
        "height": PRESENTER_HEIGHT if presenter else HEIGHT, "margin": {"l": 4, "r": 4, "t": 4, "b": 4},
        "xaxis": {"range": [0, 100], "visible": False, "fixedrange": True},
        "yaxis": {"range": [0, 68], "visible": False, "fixedrange": True},
        "shapes": shapes, "annotations": notes, "showlegend": False, "dragmode": False,
    }
    return {"data": [trace], "layout": layout}


@lru_cache(maxsize=256)
def frame_figure(timeline: GrpoTimeline, position: int, lang: str, presenter: bool) -> go.Figure:
    """`frame_spec` as a figure (cached per frame: a class scrubs to the same frames; never change it)."""
    return frozen(frame_spec(timeline, position, lang, presenter))



@lru_cache(maxsize=16)
def _curve_base(plan: GrpoPlan, lang: str, presenter: bool) -> dict | None:
    if not lr_curve.drawable(plan.trainer) or not plan.trainer.optimizer_steps:
        return None
    spec = schedule_chart.figure(grpo_run.learning_rate_curve(plan), lang, presenter=presenter).to_plotly_json()
    hover = "<br>".join(t(lang, f"schedule.hover.{part}") for part in ("step", "epoch")) + "<br>" + t(
        lang, "grpo.hover.completions") + "<br>" + t(lang, "schedule.hover.lr") + "<extra></extra>"
    data = [{**trace, "hovertemplate": hover} if "customdata" in trace and trace.get("mode") == "lines"
            and trace.get("name") == t(lang, "schedule.run") else trace for trace in spec["data"]]
    spec["layout"] = {**spec["layout"], "height": 460 if presenter else 260, "showlegend": False,
                      "margin": {"l": 10, "r": 10, "t": 40, "b": 10}}
    return {"data": data, "layout": spec["layout"]}


@lru_cache(maxsize=256)
def curve_figure(plan: GrpoPlan, step: int, lang: str, presenter: bool) -> go.Figure | None:
    """The learning rate of every update, update `step` marked (None for a metric-driven scheduler)."""
    base = _curve_base(plan, lang, presenter)
    if base is None:
        return None
    rate = float(plan.trainer.learning_rates(step, step)[0])
    mark = {"type": "line", "xref": "x", "yref": "paper", "x0": step, "x1": step, "y0": 0, "y1": 1,
            "line": {"color": COLOURS["update"], "width": 2.5}}
    point = {"type": "scatter", "x": [step], "y": [rate], "mode": "markers", "showlegend": False,
             "marker": {"size": 14 if presenter else 11, "color": COLOURS["update"]},
             "hovertemplate": t(lang, "grpo.hover.point", step=fmt_int(step), lr=fmt_lr(rate)) + "<extra></extra>"}
    layout = {**base["layout"], "shapes": [*base["layout"].get("shapes", ()), mark]}
    return frozen({"data": [*base["data"], point], "layout": layout})
