"""The playground's views: the arithmetic with touchable operands, step k's bucket, the linked timeline and LR
curve, and the simulated Trainer console. Every number comes from the engine; the builders are cached per plan
(the server is shared by a class) and copied, never changed, when step k is marked on them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from steplab.i18n import fmt_float, fmt_int, fmt_lr, sentences, t
from steplab.simulation import lr_curve, run_log
from steplab.simulation.timeline import update_timeline
from steplab.teaching.explain import Line, explain
from steplab.trainer.plan import Plan
from steplab_ui.shell import state
from steplab_ui.shell.layout import COLOURS, FIGURE_TEXT, LABELLED_ROW_KEY
from steplab_ui.widgets import animation_frames as animation_view
from steplab_ui.widgets import charts, schedule_chart
from steplab_ui.widgets.frozen_figure import frozen

# the setup fields a formula's operands stand for, in the order they appear (None: a number computed earlier)
OPERANDS: dict[str, tuple[str | None, ...]] = {
    "micro_batches_per_epoch": ("num_samples", "per_device_train_batch_size", "world_size"),
    "num_update_steps_per_epoch": (None, "gradient_accumulation_steps"),
    "max_steps": ("num_train_epochs",),
    "total_train_batch_size": ("per_device_train_batch_size", "gradient_accumulation_steps", "world_size"),
    "warmup_steps": ("warmup_steps",),
}
SHOWN_LINES = tuple(OPERANDS) + ("optimizer_steps",)
NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
INPUT_PREFIX = "pg_in_"


def operand_text(name: str, value: Any) -> str:
    """How the explanation writes a setup value (ints with separators, epochs without noise)."""
    return fmt_float(float(value)) if name == "num_train_epochs" else fmt_int(int(value))


def formula_parts(line: Line, setup_values: dict[str, Any]) -> list[tuple[str, str | None]]:
    """The formula cut into (text, field) pieces: a field where a number is that setup value, else None."""
    wanted = [name for name in OPERANDS.get(line.key, ()) if name is not None]
    parts: list[tuple[str, str | None]] = []
    position = 0
    for match in NUMBER.finditer(line.formula):
        token = match.group(0)
        field = next((name for name in wanted if operand_text(name, setup_values[name]) == token), None)
        if field is None:
            continue
        if line.key == "warmup_steps" and not line.formula.startswith("warmup_steps"):
            continue  # a ratio's product: the number is not the field
        wanted = wanted[wanted.index(field) + 1:]
        if match.start() > position:
            parts.append((line.formula[position:match.start()], None))
        parts.append((token, field))
        position = match.end()
    if position < len(line.formula):
        parts.append((line.formula[position:], None))
    return parts


def _set_shared(name: str, key: str, on_edit: str | None) -> None:
    """An operand was edited: it becomes the shared setup's value (the sidebar and the URL follow); `on_edit` is
    a session flag set for a caller that must rerun the page (an edit inside a fragment)."""
    value = st.session_state[key]
    if value is not None:
        state.set_values({name: value})
        if on_edit is not None:
            st.session_state[on_edit] = True


def _widget_value(name: str, value: Any) -> Any:
    default = state.widget_default(name)
    return float(value) if isinstance(default, float) else int(value)


def operand(name: str, value: Any, lang: str, where: str, on_edit: str | None = None) -> None:
    """One operand: a small popover labelled with the number, holding a number input for its field."""
    key = f"{INPUT_PREFIX}{where}_{name}"
    st.session_state[key] = _widget_value(name, value)
    limits = state.number_range(name)
    if isinstance(state.widget_default(name), float):
        limits = {k: float(v) for k, v in limits.items()}
    with st.popover(operand_text(name, value), type="tertiary", help=t(lang, "playground.operand_help", name=name),
                    key=f"pg_pop_{where}_{name}"):
        st.number_input(f"`{name}`", key=key, on_change=_set_shared, args=(name, key, on_edit), **limits,
                        help=t(lang, f"help.{name}"))


def arithmetic(plan: Plan, lang: str, on_edit: str | None = None) -> None:
    """The worked arithmetic; each operand that is a setup value can be changed where it stands (`on_edit`: see
    `_set_shared`)."""
    setup = plan.setup
    values = {name: getattr(setup, name) for names in OPERANDS.values() for name in names if name}
    rows = st.container(gap="xsmall")
    for line in explain(plan):
        if line.key not in SHOWN_LINES:
            continue
        with rows.container(horizontal=True, gap="small", vertical_alignment="center",
                          key=f"{LABELLED_ROW_KEY}_{line.key}"):
            st.markdown(line.label.get(lang), help=line.note.get(lang) if line.note else None)
            with st.container(horizontal=True, gap="xsmall", vertical_alignment="center"):
                for text, field in formula_parts(line, values):
                    if field is None:
                        if text.strip():
                            st.markdown(f"`{text.strip()}`", width="content")
                    else:
                        operand(field, values[field], lang, line.key, on_edit)


@dataclass(frozen=True)
class StepFacts:
    """What step k is, everywhere: the micro-batches it ate, its rates, its epoch and the next events."""

    step: int
    epoch_number: int  # 1-based epoch of the micro-batch that closes it
    first_micro: int  # 1-based, within that epoch (the carried ones are earlier: `carried`)
    last_micro: int
    size: int  # micro-batches in it
    carried: int  # of those, from the previous epoch
    samples: int  # samples in it, all GPUs
    learning_rate: float
    logged_learning_rate: float
    state_epoch: float
    next_save: int | None
    next_eval: int | None
    next_log: int | None


@lru_cache(maxsize=512)
def step_facts(plan: Plan, step: int) -> StepFacts:
    frame = update_timeline(plan, step).frames[0]
    rate = float(plan.learning_rates(step, step)[0])
    return StepFacts(
        step=step, epoch_number=frame.epoch + 1, first_micro=max(frame.micro_batch - frame.fill + frame.carried + 1, 1),
        last_micro=frame.micro_batch, size=frame.fill, carried=frame.carried, samples=frame.bucket_samples,
        learning_rate=rate, logged_learning_rate=float(run_log.logged_learning_rates(plan, [step])[0]),
        state_epoch=float(run_log.logged_epochs(plan, [step])[0]),
        next_save=run_log.next_event(plan, "save", step), next_eval=run_log.next_event(plan, "eval", step),
        next_log=run_log.next_event(plan, "log", step),
    )


def facts_text(facts: StepFacts, lang: str) -> str:
    """Step k in words, every number from `step_facts`."""
    none = t(lang, "playground.none_left")
    parts = [t(lang, "playground.fact.ate", step=fmt_int(facts.step), size=fmt_int(facts.size),
               first=fmt_int(facts.first_micro), last=fmt_int(facts.last_micro), epoch=fmt_int(facts.epoch_number),
               samples=fmt_int(facts.samples))]
    if facts.carried:
        parts.append(t(lang, "playground.fact.carried", n=fmt_int(facts.carried)))
    parts.append(t(lang, "playground.fact.rate", lr=fmt_lr(facts.learning_rate), epoch=fmt_float(facts.state_epoch, 4)))
    if facts.logged_learning_rate != facts.learning_rate:
        parts.append(t(lang, "playground.fact.logged_next", lr=fmt_lr(facts.logged_learning_rate)))
    parts.append(t(lang, "playground.fact.next",
                   save=fmt_int(facts.next_save) if facts.next_save is not None else none,
                   eval=fmt_int(facts.next_eval) if facts.next_eval is not None else none,
                   log=fmt_int(facts.next_log) if facts.next_log is not None else none))
    return sentences(lang, *parts)


@lru_cache(maxsize=256)
def bucket_figure(plan: Plan, step: int, lang: str, presenter: bool) -> go.Figure:
    """The animation's frame for the micro-batch that closes update `step` (cached, never changed)."""
    one = update_timeline(plan, step, lr=float(plan.learning_rates(step, step)[0]))
    return frozen(animation_view.frame_spec(one, 0, lang, presenter=presenter,
                                            height=None if presenter else BUCKET_HEIGHT))


def _mark(step: int) -> dict:
    return {"type": "line", "xref": "x", "yref": "paper", "x0": step, "x1": step, "y0": 0, "y1": 1,
            "line": {"color": COLOURS["update"], "width": 2.5}, "name": "step_k"}


BUCKET_HEIGHT, CURVE_HEIGHT, STRIP_HEIGHT = 220, 200, 200  # px outside presenter view: one 1280 × 900 screen
LABEL_SPAN = 0.25  # the share of a figure's x range that "k = 1,000,000" can cover in the narrowest column


def _mark_label(step: int, y: float, right: float) -> dict:
    """"k = 37" beside the mark, in the update colour's readable text pair; on the mark's left near the right
    edge (where it would be cut off)."""
    left = step > (1 - LABEL_SPAN) * right
    return {"xref": "x", "yref": "paper", "x": step, "y": y, "xanchor": "right" if left else "left",
            "xshift": -4 if left else 4, "showarrow": False, "text": f"<b>k = {fmt_int(step)}</b>",
            "font": {"color": FIGURE_TEXT["update"][0]}, "name": "step_k_label"}


def _x_right(layout: dict) -> float:
    return float(layout["xaxis"]["range"][1])


def _strip_label(plan: Plan, step: int, layout: dict) -> dict:
    """The strip's "k = 37": above the evaluation lane, or under the checkpoint lane where the warmup band's word
    takes the top left."""
    right = _x_right(layout)
    under_warmup_word = plan.warmup_steps > 0 and step < LABEL_SPAN * right
    return _mark_label(step, 0.06 if under_warmup_word else 0.92, right)


def _curve_label_height(plan: Plan, step: int, right: float, top: float) -> float:
    """Where on the mark the curve leaves room for its label: the curve's height (as a share of the axis)
    beside the mark, where the label goes, sampled at a few updates; the label goes high or low, whichever
    side is farther from it."""
    span = max(int(LABEL_SPAN * right), 1)
    low, high = (step - span, step) if step > (1 - LABEL_SPAN) * right else (step, step + span)
    low, high = max(low, 1), min(high, max(plan.optimizer_steps, 1))
    samples = sorted({int(s) for s in np.linspace(low, max(high, low), 12)})
    heights = [float(plan.learning_rates(s, s)[0]) / top for s in samples]
    return 0.86 if 1 - max(heights) >= min(heights) else 0.12


HORIZON_NEAR = 0.1  # the share of the curve's x range within which "k = …" would run into "max_steps = …"
THEME_FONT = 14  # px: the words of a figure without a size of its own (Streamlit's theme), at most


def _beside_horizon(plan: Plan, step: int, label: dict, annotations: list[dict], right: float,
                    font: float) -> tuple[dict, list[dict]]:
    """The curve's "k = …" label and the other annotations, kept apart when the mark stands at or just before the
    horizon: the upright "max_steps = …" label (left of its line, `schedule_chart.HORIZON_LABEL_GAP` away, over
    most of the curve's height) goes left of the mark instead, and "k = …" left of it."""
    horizon = plan.max_steps
    if label["xanchor"] != "right" or not 0 <= horizon - step <= HORIZON_NEAR * right:
        return label, annotations
    upright = 1.5 * font  # the upright label's width on screen: its line height
    moved = [{**note, "x": step} if note.get("name") == "horizon_label" else note for note in annotations]
    return {**label, "x": step, "xshift": -(schedule_chart.HORIZON_LABEL_GAP + upright + 4)}, moved


@lru_cache(maxsize=64)
def _timeline_base(plan: Plan, lang: str, presenter: bool) -> dict:
    spec = charts.timeline(plan, lang, presenter).to_dict()  # the calculator's frozen spec: never change it
    return spec if presenter else {**spec, "layout": {**spec["layout"], "height": STRIP_HEIGHT}}


@lru_cache(maxsize=64)
def _schedule_base(plan: Plan, lang: str, presenter: bool) -> dict | None:
    if not lr_curve.drawable(plan):
        return None
    figure = schedule_chart.figure(lr_curve.curve(plan), lang, presenter=presenter)
    spec = figure.to_plotly_json()
    # the timeline beside it carries the legend of the same symbols; the curve gets the height back
    spec["layout"] = {**spec["layout"], "height": CURVE_HEIGHT if not presenter else 460, "showlegend": False,
                      "margin": {"l": 10, "r": 10, "t": 50, "b": 10}}
    return spec


@lru_cache(maxsize=256)
def timeline_figure(plan: Plan, step: int, lang: str, presenter: bool) -> go.Figure:
    """The epochs / evaluations / checkpoints strip with step k marked (cached: a class scrubs to the same k;
    draw it, never change it)."""
    base = _timeline_base(plan, lang, presenter)
    layout = {**base["layout"], "shapes": [*base["layout"].get("shapes", ()), _mark(step)],
              "annotations": [*base["layout"].get("annotations", ()), _strip_label(plan, step, base["layout"])]}
    return frozen({"data": base["data"], "layout": layout})


@lru_cache(maxsize=256)
def schedule_figure(plan: Plan, step: int, lang: str, presenter: bool) -> go.Figure | None:
    """The learning-rate curve with step k marked and its rate as a point (cached, never changed)."""
    base = _schedule_base(plan, lang, presenter)
    if base is None:
        return None
    facts = step_facts(plan, step)
    point = {"type": "scatter", "x": [step], "y": [facts.learning_rate], "mode": "markers",
             "name": t(lang, "playground.step_k", step=fmt_int(step)),
             "marker": {"size": 14 if presenter else 11, "color": COLOURS["update"], "line": {"width": 2}},
             "hovertemplate": t(lang, "playground.point_hover") + "<extra></extra>"}
    right, top = _x_right(base["layout"]), float(base["layout"]["yaxis"]["range"][1])
    label, notes = _beside_horizon(plan, step, _mark_label(step, _curve_label_height(plan, step, right, top), right),
                                   list(base["layout"].get("annotations", ())), right,
                                   base["layout"].get("font", {}).get("size", THEME_FONT))
    layout = {**base["layout"], "shapes": [*base["layout"].get("shapes", ()), _mark(step)],
              "annotations": [*notes, label]}
    return frozen({"data": [*base["data"], point], "layout": layout})
