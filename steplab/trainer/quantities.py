"""Named quantities of a setup and its plan, for lesson text, predictions and quiz answers.

Lessons and questions refer to numbers by these names (`{{course_default.max_steps}}`), so every number a
learner reads is computed by the engine, never typed into text.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from steplab.i18n import Message, fmt_number, msg
from steplab.trainer.events import events, interval
from steplab.trainer.plan import Plan

PLAN_QUANTITIES: dict[str, tuple[Message, Callable[[Plan], Any]]] = {
    "micro_batches_per_epoch": (msg("quantity.micro_batches_per_epoch"), lambda p: p.micro_batches_per_epoch),
    "num_update_steps_per_epoch": (msg("quantity.num_update_steps_per_epoch"), lambda p: p.num_update_steps_per_epoch),
    "max_steps": (msg("quantity.max_steps"), lambda p: p.max_steps),
    "optimizer_steps": (msg("quantity.optimizer_steps"), lambda p: p.optimizer_steps),
    "total_train_batch_size": (msg("quantity.total_train_batch_size"), lambda p: p.total_train_batch_size),
    "warmup_steps": (msg("quantity.warmup_steps"), lambda p: p.warmup_steps),
    "final_epoch": (msg("quantity.final_epoch"), lambda p: p.final_epoch),
    "epochs_loop": (msg("quantity.epochs_loop"), lambda p: p.epochs_loop),
    "last_group_micro_batches": (msg("quantity.last_group_micro_batches"), lambda p: p.last_group_size),
    "samples_duplicated_per_epoch": (msg("quantity.samples_duplicated_per_epoch"), lambda p: p.epoch.duplicated),
    "samples_dropped_per_epoch": (msg("quantity.samples_dropped_per_epoch"), lambda p: p.epoch.dropped),
    "last_batch_samples": (msg("quantity.last_batch_samples"), lambda p: p.epoch.last_batch),
    "samples_used_per_epoch": (msg("quantity.samples_used_per_epoch"), lambda p: p.epoch.samples_used),
    "fetched_micro_batches_per_epoch": (msg("quantity.fetched_micro_batches_per_epoch"),
                                        lambda p: p.fetched_per_epoch),
    "eval_interval": (msg("quantity.eval_interval"), lambda p: interval(p, "eval")),
    "eval_count": (msg("quantity.eval_count"), lambda p: events(p, "eval").count()),
    "save_count": (msg("quantity.save_count"), lambda p: events(p, "save").count()),
    "eval_every_epochs": (msg("quantity.eval_every_epochs"),
                          lambda p: interval(p, "eval") / p.num_update_steps_per_epoch),
    "first_epoch_end_step": (msg("quantity.first_epoch_end_step"), lambda p: _first_epoch_end(p)),
    "epoch_in_progress": (msg("quantity.epoch_in_progress"), lambda p: _epoch_in_progress(p)),
    "last_epoch_percent": (msg("quantity.last_epoch_percent"), lambda p: _last_epoch_percent(p)),
    "first_lr": (msg("quantity.first_lr"), lambda p: float(p.learning_rates(1, 1)[0])),
    "last_lr": (msg("quantity.last_lr"),
                lambda p: float(p.learning_rates(p.optimizer_steps, p.optimizer_steps)[0])),
}
"""name -> (its label, how to read it from a plan)."""


def _first_epoch_end(plan: Plan) -> int:
    """`global_step` when the first epoch ends: what an epoch-end checkpoint folder is named after."""
    ends = plan.epoch_end_steps(1)
    if not ends:
        raise ValueError("the run ends no epoch")
    return ends[0]


def _epoch_in_progress(plan: Plan) -> int:
    """Which epoch (counted from 1) the run is in when it stops: 3 for `state.epoch` = 2.4, 3 for 3.0."""
    return max(1, math.ceil(round(plan.final_epoch, 9)))


def _last_epoch_percent(plan: Plan) -> int:
    """How far into that epoch it gets, in whole percent: 40 for 2.4, 100 for an epoch that ends."""
    fraction = round(plan.final_epoch, 9) - (_epoch_in_progress(plan) - 1)
    return round(fraction * 100)


SETUP_LABELS: dict[str, Message] = {
    name: msg(f"quantity.{name}")
    for name in ("num_samples", "per_device_train_batch_size", "gradient_accumulation_steps", "world_size",
                 "num_train_epochs")
}


def label(name: str) -> Message:
    """How a quantity is called in a sentence (a name without a label is said as it is)."""
    if name in PLAN_QUANTITIES:
        return PLAN_QUANTITIES[name][0]
    return SETUP_LABELS.get(name) or msg("quantity.unlabelled", name=name)


def quantity(plan: Plan, name: str) -> Any:
    """A named quantity of a plan, or a setup field (`num_samples`, `per_device_train_batch_size`, ...)."""
    if name in PLAN_QUANTITIES:
        return PLAN_QUANTITIES[name][1](plan)
    if hasattr(plan.setup, name) and not name.startswith("_"):
        return getattr(plan.setup, name)
    raise KeyError(name)


def is_quantity(name: str) -> bool:
    from steplab.trainer.setup import FIELD_NAMES

    return name in PLAN_QUANTITIES or name in FIELD_NAMES


format_quantity = fmt_number
"""Numbers as a learner reads them: 1,600; 2.4; 5.00e-05 (`steplab.i18n.fmt_number`, under its old name)."""
