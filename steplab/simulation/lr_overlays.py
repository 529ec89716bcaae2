"""The schedule page's comparison overlays: the plan's setup with one thing changed (another scheduler, a
`max_steps`, an epoch count) and the legend name of each."""

from __future__ import annotations

from typing import Any

from steplab.i18n import Message, fmt_float, msg
from steplab.trainer import schedules
from steplab.trainer.plan import Plan
from steplab.trainer.schedule_arguments import adapt_kwargs
from steplab.trainer.setup import TrainingSetup

OVERLAY_KINDS = ("scheduler", "max_steps", "epochs")


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
