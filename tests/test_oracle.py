"""Differential test: the real transformers Trainer (5.x, CPU, tiny model) against the `hf-5` profile."""

from __future__ import annotations

import pytest
from census_cases import census_keys
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracle import assert_plan_is_the_real_run, run_trainer

from steplab.errors import TrainerRefusal
from steplab.trainer.plan import make_plan
from steplab.trainer.setup import setup_from_mapping

pytestmark = pytest.mark.oracle

SCHEDULES = st.sampled_from([
    ("linear", {}), ("cosine", {}), ("cosine", {"num_cycles": 1.5}), ("cosine_with_restarts", {"num_cycles": 2}),
    ("polynomial", {"power": 2.0}), ("constant", {}), ("constant_with_warmup", {}), ("inverse_sqrt", {}),
    ("cosine_with_min_lr", {"min_lr_rate": 0.1}), ("cosine_warmup_with_min_lr", {"min_lr": 1e-6}),
    ("warmup_stable_decay", {"num_decay_steps": 3}), ("cosine_with_min_lr", {}),
])
INTERVAL = st.one_of(st.integers(1, 25), st.sampled_from([0.1, 0.25, 0.2, 0.5, 1.0]))


@st.composite
def configs(draw):
    schedule, kwargs = draw(SCHEDULES)
    config = {
        "num_samples": draw(st.integers(0, 160)),
        "per_device_train_batch_size": draw(st.integers(1, 9)),
        "gradient_accumulation_steps": draw(st.integers(1, 9)),
        "num_train_epochs": draw(st.sampled_from([0.3, 0.5, 1, 1.1, 1.5, 2, 2.7, 3])),
        "max_steps": draw(st.sampled_from([-1, -1, -1, 1, 7, 30])),
        "dataloader_drop_last": draw(st.booleans()),
        "lr_scheduler_type": schedule,
        "lr_scheduler_kwargs": kwargs,
        "warmup_steps": draw(st.one_of(st.integers(0, 12), st.sampled_from([0.07, 0.1, 0.5]))),
        "eval_strategy": draw(st.sampled_from(["no", "steps", "epoch"])),
        "eval_steps": draw(INTERVAL),
        "save_strategy": draw(st.sampled_from(["no", "steps", "epoch"])),
        "save_steps": draw(INTERVAL),
        "logging_strategy": draw(st.sampled_from(["steps", "epoch", "no"])),
        "logging_steps": draw(INTERVAL),
        "logging_first_step": draw(st.booleans()),
        "eval_on_start": draw(st.booleans()),
    }
    return config


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(configs(), census_keys())
def test_plan_matches_real_trainer(config, extra):
    """The real Trainer on a generated setup, with a few keys the census calls irrelevant set as well (StepLab plans
    the setup without them)."""
    assert_plan_is_the_real_run(config, run_trainer(config, extra))


@pytest.mark.parametrize("extra", [{}, {"max_steps": 5}, {"dataloader_drop_last": True, "world_size": 1}])
def test_an_empty_dataset_is_refused_as_the_real_trainer_refuses_it(extra):
    """No rows: torch's RandomSampler refuses before the Trainer counts a step, whatever `max_steps` says (4.46.3,
    4.51.3 and 4.57.6 say the same words; checked by hand with their wheels)."""
    config = {"num_samples": 0, "per_device_train_batch_size": 4, **extra}
    real = run_trainer({k: v for k, v in config.items() if k != "world_size"})
    assert real["status"] == "error"
    with pytest.raises(TrainerRefusal) as refusal:
        make_plan(setup_from_mapping({**config, "trainer": "hf-5"})[0])
    assert (refusal.value.error_type, refusal.value.message) == (real["error_type"], real["error"])
