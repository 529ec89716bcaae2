"""`load_best_model_at_end`, `save_strategy="best"`, `metric_for_best_model` and a Trainer given no evaluation set
(`has_eval_dataset`), release by release, against the real Trainer on generated setups (`tests/release_oracle.py`):
the refusals word for word (`TrainingArguments.__post_init__`, `Trainer.__init__`), and otherwise the same steps,
evaluations, logs and learning rates; `save_strategy="best"` saves at some of the evaluations (which ones depends on
the loss): the real saves are among StepLab's, the first of them always.

The releases include 5.3.0 and 5.4.0, the two sides of the `hf-5.3` / `hf-5.6` rows (5.4 added the evaluation at the
last step and the words "except when --save_strategy="best"").
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from oracle import plan_or_same_refusal
from release_oracle import INSTALLED, run_release

from steplab.cli import plan_to_json
from steplab.errors import TrainerRefusal
from steplab.trainer.events import events
from steplab.trainer.plan import make_plan
from steplab.trainer.profiles import PROFILES, covers
from steplab.trainer.setup import setup_from_mapping

pytestmark = pytest.mark.oracle

RELEASES = ["5.6.0", "5.4.0", "5.3.0", "4.57.6", "4.51.3", "4.46.3"]


def profile_of(release: str) -> str:
    if release == INSTALLED:
        return "hf-5"
    (found,) = [pid for pid, profile in PROFILES.items() if covers(profile, release)]
    return found


def best_configs(count: int, seed: int) -> list[dict]:
    """Setups around the checks: strategies that match or not, save_steps multiples of eval_steps or not, ratios,
    "best", a metric or none, evaluation sets or none."""
    rng = random.Random(seed)
    interval = [1, 2, 3, 4, 6, 0.1, 0.2, 0.25, 0.3, 0.5]
    configs = []
    for _ in range(count):
        eval_strategy = rng.choice(["steps", "steps", "epoch", "no"])
        config = {
            "num_samples": rng.randint(4, 60), "per_device_train_batch_size": rng.randint(1, 4),
            "gradient_accumulation_steps": rng.randint(1, 3), "num_train_epochs": rng.choice([1, 1.5, 2, 3]),
            "max_steps": rng.choice([-1, -1, 7, 11]), "learning_rate": 0.01,
            "eval_strategy": eval_strategy, "eval_steps": rng.choice([*interval, None]),
            "save_strategy": rng.choice([eval_strategy, "steps", "epoch", "best", "best", "no"]),
            "save_steps": rng.choice(interval), "logging_steps": rng.choice([1, 2, 3]),
            "load_best_model_at_end": rng.random() < 0.7,
            "metric_for_best_model": rng.choice([None, None, "loss", "eval_loss"]),
            "eval_on_start": rng.random() < 0.2,
            "lr_scheduler_type": rng.choice(["linear", "linear", "cosine", "reduce_lr_on_plateau"]),
        }
        configs.append(config)
    return configs


def _compare(release: str, configs: list[dict], eval_dataset: bool = True) -> dict[str, int]:
    """Plan each config under the release's row beside the real run; how many were refused, planned, and planned
    with metric-dependent saves (so the cases exercised the rules)."""
    seen = {"refused": 0, "planned": 0, "best": 0}
    for config, real in zip(configs, run_release(release, configs, eval_dataset=eval_dataset), strict=True):
        setup, unknown = setup_from_mapping({**config, "trainer": profile_of(release), "has_eval_dataset": eval_dataset})
        assert unknown == []
        plan = plan_or_same_refusal(setup, real, config)
        if plan is None:
            seen["refused"] += 1
            continue
        seen["planned"] += 1
        assert (plan.max_steps, plan.optimizer_steps) == (real["state_max_steps"], real["optimizer_steps"]), config
        assert events(plan, "eval").steps() == real["eval_at_steps"], config
        assert events(plan, "log").steps() == real["log_at_steps"], config
        saves = events(plan, "save")
        assert plan_to_json(plan)["save_depends_on_metric"] == saves.depends_on_metric
        if saves.depends_on_metric:
            seen["best"] += 1
            candidates = saves.steps()
            assert set(real["save_at_steps"]) <= set(candidates), config
            assert real["save_at_steps"][:1] == candidates[:1], config
        else:
            assert saves.steps() == real["save_at_steps"], config
        if config["lr_scheduler_type"] != "reduce_lr_on_plateau":
            np.testing.assert_allclose(plan.learning_rates(), real["lr_per_step"], rtol=1e-12, atol=1e-300)
    return seen


def test_load_best_and_save_best_as_the_installed_trainer_takes_them() -> None:
    seen = _compare(INSTALLED, best_configs(32, seed=524))
    assert min(seen.values()) >= 5, seen


@pytest.mark.parametrize("release", RELEASES)
def test_load_best_and_save_best_as_each_release_takes_them(release: str) -> None:
    seen = _compare(release, best_configs(16, seed=int(release.replace(".", ""))))
    assert seen["refused"] >= 3 and seen["planned"] >= 3, seen


@pytest.mark.parametrize("release", [INSTALLED, "5.3.0", "4.46.3"])
def test_no_evaluation_set_is_refused_as_the_trainer_refuses_it(release: str) -> None:
    configs = best_configs(16, seed=7)
    for config in configs[::2]:  # half of them evaluate nowhere (eval_on_start alone still needs the set)
        config.update(eval_strategy="no", load_best_model_at_end=False, save_strategy="steps", lr_scheduler_type="linear")
    seen = _compare(release, configs, eval_dataset=False)
    assert seen["refused"] >= 3 and seen["planned"] >= 1, seen


def test_the_issue_case_is_refused_in_the_trainers_words() -> None:
    setup, _ = setup_from_mapping({"num_samples": 100, "load_best_model_at_end": True, "eval_strategy": "steps",
                                   "eval_steps": 2, "save_steps": 3})
    with pytest.raises(TrainerRefusal) as refusal:
        make_plan(setup)
    assert "round multiple of the evaluation steps, but found 3" in refusal.value.message
