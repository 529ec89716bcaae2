"""The learning-rate curve of a plan, ready to draw: the LR every update uses, downsampled without losing its shape.

Update k uses `learning_rate · λ(k − 1)` (see `steplab.trainer.schedules`). A plan runs `optimizer_steps` updates (R)
against a schedule horizon of `max_steps` (T); in 4.47–4.51 (and some 4.46 edge cases) R < T, so the curve
has two parts: the updates that really run, and the planned rest that never does.

A million updates cannot go to the browser point by point. `downsample` keeps at most `CAP` points per
trace: the minimum and the maximum of each bucket of consecutive updates (so every peak, trough and
restart stays visible) plus exact points where the eye looks: the end of warmup, epoch boundaries and the
last update. Every kept point is an exact (step, learning rate) pair of the engine. Up to `EXACT_LIMIT`
updates every one is evaluated (10^6 cosine updates: about 70 ms, cached per plan); beyond, the buckets are
read on an even grid of that many updates plus the exact points.

Also here: where a step sits in its epoch (`state.epoch`) and how many samples have gone through the model
by then, the one-sentence summary, the CSV, and code snippets that rebuild the same scheduler with
`transformers.get_scheduler` and with plain torch.
"""

from __future__ import annotations

import inspect
import math
import textwrap
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Any

import numpy as np

from steplab.errors import SetupError, TrainerRefusal
from steplab.i18n import Message, fmt_float, fmt_lr, msg
from steplab.io.config_write import write_config
from steplab.trainer import schedules
from steplab.trainer.events import events
from steplab.trainer.geometry import epoch_boundaries, epochs_and_samples, steps_after_epochs
from steplab.trainer.plan import Plan, make_plan
from steplab.trainer.setup import TrainingSetup

CAP = 2000  # points per trace sent to the browser
EXACT_LIMIT = 2_000_000  # up to this many updates every one is evaluated; beyond, an even grid of this many
CSV_LIMIT = 1_000_000  # rows the CSV export writes at most
OVERLAY_KINDS = ("scheduler", "max_steps", "epochs")
WSD_SHAPES = ("linear", "cosine", "1-sqrt")
STARTER_MIN_LR_RATE = 0.1


# ---------------------------------------------------------------------------------------------
# Downsampling
# ---------------------------------------------------------------------------------------------


def downsample(values: np.ndarray, cap: int = CAP, keep: Iterable[int] = ()) -> np.ndarray:
    """Sorted indices of at most `cap` points of `values` that keep the curve's shape.

    A curve of at most `cap` points is kept whole. Otherwise the first and last points and the `keep`
    indices stay (an evenly spaced share of them if they would take more than half the budget: K points in
    all), and the rest of the budget goes to buckets of `size = ⌈n / ⌊(cap − K) / 2⌋⌉` consecutive points
    (`values[i·size:(i+1)·size]`), each keeping the index of its minimum and of its maximum (the first one on
    ties; NaN is passed over unless a whole bucket is NaN).
    """
    if cap < 4:
        raise ValueError(f"cap must be at least 4, got {cap}")
    values = np.asarray(values, dtype=np.float64)
    n = len(values)
    if n <= cap:
        return np.arange(n)
    kept = np.asarray(list(keep), dtype=np.int64)
    kept = np.unique(np.concatenate([[0, n - 1], kept[(kept >= 0) & (kept < n)]]))
    if len(kept) > cap // 2:
        pick = np.linspace(0, len(kept) - 1, cap // 2 - 2).round().astype(np.int64)
        kept = np.unique(np.concatenate([[0, n - 1], kept[pick]]))
    buckets = max(1, (cap - len(kept)) // 2)
    size = -(-n // buckets)
    buckets = -(-n // size)
    padded = np.full(buckets * size, values[-1])
    padded[:n] = values
    grid = padded.reshape(buckets, size)
    base = np.arange(buckets, dtype=np.int64) * size
    if np.isnan(values).any():  # NaN only where the real scheduler would raise: pass it over
        missing = np.isnan(grid)
        low = base + np.argmin(np.where(missing, np.inf, grid), axis=1)
        high = base + np.argmax(np.where(missing, -np.inf, grid), axis=1)
    else:
        low, high = base + np.argmin(grid, axis=1), base + np.argmax(grid, axis=1)
    return np.unique(np.concatenate([kept, np.minimum(low, n - 1), np.minimum(high, n - 1)]))


# ---------------------------------------------------------------------------------------------
# The curve
# ---------------------------------------------------------------------------------------------


def drawable(plan: Plan) -> bool:
    """A metric-driven scheduler (`reduce_lr_on_plateau`) has no curve to draw in advance."""
    return plan.setup.lr_scheduler_type not in schedules.METRIC_DRIVEN


def schedule_warmup(plan: Plan) -> int:
    """Warmup updates the schedule really applies: `constant` (and the metric-driven one) ignore warmup."""
    if plan.setup.lr_scheduler_type in ("constant", *schedules.METRIC_DRIVEN):
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
    keep = [warmup, warmup + 1, plan.optimizer_steps, plan.max_steps]
    if plan.setup.lr_scheduler_type == "warmup_stable_decay":
        keep += _wsd_turns(plan)
    _, ends = epoch_boundaries(plan, CAP // 4)
    return keep + ends.tolist()


def _wsd_turns(plan: Plan) -> list[int]:
    """Update numbers around the turns of warmup-stable-decay: stable → decay, decay → floor."""
    kwargs = plan.setup.scheduler_kwargs
    W, T = plan.warmup_steps, plan.max_steps
    decay, stable = kwargs.get("num_decay_steps"), kwargs.get("num_stable_steps")
    if not isinstance(decay, int | float) or isinstance(decay, bool):
        return []
    if not isinstance(stable, int | float) or isinstance(stable, bool):
        stable = T - W - decay
    last = max(plan.optimizer_steps, T)
    turns = (W + stable, W + stable + decay)
    return [k for turn in turns if math.isfinite(turn) and abs(turn) <= last
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
        periodic = found.upto // found.every
        stride = found.every * max(1, -(-periodic // cap))
        parts.append(np.arange(stride, found.upto + 1, stride, dtype=np.int64))
    if found.by_epoch is not None:
        count = plan.epochs_run
        every = max(1, -(-count // cap))
        parts.append(steps_after_epochs(plan, np.arange(every, count + 1, every)))
    steps = np.unique(np.concatenate(parts))
    return steps[steps > 0]


# ---------------------------------------------------------------------------------------------
# Words: the summary sentence and the notes beside the chart
# ---------------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------------
# Export: CSV and code
# ---------------------------------------------------------------------------------------------


def csv_text(plan: Plan) -> str:
    """`step,epoch,learning_rate` of every update that runs, with the engine's exact floats (≤ `CSV_LIMIT` rows)."""
    count = plan.optimizer_steps
    if count > CSV_LIMIT:
        raise ValueError(f"{count:,} updates: the CSV holds at most {CSV_LIMIT:,} rows")
    steps = np.arange(1, count + 1, dtype=np.int64)
    epochs, _ = epochs_and_samples(plan, steps) if count else (np.zeros(0), None)
    rates = plan.learning_rates(1, count) if count else np.zeros(0)
    rows = [f"{k},{e!r},{r!r}\n" for k, e, r in zip(steps.tolist(), epochs.tolist(), rates.tolist(), strict=True)]
    return "step,epoch,learning_rate\n" + "".join(rows)


@lru_cache(maxsize=64)
def setup_yaml(setup: TrainingSetup, lang: str = "en") -> str:
    """The setup as a LLaMA-Factory training YAML (`steplab.io.config_write.write_config`), comments in `lang`."""
    return write_config(setup.to_dict(), lang=lang)


_COMMENTS = {
    "model": msg("curve.comment.model"),
    "loop": msg("curve.comment.loop"),
    "lr": msg("curve.comment.lr", previous="k - 1"),
    "plateau": msg("curve.comment.plateau"),
    "plain": msg("curve.comment.plain"),
}
"""The comments of the code snippets, in the reader's language."""


def _loop(count: int, lang: str) -> list[str]:
    return [
        "",
        "learning_rates = []",
        f"# {_COMMENTS['loop'].get(lang)}",
        f"for update in range({count}):",
        f"    # {_COMMENTS['lr'].get(lang)}",
        "    learning_rates.append(scheduler.get_last_lr()[0])",
        "    optimizer.step()",
        "    scheduler.step()",
    ]


def _plateau_loop(lang: str) -> list[str]:
    return ["", f"# scheduler.step(eval_loss)  # {_COMMENTS['plateau'].get(lang)}"]


def _optimizer_lines(plan: Plan, lang: str) -> list[str]:
    return [
        f"model = torch.nn.Linear(1, 1)  # {_COMMENTS['model'].get(lang)}",
        f"optimizer = torch.optim.AdamW(model.parameters(), lr={plan.setup.learning_rate!r})",
    ]


@lru_cache(maxsize=64)
def get_scheduler_snippet(plan: Plan, lang: str = "en") -> str:
    """Python that builds the same scheduler the Trainer builds, with `transformers.get_scheduler`."""
    setup = plan.setup
    kwargs = setup.scheduler_kwargs
    lines = ["import torch", "from transformers import get_scheduler", "", *_optimizer_lines(plan, lang),
             "scheduler = get_scheduler(", f"    {setup.lr_scheduler_type!r},", "    optimizer,",
             f"    num_warmup_steps={plan.warmup_steps},", f"    num_training_steps={plan.max_steps},"]
    if kwargs:
        lines.append(f"    scheduler_specific_kwargs={kwargs!r},")
    lines.append(")")
    lines += _plateau_loop(lang) if not drawable(plan) else _loop(plan.optimizer_steps, lang)
    return "\n".join(lines) + "\n"


def _step_function(plan: Plan) -> Any:
    """The per-step λ (a function or a `functools.partial`) that `schedules.torch_scheduler` hands to LambdaLR."""
    setup = plan.setup
    return schedules.step_function(setup.lr_scheduler_type, warmup_steps=plan.warmup_steps,
                                   total_steps=plan.max_steps, kwargs=setup.scheduler_kwargs,
                                   learning_rate=setup.learning_rate, profile=plan.profile.id)


@lru_cache(maxsize=64)
def torch_snippet(plan: Plan, lang: str = "en") -> str:
    """Python that builds the same schedule with plain torch (`LambdaLR`), from the engine's own per-step function."""
    setup = plan.setup
    header = ["import torch"]
    if not drawable(plan):
        kwargs = setup.scheduler_kwargs
        arguments = "".join(f", {key}={value!r}" for key, value in kwargs.items())
        lines = [*header, "from torch.optim.lr_scheduler import ReduceLROnPlateau", "",
                 *_optimizer_lines(plan, lang), f"scheduler = ReduceLROnPlateau(optimizer{arguments})"]
        return "\n".join(lines + _plateau_loop(lang)) + "\n"
    step = _step_function(plan)
    function = step.func if isinstance(step, partial) else step
    bound = step.keywords if isinstance(step, partial) else {}
    try:
        source = textwrap.dedent(inspect.getsource(function))
    except (OSError, TypeError):  # no source (a frozen build): use the engine itself
        lines = [*header, "from steplab.trainer.schedules import torch_scheduler", "", *_optimizer_lines(plan, lang),
                 f"scheduler = torch_scheduler(optimizer, {setup.lr_scheduler_type!r}, "
                 f"warmup_steps={plan.warmup_steps}, total_steps={plan.max_steps}, "
                 f"kwargs={setup.scheduler_kwargs!r}, profile={plan.profile.id!r})"]
        return "\n".join(lines + _loop(plan.optimizer_steps, lang)) + "\n"
    name = function.__name__.lstrip("_")
    source = source.replace(f"def {function.__name__}(", f"def {name}(", 1)
    imports = ["import math"] if "math." in source else []
    if bound:
        imports.append("from functools import partial")
        arguments = ", ".join(f"{key}={value!r}" for key, value in bound.items())
        factor = f"partial({name}, {arguments})"
    else:
        factor = name
    lines = [*imports, *([""] if imports else []), *header, "from torch.optim.lr_scheduler import LambdaLR", "", "",
             f"# {_COMMENTS['plain'].get(lang)}", source.rstrip(), "", "", *_optimizer_lines(plan, lang),
             f"scheduler = LambdaLR(optimizer, {factor})"]
    return "\n".join(lines + _loop(plan.optimizer_steps, lang)) + "\n"


# ---------------------------------------------------------------------------------------------
# Scheduler arguments: what a scheduler takes, starter values, edits
# ---------------------------------------------------------------------------------------------


def accepted_kwargs(name: str, profile: str) -> dict[str, object]:
    """The `lr_scheduler_kwargs` the profile's Trainer passes on to `name`, with defaults (None: unset/required).

    Empty where `get_scheduler` drops them; metric-driven schedulers' torch arguments are left out.
    """
    if name in schedules.METRIC_DRIVEN:
        return {}
    return schedules.scheduler_kwargs(name, profile)


@lru_cache(maxsize=128)
def kwargs_dropped(name: str, profile: str) -> bool:
    """`get_scheduler` of this release ignores `lr_scheduler_kwargs` for `name` (an unknown key raises nothing)."""
    if name in schedules.METRIC_DRIVEN or name not in schedules.available_schedulers(profile):
        return False
    try:
        schedules.check_scheduler(name, {"steplab_probe": 0}, profile=profile, learning_rate=1.0, warmup_steps=0,
                                  total_steps=10)
    except (TrainerRefusal, SetupError):
        return False
    return True


def horizon(setup: TrainingSetup) -> tuple[int, int] | None:
    """(warmup steps, max_steps) of the setup, also when only its scheduler is refused; None when it cannot plan."""
    for candidate in (setup, setup.replace(lr_scheduler_type="linear", lr_scheduler_kwargs={})):
        try:
            plan = make_plan(candidate)
        except (TrainerRefusal, SetupError):
            continue
        return plan.warmup_steps, plan.max_steps
    return None


def starter_kwargs(name: str, profile: str, warmup: int, total: int) -> dict[str, object]:
    """Values a scheduler cannot be built without: a floor for the min-LR cosines, step counts for WSD.

    WSD gets LLaMA-Factory's fill: stable = ⌊(T − W) / 3⌋, decay = the rest.
    """
    if name in ("cosine_with_min_lr", "cosine_warmup_with_min_lr"):
        return {"min_lr_rate": STARTER_MIN_LR_RATE}
    if name == "warmup_stable_decay":
        span = max(0, total - warmup)
        stable = span // 3
        if "warmup_type" in accepted_kwargs(name, profile):  # 4.51+: stable defaults to T − W − decay
            return {"num_decay_steps": span - stable}
        return {"num_stable_steps": stable, "num_decay_steps": span - stable}
    return {}


@dataclass(frozen=True)
class Switch:
    """Arguments for a scheduler switched to: `kwargs`, and what happened to each argument of the one before:
    `removed` (the new one does not take it), `reset` (it takes an argument of that name that means something
    else, told by a different default: back to the new one's default), `kept` (the same argument in both), and
    `added` (starting values the new one cannot be built without)."""

    kwargs: dict[str, Any]
    removed: list[str]
    reset: list[str]
    kept: list[str]
    added: list[str]


def adapt_kwargs(name: str, kwargs: Mapping[str, Any], profile: str, warmup: int, total: int,
                 previous: str | None = None) -> Switch:
    """Arguments for switching from scheduler `previous` to `name`: keep what means the same in both, add what
    `name` needs.

    One name can mean two things: `num_cycles` counts hard restarts in `cosine_with_restarts` (default 1) and
    cosine half-waves everywhere else (default 0.5); carried from one into the other, 3 restarts became a
    warmup-stable-decay whose decay oscillated three times and ended at the peak. An argument whose default differs
    between the two signatures is therefore not carried over. Without `previous`, every argument `name` takes is kept.
    """
    accepted = accepted_kwargs(name, profile)
    before = accepted_kwargs(previous, profile) if previous in schedules.SCHEDULER_TYPES else {}
    removed = [key for key in kwargs if key not in accepted]
    reset = [key for key in kwargs if key in accepted and key in before and before[key] != accepted[key]]
    kept = {key: value for key, value in kwargs.items() if key in accepted and key not in reset}
    added = []
    starters = starter_kwargs(name, profile, warmup, total)
    if name in ("cosine_with_min_lr", "cosine_warmup_with_min_lr"):
        if kept.get("min_lr") is None and kept.get("min_lr_rate") is None:
            kept.pop("min_lr", None)
            kept.update(starters)
            added = list(starters)
    else:
        for key, value in starters.items():
            if kept.get(key) is None:
                kept[key] = value
                added.append(key)
    carried = [key for key in kwargs if key in kept and key not in added]
    return Switch(kept, removed, reset, carried, added)


def set_kwarg(kwargs: Mapping[str, Any], key: str, value: Any) -> dict[str, Any]:
    """`kwargs` with `key` set (None removes it); setting `min_lr` removes `min_lr_rate` and the other way round."""
    changed = dict(kwargs)
    if value is None:
        changed.pop(key, None)
        return changed
    if key in ("num_stable_steps", "num_decay_steps") and isinstance(value, float) and value.is_integer():
        value = int(value)
    changed[key] = value
    partner = {"min_lr": "min_lr_rate", "min_lr_rate": "min_lr"}.get(key)
    if partner:
        changed.pop(partner, None)
    return changed


# ---------------------------------------------------------------------------------------------
# Comparison overlays
# ---------------------------------------------------------------------------------------------


def overlay_schedulers(profile: str) -> tuple[str, ...]:
    """Schedulers an overlay can draw under this profile (not the metric-driven one)."""
    return tuple(n for n in schedules.available_schedulers(profile) if n not in schedules.METRIC_DRIVEN)


def variant(plan: Plan, kind: str, value: Any) -> TrainingSetup:
    """The plan's setup with one thing changed: another scheduler, a `max_steps`, or an epoch count (epoch-driven)."""
    setup = plan.setup
    if kind == "scheduler":
        switch = adapt_kwargs(value, setup.scheduler_kwargs, plan.profile.id, plan.warmup_steps, plan.max_steps,
                              previous=setup.lr_scheduler_type)
        return setup.replace(lr_scheduler_type=value, lr_scheduler_kwargs=switch.kwargs)
    if kind == "max_steps":
        return setup.replace(max_steps=int(value))
    if kind == "epochs":
        return setup.replace(num_train_epochs=float(value), max_steps=-1)
    raise ValueError(f"unknown overlay kind {kind!r}; choose one of {OVERLAY_KINDS}")


def variant_label(kind: str, value: Any, plan: Plan) -> Message:
    """The legend name of an overlay, with the horizon it leads to."""
    if kind == "scheduler":
        return msg("curve.variant.scheduler", scheduler=value, total=plan.max_steps)
    if kind == "max_steps":
        return msg("curve.variant.max_steps", max_steps=int(value))
    return msg("curve.variant.epochs", epochs=fmt_float(float(value), 2), total=plan.max_steps)
