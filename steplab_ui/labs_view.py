"""The torch labs page's parts: lab results in, figures, tables, cards and sentences out.

The builders take plain data (a lab's result, the language) and return a plotly figure, a pandas frame, a
`Card`, a `Notice` or a string, without Streamlit. Only the first section touches Streamlit: the cached
lab runs and the small drawing helpers (`chart`, `show`, `show_cards`, `method`). The numbers come from
the engine (`steplab.labs.readings`, `steplab.labs.chapter_memory`, the results themselves), the sentences
from the catalogue. The torch labs' modules are imported inside functions only (importing this module never
imports torch): the builders that read a lab's constants run after that lab, when torch is loaded already.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from steplab.i18n import fmt_float, fmt_int, fmt_lr, t
from steplab.labs import TOLERANCE, readings
from steplab.labs import chapter_memory as chapter
from steplab.trainer.plan import Plan
from steplab_ui import layout, presenter
from steplab_ui.layout import COLOURS

if TYPE_CHECKING:
    from steplab.labs.accumulation import AccumulationResult
    from steplab.labs.memory import ActivationMeasurement
    from steplab.labs.overfitting import Checkpoint, OverfitRun
    from steplab.labs.token_weighting import TokenWeightingResult

TOKEN_LAB_SEED = 0  # lab B runs with this seed (the method text says which)
MISSING = "—"  # a table cell with no value (no single gradient to compare)
SCIENTIFIC_BELOW = 1e-3  # smaller numbers are written as 4.2e-17
RATIO_GROUPED_FROM = 100  # ratios from here on are written without decimals (1,024×)
Stop = tuple[float, int]  # where the shared setup stops: (epoch, lab step)


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
    return f"{value:.1e}" if abs(value) < SCIENTIFIC_BELOW else f"{value:.3g}"


def ratio(value: float) -> str:
    """A ratio as a multiple: 8.00×, or 1,024× when large."""
    return f"{value:.2f}×" if value < RATIO_GROUPED_FROM else f"{value:,.0f}×"


def _framed(figure: go.Figure, height: int = 340, legend_below: bool = False) -> go.Figure:
    """The labs' figure frame: height, margins and a horizontal legend (below the plot when it is long,
    so that on a phone it does not squeeze the plot from above)."""
    legend = ({"orientation": "h", "y": -0.2, "yanchor": "top", "x": 0} if legend_below
              else {"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0})
    figure.update_layout(height=height, margin={"l": 10, "r": 10, "t": 30 if legend_below else 40, "b": 40},
                         legend=legend)
    return figure


# --- Streamlit: the cached lab runs (each imports its lab, and so torch) and the drawing helpers ------

@st.cache_data(max_entries=256, show_spinner=False)
def run_accumulation(batch_size: int, accumulation: int) -> AccumulationResult:
    from steplab.labs import accumulation as lab

    return lab.run(batch_size, accumulation)


@st.cache_data(max_entries=256, show_spinner=False)
def run_token_weighting(lengths: tuple[int, ...], batch_size: int) -> TokenWeightingResult:
    from steplab.labs import token_weighting as lab

    return lab.run(lengths, batch_size, seed=TOKEN_LAB_SEED)


OVERFIT_EPOCHS, OVERFIT_SEED = 12, 0  # lab C's run as it opens (a lesson embeds this same run)


@st.cache_data(max_entries=256, show_spinner=False)
def run_overfitting(epochs: int, seed: int) -> OverfitRun:
    from steplab.labs import overfitting as lab

    return lab.run(epochs, seed)


@st.cache_data(max_entries=4, show_spinner=False)
def run_memory() -> ActivationMeasurement:
    from steplab.labs import memory as lab

    return lab.measure_activations()


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


def set_example_lengths(example: str) -> None:
    """Lab B's example buttons: put an example's lengths into the text input."""
    from steplab.labs.token_weighting import EXAMPLES

    st.session_state["labs_b_lengths"] = EXAMPLES[example]


# --- lab A: accumulation equals one big batch ----------------------------------------------------------

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
        t(lang, "labs.a.col.cosine"): MISSING if v.grad_cosine is None else f"{v.grad_cosine:.3f}",
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
                 cosine=f"{zero_each.grad_cosine:.2f}", ratio=ratio(zero_each.grad_norm_ratio)),
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
        "ticktext": [f"{x:g}" for x in axis.ticks], "range": [axis.low, axis.high]})
    return _framed(figure)


def update_ratio_sentence(result: AccumulationResult, lang: str) -> str:
    """The update-ratio figure in words (its text alternative)."""
    return t(lang, "labs.a.chart_alt", **{f"sgd_{v.key}": ratio(v.sgd_update_ratio) for v in result.variants},
             **{f"adamw_{v.key}": ratio(v.adamw_update_ratio) for v in result.variants}, same=ratio(1.0))


def accumulation_method(result: AccumulationResult, lang: str) -> str:
    from steplab.labs import accumulation as lab

    return t(lang, "labs.a.method", features=lab.FEATURES, hidden=lab.HIDDEN, classes=lab.CLASSES,
             seed=result.seed, sgd_lr=fmt_lr(lab.SGD_LR), adamw_lr=fmt_lr(lab.ADAMW_LR), tolerance=f"{TOLERANCE:g}")


# --- lab B: token weighting ----------------------------------------------------------------------------

def token_setup(result: TokenWeightingResult, lang: str) -> str:
    counts = t(lang, "labs.list_join").join(fmt_int(n) for n in result.tokens_per_micro_batch)
    return t(lang, "labs.b.setup", sequences=len(result.lengths), batch=result.batch_size,
             accumulation=result.accumulation, counts=counts, total=fmt_int(result.total_tokens))


def token_cards(result: TokenWeightingResult, lang: str) -> list[Card]:
    """The old averaging's gradient difference (absolute and relative) and the fix's."""
    return [
        Card(t(lang, "labs.b.old_diff"), sci(result.per_micro_batch_max_abs_diff), t(lang, "labs.b.old_diff_help")),
        Card(t(lang, "labs.b.relative"), f"{result.per_micro_batch_relative_diff:.1%}", t(lang, "labs.b.relative_help")),
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
    return _framed(figure)


def token_weight_sentence(result: TokenWeightingResult, lang: str) -> str:
    """The token-weight figure in words (its text alternative)."""
    old = readings.token_weights(result, fixed=False)
    weights = ", ".join(t(lang, "labs.b.alt_item", j=j, n=fmt_int(n), w=fmt_float(w, 2))
                        for j, (n, w) in enumerate(zip(result.tokens_per_micro_batch, old, strict=True), start=1))
    return t(lang, "labs.b.chart_alt", weights=weights)


def token_method(lang: str) -> str:
    from steplab.labs import token_weighting as lab

    return t(lang, "labs.b.method", vocab=lab.VOCAB, seed=TOKEN_LAB_SEED, ignore=lab.IGNORE,
             tolerance=f"{TOLERANCE:g}")


# --- lab C: more epochs can hurt -----------------------------------------------------------------------

def overfit_intro(lang: str) -> str:
    from steplab.labs import overfitting as lab

    return t(lang, "labs.c.intro", samples=lab.TRAIN_SAMPLES, batch=lab.BATCH_SIZE, noise=f"{lab.LABEL_NOISE:.0%}",
             validation=lab.VALIDATION_SAMPLES)


def setup_on_run(plan: Plan | None, result: OverfitRun) -> tuple[list[Checkpoint], Stop | None]:
    """The shared setup's checkpoints placed on the lab run, and where it stops (None: past the run's end);
    none of either without a plan."""
    from steplab.labs import overfitting as lab

    if plan is None:
        return [], None
    checkpoints = lab.setup_checkpoints(plan, result.steps_per_epoch, result.steps)
    return checkpoints, readings.stop_within(lab.setup_stop_step(plan, result.steps_per_epoch), result.steps)


def setup_mapping(plan: Plan, result: OverfitRun, checkpoints: Sequence[Checkpoint], lang: str) -> str:
    """How the shared setup's training is drawn onto the lab run."""
    return t(lang, "labs.c.mapping", epochs=fmt_float(plan.final_epoch, 2), steps=fmt_int(plan.optimizer_steps),
             per_epoch=fmt_int(plan.num_update_steps_per_epoch), lab_per_epoch=result.steps_per_epoch,
             saves=fmt_int(len(checkpoints)), count=len(checkpoints))


def overfit_cards(result: OverfitRun, lang: str) -> list[Card]:
    """Lowest validation loss (and where), validation loss at the end, training loss of the last epoch."""
    s = readings.overfit_summary(result)
    return [
        Card(t(lang, "labs.c.best"), fmt_float(s.best_val, 3), t(lang, "labs.c.best_help"),
             delta=t(lang, "labs.c.best_value", step=fmt_int(s.best_step), epoch=fmt_float(s.best_epoch, 2)),
             delta_color="off", delta_arrow="off"),
        Card(t(lang, "labs.c.val_end"), fmt_float(s.last_val, 3), t(lang, "labs.c.val_end_help"),
             delta=fmt_float(s.val_rise, 3), delta_color="inverse"),
        Card(t(lang, "labs.c.train_end"), fmt_float(s.last_train, 3), t(lang, "labs.c.train_end_help"),
             delta=fmt_float(s.train_change, 3), delta_color="inverse"),
    ]


def checkpoint_label(result: OverfitRun, checkpoint: Checkpoint, lang: str) -> str:
    """A checkpoint in the picker: step, epoch, validation loss (and the setup's step it stands for)."""
    text = t(lang, "labs.c.checkpoint_label", step=fmt_int(checkpoint.step), epoch=fmt_float(checkpoint.epoch, 2),
             val=fmt_float(readings.val_at(result, checkpoint.step), 3))
    if checkpoint.setup_step is not None:
        text += t(lang, "labs.c.checkpoint_setup_step", step=fmt_int(checkpoint.setup_step))
    return text


def checkpoint_verdict(result: OverfitRun, checkpoints: Sequence[Checkpoint], chosen: Checkpoint, lang: str) -> Notice:
    """The kept checkpoint's losses against the best saved one and the best evaluated step (success if best saved)."""
    best_saved = readings.best_checkpoint(result, checkpoints)
    summary = readings.overfit_summary(result)
    text = t(lang, "labs.c.pick_result", step=fmt_int(chosen.step), epoch=fmt_float(chosen.epoch, 2),
             val=fmt_float(readings.val_at(result, chosen.step), 3),
             train=fmt_float(readings.train_mean_at(result, chosen.step), 3),
             best_saved=fmt_int(best_saved.step), best_saved_val=fmt_float(readings.val_at(result, best_saved.step), 3),
             best=fmt_int(summary.best_step), best_val=fmt_float(summary.best_val, 3))
    return Notice("success" if chosen.step == best_saved.step else "info", text, ":material/bookmark:")


def loss_figure(result: OverfitRun, checkpoints: Sequence[Checkpoint], chosen: Checkpoint | None,
                stop: Stop | None, lang: str) -> go.Figure:
    """Per-step training and validation loss, epoch boundaries, the lowest point, checkpoints and the stop."""
    summary = readings.overfit_summary(result)
    figure = go.Figure()
    for end in result.epoch_ends[:-1]:  # a boundary sits between the epoch's last step and the next one
        figure.add_vline(x=end + 0.5, line_dash="dot", line_color=COLOURS["epoch"], opacity=0.7)
    figure.add_scatter(x=[None], y=[None], mode="lines", name=t(lang, "labs.c.series_epoch"),
                       line={"color": COLOURS["epoch"], "dash": "dot"})
    steps = list(range(1, result.steps + 1))
    figure.add_scatter(x=steps, y=result.train_loss, mode="lines", name=t(lang, "labs.c.series_train"),
                       line={"color": COLOURS["micro_batch"], "width": 1.5})
    figure.add_scatter(x=steps, y=result.val_loss, mode="lines", name=t(lang, "labs.c.series_val"),
                       line={"color": COLOURS["eval"], "width": 2.5})
    figure.add_scatter(x=[summary.best_step], y=[summary.best_val], mode="markers", name=t(lang, "labs.c.series_best"),
                       marker={"symbol": "star", "size": 16, "color": COLOURS["eval"],
                               "line": {"width": 1, "color": COLOURS["sample"]}})
    if checkpoints:
        figure.add_scatter(x=[c.step for c in checkpoints], y=[readings.val_at(result, c.step) for c in checkpoints],
                           mode="markers", name=t(lang, "labs.c.series_checkpoint"),
                           marker={"symbol": "square", "size": 11, "color": COLOURS["checkpoint"]})
    if chosen is not None:
        figure.add_scatter(x=[chosen.step], y=[readings.val_at(result, chosen.step)], mode="markers",
                           name=t(lang, "labs.c.series_chosen"),
                           marker={"symbol": "square-open", "size": 20, "color": COLOURS["checkpoint"],
                                   "line": {"width": 3}})
    if stop is not None:
        figure.add_vline(x=stop[1], line_dash="dash", line_color=COLOURS["update"],
                         annotation_text=t(lang, "labs.c.stop", epoch=fmt_float(stop[0], 2)),
                         annotation_position="top right")
    figure.update_layout(xaxis={"title": t(lang, "labs.c.chart_x", per_epoch=result.steps_per_epoch)},
                         yaxis={"title": t(lang, "labs.c.chart_y"), "rangemode": "tozero"})
    return _framed(figure, height=480, legend_below=True)


def loss_sentence(result: OverfitRun, lang: str) -> str:
    """The loss figure in words (its text alternative)."""
    s = readings.overfit_summary(result)
    return t(lang, "labs.c.chart_alt", steps=fmt_int(result.steps), epochs=result.epochs,
             first_train=fmt_float(s.first_train, 3), last_train=fmt_float(s.last_train, 3),
             first_val=fmt_float(s.initial_val, 3), best=fmt_int(s.best_step), best_epoch=fmt_float(s.best_epoch, 2),
             best_val=fmt_float(s.best_val, 3), last_val=fmt_float(s.last_val, 3))


def epochs_table(result: OverfitRun, lang: str) -> pd.DataFrame:
    """One row per epoch: its last step, mean training loss and validation loss at its end."""
    return pd.DataFrame({
        t(lang, "labs.c.col.epoch"): list(range(1, result.epochs + 1)),
        t(lang, "labs.c.col.end_step"): result.epoch_ends,
        t(lang, "labs.c.col.train"): [f"{v:.3f}" for v in result.epoch_train_means()],
        t(lang, "labs.c.col.val"): [f"{v:.3f}" for v in result.val_at_epoch_ends()],
    })


def overfit_method(result: OverfitRun, lang: str) -> str:
    from steplab.labs import overfitting as lab

    return t(lang, "labs.c.method", parameters=fmt_int(result.parameters), samples=lab.TRAIN_SAMPLES,
             batch=lab.BATCH_SIZE, lr=lab.LEARNING_RATE, noise=f"{lab.LABEL_NOISE:.0%}",
             validation=lab.VALIDATION_SAMPLES, features=lab.FEATURES, hidden=lab.HIDDEN, classes=lab.CLASSES)


# --- lab D: memory and time ----------------------------------------------------------------------------

def chapter_runs_table(lang: str) -> pd.DataFrame:
    """The chapter's V100 runs: sizes, peak memory and times."""
    return pd.DataFrame([{
        t(lang, "labs.d.col.batch"): r.batch_size, t(lang, "labs.d.col.accumulation"): r.accumulation,
        t(lang, "labs.d.col.effective"): r.effective_batch, t(lang, "labs.d.col.peak"): f"{r.peak_gib:.2f}",
        t(lang, "labs.d.col.seconds"): fmt_int(round(r.seconds)),
        t(lang, "labs.d.col.per_step"): f"{r.seconds_per_step:.1f}",
        t(lang, "labs.d.col.per_micro"): f"{r.seconds_per_micro_batch:.2f}",
        t(lang, "labs.d.col.per_sample"): f"{r.seconds_per_sample:.3f}",
    } for r in chapter.CHAPTER_RUNS])


def chapter_time(lang: str) -> str:
    """The two runs' times per micro-batch and per sample."""
    big, small = chapter.CHAPTER_RUNS
    return t(lang, "labs.d.time", steps=big.steps, big_batch=big.batch_size, small_batch=small.batch_size,
             micro_big=f"{big.seconds_per_micro_batch:.2f}", micro_small=f"{small.seconds_per_micro_batch:.2f}",
             sample_big=f"{big.seconds_per_sample:.3f}", sample_small=f"{small.seconds_per_sample:.3f}")


def memory_assumptions(lang: str) -> str:
    """The stated model, its F and A, and the fp32 training states for comparison."""
    b = chapter.memory_budget()
    return t(lang, "labs.d.assumptions", fixed=f"{b.fixed:.2f}", per_sample=f"{b.per_sample:.3f}",
             states=f"{b.states:.2f}", weights=f"{b.weights:.2f}", gradients=f"{b.gradients:.2f}",
             optimizer=f"{b.optimizer:.2f}", rest=f"{b.rest:.2f}", billions=f"{b.billions:g}")


def micro_batch_label(lang: str) -> str:
    """The micro-batch picker's label, with the effective batch it keeps."""
    return t(lang, "labs.d.batch", effective=chapter.chapter_effective_batch())


def micro_batch_verdict(batch_size: int, lang: str) -> Notice:
    """The measured peak of a measured micro-batch, else the model's prediction against the V100's memory."""
    accumulation = chapter.chapter_accumulation(batch_size)
    measured = chapter.measured_run(batch_size)
    if measured is not None:
        return Notice("info", t(lang, "labs.d.choice_measured", batch=batch_size, accumulation=accumulation,
                                peak=f"{measured.peak_gib:.2f}"), ":material/straighten:")
    peak = chapter.predicted_peak_gib(batch_size)
    fits = chapter.fits_v100(peak)
    return Notice("info" if fits else "warning",
                  t(lang, "labs.d.choice_fits" if fits else "labs.d.choice_too_big", batch=batch_size,
                    accumulation=accumulation, peak=f"{peak:.2f}", limit=chapter.V100_GIB), ":material/functions:")


def memory_model_figure(batch_size: int, lang: str) -> go.Figure:
    """The model's line, the measured runs, the learner's choice and the V100's memory."""
    sizes = list(chapter.MICRO_BATCHES)
    figure = go.Figure()
    figure.add_scatter(x=sizes, y=[chapter.predicted_peak_gib(b) for b in sizes], mode="lines+markers",
                       name=t(lang, "labs.d.series_model"),
                       line={"color": COLOURS["sample"], "dash": "dash"}, marker={"symbol": "circle-open", "size": 9})
    figure.add_scatter(x=[r.batch_size for r in chapter.CHAPTER_RUNS], y=[r.peak_gib for r in chapter.CHAPTER_RUNS],
                       mode="markers", name=t(lang, "labs.d.series_measured"),
                       marker={"color": COLOURS["micro_batch"], "size": 14})
    figure.add_scatter(x=[batch_size], y=[chapter.predicted_peak_gib(batch_size)], mode="markers",
                       name=t(lang, "labs.d.series_choice"),
                       marker={"symbol": "diamond-open", "size": 20, "color": COLOURS["accumulation"],
                               "line": {"width": 3}})
    figure.add_hline(y=chapter.V100_GIB, line_dash="dot", line_color=COLOURS["update"],
                     annotation_text=t(lang, "labs.d.limit", limit=chapter.V100_GIB), annotation_position="top left")
    figure.update_layout(xaxis={"title": t(lang, "labs.d.chart_x"), "tickvals": sizes},
                         yaxis={"title": t(lang, "labs.d.chart_y"), "rangemode": "tozero"})
    return _framed(figure)


def memory_model_sentence(lang: str) -> str:
    """The memory-model figure in words (its text alternative)."""
    fixed, per_sample = chapter.chapter_line()
    points = t(lang, "labs.d.alt_join").join(
        t(lang, "labs.d.alt_item", peak=f"{r.peak_gib:.2f}", batch=r.batch_size)
        for r in sorted(chapter.CHAPTER_RUNS, key=lambda r: r.batch_size))
    small, large = chapter.MICRO_BATCHES[0], chapter.first_too_big()
    return t(lang, "labs.d.chart_alt", measured=points, fixed=f"{fixed:.2f}", per_sample=f"{per_sample:.3f}",
             small=small, small_peak=f"{chapter.predicted_peak_gib(small):.2f}", large=large,
             large_peak=f"{chapter.predicted_peak_gib(large):.2f}", limit=chapter.V100_GIB)


def activation_figure(measurement: ActivationMeasurement, lang: str) -> go.Figure:
    """Saved activation memory (MiB) against micro-batch size, measured on this CPU."""
    from steplab.labs import memory as lab

    sizes = [p.batch_size for p in measurement.by_batch]
    figure = go.Figure()
    figure.add_scatter(x=sizes, y=[readings.mib(p.saved_bytes) for p in measurement.by_batch], mode="markers+lines",
                       name=t(lang, "labs.d.series_cpu", length=lab.FIXED_LENGTH),
                       line={"color": COLOURS["micro_batch"]}, marker={"size": 11})
    figure.update_layout(xaxis={"title": t(lang, "labs.d.chart_x"), "tickvals": sizes},
                         yaxis={"title": t(lang, "labs.d.cpu_chart_y"), "rangemode": "tozero"}, showlegend=True)
    return _framed(figure, height=300)


def activation_sentence(measurement: ActivationMeasurement, lang: str) -> str:
    """The activation figure in words (its text alternative), with the fitted line's slope and intercept."""
    from steplab.labs import memory as lab

    intercept, slope = measurement.batch_line()
    points = t(lang, "labs.list_join").join(
        t(lang, "labs.d.cpu_alt_item", batch=p.batch_size, mib=f"{readings.mib(p.saved_bytes):.2f}")
        for p in measurement.by_batch)
    return t(lang, "labs.d.cpu_alt", length=lab.FIXED_LENGTH, points=points,
             per_sample=f"{readings.mib(slope):.2f}", intercept=f"{readings.kib(intercept):.1f}")


def lengths_intro(lang: str) -> str:
    from steplab.labs import memory as lab

    return t(lang, "labs.d.length_intro", batch=lab.FIXED_BATCH)


def lengths_table(measurement: ActivationMeasurement, lang: str) -> pd.DataFrame:
    """Saved activation memory and bytes per token against sequence length."""
    return pd.DataFrame({
        t(lang, "labs.d.col.length"): [p.sequence_length for p in measurement.by_length],
        t(lang, "labs.d.col.saved"): [f"{readings.mib(p.saved_bytes):.2f}" for p in measurement.by_length],
        t(lang, "labs.d.col.per_token"): [fmt_int(round(p.bytes_per_token)) for p in measurement.by_length],
    })


def lengths_lesson(measurement: ActivationMeasurement, lang: str) -> str:
    """The shortest and the longest sequence's cost per token."""
    first, last = measurement.by_length[0], measurement.by_length[-1]
    return t(lang, "labs.d.length_lesson", short=first.sequence_length, long=last.sequence_length,
             short_bytes=fmt_int(round(first.bytes_per_token)), long_bytes=fmt_int(round(last.bytes_per_token)))


def activation_method(measurement: ActivationMeasurement, lang: str) -> str:
    from steplab.labs import memory as lab

    return t(lang, "labs.d.method", parameters=fmt_int(measurement.parameters),
             parameter_mib=f"{readings.mib(measurement.parameter_bytes):.2f}", layers=lab.LAYERS, width=lab.WIDTH,
             heads=lab.HEADS, vocab=lab.VOCAB)
