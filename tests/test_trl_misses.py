"""TRL 1.16.0's refusals and evaluation that StepLab used to plan over or refuse, against real TRL on CPU
(`tests/trl_env.py`): `auto_find_batch_size` on GRPO (`GRPOConfig`), `padding_free` without packing on SFT
(`SFTTrainer`), and GRPO with evaluation: trained with the same counts, evaluated where the Trainer evaluates, and
refused when the eval batch does not hold whole groups of `num_generations_eval` (after the generation sizes, before
`num_generations`' own checks)."""

from __future__ import annotations

import pytest
from hypothesis import strategies as st
from test_trl_vs_steplab import compare, steplab
from trl_cases import examples, grpo_cases, steplab_values
from trl_env import TrlOracle

from steplab.trainer.events import events
from steplab.trainer.setup import setup_from_mapping
from steplab.trl.plan import plan_trl

pytestmark = pytest.mark.oracle


@pytest.fixture(scope="module")
def oracle():
    worker = TrlOracle("1")
    yield worker
    worker.close()


@st.composite
def grpo_eval_cases(draw, refusals: bool = False) -> dict:
    """A GRPO run that evaluates: a strategy, an interval, an eval batch and maybe `num_generations_eval`."""
    case = draw(grpo_cases(refusals=refusals))
    case["args"].update(eval_strategy=draw(st.sampled_from(["steps", "steps", "epoch"])),
                        eval_steps=draw(st.integers(1, 4)),
                        per_device_eval_batch_size=draw(st.integers(1, 8)))
    generations_eval = draw(st.none() | st.integers(1, 4))
    if generations_eval is not None:
        case["args"]["num_generations_eval"] = generations_eval
    case["eval_samples"] = draw(st.integers(1, 5))
    return case


def _check(oracle: TrlOracle, cases: list[dict]) -> dict[str, int]:
    seen = {"refused": 0, "evaluated": 0}
    for case, real in zip(cases, oracle.run(cases), strict=True):
        ours = steplab(case, "hf-5")
        compare(real, ours, case)
        if real["status"] == "error":
            seen["refused"] += 1
            continue
        plan = plan_trl(setup_from_mapping({**steplab_values(case), "trainer": "hf-5"})[0])
        assert events(plan.trainer, "eval").steps() == real["eval_at_steps"], case
        seen["evaluated"] += bool(real["eval_at_steps"])
    return seen


def test_grpo_with_evaluation_trains_and_evaluates_as_trl_does(oracle) -> None:
    seen = _check(oracle, examples(grpo_eval_cases(), 40))
    assert seen["evaluated"] >= 8 and seen["refused"] >= 3, seen


def test_grpo_eval_batch_refusals_come_where_trl_puts_them(oracle) -> None:
    seen = _check(oracle, examples(grpo_eval_cases(refusals=True), 40))
    assert seen["refused"] >= 20, seen


def test_grpo_refuses_auto_find_batch_size(oracle) -> None:
    cases = examples(grpo_cases(refusals=True), 12)
    for case in cases:
        case["args"]["auto_find_batch_size"] = True
    seen = _check(oracle, cases)
    assert seen["refused"] == len(cases)


@pytest.mark.parametrize("packing", [False, True])
def test_sft_padding_free_without_packing_is_refused_as_trl_refuses_it(oracle, packing: bool) -> None:
    """Without packing TRL refuses it (StepLab's `max_length` is always set); with packing it trains."""
    case = {"trainer": "sft", "lengths": [3, 5, 2, 7, 4, 4], "args": {
        "per_device_train_batch_size": 2, "num_train_epochs": 1, "learning_rate": 1e-3, "padding_free": True,
        **({"packing": True, "packing_strategy": "bfd", "max_length": 8} if packing else {})}}
    (real,) = oracle.run([case])
    if not packing:
        compare(real, steplab(case, "hf-5"), case)
        assert real["status"] == "error"
        return
    assert real["status"] == "ok", real
    setup = setup_from_mapping({**steplab_values(case), "trainer": "hf-5"})[0]
    plan = plan_trl(setup, case["lengths"])
    assert (plan.max_steps, plan.optimizer_steps) == (real["state_max_steps"], real["optimizer_steps"])
