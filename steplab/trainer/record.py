"""A plan as one plain record: the numbers a real run reports, under the names of the CLI's JSON.

The CLI prints it; the golden and differential tests compare it, key by key, with what real runs recorded.
"""

from __future__ import annotations

from typing import Any

from steplab.errors import SetupError
from steplab.trainer.events import events
from steplab.trainer.plan import Plan

# Event steps a record lists at most (a run of 10^12 samples would list billions of checkpoints).
MAX_LISTED_EVENTS = 1_000_000


class TooManyEvents(SetupError):
    """A record would list more event steps than `MAX_LISTED_EVENTS`."""

    def __init__(self, kind: str, count: int):
        prefix = {"eval": "eval", "save": "save", "log": "logging"}[kind]
        super().__init__("setup.too_many_events", field=f"{prefix}_steps", prefix=prefix, kind=kind, count=count,
                         limit=MAX_LISTED_EVENTS)
        self.kind = kind
        self.count = count


def plan_record(plan: Plan) -> dict[str, Any]:
    """Steps, epochs, batches, warmup, the micro-batches of every update (run-length) and every event step (with
    `save_strategy="best"` the save steps are the evaluations that may save: `Events.depends_on_metric`)."""
    record: dict[str, Any] = {
        "max_steps": plan.max_steps,
        "optimizer_steps": plan.optimizer_steps,
        "num_update_steps_per_epoch": plan.num_update_steps_per_epoch,
        "micro_batches_per_epoch": plan.micro_batches_per_epoch,
        "total_train_batch_size": plan.total_train_batch_size,
        "num_train_epochs_loop": plan.epochs_loop,
        "final_epoch": plan.final_epoch,
        "warmup_steps": plan.warmup_steps,
        "micro_batches_per_step_rle": plan.micro_batches_per_step_rle(),
    }
    for kind in ("eval", "save", "log"):
        found = events(plan, kind)
        if found.count() > MAX_LISTED_EVENTS:
            raise TooManyEvents(kind, found.count())
        record[f"{kind}_at_steps"] = found.steps()
    return record
