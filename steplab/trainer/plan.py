"""The training plan: what the selected Trainer computes and then really does for a setup."""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from steplab.errors import SetupError, TrainerRefusal
from steplab.trainer import geometry, run
from steplab.trainer.arguments import EVAL_NEEDS_DATASET, check_arguments, check_trainer, warmup_steps
from steplab.trainer.dataloader import EpochData, ceil_div, hf_epoch, lightning_epoch
from steplab.trainer.profiles import TrainerProfile, get_profile
from steplab.trainer.schedules import METRIC_DRIVEN, check_scheduler, known_schedulers, learning_rates
from steplab.trainer.setup import TrainingSetup


@dataclass(frozen=True)
class Plan:
    """Everything the Trainer computes at the start of training and what its loop then executes."""

    setup: TrainingSetup
    profile: TrainerProfile
    epoch: EpochData
    num_update_steps_per_epoch: int  # U, as the Trainer computes it
    max_steps: int  # T: the schedule horizon, "Total optimization steps"
    epochs_loop: int  # how many times the epoch loop may run ("Num Epochs" in the log)
    warmup_steps: int
    total_train_batch_size: int
    fetched_per_epoch: int  # micro-batches each epoch really draws (fewer than L under the 4.46–4.51 chunk bug)
    segments: tuple[run.Segment, ...] = field(repr=False)

    def draws_per_epoch(self) -> dict[str, int]:
        """Per epoch, all processes together: samples drawn, draws that repeat a sample, samples never drawn.

        Repeats fill the last round of batches on several processes (`even_batches`) or pad Lightning's sampler;
        never drawn are the samples `dataloader_drop_last` skips and those of micro-batches an epoch never fetches
        (the 4.46–4.51 last-chunk bug); both sit at the end of an epoch's sample stream, so skipped micro-batches
        take the repeats first.
        """
        epoch = self.epoch
        missing = epoch.micro_batches - self.fetched_per_epoch
        processes = self.setup.world_size
        batch = self.setup.per_device_train_batch_size
        skipped = ((missing - 1) * batch + epoch.last_batch) * processes if missing > 0 else 0
        return {"draws_per_epoch": epoch.samples_used - skipped,
                "repeated_draws_per_epoch": max(0, epoch.duplicated - skipped),
                "never_drawn_per_epoch": epoch.dropped + max(0, skipped - epoch.duplicated)}

    @property
    def micro_batches_per_epoch(self) -> int:
        return self.epoch.micro_batches

    @property
    def optimizer_steps(self) -> int:
        """Optimizer steps the loop really takes (can be fewer than `max_steps` in old releases)."""
        return run.count_steps(list(self.segments))

    @property
    def epochs_run(self) -> int:
        """Epoch loop iterations that really start (the last one may be cut short)."""
        return run.count_epochs(list(self.segments))

    @property
    def final_epoch(self) -> float:
        """`state.epoch` after training: epoch index + micro-batches done in that epoch / L, at the last step."""
        return geometry.final_epoch(self.segments, self.epoch.micro_batches)

    def micro_batches_per_step_rle(self) -> list[list[int]]:
        """`[micro_batches, repeat]` pairs of every optimizer step in order."""
        return geometry.step_sizes_rle(self.segments)

    def epoch_end_steps(self, limit: int | None = None) -> list[int]:
        """`global_step` at the end of every epoch loop iteration (the first `limit` of them)."""
        return geometry.epoch_end_steps(self, limit)

    @property
    def last_group_size(self) -> int:
        """Micro-batches in an epoch's last accumulation group when each epoch is grouped on its own: L mod GA, or GA
        when GA divides L (also for an empty epoch). Fewer than GA: the epoch ends on a short update (or, ≤ 4.46,
        its last micro-batches join the next epoch's first group)."""
        ga = self.setup.gradient_accumulation_steps
        return self.micro_batches_per_epoch % ga or ga

    @property
    def largest_step(self) -> int:
        """The most micro-batches any one optimizer step holds."""
        return max((r.size for seg in self.segments for e in seg.epochs for r in e.runs), default=0)

    def learning_rates(self, first: int = 1, last: int | None = None) -> np.ndarray:
        """The learning rate each optimizer step k = first..last uses: learning_rate × λ(k − 1)."""
        last = self.optimizer_steps if last is None else last
        if self.setup.lr_scheduler_type in METRIC_DRIVEN:
            return np.full(max(0, last - first + 1), self.setup.learning_rate)
        return learning_rates(
            self.setup.lr_scheduler_type, last, first=first, warmup_steps=self.warmup_steps,
            total_steps=self.max_steps, kwargs=self.setup.scheduler_kwargs,
            learning_rate=self.setup.learning_rate, profile=self.profile.id,
        )


NO_LENGTH = "args.max_steps must be set to a positive value if dataloader does not have a length, was {max_steps}"
"""`Trainer._inner_training_loop` (every release) for a dataloader with no length and no positive `max_steps`."""


def _epoch_data(setup: TrainingSetup, profile: TrainerProfile) -> EpochData:
    if profile.framework == "lightning":
        return lightning_epoch(
            setup.num_samples, setup.per_device_train_batch_size, setup.world_size,
            setup.dataloader_drop_last, setup.limit_train_batches,
        )
    return hf_epoch(setup.num_samples, setup.per_device_train_batch_size, setup.world_size, setup.dataloader_drop_last)


def _fetched(setup: TrainingSetup, profile: TrainerProfile, length: int) -> int:
    """Micro-batches an epoch draws: 4.46–4.51 size the last chunk by num_samples % GA, not by L % GA."""
    ga = setup.gradient_accumulation_steps
    if not profile.last_chunk_from_samples or ga == 1:
        return length
    remainder = setup.num_samples % ga or ga
    return min(length, (length // ga) * ga + remainder)


def _horizon(setup: TrainingSetup, profile: TrainerProfile, length: int) -> tuple[int, int, int]:
    """(U, T, epoch loop count) as the Trainer computes them before training."""
    ga = setup.gradient_accumulation_steps
    if profile.framework == "lightning":
        if setup.num_train_epochs != int(setup.num_train_epochs):
            raise SetupError("setup.lightning_whole_epochs", field="num_train_epochs")
        per_epoch = ceil_div(length, ga)
        epochs = max(int(setup.num_train_epochs), 1)
        total = per_epoch * epochs
        if setup.max_steps > 0:
            total = min(total, setup.max_steps)
        return per_epoch, total, int(setup.num_train_epochs)
    if setup.streaming and profile.framework != "lightning":  # no length: max_steps alone, epochs without end
        return setup.max_steps, setup.max_steps, sys.maxsize
    if length == 0:
        if profile.empty_loader_error:
            asked = setup.num_samples % ga or ga  # the first update's micro-batches (`remainder` of num_examples)
            raise TrainerRefusal(*(profile.empty_loader_many_error if asked >= 2 and profile.empty_loader_many_error
                                   else profile.empty_loader_error))
        if setup.max_steps > 0:
            return setup.max_steps, setup.max_steps, sys.maxsize
        raise TrainerRefusal("ValueError", NO_LENGTH.format(max_steps=setup.max_steps))
    per_epoch = max(ceil_div(length, ga) if profile.round_updates_up else length // ga, 1)
    if setup.max_steps > 0:
        return per_epoch, setup.max_steps, ceil_div(setup.max_steps, per_epoch)
    return per_epoch, math.ceil(setup.num_train_epochs * per_epoch), math.ceil(setup.num_train_epochs)


def _streamed(setup: TrainingSetup) -> TrainingSetup:
    """A stream (`streaming: true`: an `IterableDataset`, no length) as the Trainer runs it: `max_steps` updates of
    GA micro-batches in one epoch of `max_steps` × GA micro-batches (`steps_in_epoch = max_steps * GA`), so its
    "Num examples" is `max_steps` × the total batch, whatever the stream holds (a shorter stream starts again).
    `max_steps` is positive here: `arguments.check_trainer` refuses a stream without it."""
    batch = setup.per_device_train_batch_size * setup.gradient_accumulation_steps * setup.world_size
    return setup.replace(num_samples=setup.max_steps * batch, dataloader_drop_last=False)


EMPTY_DATASET = "num_samples should be a positive integer value, but got num_samples=0"
"""torch's `RandomSampler` on a dataset of no rows (`torch/utils/data/sampler.py`): what every Trainer release
raises at `train()` when its dataset is empty, whatever `max_steps` says."""


@lru_cache(maxsize=512)
def make_plan(setup: TrainingSetup, random_sampler: bool = True) -> Plan:
    """Plan a setup under its `trainer` profile.

    Raises `TrainerRefusal` where the real Trainer would refuse the configuration, with its error type
    and message, and `SetupError` for input no Trainer can take. `random_sampler`: the Trainer draws the samples
    with its default sampler, torch's `RandomSampler`, which refuses a dataset of no rows before anything counts
    steps; TRL's GRPO brings a sampler of its own (`steplab.trl.grpo`).
    """
    profile = get_profile(setup.trainer)
    check_arguments(setup, profile)
    check_trainer(setup, profile)
    if setup.streaming and profile.framework == "transformers":
        setup = _streamed(setup)
    if random_sampler and setup.num_samples == 0 and profile.framework != "lightning":
        raise TrainerRefusal("ValueError", EMPTY_DATASET)
    epoch = _epoch_data(setup, profile)
    per_epoch, total, epochs_loop = _horizon(setup, profile, epoch.micro_batches)
    if setup.eval_on_start and not setup.has_eval_dataset and profile.framework == "transformers":
        raise TrainerRefusal("ValueError", EVAL_NEEDS_DATASET, "has_eval_dataset")
    warmup = warmup_steps(setup, profile, total)
    fetched = _fetched(setup, profile, epoch.micro_batches)
    rule = run.AccumulationRule(setup.gradient_accumulation_steps, profile.running_count)
    if epoch.micro_batches:
        segments = run.simulate(rule, epoch.micro_batches, fetched, epochs_loop, total)
    else:  # the first epoch yields no batch: the Trainer stops after it
        segments = [run.Segment((run.EpochSteps((), 0),), 1)]
    if setup.lr_scheduler_type not in METRIC_DRIVEN or setup.lr_scheduler_type not in known_schedulers(profile.id):
        check_scheduler(
            setup.lr_scheduler_type, setup.scheduler_kwargs, profile=profile.id,
            learning_rate=setup.learning_rate, warmup_steps=warmup, total_steps=total,
            last_step=run.count_steps(list(segments)),
        )
    return Plan(
        setup=setup,
        profile=profile,
        epoch=epoch,
        num_update_steps_per_epoch=per_epoch,
        max_steps=total,
        epochs_loop=epochs_loop,
        warmup_steps=warmup,
        total_train_batch_size=setup.per_device_train_batch_size * setup.gradient_accumulation_steps * setup.world_size,
        fetched_per_epoch=fetched,
        segments=tuple(segments),
    )
