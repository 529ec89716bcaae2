"""The part of a plan a resumed run trains: from the checkpoint's global step G on, as the Trainer continues it.

From 4.52 on the Trainer continues the count: it skips `G mod U × GA` micro-batches of epoch `G ÷ U` and the updates
fall where the whole run's would (`steplab.trainer.geometry`); its logs, evaluations and checkpoints keep the rhythm
`global_step % interval == 0` with the intervals the checkpoint's `trainer_state.json` carries (they replace this
run's: `TrainerState.load_from_json`), and `eval_on_start` evaluates once at G before the first update. Releases that
restart the count (4.28 – 4.51, `TrainerProfile.resume_restarts_count`) place them otherwise: not planned here.
"""

from __future__ import annotations

from typing import Any

from steplab.trainer.events import events
from steplab.trainer.plan import Plan, make_plan


def resumed_part(plan: Plan, step: int, intervals: dict[str, int] | None = None) -> dict[str, Any] | None:
    """The resumed run's updates and event steps after step G, or None when the release restarts the count."""
    if plan.profile.resume_restarts_count or plan.profile.framework != "transformers":
        return None
    carried = plan if not intervals else make_plan(plan.setup.replace(**intervals))
    after: dict[str, Any] = {"resumed_from_step": step,
                             "resumed_optimizer_steps": max(0, carried.optimizer_steps - step)}
    for kind in ("eval", "save", "log"):
        found = [s for s in events(carried, kind).steps() if s > step]
        if kind == "eval" and plan.setup.eval_on_start:
            found.insert(0, step)
        after[f"{kind}_at_steps"] = found
    return after
