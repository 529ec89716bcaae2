"""A GRPO run simulated from its `GrpoPlan`, as the course shows it: the worked arithmetic, the frames (a generation
round as its own event, then the micro-batches that train on it), the console and the learning-rate curve.

Every count is the plan's (`steplab.trl.grpo`): a round's U prompts and Gb completions, S micro-batches of B
completions per pass, μ passes, which round each micro-batch uses. The micro-batch frames are the Trainer plan's
(`timeline.build_timeline(plan.trainer)`: the same window, gaps, updates and learning rates); a generation frame
goes in front of every micro-batch that starts a round (TRL generates when its micro-batch count, never reset
between epochs, is a multiple of S·μ). Nothing here walks the run: a frame's round, pass and slice are
arithmetic on its position.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

from steplab.simulation import lr_curve
from steplab.simulation.logblock import Counts
from steplab.simulation.run_log import RunLog
from steplab.simulation.timeline import Frame, Gap, build_timeline
from steplab.trl.grpo import GrpoPlan


@dataclass(frozen=True)
class GrpoFrame:
    """One event of a GRPO run on each process: a generation round, or one micro-batch trained on its completions.

    `micro` is the Trainer's frame of the micro-batch (for a generation, of the micro-batch it comes before)."""

    kind: str  # "generation" | "micro_batch"
    micro: Frame
    round: int  # generation round, from 0 over the run
    round_in_epoch: int  # from 0 within its epoch
    slice: int  # which of the round's S slices of B completions (from 0); 0 for a generation
    iteration: int  # which of the μ passes over the round (from 0); 0 for a generation

    @property
    def is_generation(self) -> bool:
        return self.kind == "generation"

    @property
    def is_step(self) -> bool:
        """This micro-batch closes an optimizer update."""
        return not self.is_generation and self.micro.is_step

    @property
    def reused(self) -> bool:
        """The micro-batch trains on completions an earlier pass already used (μ > 1)."""
        return self.iteration > 0

    @property
    def step(self) -> int:
        return self.micro.step if self.is_step else 0

    @property
    def updates(self) -> int:
        """Optimizer updates done after this event."""
        return self.micro.updates - (1 if self.is_generation and self.micro.is_step else 0)

    @property
    def epoch(self) -> int:
        return self.micro.epoch


@dataclass(frozen=True, eq=False)
class GrpoTimeline:
    """The frames to show of a GRPO run, with its totals; the `Player` plays it like the Trainer's timeline.

    Compared and hashed by identity (`build_grpo_timeline` caches one per plan): the figure caches key on it cheaply."""

    plan: GrpoPlan
    frames: tuple[GrpoFrame, ...]
    gaps: tuple[Gap | None, ...]  # per window position: the micro-batches and updates skipped just before it
    skipped_rounds: tuple[int, ...]  # per window position: generation rounds skipped just before it
    targets: tuple[tuple[str, int], ...]  # ("epoch_end" | "last_update", window position)
    total_micro_batches: int  # micro-batches each process runs
    total_steps: int

    @property
    def whole_run(self) -> bool:
        return len(self.frames) == self.total_micro_batches + self.plan.generation_rounds

    def target(self, name: str) -> int | None:
        return dict(self.targets).get(name)

    def next_step_position(self, position: int) -> int | None:
        """The first window position after `position` whose micro-batch closes an optimizer update."""
        return next((p for p in range(position + 1, len(self.frames)) if self.frames[p].is_step), None)

    def next_generation_position(self, position: int) -> int | None:
        """The first window position after `position` that is a generation round."""
        return next((p for p in range(position + 1, len(self.frames)) if self.frames[p].is_generation), None)

    def rounds_done(self, position: int) -> int:
        """Generation rounds made by the event at `position` (it included)."""
        frame = self.frames[position]
        return frame.round + 1

    def completions_trained(self, position: int) -> int:
        """Completions through the model by the event at `position`, all processes, passes counted each time."""
        frame = self.frames[position]
        done = frame.micro.index + (0 if frame.is_generation else 1)
        setup = self.plan.setup
        return done * setup.per_device_train_batch_size * setup.world_size


def _micro_frame(plan: GrpoPlan, micro: Frame) -> GrpoFrame:
    per_round, rounds = plan.micro_batches_per_round, max(plan.rounds_per_epoch, 1)
    round_number, within = divmod(micro.index, per_round)
    iteration, part = divmod(within, plan.steps_per_generation)
    return GrpoFrame("micro_batch", micro, round_number, round_number % rounds, part, iteration)


@lru_cache(maxsize=32)
def build_grpo_timeline(plan: GrpoPlan) -> GrpoTimeline:
    """The frames of a GRPO run: the Trainer's window over its micro-batches, a generation in front of each round."""
    trainer = build_timeline(plan.trainer)
    per_round = plan.micro_batches_per_round
    frames: list[GrpoFrame] = []
    gaps: list[Gap | None] = []
    skipped: list[int] = []
    moved: dict[int, int] = {}  # the Trainer window's position -> this window's
    previous = -1
    for position, (micro, gap) in enumerate(zip(trainer.frames, trainer.gaps, strict=True)):
        frame = _micro_frame(plan, micro)
        # rounds that start strictly between the last shown micro-batch and this one
        hidden = max(0, (micro.index - 1) // per_round - previous // per_round) if previous >= 0 else 0
        events = [frame]
        if micro.index % per_round == 0:
            events.insert(0, replace(frame, kind="generation", slice=0, iteration=0))
        for number, event in enumerate(events):
            frames.append(event)
            gaps.append(gap if number == 0 else None)
            skipped.append(hidden if number == 0 else 0)
        moved[position] = len(frames) - 1
        previous = micro.index
    targets = tuple((name, moved[position]) for name, position in trainer.targets)
    return GrpoTimeline(plan, tuple(frames), tuple(gaps), tuple(skipped), targets, trainer.total_frames,
                        trainer.total_steps)


def counts(plan: GrpoPlan) -> Counts:
    """The Trainer's block for a GRPO run: "Num examples" N prompts, the batch B and B·GA·P completions."""
    return Counts(plan.num_examples, plan.setup.per_device_train_batch_size, plan.completions_per_update)


def run_log(plan: GrpoPlan, seconds_per_step: float, seed: int = 0) -> RunLog:
    """The console of a GRPO run: the Trainer's lines over its updates, with the block's figures in prompts and
    completions (TRL's own metrics on a log line, rewards and the like, are not simulated)."""
    return RunLog(plan.trainer, seconds_per_step, seed=seed, counted=counts(plan))


@lru_cache(maxsize=32)
def learning_rate_curve(plan: GrpoPlan) -> lr_curve.Curve:
    """The learning rate of every update of the run, with the completions trained on by then (all processes,
    passes counted each time) instead of the Trainer plan's micro-batches."""
    found = lr_curve.curve(plan.trainer)
    per_micro_batch = plan.setup.per_device_train_batch_size * plan.setup.world_size
    samples = None if found.run.samples is None else found.run.samples * per_micro_batch
    if samples is not None:
        samples.setflags(write=False)
    return replace(found, run=replace(found.run, samples=samples))
