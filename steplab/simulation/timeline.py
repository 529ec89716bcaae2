"""The accumulation animation as data: one frame per micro-batch, a pure function of a plan.

A frame is one micro-batch round: every GPU lane runs its own micro-batch at the same time. Everything a
frame says (the bucket fill "k / GA", the optimizer step it closes, the update counter, the samples
seen, the epoch progress, the learning rate) is read from `plan.segments` with arithmetic, so any
micro-batch of a run of 10^9 samples can be looked up without walking the run. Long runs are shown
through a bounded window: the first updates, the end of the first epoch, the last update.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from steplab.trainer import run
from steplab.trainer.geometry import epochs_and_samples, positions, samples_in_epoch
from steplab.trainer.plan import Plan

MAX_LANES = 8  # GPU lanes drawn; more are summarised in one row
WHOLE_RUN = 96  # runs with at most this many micro-batch rounds are shown whole
CHAPTER = 40  # micro-batch rounds per part of the window at most
CHAPTER_HEAD = 6  # when a part is cut, the rounds kept from its start (the rest come from its end)
FIRST_UPDATES = 3  # optimizer steps shown from the start of a long run


@dataclass(frozen=True)
class Frame:
    """One micro-batch round, after it ran (counters include it)."""

    index: int  # position in the whole run, 0-based
    epoch: int  # epoch loop iteration, 0-based
    micro_batch: int  # position in its epoch, 1-based
    samples: int  # samples per GPU in this micro-batch (the epoch's last one can be short)
    fill: int  # micro-batches in the accumulation bucket with this one (counted before a step empties it)
    carried: int  # of those, how many came from an earlier epoch
    bucket_samples: int  # samples in the bucket, all GPUs
    step: int  # the optimizer step this micro-batch closes (0: none)
    updates: int  # optimizer steps done after this micro-batch
    samples_seen: int  # samples through the model so far, all GPUs, repeats included
    lr: float | None  # learning rate of the update this micro-batch belongs to (None: no update follows)
    epoch_end: bool  # the epoch's last fetched micro-batch
    run_end: bool  # the last micro-batch of the run
    duplicated: tuple[int, ...]  # repeated samples per GPU lane (only in an epoch's last micro-batch)
    dropped: int  # samples per epoch never used (drop_last / limit_train_batches), on the epoch's end
    skipped: int  # micro-batches per epoch never fetched (transformers 4.46–4.51), on the epoch's end
    trainer_epoch: float = 0.0  # `state.epoch` as the Trainer holds it: set at optimizer steps only (0 before the first)

    @property
    def is_step(self) -> bool:
        return self.step > 0


@dataclass(frozen=True)
class Gap:
    """What the window skips before a frame."""

    micro_batches: int
    updates: int


@dataclass(frozen=True)
class Timeline:
    """The frames an animation shows for a plan, with the totals of the whole run."""

    plan: Plan
    frames: tuple[Frame, ...]  # the window, in run order
    gaps: tuple[Gap | None, ...]  # per window position: what was skipped just before it
    targets: tuple[tuple[str, int], ...]  # ("epoch_end" | "last_update", window position of that moment)
    total_frames: int  # micro-batch rounds in the whole run
    total_steps: int  # optimizer steps in the whole run

    @property
    def whole_run(self) -> bool:
        return len(self.frames) == self.total_frames

    @property
    def accumulation(self) -> int:
        return self.plan.setup.gradient_accumulation_steps

    @property
    def world_size(self) -> int:
        return self.plan.setup.world_size

    @property
    def batch_size(self) -> int:
        return self.plan.setup.per_device_train_batch_size

    def target(self, name: str) -> int | None:
        return dict(self.targets).get(name)

    def next_step_position(self, position: int) -> int | None:
        """The first window position after `position` whose micro-batch closes an optimizer step."""
        return next((p for p in range(position + 1, len(self.frames)) if self.frames[p].is_step), None)


# --- arithmetic over the plan's segments ---------------------------------------------------------------


@dataclass(frozen=True)
class _Block:
    """One segment with the run's totals at its start."""

    segment: run.Segment
    first_epoch: int
    first_frame: int
    first_step: int
    first_samples: int
    carry: int  # micro-batches in the bucket at its start
    frames: tuple[int, ...]  # rounds of each epoch of its cycle
    steps: tuple[int, ...]
    samples: tuple[int, ...]

    @property
    def cycle_frames(self) -> int:
        return sum(self.frames)

    @property
    def total_frames(self) -> int:
        return self.cycle_frames * self.segment.repeat

    @property
    def total_steps(self) -> int:
        return sum(self.steps) * self.segment.repeat


def _steps_through(epoch: run.EpochSteps, micro_batch: int) -> tuple[int, run.StepRun | None, int]:
    """(steps closed by micro-batches 1..m, the run whose step m closes or None, the end of the last step before m)."""
    done, closing, previous = 0, None, 0
    for step_run in epoch.runs:
        if micro_batch < step_run.end:
            break
        taken = min(step_run.count, (micro_batch - step_run.end) // step_run.stride + 1)
        done += taken
        last = step_run.end + (taken - 1) * step_run.stride
        if last == micro_batch:
            closing = step_run
            if taken > 1:
                previous = last - step_run.stride
        else:
            previous = last
    return done, closing, previous


class _Run:
    """Random access to any micro-batch round of a plan's run."""

    def __init__(self, plan: Plan):
        self.plan = plan
        epoch = plan.epoch
        self.length = epoch.micro_batches
        self.lanes = plan.setup.world_size
        self.batch = plan.setup.per_device_train_batch_size
        self.short = self.batch - epoch.last_batch if self.length else 0
        self.blocks: list[_Block] = []
        frames = steps = samples = epochs = carry = 0
        segments = list(plan.segments)
        for segment in segments:
            rounds = [e.fetched for e in segment.epochs]
            block = _Block(
                segment, epochs, frames, steps, samples, carry, tuple(rounds),
                tuple(e.steps for e in segment.epochs), tuple(self._samples_before(r + 1) for r in rounds),
            )
            self.blocks.append(block)
            frames += block.total_frames
            steps += block.total_steps
            samples += sum(block.samples) * segment.repeat
            epochs += len(segment.epochs) * segment.repeat
            carry = self._carry_after(block)
        final = segments[-1].epochs[-1] if segments else None
        if final is not None and final.runs and 0 < plan.optimizer_steps >= plan.max_steps:
            frames -= final.fetched - final.runs[-1].last_end  # training stops at the step reaching max_steps
        self.total_frames = frames
        self.total_steps = steps

    def _samples_before(self, micro_batch: int) -> int:
        """Samples in micro-batches 1..m-1 of an epoch, all lanes."""
        return samples_in_epoch(self.plan, micro_batch - 1)

    def _carry_after(self, block: _Block) -> int:
        carry = block.carry
        for _ in range(min(block.segment.repeat, 2)):  # a cycle with a step sets the carry itself
            for epoch, rounds in zip(block.segment.epochs, block.frames, strict=True):
                carry = rounds - epoch.runs[-1].last_end if epoch.runs else carry + rounds
        if not any(e.runs for e in block.segment.epochs):
            carry = block.carry + block.total_frames
        return carry

    def _carry_into(self, block: _Block, cycle: int, position: int) -> int:
        """Micro-batches in the bucket when epoch `position` of cycle `cycle` of `block` starts."""
        epochs = block.segment.epochs
        if epochs[position].runs:
            first = epochs[position].runs[0]
            return max(0, first.size - first.end)
        if not any(e.runs for e in epochs):
            return block.carry + (cycle * len(epochs) + position) * epochs[0].fetched
        carry = 0
        for back in range(1, len(epochs) + 1):  # the last epoch before it that stepped, then the empty ones
            earlier = epochs[(position - back) % len(epochs)]
            if earlier.runs:
                carry = earlier.fetched - earlier.runs[-1].last_end
                return carry + sum(epochs[(position - b) % len(epochs)].fetched for b in range(1, back))
        return carry

    def frame(self, index: int, lr: float | None = None) -> Frame:
        """Micro-batch round `index` (0-based) of the run, with `lr` for the update it belongs to."""
        if not 0 <= index < self.total_frames:
            raise IndexError(index)
        block = next(b for b in reversed(self.blocks) if b.first_frame <= index)
        local = index - block.first_frame
        cycle, rest = divmod(local, block.cycle_frames)
        position = 0
        while rest >= block.frames[position]:
            rest -= block.frames[position]
            position += 1
        epoch = block.segment.epochs[position]
        micro_batch = rest + 1
        epoch_number = block.first_epoch + cycle * len(block.segment.epochs) + position
        steps_before = block.first_step + cycle * sum(block.steps) + sum(block.steps[:position])
        samples_before = block.first_samples + cycle * sum(block.samples) + sum(block.samples[:position])
        done, closing, previous = _steps_through(epoch, micro_batch)
        carried = 0 if previous else self._carry_into(block, cycle, position)
        fill = micro_batch - previous + carried
        seen = samples_before + self._samples_before(micro_batch + 1)
        fill_start = micro_batch - fill  # micro-batch (of this epoch, can be ≤ 0) before the bucket's first
        bucket = seen - (samples_before + self._samples_before(fill_start + 1)) if fill_start >= 0 else None
        if bucket is None:  # the bucket reaches back into earlier epochs: count through the frame before it
            bucket = seen - self.frame(index - fill).samples_seen if index - fill >= 0 else seen
        updates = steps_before + done
        run_end = index == self.total_frames - 1
        ends_epoch = micro_batch == epoch.fetched
        return Frame(
            index=index, epoch=epoch_number, micro_batch=micro_batch,
            samples=self.batch - (self.short if micro_batch == self.length else 0),
            fill=fill, carried=min(carried, fill), bucket_samples=bucket,
            step=updates if closing else 0, updates=updates, samples_seen=seen, lr=lr,
            epoch_end=ends_epoch, run_end=run_end,
            duplicated=self._duplicated() if micro_batch == self.length else (),
            dropped=self.plan.epoch.dropped if ends_epoch else 0,
            skipped=self.length - epoch.fetched if ends_epoch else 0,
            trainer_epoch=self._trainer_epoch(updates),
        )

    def _trainer_epoch(self, updates: int) -> float:
        """`state.epoch` after `updates` optimizer steps: the Trainer sets it at a step (epoch + micro-batch / L of
        that step) and keeps it until the next one; 0 before the first update."""
        if not updates:
            return 0.0
        return float(epochs_and_samples(self.plan, np.array([updates], dtype=np.int64))[0][0])

    def _duplicated(self) -> tuple[int, ...]:
        """Repeated samples per lane in an epoch's last micro-batch (they fill the last lanes)."""
        total = self.plan.epoch.duplicated
        if not total:
            return ()
        per_lane = 1 if self.plan.profile.framework == "lightning" else self.batch
        lanes = [0] * self.lanes
        for lane in reversed(range(self.lanes)):
            take = min(per_lane, total)
            lanes[lane], total = take, total - take
            if not total:
                break
        return tuple(lanes)

    def step_frame(self, step: int) -> int:
        """The run index of the micro-batch closing optimizer step `step` (1-based): where the geometry puts it."""
        if not 1 <= step <= self.total_steps:
            raise IndexError(step)
        epoch, micro_batch = positions(self.plan, np.array([step], dtype=np.int64))
        first, _ = self._epoch_frames(int(epoch[0]))
        return first + int(micro_batch[0]) - 1

    def _epoch_frames(self, epoch: int) -> tuple[int, int]:
        """(run index of the first micro-batch round of epoch `epoch` (0-based), its rounds); (-1, 0) past the plan."""
        for block in self.blocks:
            count = len(block.segment.epochs) * block.segment.repeat
            if epoch < block.first_epoch + count:
                cycle, position = divmod(epoch - block.first_epoch, len(block.segment.epochs))
                first = block.first_frame + cycle * block.cycle_frames + sum(block.frames[:position])
                return first, block.frames[position]
        return -1, 0

    def epoch_end_frame(self, epoch: int) -> int | None:
        """The run index of the last micro-batch of epoch `epoch` (0-based), None past the run."""
        first, rounds = self._epoch_frames(epoch)
        frame = first + rounds - 1
        return frame if first >= 0 and frame < self.total_frames else None


# --- the window ----------------------------------------------------------------------------------------


def _cut(first: int, last: int) -> list[tuple[int, int]]:
    """A part of the window, kept to `CHAPTER` rounds: its start and, above all, its end (the key moment)."""
    if last - first + 1 <= CHAPTER:
        return [(first, last)]
    return [(first, first + CHAPTER_HEAD - 1), (last - (CHAPTER - CHAPTER_HEAD) + 1, last)]


def _chapters(walk: _Run) -> list[tuple[str, int, int]]:
    """(name, first, last) run indices of the parts worth showing."""
    total, steps = walk.total_frames, walk.total_steps
    parts: list[tuple[str, int, int]] = []
    if steps:
        shown = 1
        while shown < min(FIRST_UPDATES, steps) and walk.step_frame(shown + 1) < CHAPTER:
            shown += 1
        parts.append(("start", 0, walk.step_frame(shown)))
    else:
        parts.append(("start", 0, min(total, CHAPTER) - 1))
    end = walk.epoch_end_frame(0)
    if end is not None and end < total - 1:
        done = walk.frame(end).updates
        before = done - (2 if done and walk.step_frame(done) == end else 1)
        first = walk.step_frame(before) + 1 if before >= 1 else 0
        last = end + 1
        if done < steps and walk.step_frame(done + 1) > end and (done == 0 or walk.step_frame(done) < end):
            last = max(last, walk.step_frame(done + 1))  # the group straddles into the next epoch
        parts.append(("epoch_end", first, min(last, total - 1)))
    first = walk.step_frame(steps - 1) + 1 if steps >= 2 else max(0, total - CHAPTER)
    parts.append(("last_update", first, total - 1))
    return parts


def _window(walk: _Run) -> tuple[list[int], list[tuple[str, int]]]:
    """The run indices shown, and where the moment each part leads to stands: the first epoch's last micro-batch,
    the micro-batch that closes the last update (a skip lands on it; the part's start is a few frames back)."""
    parts = _chapters(walk)
    if walk.total_frames <= WHOLE_RUN:
        shown = list(range(walk.total_frames))
    else:
        chosen: set[int] = set()
        for _, first, last in parts:
            for low, high in _cut(first, last):
                chosen.update(range(low, high + 1))
        shown = sorted(chosen)
    moments = {"epoch_end": walk.epoch_end_frame(0),
               "last_update": walk.step_frame(walk.total_steps) if walk.total_steps else None}
    targets = []
    for name, first, _ in parts:
        moment = moments.get(name)
        if moment is not None:  # the moment, or the nearest frame before it that a cut part kept
            targets.append((name, bisect.bisect_right(shown, max(moment, first)) - 1))
    return shown, targets


def _learning_rates(plan: Plan, steps: list[int]) -> dict[int, float]:
    """The learning rate of each listed optimizer step (one vectorised call per close run of steps)."""
    rates: dict[int, float] = {}
    wanted = sorted({s for s in steps if 1 <= s <= plan.optimizer_steps})
    start = 0
    for i in range(1, len(wanted) + 1):
        if i == len(wanted) or wanted[i] - wanted[i - 1] > 64:
            first, last = wanted[start], wanted[i - 1]
            for step, value in zip(range(first, last + 1), plan.learning_rates(first, last), strict=True):
                rates[step] = float(value)
            start = i
    return rates


def _lr_step(frame: Frame, total_steps: int) -> int:
    """The optimizer step whose learning rate a frame shows: the one it closes or the one it feeds."""
    if frame.step:
        return frame.step
    return frame.updates + 1 if frame.updates < total_steps else 0


def _with_lr(frame: Frame, rates: dict[int, float], total_steps: int) -> Frame:
    return replace(frame, lr=rates.get(_lr_step(frame, total_steps)))


@lru_cache(maxsize=64)
def build_timeline(plan: Plan) -> Timeline:
    """The frames to animate for a plan (pure: the same plan always gives the same timeline)."""
    walk = _Run(plan)
    if walk.total_frames == 0:
        return Timeline(plan, (), (), (), 0, 0)
    shown, targets = _window(walk)
    raw = [walk.frame(i) for i in shown]
    rates = _learning_rates(plan, [_lr_step(f, walk.total_steps) for f in raw])
    window = tuple(_with_lr(f, rates, walk.total_steps) for f in raw)
    gaps: list[Gap | None] = [None]
    for before, after in zip(window, window[1:], strict=False):
        skipped = after.index - before.index - 1
        updates = after.updates - (1 if after.step else 0) - before.updates
        gaps.append(Gap(skipped, updates) if skipped else None)
    return Timeline(plan, window, tuple(gaps), tuple(targets), walk.total_frames, walk.total_steps)


@lru_cache(maxsize=64)
def _walk(plan: Plan) -> _Run:
    return _Run(plan)


def update_timeline(plan: Plan, step: int, lr: float | None = None) -> Timeline:
    """A one-frame timeline: the micro-batch round that closes update `step` (any step, without building the run)."""
    walk = _walk(plan)
    frame = walk.frame(walk.step_frame(step), lr=lr)
    return Timeline(plan, (frame,), (None,), (), walk.total_frames, walk.total_steps)
