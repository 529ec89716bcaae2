"""Run geometry: where update k sits (epoch, micro-batch), how many samples have gone through by then, where
epochs end. One home for these rules; the plan, the learning-rate curve and the animation's frames read them.

Everything works on the plan's compact segments (`steplab.trainer.run`): a cycle of a few epochs repeated, never a
loop over updates, so 10^9 samples stay instant; the update-level functions are vectorised over numpy arrays.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

import numpy as np

from steplab.trainer import run
from steplab.trainer.dataloader import EpochData
from steplab.trainer.setup import TrainingSetup


class Plan(Protocol):
    """What the geometry reads of a plan (`steplab.trainer.plan.Plan` has it; the plan itself is built on this module)."""

    setup: TrainingSetup
    epoch: EpochData
    max_steps: int
    fetched_per_epoch: int
    segments: tuple[run.Segment, ...]

    @property
    def epochs_run(self) -> int: ...

    @property
    def optimizer_steps(self) -> int: ...

LINE_CAP = 200  # epoch boundaries listed at most by `epoch_boundaries` (every n-th epoch beyond that)


def samples_in_epoch(plan: Plan, micro_batches: int | np.ndarray) -> int | np.ndarray:
    """Samples through the model after the first `micro_batches` micro-batches of an epoch, all processes.

    Each micro-batch round takes the per-device batch on every process; the epoch's last round may be short
    (one process) or padded with repeats (several), so the epoch never passes `samples_used`.
    """
    per_round = plan.setup.per_device_train_batch_size * plan.setup.world_size
    if isinstance(micro_batches, np.ndarray):
        return np.minimum(micro_batches * per_round, plan.epoch.samples_used)
    return min(micro_batches * per_round, plan.epoch.samples_used)  # a plain int for one micro-batch


def final_epoch(segments: Sequence[run.Segment], length: int) -> float:
    """`state.epoch` after the last update: its epoch index plus the micro-batches done in it / L."""
    start = run.count_epochs(segments)
    for segment in reversed(segments):
        start -= len(segment.epochs) * segment.repeat
        for i in reversed(range(len(segment.epochs))):
            epoch = segment.epochs[i]
            if epoch.runs:
                index = start + (segment.repeat - 1) * len(segment.epochs) + i
                return index + epoch.runs[-1].last_end / length
    return 0


def _extend(pairs: list[list[int]], size: int, count: int) -> None:
    if pairs and pairs[-1][0] == size:
        pairs[-1][1] += count
    else:
        pairs.append([size, count])


def step_sizes_rle(segments: Sequence[run.Segment]) -> list[list[int]]:
    """`[micro_batches, repeat]` pairs of every update in order. A segment whose copy is one run of equal updates
    (the usual case) is one multiplication, not one pass per epoch: 10^9 steps over 10^8 epochs take no time."""
    pairs: list[list[int]] = []
    for segment in segments:
        copy: list[list[int]] = []
        for epoch in segment.epochs:
            for step_run in epoch.runs:
                _extend(copy, step_run.size, step_run.count)
        if len(copy) == 1:
            _extend(pairs, copy[0][0], copy[0][1] * segment.repeat)
            continue
        for _ in range(segment.repeat if copy else 0):  # the output itself holds every alternation
            for size, count in copy:
                _extend(pairs, size, count)
    return pairs


@dataclass(frozen=True)
class _Cycle:
    """One segment of the plan: `repeat` copies of a few epochs, flattened into arrays of step runs."""

    first_step: int  # updates done before the segment
    first_epoch: int  # epochs done before the segment
    repeat: int
    steps: int  # updates in one copy
    epochs: int  # epochs in one copy
    run_start: np.ndarray  # offset of each run's first update within one copy
    run_end: np.ndarray  # micro-batch (1-based, within its epoch) that closes the run's first update
    run_stride: np.ndarray
    run_epoch: np.ndarray  # epoch of the run within one copy
    epoch_done: np.ndarray  # updates done within one copy at the end of each of its epochs


@lru_cache(maxsize=64)
def _cycles(plan: Plan) -> tuple[_Cycle, ...]:
    cycles = []
    step = epoch = 0
    for segment in plan.segments:
        start, end, stride, of, done = [], [], [], [], []
        offset = 0
        for index, epoch_steps in enumerate(segment.epochs):
            for step_run in epoch_steps.runs:
                start.append(offset)
                end.append(step_run.end)
                stride.append(step_run.stride)
                of.append(index)
                offset += step_run.count
            done.append(offset)
        cycles.append(_Cycle(step, epoch, segment.repeat, offset, len(segment.epochs), np.array(start, np.int64),
                             np.array(end, np.int64), np.array(stride, np.int64), np.array(of, np.int64),
                             np.array(done, np.int64)))
        step += offset * segment.repeat
        epoch += len(segment.epochs) * segment.repeat
    return tuple(cycles)


def positions(plan: Plan, steps: Iterable[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(epoch index from 0, micro-batch within that epoch from 1) of the micro-batch that closes each update.

    `steps` are update numbers 1..optimizer_steps; others get (0, 0).
    """
    steps = np.asarray(steps, dtype=np.int64)
    epoch = np.zeros(steps.shape, dtype=np.int64)
    micro = np.zeros(steps.shape, dtype=np.int64)
    for cycle in _cycles(plan):
        if not cycle.steps:
            continue
        inside = (steps > cycle.first_step) & (steps <= cycle.first_step + cycle.steps * cycle.repeat)
        copy, within = np.divmod(steps[inside] - cycle.first_step - 1, cycle.steps)
        which = np.searchsorted(cycle.run_start, within, side="right") - 1
        micro[inside] = cycle.run_end[which] + (within - cycle.run_start[which]) * cycle.run_stride[which]
        epoch[inside] = cycle.first_epoch + copy * cycle.epochs + cycle.run_epoch[which]
    return epoch, micro


def epochs_and_samples(plan: Plan, steps: Iterable[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`state.epoch` after each update, and the samples that have gone through the model by then.

    state.epoch = epoch index + micro-batch / micro-batches per epoch (what the Trainer logs). Samples: every
    finished epoch adds what it fetched (micro-batches × per-device batch × devices, at most the epoch's
    samples), the current one what it fetched up to the update: exact at short last groups and epoch ends,
    where updates × effective batch is not.
    """
    epoch, micro = positions(plan, steps)
    length = plan.epoch.micro_batches
    fraction = micro / length if length else np.zeros(micro.shape)
    return epoch + fraction, epoch * samples_in_epoch(plan, plan.fetched_per_epoch) + samples_in_epoch(plan, micro)


def epoch_end_steps(plan: Plan, limit: int | None = None) -> list[int]:
    """`global_step` at the end of each epoch loop iteration (the first `limit` of them)."""
    count = plan.epochs_run if limit is None else min(limit, plan.epochs_run)
    return steps_after_epochs(plan, np.arange(1, count + 1, dtype=np.int64)).tolist()


def steps_after_epochs(plan: Plan, numbers: np.ndarray) -> np.ndarray:
    """Updates done when epoch number e (1-based) ends, for each e in `numbers`."""
    numbers = np.asarray(numbers, dtype=np.int64)
    out = np.zeros(numbers.shape, dtype=np.int64)
    for cycle in _cycles(plan):
        inside = (numbers > cycle.first_epoch) & (numbers <= cycle.first_epoch + cycle.epochs * cycle.repeat)
        copy, index = np.divmod(numbers[inside] - cycle.first_epoch - 1, cycle.epochs)
        out[inside] = cycle.first_step + copy * cycle.steps + cycle.epoch_done[index]
    return out


def last_epoch_complete(plan: Plan) -> bool:
    """False when reaching the horizon stops training in the middle of its last epoch (e.g. 2.5 epochs)."""
    if plan.optimizer_steps == 0 or plan.optimizer_steps < plan.max_steps or not plan.segments:
        return True
    last = plan.segments[-1].epochs[-1]
    closing = last.runs[-1].last_end if last.runs else 0
    return closing >= min(last.fetched, plan.epoch.micro_batches)


def completed_epochs(plan: Plan) -> int:
    """Epochs that really end (the last one does not when the horizon cuts it)."""
    return plan.epochs_run - (0 if last_epoch_complete(plan) else 1)


def epoch_boundaries(plan: Plan, cap: int = LINE_CAP) -> tuple[np.ndarray, np.ndarray]:
    """(epoch numbers, update step at their end) of the epochs that really end, every n-th one beyond `cap`."""
    count = completed_epochs(plan)
    every = max(1, -(-count // cap))
    numbers = np.arange(every, count + 1, every, dtype=np.int64)
    return numbers, steps_after_epochs(plan, numbers)
