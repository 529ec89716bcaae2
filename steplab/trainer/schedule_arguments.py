"""A scheduler's arguments as a page edits them: what the profile's Trainer passes on (`accepted_kwargs`), whether
`get_scheduler` drops them, the warmup and horizon a setup gives even when its scheduler is refused, and the
arguments after a switch of scheduler or an edit of one argument. What each schedule takes, starts with and how each
argument is edited is its entry in `steplab.trainer.schedules`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from steplab.errors import SetupError, TrainerRefusal
from steplab.i18n import whole
from steplab.trainer import schedules
from steplab.trainer.plan import make_plan
from steplab.trainer.setup import TrainingSetup


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
    starters = schedules.starter_kwargs(name, profile, warmup, total)
    for key, value in starters.items():
        partners = schedules.exclusive_with(key)
        if kept.get(key) is not None or any(kept.get(other) is not None for other in partners):
            continue  # set already, or excluded by an argument that is set (min_lr for the starter min_lr_rate)
        for other in partners:
            kept.pop(other, None)
        kept[key] = value
        added.append(key)
    carried = [key for key in kwargs if key in kept and key not in added]
    return Switch(kept, removed, reset, carried, added)


def set_kwarg(kwargs: Mapping[str, Any], key: str, value: Any) -> dict[str, Any]:
    """`kwargs` with `key` set (None removes it); setting one of two exclusive arguments removes the other (`min_lr`
    and `min_lr_rate`); a count of steps typed as a whole float is kept as an int."""
    changed = dict(kwargs)
    if value is None:
        changed.pop(key, None)
        return changed
    if schedules.counts_steps(key) and isinstance(value, float):
        value = whole(value)
    changed[key] = value
    for partner in schedules.exclusive_with(key):
        changed.pop(partner, None)
    return changed
