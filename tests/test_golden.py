"""Every case recorded from a real Trainer run (`tests/data/golden/`), every field, for every profile."""

from __future__ import annotations

import numpy as np
import pytest
from golden import golden_cases, hf_setup_values, lightning_setup_values

from steplab.errors import TrainerRefusal
from steplab.trainer.plan import make_plan
from steplab.trainer.record import plan_record
from steplab.trainer.setup import setup_from_mapping

HF_PROFILES = ("hf-5", "hf-4.57", "hf-4.51", "hf-4.46")
HF_CASES = [(p, cid, case, result) for p in HF_PROFILES for cid, case, result in golden_cases(p)]
LIGHTNING_CASES = golden_cases("lightning-2")


# The golden files' names for the two record fields they name after the Trainer's own attributes.
GOLDEN_NAMES = {"max_steps": "state_max_steps", "warmup_steps": "warmup_steps_computed"}


def plan_fields(plan) -> dict:
    """The plan's record (the CLI's JSON) under the golden files' names."""
    return {GOLDEN_NAMES.get(key, key): value for key, value in plan_record(plan).items()}


@pytest.mark.parametrize(("profile", "case_id", "case", "result"), HF_CASES, ids=[f"{p}-{c}" for p, c, _, _ in HF_CASES])
def test_hf_golden_case(profile, case_id, case, result):
    setup, unknown = setup_from_mapping(hf_setup_values(case, profile))
    assert unknown == []
    if result["status"] == "error":
        with pytest.raises(TrainerRefusal) as refusal:
            make_plan(setup)
        assert (refusal.value.error_type, refusal.value.message) == (result["error_type"], result["error"])
        return
    plan = make_plan(setup)
    expected = {k: v for k, v in result.items() if k not in ("status", "lr_per_step")}
    assert plan_fields(plan) == expected
    np.testing.assert_allclose(plan.learning_rates(), result["lr_per_step"], rtol=1e-12, atol=0)


@pytest.mark.parametrize(("case_id", "case", "result"), LIGHTNING_CASES, ids=[c for c, _, _ in LIGHTNING_CASES])
def test_lightning_golden_case(case_id, case, result):
    setup, _ = setup_from_mapping(lightning_setup_values(case))
    plan = make_plan(setup)
    assert plan.max_steps == result["estimated_stepping_batches"] == result["schedule_total_steps"]
    assert plan.optimizer_steps == result["optimizer_steps"]
    assert plan.micro_batches_per_epoch == result["num_training_batches"]
    assert plan.micro_batches_per_step_rle() == result["micro_batches_per_step_rle"]
    assert plan.final_epoch == result["final_current_epoch"]
    assert plan.warmup_steps == result["schedule_warmup_steps"]
    if case["scheduler_frequency"] == 1:
        np.testing.assert_allclose(plan.learning_rates(), result["lr_per_step"], rtol=1e-12, atol=0)
    else:
        # StepLab steps the scheduler once per optimizer step (frequency 1, as the HF Trainer does); a Lightning
        # scheduler with frequency > 1 counts micro-batches instead, which StepLab does not model.
        assert len(result["lr_per_step"]) == plan.optimizer_steps
