"""A resumed run's earlier part: the plan of the run that wrote the checkpoint, read back from the rows it logged.

The rows up to the checkpoint were logged by that run, with its own accumulation and its own schedule horizon; a
resume may change both (`num_train_epochs` to train longer, `gradient_accumulation_steps`). StepLab tries this
run's setup first, then the horizon the checkpoint's `trainer_state.json` saved (when given), then the
accumulation the carried rows' epochs imply (epoch × micro-batches per epoch ÷ step), with each epoch count; the
first that reproduces every carried row's epoch (and learning rate, when the schedule is known) is the earlier plan.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

import numpy as np

from steplab.errors import InputError, TrainerRefusal
from steplab.runfiles.precision import close
from steplab.runfiles.rows import Rows
from steplab.runfiles.state_file import StateFile
from steplab.simulation.run_log import logged_epochs, logged_learning_rates
from steplab.trainer import run
from steplab.trainer.geometry import positions
from steplab.trainer.plan import Plan, make_plan

MAX_EPOCHS_TRIED = 60


@dataclass(frozen=True)
class Earlier:
    """The earlier run's plan and the setup fields in which it differs from this run's."""

    plan: Plan
    changed: tuple[str, ...]


def _carried(rows: Rows, last_step: int) -> Rows:
    return rows.where((rows.steps >= 1) & (rows.steps <= last_step))


def _matches(plan: Plan, rows: Rows, resumed_step: int, schedule_known: bool) -> bool:
    """The plan gives the epoch of every row up to the checkpoint, and the rate of every row that ran at the
    earlier schedule's rate (one row more in 4.47+: `reconcile.last_earlier_step`)."""
    own = rows.steps <= resumed_step
    epochs = logged_epochs(plan, rows.steps[own])
    if not close(rows.epochs[own], epochs, rows.digits, rows.epoch_decimals).all():
        return False
    if not schedule_known:
        return True
    steps = rows.steps
    has = rows.has("learning_rate")
    ours = logged_learning_rates(plan, steps[has])
    return bool(close(rows.column("learning_rate")[has], ours, rows.digits).all())


def _accumulations(plan: Plan, rows: Rows) -> list[int]:
    """This run's accumulation, then the one a carried row inside the first epoch implies."""
    found = [plan.setup.gradient_accumulation_steps]
    inside = (rows.epochs > 0) & (rows.epochs < 1)
    if inside.any():
        index = int(np.flatnonzero(inside)[-1])
        implied = rows.epochs[index] * plan.micro_batches_per_epoch / rows.steps[index]
        if implied >= 1 and abs(implied - round(implied)) < 1e-6 and round(implied) not in found:
            found.append(round(implied))
    return found


def _candidates(plan: Plan, rows: Rows, checkpoint: StateFile | None) -> Iterator[tuple[Plan, tuple[str, ...]]]:
    setup = plan.setup
    yield plan, ()
    horizon = checkpoint.value("max_steps") if checkpoint is not None else None
    epochs = [setup.num_train_epochs] + [e for e in range(1, MAX_EPOCHS_TRIED + 1) if e != setup.num_train_epochs]
    for accumulation in _accumulations(plan, rows):
        for count in epochs:
            changed = tuple(name for name, same in (("gradient_accumulation_steps",
                                                     accumulation == setup.gradient_accumulation_steps),
                                                    ("num_train_epochs", count == setup.num_train_epochs))
                            if not same)
            if not changed:
                continue
            try:
                candidate = make_plan(setup.replace(gradient_accumulation_steps=accumulation,
                                                    num_train_epochs=count))
            except (InputError, TrainerRefusal):
                continue
            if horizon is None or candidate.max_steps == horizon:
                yield candidate, changed


def earlier_plan(plan: Plan, rows: Rows | None, resumed_step: int | None, checkpoint: StateFile | None,
                 schedule_known: bool) -> Earlier | None:
    """The plan that reproduces the rows logged before the checkpoint (None without such rows or plan)."""
    if rows is None or resumed_step is None or not (rows.steps >= 0).all():
        return None
    stale = 0 if plan.profile.logs_next_rate else 1
    carried = _carried(rows, resumed_step + stale)
    if not len(carried):
        return None
    for candidate, changed in _candidates(plan, carried.where(carried.steps <= resumed_step), checkpoint):
        if _matches(candidate, carried, resumed_step, schedule_known):
            return Earlier(candidate, changed)
    return None


@dataclass(frozen=True)
class AfterResume:
    """Where a resumed run's updates fall, for releases that restart the count (`TrainerProfile.resume_restarts_count`):
    `plan` counts its steps from the checkpoint's and its epochs from the one the run resumed in."""

    start: int
    first_epoch: int
    plan: Plan

    @property
    def steps_run(self) -> int:
        return self.start + self.plan.optimizer_steps

    @property
    def final_epoch(self) -> float:
        return self.first_epoch + self.plan.final_epoch

    def epochs(self, steps: np.ndarray) -> np.ndarray:
        """`state.epoch` after each of these global steps (all after the checkpoint)."""
        epoch, micro = positions(self.plan, np.asarray(steps, dtype=np.int64) - self.start)
        return self.first_epoch + epoch + micro / self.plan.micro_batches_per_epoch


def after_resume(plan: Plan, resumed_step: int | None) -> AfterResume | None:
    """The resumed run's geometry, when its release restarts the count (None otherwise: the plan's own holds)."""
    per_epoch = plan.num_update_steps_per_epoch
    if resumed_step is None or not plan.profile.resume_restarts_count or not per_epoch or not plan.micro_batches_per_epoch:
        return None
    accumulation = plan.setup.gradient_accumulation_steps
    length = plan.micro_batches_per_epoch
    first_epoch = resumed_step // per_epoch
    skipped = (resumed_step % per_epoch) * accumulation
    left = max(plan.max_steps - resumed_step, 0)
    rule = run.AccumulationRule(accumulation, plan.profile.running_count)
    segments: list[run.Segment] = []
    start = (0, 0)
    epochs = plan.epochs_loop - first_epoch
    if skipped and epochs > 0:
        rest = length - skipped
        count = min(rest // accumulation, left)
        steps = (run.StepRun(accumulation, count, skipped + accumulation, accumulation),) if count else ()
        segments.append(run.Segment((run.EpochSteps(steps, rest),), 1))
        carried = rest - (rest // accumulation) * accumulation
        start = (carried if plan.profile.running_count else 0, carried)
        left, epochs = left - count, epochs - 1
    if epochs > 0 and left > 0:
        segments += run.simulate(rule, length, plan.fetched_per_epoch, epochs, left, start)
    return AfterResume(resumed_step, first_epoch, replace(plan, segments=tuple(segments)))
