"""When the Trainer logs, evaluates and saves (`DefaultFlowCallback`), by step, by epoch and at the last step."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from steplab.i18n import Message, fmt_float, fmt_int, msg
from steplab.trainer import geometry
from steplab.trainer.arguments import effective_interval_setting, interval_steps
from steplab.trainer.plan import Plan

KINDS = ("eval", "save", "log")


@dataclass(frozen=True)
class Events:
    """The optimizer steps after which one kind of event happens, kept compact for very long runs.

    Steps listed twice happen twice (4.46 writes the last checkpoint again at the end of the epoch).
    """

    every: int | None  # by "steps": every multiple of this ...
    upto: int  # ... up to this step
    final: tuple[int, ...]  # extra events at the last step
    by_epoch: Plan | None = field(default=None, compare=False, repr=False)  # by "epoch": at every epoch end
    first: tuple[int, ...] = ()  # events before the rhythm starts: eval_on_start (step 0), logging_first_step (1)
    after_a_step: bool = False  # logs: only after an update, once per step (`global_step > _globalstep_last_logged`)
    start: int = 0  # by "steps": the first multiple of `every` that counts (`eval_delay`); 0: `every` itself
    skip_epochs: int = 0  # by "epoch": the first epoch ends that do not count (`eval_delay` above `state.epoch`)
    depends_on_metric: bool = False  # `save_strategy="best"`: each step may save, if its evaluation is a new best

    @property
    def first_periodic(self) -> int:
        """The first step of the rhythm by steps (`every`, or the first multiple of it `eval_delay` lets through)."""
        return max(self.start, self.every or 0)

    def periodic(self, low: int = 0, high: int | None = None) -> range:
        """The rhythm's steps s with low < s <= high (all of them without bounds)."""
        if not self.every:
            return range(0)
        top = self.upto if high is None else min(high, self.upto)
        first = max((low // self.every + 1) * self.every, self.first_periodic)
        return range(first, top + 1, self.every)

    def epoch_end_steps(self) -> np.ndarray:
        """The steps of the epoch ends that count (none when the rhythm is not by epoch)."""
        if self.by_epoch is None:
            return np.zeros(0, dtype=np.int64)
        return np.asarray(self._epoch_ends(), dtype=np.int64)

    def _epoch_ends(self, limit: int | None = None) -> list[int]:
        if not self.by_epoch:
            return []
        wanted = None if self.after_a_step or limit is None else limit + self.skip_epochs
        ends = self.by_epoch.epoch_end_steps(wanted)[self.skip_epochs:]
        if self.after_a_step:  # an epoch that ends with no new update (none at all, or none since the last log)
            ends = sorted({end for end in ends if end > 0})
        return ends if limit is None else ends[:limit]

    def count(self) -> int:
        periodic = len(self.periodic())
        if self.after_a_step:
            ends = len(self._epoch_ends())
        else:
            ends = max(0, self.by_epoch.epochs_run - self.skip_epochs) if self.by_epoch else 0
        return periodic + ends + len(self.final) + len(self.first)

    def steps(self, limit: int | None = None) -> list[int]:
        """All event steps in order (at most `limit` of them)."""
        periodic = self.periodic()
        if limit is not None:
            periodic = periodic[:limit]
        ends = self._epoch_ends(limit)
        merged = sorted([*self.first, *periodic, *ends, *self.final])
        return merged if limit is None else merged[:limit]

    def preview(self, limit: int, separator: str = ", ", more: str = " …") -> str:
        """The first `limit` event steps as text ("50, 100, 150 …"), `more` when there are others; "" when none."""
        shown = separator.join(fmt_int(step) for step in self.steps(limit))
        return shown + (more if self.count() > limit else "")


def _strategy(plan: Plan, kind: str) -> str:
    name = "logging" if kind == "log" else kind
    return getattr(plan.setup, f"{name}_strategy")


def interval(plan: Plan, kind: str) -> int | None:
    """The `*_steps` interval in steps, after a ratio below 1 is turned into steps of `max_steps`."""
    name = "logging" if kind == "log" else kind
    return interval_steps(effective_interval_setting(plan.setup, name), plan.max_steps)


def events(plan: Plan, kind: str) -> Events:
    """The steps at which `kind` ('eval', 'save' or 'log') happens in this plan."""
    if plan.profile.framework != "transformers":
        return Events(None, 0, ())
    strategy = _strategy(plan, kind)
    if kind == "save" and strategy == "best":  # `_maybe_log_save_evaluate`: should_save = is_new_best_metric
        return replace(events(plan, "eval"), first=(), depends_on_metric=True)  # eval_on_start's evaluation saves none
    steps_done = plan.optimizer_steps
    every = interval(plan, kind) if strategy == "steps" else None
    if every is not None and every <= 0:
        every = None
    reached_end = plan.max_steps > 0 and steps_done >= plan.max_steps
    final: list[int] = []
    if reached_end and kind == "save":
        forced = strategy != "no" if plan.profile.final_save_any_strategy else strategy == "steps"
        if forced and not (every and plan.max_steps % every == 0 and strategy == "steps"):
            final.append(plan.max_steps)
    delay = plan.setup.eval_delay if kind == "eval" else 0
    if reached_end and kind == "eval" and plan.profile.final_eval and strategy == "steps" and delay <= plan.max_steps:
        if not every or plan.max_steps % every:
            final.append(plan.max_steps)
    start = _first_multiple(every, delay) if every and delay > every else 0
    skip = _epochs_before(plan, delay) if strategy == "epoch" and delay > 0 else 0
    return Events(every, steps_done if every else 0, tuple(final), plan if strategy == "epoch" else None,
                  _first(plan, kind, every), after_a_step=kind == "log", start=start, skip_epochs=skip)


def _first_multiple(every: int, delay: float) -> int:
    """The first multiple of `every` that is at least `delay` (`eval_delay <= state.global_step`)."""
    multiple = max(1, math.ceil(delay / every))
    while multiple > 1 and (multiple - 1) * every >= delay:  # a ratio rounded up past a whole multiple
        multiple -= 1
    while multiple * every < delay:
        multiple += 1
    return multiple * every


def _epochs_before(plan: Plan, delay: float) -> int:
    """How many epoch ends come before `eval_delay`: `DefaultFlowCallback.on_epoch_end` evaluates only when
    `args.eval_delay <= state.epoch`, the epoch value of the last update (epoch index + its micro-batch / L).

    `state.epoch` never falls, so they are the first ones; an epoch end sits at least one epoch past the update
    before it unless updates are rarer than epochs (fewer micro-batches than GA: at most GA epochs apart)."""
    window = min(plan.epochs_run, math.ceil(delay) + plan.setup.gradient_accumulation_steps + 2)
    ends = geometry.steps_after_epochs(plan, np.arange(1, window + 1, dtype=np.int64))
    epochs, _ = geometry.epochs_and_samples(plan, ends)
    epochs = np.where(ends > 0, epochs, 0.0)
    return int(np.count_nonzero(epochs < delay))


def _first(plan: Plan, kind: str, every: int | None) -> tuple[int, ...]:
    """`eval_on_start` evaluates once before the first update (step 0); `logging_first_step` logs step 1 too.

    Step 1 is logged once when the rhythm already logs it (by steps of 1, or an epoch that ends there):
    the Trainer logs a step at most once.
    """
    if kind == "eval" and plan.setup.eval_on_start:
        return (0,)
    if kind != "log" or not plan.setup.logging_first_step or plan.optimizer_steps < 1:
        return ()
    strategy = plan.setup.logging_strategy
    covered = every == 1 or (strategy == "epoch" and plan.epoch_end_steps(1) == [1])
    return () if covered else (1,)


def rhythm(plan: Plan) -> Message:
    """How often evaluation falls, in epochs: "once per epoch", "twice per epoch", "once every 1.5 epochs"."""
    if plan.setup.eval_strategy != "steps":
        return msg("events.rhythm.epoch_end") if plan.setup.eval_strategy == "epoch" else msg("events.rhythm.none")
    every = interval(plan, "eval")
    epochs = every / plan.num_update_steps_per_epoch if plan.num_update_steps_per_epoch else 0
    if abs(epochs - 1) < 1e-9:
        return msg("events.rhythm.once_per_epoch")
    if 0 < epochs < 1 and abs(1 / epochs - round(1 / epochs)) < 1e-9:
        times = round(1 / epochs)
        return msg("events.rhythm.twice_per_epoch" if times == 2 else "events.rhythm.times_per_epoch", times=times)
    return msg("events.rhythm.every_epochs", epochs=fmt_float(epochs, 3))
