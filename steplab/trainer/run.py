"""Which micro-batches close an optimizer step, epoch by epoch, for each accumulation rule.

Nothing here loops over samples, micro-batches or steps: an epoch is a few runs of equal steps, and the
epoch loop repeats in a cycle after at most a few epochs (the state carried from one epoch to the next is
small), so whole cycles are skipped with arithmetic. Planning 10^9 samples or 10^6 epochs stays instant.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class StepRun:
    """`count` consecutive optimizer steps of `size` micro-batches each.

    The first of them is closed by micro-batch number `end` of its epoch (1-based); the next ones
    follow every `stride` micro-batches.
    """

    size: int
    count: int
    end: int
    stride: int

    @property
    def last_end(self) -> int:
        return self.end + (self.count - 1) * self.stride


@dataclass(frozen=True)
class EpochSteps:
    """The optimizer steps one epoch loop iteration takes, and the micro-batches it fetched."""

    runs: tuple[StepRun, ...]
    fetched: int

    @property
    def steps(self) -> int:
        return sum(run.count for run in self.runs)


@dataclass(frozen=True)
class Segment:
    """A stretch of epochs that repeats `repeat` times in a row."""

    epochs: tuple[EpochSteps, ...]
    repeat: int


@dataclass(frozen=True)
class AccumulationRule:
    """When a micro-batch closes an accumulation group.

    `running_count`: at every multiple of GA of a micro-batch count that never resets (≤ 4.46), plus the
    epoch's last micro-batch when the epoch holds at most GA of them. Otherwise the count restarts each
    epoch and the epoch's last micro-batch always closes a (possibly short) group.
    """

    accumulation: int
    running_count: bool


def epoch_steps(rule: AccumulationRule, length: int, fetched: int, offset: int, carry: int) -> tuple[EpochSteps, int, int]:
    """The steps of one epoch of `length` micro-batches of which `fetched` are drawn.

    `offset` is the running count modulo GA at the start (always 0 when the count restarts each epoch);
    `carry` the micro-batches already accumulated and not yet stepped. Returns the epoch's steps and the
    new (offset, carry).
    """
    ga = rule.accumulation
    runs: list[StepRun] = []
    first = ga - offset % ga
    last_end = 0
    if first <= fetched:
        count = (fetched - first) // ga + 1
        last_end = first + (count - 1) * ga
        runs.append(StepRun(carry + first, 1, first, ga))
        if count > 1:
            runs.append(StepRun(ga, count - 1, first + ga, ga))
        carry = fetched - last_end
    else:
        carry += fetched
    closes_at_end = length <= ga if rule.running_count else True
    if closes_at_end and fetched == length and last_end != length and fetched > 0:
        runs.append(StepRun(carry, 1, length, ga))
        carry = 0
    if len(runs) >= 2 and runs[0].size == runs[1].size == ga:
        runs[0:2] = [StepRun(ga, runs[0].count + runs[1].count, runs[0].end, ga)]
    offset = (offset + fetched) % ga if rule.running_count else 0
    return EpochSteps(tuple(runs), fetched), offset, carry


def _truncate(epoch: EpochSteps, steps: int) -> EpochSteps:
    """The same epoch, stopped after its first `steps` optimizer steps."""
    runs: list[StepRun] = []
    for run in epoch.runs:
        if steps <= 0:
            break
        take = min(run.count, steps)
        runs.append(StepRun(run.size, take, run.end, run.stride))
        steps -= take
    return EpochSteps(tuple(runs), epoch.fetched)


def simulate(rule: AccumulationRule, length: int, fetched: int, epochs: int, max_steps: int,
             start: tuple[int, int] = (0, 0)) -> list[Segment]:
    """The epoch loop: up to `epochs` iterations, stopping as soon as `max_steps` steps are taken.

    An epoch that takes no step at all under a per-epoch rule means no later epoch will either (the
    carried micro-batches only grow), so the loop ends there with every remaining epoch empty.
    `start` is the (offset, carry) the first epoch begins with (a resumed run's, `steplab.runfiles.resume`).
    """
    segments: list[Segment] = []
    offset, carry = start
    done_epochs = done_steps = 0
    seen: dict[tuple[int, int], tuple[int, int, int]] = {}
    history: list[EpochSteps] = []
    cycle_skipped = False
    while done_epochs < epochs and done_steps < max_steps:
        state = (offset, carry)
        if not cycle_skipped and state in seen:
            start_epochs, start_steps, start_index = seen[state]
            cycle_epochs, cycle_steps = done_epochs - start_epochs, done_steps - start_steps
            repeats = (epochs - done_epochs) // cycle_epochs
            if cycle_steps:
                repeats = min(repeats, (max_steps - done_steps) // cycle_steps)
            if repeats > 0:
                segments.append(Segment(tuple(history[start_index:]), repeats))
                done_epochs += repeats * cycle_epochs
                done_steps += repeats * cycle_steps
            cycle_skipped = True
            continue
        seen[state] = (done_epochs, done_steps, len(history))
        epoch, offset, carry = epoch_steps(rule, length, fetched, offset, carry)
        if epoch.steps > max_steps - done_steps:
            epoch = _truncate(epoch, max_steps - done_steps)
        history.append(epoch)
        segments.append(Segment((epoch,), 1))
        done_epochs += 1
        done_steps += epoch.steps
        if epoch.steps == 0 and not rule.running_count:
            if epochs > done_epochs:
                segments.append(Segment((EpochSteps((), fetched),), epochs - done_epochs))
            break
    return _merge(segments)


def _merge(segments: list[Segment]) -> list[Segment]:
    """Fold single epochs that repeat the previous segment's pattern into it (tidier output only)."""
    merged: list[Segment] = []
    for segment in segments:
        if merged and merged[-1].epochs == segment.epochs:
            merged[-1] = Segment(segment.epochs, merged[-1].repeat + segment.repeat)
        else:
            merged.append(segment)
    return merged


def iter_epochs(segments: list[Segment]) -> Iterator[EpochSteps]:
    """Every epoch loop iteration in order (expands repeats: O(epochs))."""
    for segment in segments:
        for _ in range(segment.repeat):
            yield from segment.epochs


def count_epochs(segments: list[Segment]) -> int:
    return sum(len(s.epochs) * s.repeat for s in segments)


def count_steps(segments: list[Segment]) -> int:
    return sum(sum(e.steps for e in s.epochs) * s.repeat for s in segments)
