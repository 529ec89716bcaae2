"""`eval_delay`: the evaluations before it are skipped, by steps (`global_step`) or by epochs (`state.epoch`), held to
the real Trainer of every release StepLab has a row for, on generated setups (`tests/release_oracle.py`).

The rule is the same in 4.46.3 – 5.24.0 (`DefaultFlowCallback.on_step_end`: `args.eval_delay <= state.global_step`,
also for 5.4+'s extra evaluation at the last step; `on_epoch_end`: `args.eval_delay <= state.epoch`); `eval_on_start`
evaluates at step 0 whatever it says (`Trainer._inner_training_loop` calls `_evaluate` directly).
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from oracle import plan_or_same_refusal
from release_oracle import run_release

from steplab.simulation.run_log import event_count_upto, event_steps_between
from steplab.trainer.events import events
from steplab.trainer.plan import make_plan
from steplab.trainer.setup import setup_from_mapping

pytestmark = pytest.mark.oracle

PROFILE_OF = {"5.24.0": "hf-5", "5.6.0": "hf-5.6", "4.57.6": "hf-4.57", "4.51.3": "hf-4.51", "4.46.3": "hf-4.46"}


def delayed_configs(count: int, seed: int) -> list[dict]:
    """Setups that evaluate (by steps or by epochs) with a delay drawn around the run's length."""
    rng = random.Random(seed)
    configs = []
    for _ in range(count):
        strategy = rng.choice(["steps", "steps", "epoch"])
        config = {
            "num_samples": rng.randint(1, 90), "per_device_train_batch_size": rng.randint(1, 6),
            "gradient_accumulation_steps": rng.randint(1, 6),
            "num_train_epochs": rng.choice([0.5, 1, 1.5, 2, 2.7, 3, 4]),
            "max_steps": rng.choice([-1, -1, -1, 5, 9, 13]), "dataloader_drop_last": rng.random() < 0.2,
            "learning_rate": 0.01, "lr_scheduler_type": rng.choice(["linear", "cosine"]),
            "warmup_steps": rng.choice([0, 2]),
            "eval_strategy": strategy, "eval_steps": rng.choice([1, 2, 3, 4, 0.25, 0.5]),
            "eval_delay": rng.choice([0, 1, 2, 3, 4.5, 5, 7, 12, 0.5, 1.5, 2.0, 2.5, -1]),
            "save_strategy": "no", "logging_strategy": "steps", "logging_steps": rng.choice([1, 3]),
            "eval_on_start": rng.random() < 0.2,
        }
        configs.append(config)
        if config["num_samples"] < config["per_device_train_batch_size"]:
            # an empty dataloader is another rule (4.46.3 trains none of it under disable_tqdm, where the row says
            # it refuses; not eval_delay's business)
            config["dataloader_drop_last"] = False
    return configs


def _compare(release: str, configs: list[dict]) -> int:
    """Plan each config under the release's row and compare with the real run; the number of runs that evaluated
    later than without the delay (so the cases exercised the rule)."""
    delayed = 0
    for config, real in zip(configs, run_release(release, configs), strict=True):
        setup, unknown = setup_from_mapping({**config, "trainer": PROFILE_OF[release]})
        assert unknown == []
        plan = plan_or_same_refusal(setup, real, config)
        if plan is None:
            continue
        found = events(plan, "eval")
        assert found.steps() == real["eval_at_steps"], config
        assert found.count() == len(real["eval_at_steps"]), config
        high = plan.optimizer_steps
        assert event_steps_between(plan, "eval", -1, high).tolist() == real["eval_at_steps"], config
        assert event_count_upto(plan, "eval", high) == len(real["eval_at_steps"]), config
        assert events(plan, "log").steps() == real["log_at_steps"], config
        np.testing.assert_allclose(plan.learning_rates(), real["lr_per_step"], rtol=1e-12, atol=1e-300)
        undelayed = events(make_plan(setup.replace(eval_delay=0)), "eval").count()
        delayed += undelayed > found.count()
    return delayed


def test_eval_delay_as_the_installed_trainer_skips_evaluations() -> None:
    assert _compare("5.24.0", delayed_configs(36, seed=524)) >= 9


@pytest.mark.parametrize("release", ["5.6.0", "4.57.6", "4.51.3", "4.46.3"])
def test_eval_delay_as_each_release_skips_evaluations(release: str) -> None:
    assert _compare(release, delayed_configs(14, seed=int(release.replace(".", "")))) >= 3


def test_the_issue_case_evaluates_from_step_three() -> None:
    """The DPO run of the issue: 5 steps, an evaluation every step, `eval_delay: 3` → steps 3, 4, 5."""
    setup, _ = setup_from_mapping({"num_samples": 10, "per_device_train_batch_size": 2, "num_train_epochs": 1,
                                   "eval_strategy": "steps", "eval_steps": 1, "eval_delay": 3})
    assert events(make_plan(setup), "eval").steps() == [3, 4, 5]
