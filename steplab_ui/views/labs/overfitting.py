"""Lab C's view: more epochs can hurt, a run's training and validation loss with the shared setup's checkpoints
and stop drawn onto it (`steplab.labs.overfitting`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from steplab.i18n import fmt_fixed, fmt_float, fmt_int, fmt_percent, t
from steplab.labs import readings
from steplab.trainer.plan import Plan
from steplab_ui.shell.layout import COLOURS
from steplab_ui.views.labs.parts import Card, Notice, framed

if TYPE_CHECKING:
    from steplab.labs.overfitting import Checkpoint, OverfitRun

OVERFIT_EPOCHS, OVERFIT_SEED = 12, 0  # lab C's run as it opens (a lesson embeds this same run)
Stop = tuple[float, int]  # where the shared setup stops: (epoch, lab step)


@st.cache_data(max_entries=256, show_spinner=False)
def run_overfitting(epochs: int, seed: int) -> OverfitRun:
    """Lab C run for real (imports the lab, and so torch), cached for every session."""
    from steplab.labs import overfitting as lab

    return lab.run(epochs, seed)


def overfit_intro(lang: str) -> str:
    from steplab.labs import overfitting as lab

    return t(lang, "labs.c.intro", samples=lab.TRAIN_SAMPLES, batch=lab.BATCH_SIZE, noise=fmt_percent(lab.LABEL_NOISE),
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
             delta=readings.step_position(result, s.best_step).get(lang),
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
    return framed(figure, height=480, legend_below=True)


def loss_sentence(result: OverfitRun, lang: str) -> str:
    """The loss figure in words (its text alternative)."""
    s = readings.overfit_summary(result)
    return t(lang, "labs.c.chart_alt", steps=fmt_int(result.steps), epochs=result.epochs,
             first_train=fmt_float(s.first_train, 3), last_train=fmt_float(s.last_train, 3),
             first_val=fmt_float(s.initial_val, 3), position=readings.step_position(result, s.best_step).get(lang),
             best_val=fmt_float(s.best_val, 3), last_val=fmt_float(s.last_val, 3))


def epochs_table(result: OverfitRun, lang: str) -> pd.DataFrame:
    """One row per epoch: its last step, mean training loss and validation loss at its end."""
    return pd.DataFrame({
        t(lang, "labs.c.col.epoch"): list(range(1, result.epochs + 1)),
        t(lang, "labs.c.col.end_step"): result.epoch_ends,
        t(lang, "labs.c.col.train"): [fmt_fixed(v, 3) for v in result.epoch_train_means()],
        t(lang, "labs.c.col.val"): [fmt_fixed(v, 3) for v in result.val_at_epoch_ends()],
    })


def overfit_method(result: OverfitRun, lang: str) -> str:
    from steplab.labs import overfitting as lab

    return t(lang, "labs.c.method", parameters=fmt_int(result.parameters), samples=lab.TRAIN_SAMPLES,
             batch=lab.BATCH_SIZE, lr=lab.LEARNING_RATE, noise=fmt_percent(lab.LABEL_NOISE),
             validation=lab.VALIDATION_SAMPLES, features=lab.FEATURES, hidden=lab.HIDDEN, classes=lab.CLASSES)
