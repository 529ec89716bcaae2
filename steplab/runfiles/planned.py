"""The plan a run is compared with: StepLab's plan of its setup, and for a resumed run the plan of the run that
wrote its checkpoint and where the updates after the checkpoint fall."""

from __future__ import annotations

from dataclasses import dataclass

from steplab.runfiles.resume import AfterResume
from steplab.trainer.plan import Plan
from steplab.trl.grpo import GrpoPlan


@dataclass(frozen=True)
class Planned:
    """The plan StepLab compares with, how the run's data was sized (streaming), and a resume's earlier plan."""

    plan: Plan
    streaming: bool = False
    earlier: Plan | None = None
    resumed_step: int | None = None
    after: AfterResume | None = None  # where the updates after the checkpoint fall, when the release differs
    grpo: GrpoPlan | None = None  # a `GRPOTrainer` run's rounds (`plan` is the Trainer's plan over its micro-batches)

    @property
    def steps_run(self) -> int:
        return self.after.steps_run if self.after is not None else self.plan.optimizer_steps


def last_earlier_step(planned: Planned, column: str) -> int | None:
    """The last step whose logged `column` follows the earlier run: the checkpoint's step, and for the learning rate
    of 4.47+ one more: the first update after a resume still runs at the rate the checkpoint saved (the optimizer's
    and scheduler's saved state), and those releases log the rate an update used."""
    step = planned.resumed_step
    if step is None:
        return None
    stale = column == "learning_rate" and not planned.plan.profile.logs_next_rate
    return step + 1 if stale else step
