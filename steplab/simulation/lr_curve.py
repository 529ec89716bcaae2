"""The learning-rate curve of a plan, ready to draw: the LR every update uses, downsampled without losing its shape,
and the curve in one sentence.

Update k uses `learning_rate · λ(k − 1)` (see `steplab.trainer.schedules`). A plan runs `optimizer_steps` updates (R)
against a schedule horizon of `max_steps` (T); in 4.47–4.51 (and some 4.46 edge cases) R < T, so the curve
has two parts: the updates that really run, and the planned rest that never does.

A million updates cannot go to the browser point by point: `steplab.simulation.downsample` keeps at most `CAP` points
per trace, with exact points where the eye looks: the end of warmup, the schedule's turns, epoch boundaries and the
last update. Every kept point is an exact (step, learning rate) pair of the engine, with the epoch it falls in and
the samples seen by then (`steplab.trainer.geometry`). Up to `EXACT_LIMIT` updates every one is evaluated (10^6
cosine updates: about 70 ms, cached per plan); beyond, the buckets are read on an even grid of that many updates plus
the exact points.

Beside it: `lr_export` (CSV, YAML, code that rebuilds the scheduler), `lr_overlays` (the same plan with one thing
changed) and `steplab.trainer.schedule_arguments` (what a scheduler takes, starting values, edits).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from steplab.i18n import Message, fmt_lr, msg
from steplab.simulation.downsample import downsample
from steplab.trainer import schedules
from steplab.trainer.events import events
from steplab.trainer.geometry import epoch_boundaries, epochs_and_samples, steps_after_epochs
from steplab.trainer.plan import Plan

CAP = 2000  # points per trace sent to the browser
EXACT_LIMIT = 2_000_000  # up to this many updates every one is evaluated; beyond, an even grid of this many


def drawable(plan: Plan) -> bool:
    """A metric-driven scheduler (`reduce_lr_on_plateau`) has no curve to draw in advance."""
    return plan.setup.lr_scheduler_type not in schedules.METRIC_DRIVEN


def schedule_warmup(plan: Plan) -> int:
    """Warmup updates the schedule really applies: `constant` (and the metric-driven one) ignore warmup."""
    if not schedules.warms_up(plan.setup.lr_scheduler_type):
        return 0
    return plan.warmup_steps


def rates_at(plan: Plan, steps: Iterable[int] | np.ndarray) -> np.ndarray:
    """The learning rate of updates `steps` (any k ≥ 1), exactly as `plan.learning_rates` gives them."""
    steps = np.asarray(steps, dtype=np.int64)
    setup = plan.setup
    lam = schedules.lr_lambda(
        setup.lr_scheduler_type, steps - 1, warmup_steps=plan.warmup_steps, total_steps=plan.max_steps,
        kwargs=setup.scheduler_kwargs, learning_rate=setup.learning_rate, profile=plan.profile.id,
    )
    lam *= setup.learning_rate
    return lam


@dataclass(frozen=True)
class Trace:
    """Points of one line: update numbers, their learning rates, and (for updates that run) epoch and samples."""

    steps: np.ndarray
    rates: np.ndarray
    epochs: np.ndarray | None = None
    samples: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.steps)


@dataclass(frozen=True)
class Curve:
    """The learning-rate curve of a plan, downsampled for drawing, with the numbers its summary needs."""

    plan: Plan
    run: Trace  # the updates that really run: 1..optimizer_steps
    planned: Trace | None  # the horizon's updates that never run (from the last one that does)
    warmup: int  # warmup updates the schedule applies
    peak: float  # the highest learning rate of the curve (of the planned one when no update runs)
    peak_step: int  # the first update at the peak
    first: float | None  # the learning rate of update 1 (None when no update runs)
    last: float | None  # the learning rate of the last update that runs
    every_update: bool = True  # False: past the exact limit, buckets were read on an even grid of updates


def _readonly(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


def _keep_steps(plan: Plan, warmup: int) -> list[int]:
    """Updates kept exactly: warmup's last update and the first one after it, epoch ends, the stop, the horizon."""
    keep = [warmup, warmup + 1, plan.optimizer_steps, plan.max_steps, *_turns(plan)]
    _, ends = epoch_boundaries(plan, CAP // 4)
    return keep + ends.tolist()


def _turns(plan: Plan) -> list[int]:
    """Update numbers around the turns of the schedule (warmup-stable-decay: stable → decay, decay → floor)."""
    setup = plan.setup
    found = schedules.turns(setup.lr_scheduler_type, setup.scheduler_kwargs, plan.warmup_steps, plan.max_steps)
    last = max(plan.optimizer_steps, plan.max_steps)
    return [k for turn in found if math.isfinite(turn) and abs(turn) <= last
            for k in (math.ceil(turn), math.ceil(turn) + 1)]


def curve(plan: Plan, cap: int = CAP, exact_limit: int | None = None) -> Curve:
    """The plan's learning-rate curve, at most `cap` points per trace (cached per plan).

    Up to `exact_limit` updates (default `EXACT_LIMIT`) every one is evaluated; beyond, an even grid of that many.
    """
    if not drawable(plan):
        raise ValueError(f"{plan.setup.lr_scheduler_type} is metric-driven: it has no curve in advance")
    return _curve(plan, cap, EXACT_LIMIT if exact_limit is None else exact_limit)


def _grid(plan: Plan, total: int, keep: list[int], limit: int) -> tuple[np.ndarray, np.ndarray]:
    """(update steps, their learning rates): every update up to `limit`, else an even grid of `limit` plus `keep`."""
    if total <= limit:
        return np.arange(1, total + 1, dtype=np.int64), plan.learning_rates(1, total)
    even = np.linspace(1, total, limit).round().astype(np.int64)  # strictly increasing: total > the limit
    extra = np.unique(np.asarray([k for k in keep if 1 <= k <= total], dtype=np.int64))
    where = np.searchsorted(even, extra)
    fresh = even[np.minimum(where, len(even) - 1)] != extra
    steps = np.insert(even, where[fresh], extra[fresh])
    return steps, rates_at(plan, steps)


def _positions(steps: np.ndarray, wanted: list[int]) -> list[int]:
    """Where the `wanted` update numbers sit in the sorted `steps` (those that are there)."""
    wanted_array = np.asarray(wanted, dtype=np.int64)
    where = np.searchsorted(steps, wanted_array)
    inside = where < len(steps)
    where, wanted_array = where[inside], wanted_array[inside]
    return where[steps[where] == wanted_array].tolist()


@lru_cache(maxsize=32)
def _curve(plan: Plan, cap: int, limit: int) -> Curve:
    run_count, horizon = plan.optimizer_steps, plan.max_steps
    total = max(run_count, horizon)
    warmup = schedule_warmup(plan)
    keep = _keep_steps(plan, warmup)
    steps, rates = _grid(plan, total, keep, limit)
    cut = int(np.searchsorted(steps, run_count, side="right"))  # points of updates that run
    index = downsample(rates[:cut], cap, _positions(steps[:cut], keep))
    epochs, samples = epochs_and_samples(plan, steps[index])
    run = Trace(_readonly(steps[index]), _readonly(rates[index]), _readonly(epochs), _readonly(samples))
    planned = None
    if horizon > run_count:
        start = max(cut - 1, 0)  # from the last update that runs, so the two lines join
        rest = steps[start:]
        chosen = start + downsample(rates[start:], cap, _positions(rest, keep))
        planned = Trace(_readonly(steps[chosen]), _readonly(rates[chosen]))
    scope = rates[:cut] if run_count else rates
    finite = np.where(np.isnan(scope), -np.inf, scope)
    peak_index = int(np.argmax(finite)) if len(scope) else 0
    return Curve(
        plan=plan, run=run, planned=planned, warmup=warmup,
        peak=float(scope[peak_index]) if len(scope) else 0.0,
        peak_step=int(steps[peak_index]) if len(scope) else 1,
        first=float(rates[0]) if run_count else None,
        last=float(rates[cut - 1]) if run_count else None,
        every_update=total <= limit,
    )


def event_steps(plan: Plan, kind: str, cap: int = CAP) -> np.ndarray:
    """The update steps after which `kind` ('eval' or 'save') happens, every n-th one beyond `cap`."""
    found = events(plan, kind)
    if found.count() <= cap:
        return np.unique(np.asarray(found.steps(), dtype=np.int64))
    parts = [np.asarray(found.final, dtype=np.int64)]
    if found.every:
        periodic = found.periodic()
        stride = found.every * max(1, -(-len(periodic) // cap))
        first = stride * max(1, -(-periodic.start // stride))  # the first multiple of the stride the rhythm holds
        parts.append(np.arange(first, found.upto + 1, stride, dtype=np.int64))
    if found.by_epoch is not None:
        count = plan.epochs_run
        every = max(1, -(-count // cap))
        numbers = np.arange(found.skip_epochs + every, count + 1, every)
        parts.append(steps_after_epochs(plan, numbers))
    steps = np.unique(np.concatenate(parts))
    return steps[steps > 0]


def summary(result: Curve) -> Message:
    """The curve in one sentence: peak and where, first and last update, warmup (also the chart's text alternative)."""
    plan = result.plan
    if result.warmup:
        warm = msg("curve.warmup.steps", warmup=result.warmup, count=result.warmup)
    elif plan.setup.lr_scheduler_type == "constant" and plan.warmup_steps:
        warm = msg("curve.warmup.ignored", warmup_steps=plan.warmup_steps)
    else:
        warm = msg("curve.warmup.none")
    peak = {"peak": fmt_lr(result.peak), "at": result.peak_step, "horizon": plan.max_steps, "warm": warm}
    if result.first is None:
        return msg("curve.summary.no_update", **peak)
    ran = {"first_update": 1, "first": fmt_lr(result.first), "last": fmt_lr(result.last), "runs": plan.optimizer_steps}
    stops_early = plan.optimizer_steps < plan.max_steps
    return msg("curve.summary.stops_early" if stops_early else "curve.summary.runs", **peak, **ran)
