"""The numbers the labs page reads off the lab results, torch-free: each derived number has one home here.

The results are the labs' plain dataclasses (`accumulation.AccumulationResult`, `token_weighting.
TokenWeightingResult`, `overfitting.OverfitRun`); this module only reads them, so importing it never
imports torch.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from steplab.i18n import Message, msg
from steplab.labs import TOLERANCE

if TYPE_CHECKING:
    from steplab.labs.accumulation import Variant
    from steplab.labs.overfitting import Checkpoint, OverfitRun
    from steplab.labs.token_weighting import TokenWeightingResult

MIB, KIB = 2**20, 2**10
# Where a log axis of ratios may put ticks: powers of two around 1 (the same), sparser below 1/2.
RATIO_TICKS = (1 / 64, 1 / 16, 1 / 4, 1 / 2, 1, 2, 4, 8, 16, 32, 64)
TICK_MARGIN, RANGE_MARGIN = 2, 1.6  # ticks within ×2 of the data, the axis ×1.6 beyond it


# --- batches -------------------------------------------------------------------------------------------

def effective_batch(batch_size: int, accumulation: int) -> int:
    """Samples per optimizer step on one device: micro-batch size × gradient accumulation."""
    if batch_size < 1 or accumulation < 1:
        raise ValueError(f"micro-batch size and accumulation must be at least 1, not {batch_size} and {accumulation}")
    return batch_size * accumulation


def accumulation_for(batch_size: int, effective: int) -> int:
    """The accumulation that keeps `effective` samples per update with micro-batches of `batch_size`.

    Only a micro-batch size that divides the effective batch keeps it exactly; any other is refused.
    """
    if effective < 1 or batch_size < 1 or effective % batch_size:
        raise ValueError(f"a micro-batch of {batch_size} does not divide an effective batch of {effective}")
    return effective // batch_size


# --- lab A ---------------------------------------------------------------------------------------------

def worst_difference(variant: Variant) -> float:
    """The largest of a variant's gradient and weight differences against the big batch."""
    found = (variant.grad_max_abs_diff, variant.sgd_param_max_abs_diff, variant.adamw_param_max_abs_diff)
    return max(value for value in found if value is not None)


def is_rounding(difference: float) -> bool:
    """Whether a difference between two float64 computations is float rounding only (at most TOLERANCE)."""
    return difference <= TOLERANCE


@dataclass(frozen=True)
class LogAxis:
    """A log axis for ratios: tick values and the axis range (as log10, as plotly takes it)."""

    ticks: tuple[float, ...]
    low: float
    high: float


def log_axis(values: Sequence[float]) -> LogAxis:
    """Ticks at powers of two near the data and a range a little beyond its smallest and largest value."""
    smallest, largest = min(values), max(values)
    ticks = tuple(x for x in RATIO_TICKS if smallest / TICK_MARGIN <= x <= largest * TICK_MARGIN)
    return LogAxis(ticks, math.log10(smallest / RANGE_MARGIN), math.log10(largest * RANGE_MARGIN))


# --- lab B ---------------------------------------------------------------------------------------------

def token_weights(result: TokenWeightingResult, fixed: bool) -> list[float]:
    """Per micro-batch: how much one of its label tokens counts, as a multiple of its fair share 1/N."""
    return [result.token_weight(j, fixed) * result.total_tokens for j in range(result.accumulation)]


# --- lab C ---------------------------------------------------------------------------------------------

def val_at(run: OverfitRun, step: int) -> float:
    """The validation loss after step `step` (1-based)."""
    return run.val_loss[step - 1]


def train_mean_at(run: OverfitRun, step: int) -> float:
    """The mean training loss of the epoch that step `step` belongs to."""
    return run.epoch_train_means()[run.epoch_number(step) - 1]


@dataclass(frozen=True)
class OverfitSummary:
    """The run in a few numbers: where validation loss was lowest, and how both losses moved."""

    best_step: int
    best_epoch: float
    best_val: float
    initial_val: float  # before the first update
    last_val: float
    first_train: float  # the first epoch's mean training loss
    last_train: float  # the last epoch's

    @property
    def val_rise(self) -> float:
        """How far validation loss climbed from its lowest to the end."""
        return self.last_val - self.best_val

    @property
    def train_change(self) -> float:
        """The last epoch's mean training loss minus the first's (negative: it fell)."""
        return self.last_train - self.first_train


def step_position(run: OverfitRun, step: int) -> Message:
    """Where update `step` sits, said one way wherever the course says it (lesson 5, lab C's card and text
    alternative): its epoch, counted from 1, of the run's epochs; never a fractional epoch beside it."""
    return msg("labs.position", step=step, epoch=run.epoch_number(step), epochs=run.epochs)


def overfit_summary(run: OverfitRun) -> OverfitSummary:
    """Lab C's headline numbers, read off the run."""
    best, means = run.best_step, run.epoch_train_means()
    return OverfitSummary(best_step=best, best_epoch=run.epoch_of(best), best_val=val_at(run, best),
                          initial_val=run.initial_val_loss, last_val=run.val_loss[-1], first_train=means[0],
                          last_train=means[-1])


def best_checkpoint(run: OverfitRun, checkpoints: Sequence[Checkpoint]) -> Checkpoint:
    """The checkpoint with the lowest validation loss (the first of equals)."""
    return min(checkpoints, key=lambda checkpoint: val_at(run, checkpoint.step))


def stop_within(stop: tuple[float, int], total_steps: int) -> tuple[float, int] | None:
    """(epoch, lab step) where the setup stops, or None when that lies past the lab run's `total_steps`."""
    return stop if stop[1] <= total_steps else None


# --- lab D ---------------------------------------------------------------------------------------------

def mib(size: float) -> float:
    """Bytes in MiB."""
    return size / MIB


def kib(size: float) -> float:
    """Bytes in KiB."""
    return size / KIB
