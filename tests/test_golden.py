"""Every case recorded from a real Trainer run (`tests/data/golden/`), every field, for every profile; and the
recorder that wrote them (`tests/golden_recorder.py`): its fields, its re-recordings, generated two-process runs."""

from __future__ import annotations

import copy
import json
import random

import numpy as np
import pytest
import transformers
from golden import GOLDEN, golden_cases, hf_setup_values, lightning_setup_values
from golden_recorder import RELEASES, differences, golden_text, package, run
from oracle import ERROR_FIELDS, LIGHTNING_FIELDS, RESULT_FIELDS, plan_or_same_refusal, run_trainer

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


def assert_planned_as_run(profile: str, case: dict, result: dict) -> None:
    """StepLab's plan of a case under `profile` is the real run `result`, every field (or the same refusal)."""
    setup, unknown = setup_from_mapping(hf_setup_values(case, profile))
    assert unknown == []
    plan = plan_or_same_refusal(setup, result)
    if plan is None:
        return
    expected = {k: v for k, v in result.items() if k not in ("status", "lr_per_step")}
    assert plan_fields(plan) == expected
    np.testing.assert_allclose(plan.learning_rates(), result["lr_per_step"], rtol=1e-12, atol=0)


KNOWN_DISAGREEMENTS: dict[tuple[str, str], str] = {}
"""Recorded runs StepLab does not plan yet, each with why: the test fails (strict) the day it does."""


@pytest.mark.parametrize(("profile", "case_id", "case", "result"), [
    pytest.param(*item, marks=pytest.mark.xfail(reason=KNOWN_DISAGREEMENTS[item[:2]], strict=True,
                                                raises=AssertionError)) if item[:2] in KNOWN_DISAGREEMENTS else item
    for item in HF_CASES], ids=[f"{p}-{c}" for p, c, _, _ in HF_CASES])
def test_hf_golden_case(profile, case_id, case, result):
    assert_planned_as_run(profile, case, result)


def test_every_known_disagreement_is_a_recorded_case():
    assert set(KNOWN_DISAGREEMENTS) <= {(p, c) for p, c, _, _ in HF_CASES}


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


# --------------------------------------------------------------------------- the recorder (tests/golden_recorder.py)

ALL_CASES = [(p, cid, case, result) for p in HF_PROFILES for cid, case, result in golden_cases(p)]


@pytest.mark.parametrize("profile", HF_PROFILES)
def test_every_recorded_run_holds_the_recorders_fields_in_its_order(profile):
    """What `oracle.run_trainer` returns is what the files hold: a field it stops writing (or one a file lacks)
    fails here, before any comparison could pass over it."""
    results = [result for p, _, _, result in ALL_CASES if p == profile]
    assert {tuple(result) for result in results} <= {RESULT_FIELDS, ERROR_FIELDS}
    assert any(tuple(result) == RESULT_FIELDS for result in results)
    assert {case.get("world_size", 1) for p, _, case, _ in ALL_CASES if p == profile} >= {1, 2, 3}


@pytest.mark.oracle
@pytest.mark.parametrize("case_id", ["n100_bs4_ga8", "warmup_steps_200_gt_total"])
def test_the_recorder_writes_what_the_hf_5_file_holds_field_for_field(case_id):
    """One small setup trained now by the suite's own transformers (the release `hf-5` is recorded with):
    the same fields, in the same order, with the same values as the committed recording."""
    assert RELEASES["hf-5"] == transformers.__version__ and package("hf-5") == "transformers"
    (case, committed), = [(case, result) for cid, case, result in golden_cases("hf-5") if cid == case_id]
    result = run_trainer(case)
    assert list(result) == list(committed) == list(RESULT_FIELDS)
    assert result == committed


def test_the_lightning_file_holds_the_recorders_fields_in_its_order():
    assert {tuple(result) for _, _, result in LIGHTNING_CASES} == {LIGHTNING_FIELDS}


RERECORDED = {"hf-4.46": ["n1_bs1_ga1", "n100_bs4_ga8_droplast", "bs_gt_n_droplast_maxsteps", "warmup_steps_1_5"],
              "hf-4.51": ["n1_bs1_ga1", "n100_bs4_ga8_droplast", "bs_gt_n_droplast_maxsteps"],
              "hf-4.57": ["n1_bs1_ga1", "n100_bs4_ga8_droplast", "eval_steps_7_n100"],
              "lightning-2": ["n100_bs4_ga8", "warmup_5_n100", "sched_frequency_2_ga3_n100"]}


@pytest.mark.oracle
@pytest.mark.parametrize("profile", list(RERECORDED))
def test_the_recorder_rerecords_each_release_in_its_environment_as_committed(profile):
    """A few small cases of each file whose release the suite has not, trained again by that release in its own
    environment (built once into `.cache/`): every field as committed, the 4.46.3 error word for word."""
    wanted = {cid: (case, result) for cid, case, result in golden_cases(profile) if cid in RERECORDED[profile]}
    assert set(wanted) == set(RERECORDED[profile])
    results = run(profile, [case for case, _ in wanted.values()])
    assert results == [result for _, result in wanted.values()]


@pytest.mark.oracle
def test_the_recorder_rerecords_a_two_process_run_as_committed():
    """torchrun, two processes, gloo on CPU, under 4.46.3 (whose accumulation runs across epoch ends): the run
    both ranks saw is the committed one."""
    (case, committed), = [(case, result) for cid, case, result in golden_cases("hf-4.46")
                          if cid == "ws2_n10_bs4_ga4"]
    assert case["world_size"] == 2
    assert run("hf-4.46", [case], processes=2) == [committed]


def generated_two_process_setups(count: int, seed: int) -> list[dict]:
    """Setups drawn anew for two processes: rows, micro-batch, accumulation, epochs or `max_steps`, drop_last,
    warmup and the three intervals (the same draws on every run). The evaluation set fills one batch of 64 rows per
    process: StepLab does not model it, and `dataloader_drop_last` empties a smaller one, which 4.46.3's evaluation
    then fails on (`AttributeError`)."""
    rng = random.Random(seed)
    setups = []
    for index in range(count):
        setups.append({
            "id": f"generated_{index}", "num_samples": rng.randint(2, 120),
            "per_device_train_batch_size": rng.randint(1, 6), "gradient_accumulation_steps": rng.randint(1, 7),
            "num_train_epochs": rng.choice([1, 1.5, 2, 3]), "max_steps": rng.choice([-1, -1, -1, 5, 11]),
            "learning_rate": 1e-3, "lr_scheduler_type": rng.choice(["linear", "cosine"]), "lr_scheduler_kwargs": None,
            "warmup_ratio": 0.0, "warmup_steps": rng.choice([0, 0, 2]),
            "eval_strategy": rng.choice(["no", "steps"]), "eval_steps": 3, "save_strategy": "steps",
            "save_steps": rng.choice([2, 5, 500]), "logging_steps": rng.choice([1, 3, 500]),
            "dataloader_drop_last": rng.random() < 0.3, "num_eval_samples": 128, "world_size": 2,
        })
    return setups


@pytest.mark.oracle
@pytest.mark.parametrize("profile", ["hf-4.46", "hf-4.51"])
def test_generated_two_process_runs_are_planned_as_the_release_runs_them(profile):
    """Beyond the recorded cases: setups drawn here, trained by two processes (torchrun, gloo) under the 4.x
    releases whose accumulation differs most (4.46.3 across epoch ends, 4.51.3 carrying into the next epoch), every
    field of the real run against StepLab's plan."""
    setups = generated_two_process_setups(10, seed=sum(map(ord, profile)))
    results = run(profile, setups, processes=2)
    assert any(result["status"] == "ok" and result["optimizer_steps"] > 0 for result in results)
    for setup, result in zip(setups, results, strict=True):
        assert_planned_as_run(profile, setup, result)


def test_the_recorders_check_names_each_changed_field_and_writes_the_committed_text():
    """`--check`'s comparison (a changed field, a lost case; a new case is no difference) and the file's text."""
    committed = json.loads((GOLDEN / "hf-4.51.json").read_text(encoding="utf-8"))
    assert golden_text(committed) == (GOLDEN / "hf-4.51.json").read_text(encoding="utf-8")
    assert differences(committed, copy.deepcopy(committed)) == []
    changed = copy.deepcopy(committed)
    first = changed["cases"][0]
    first["result"]["num_update_steps_per_epoch"] += 1
    del first["result"]["num_train_epochs_loop"]
    changed["cases"].append({"case": {"id": "brand_new"}, "result": {"status": "ok"}})
    lost = changed["cases"].pop(1)["case"]["id"]
    found = differences(committed, changed)
    case_id = first["case"]["id"]
    assert found == [f"{case_id}.num_train_epochs_loop: 3 -> '<absent>'",
                     f"{case_id}.num_update_steps_per_epoch: 50 -> 51", f"{lost}: no longer recorded"]
