"""When the Trainer logs, evaluates and saves (`DefaultFlowCallback`), by step, by epoch and at the last step."""

from __future__ import annotations

from dataclasses import dataclass, field

from steplab.i18n import Message, fmt_float, fmt_int, msg
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

    def _epoch_ends(self, limit: int | None = None) -> list[int]:
        ends = self.by_epoch.epoch_end_steps(None if self.after_a_step else limit) if self.by_epoch else []
        if self.after_a_step:  # an epoch that ends with no new update (none at all, or none since the last log)
            ends = sorted({end for end in ends if end > 0})
        return ends if limit is None else ends[:limit]

    def count(self) -> int:
        periodic = self.upto // self.every if self.every else 0
        ends = len(self._epoch_ends()) if self.after_a_step else (self.by_epoch.epochs_run if self.by_epoch else 0)
        return periodic + ends + len(self.final) + len(self.first)

    def steps(self, limit: int | None = None) -> list[int]:
        """All event steps in order (at most `limit` of them)."""
        periodic = range(self.every, self.upto + 1, self.every) if self.every else range(0)
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
    if reached_end and kind == "eval" and plan.profile.final_eval and strategy == "steps":
        if not every or plan.max_steps % every:
            final.append(plan.max_steps)
    return Events(every, steps_done if every else 0, tuple(final), plan if strategy == "epoch" else None,
                  _first(plan, kind, every), after_a_step=kind == "log")


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
