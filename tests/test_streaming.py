"""`streaming: true` with `max_steps`: the Trainer gets a dataset with no length and trains `max_steps` updates of GA
micro-batches in one epoch of that many ("Num examples" = `max_steps` × the total batch, "Num Epochs" without end).
Held to the real Trainer (`oracle.run_trainer(stream=True)`, generated setups whose stream is long enough) and to
LLaMA-Factory 0.9.5's real streaming run (`tests/data/llamafactory-runs/artefacts/streaming`)."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import numpy as np
import pytest
from oracle import plan_or_same_refusal
from release_oracle import INSTALLED, run_release

from steplab.cli import main
from steplab.io.config_read import read_config
from steplab.simulation.logblock import running_training_block
from steplab.trainer.events import events
from steplab.trainer.plan import make_plan
from steplab.trainer.setup import setup_from_mapping

RUN = Path(__file__).parent / "data" / "llamafactory-runs" / "artefacts" / "streaming"


def stream_configs(count: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    configs = []
    for _ in range(count):
        config = {"per_device_train_batch_size": rng.randint(1, 4), "gradient_accumulation_steps": rng.randint(1, 4),
                  "max_steps": rng.choice([1, 3, 7, 12, -1]), "num_train_epochs": rng.choice([1, 2.5]),
                  "learning_rate": 0.01, "lr_scheduler_type": rng.choice(["linear", "cosine"]),
                  "warmup_steps": rng.choice([0, 2, 0.2]), "logging_steps": rng.choice([1, 2, 5]),
                  "save_steps": rng.choice([2, 4, 500]), "eval_strategy": rng.choice(["no", "steps"]),
                  "eval_steps": rng.choice([2, 3])}
        needed = max(config["max_steps"], 1) * config["per_device_train_batch_size"] * config["gradient_accumulation_steps"]
        config["num_samples"] = needed + rng.randint(0, 5)  # the stream holds at least what max_steps takes
        configs.append(config)
    return configs


@pytest.mark.oracle
@pytest.mark.parametrize(("release", "profile", "count"), [(INSTALLED, "hf-5", 24), ("5.6.0", "hf-5.6", 10),
                                                           ("4.57.6", "hf-4.57", 10)])
def test_a_stream_trains_as_the_real_trainer_trains_it(release: str, profile: str, count: int) -> None:
    configs = stream_configs(count, seed=8)
    planned = 0
    for config, real in zip(configs, run_release(release, configs, stream=True), strict=True):
        setup = setup_from_mapping({**config, "trainer": profile, "streaming": True})[0]
        plan = plan_or_same_refusal(setup, real, config)
        if plan is None:
            continue
        planned += 1
        assert (plan.max_steps, plan.optimizer_steps) == (real["state_max_steps"], real["optimizer_steps"]), config
        assert plan.final_epoch == pytest.approx(real["final_epoch"], rel=1e-12), config
        assert plan.micro_batches_per_step_rle() == real["micro_batches_per_step_rle"], config
        assert [events(plan, kind).steps() for kind in ("eval", "save", "log")] == [
            real["eval_at_steps"], real["save_at_steps"], real["log_at_steps"]], config
        np.testing.assert_allclose(plan.learning_rates(), real["lr_per_step"], rtol=1e-12, atol=1e-300)
    assert count > planned >= count // 2


def test_llamafactorys_streaming_run_as_steplab_plans_it() -> None:
    """The real run: 30 steps of 32 (4 × 8), its training block line for line, its logs, rates and checkpoint."""
    imported = read_config((RUN / "config.yaml").read_text(encoding="utf-8"))
    assert imported.sample_source == "streaming" and not imported.needs_num_samples
    plan = make_plan(setup_from_mapping(imported.values)[0])
    console = (RUN / "console.log").read_text(encoding="utf-8")
    real_block = [line.split(">>   ", 1)[1] for line in console.splitlines()
                  if re.search(r"trainer\.py:14(7\d) .*>>   ", line) and "trainable parameters" not in line]
    ours = [line.strip() for line in running_training_block(plan).splitlines()[1:] if line.strip()]
    assert ours[:len(real_block)] == real_block
    state = json.loads((RUN / "trainer_state.json").read_text(encoding="utf-8"))
    logged = [row for row in state["log_history"] if "loss" in row]
    assert events(plan, "log").steps() == [row["step"] for row in logged]
    assert plan.final_epoch == state["epoch"] and plan.epochs_loop == state["num_train_epochs"]
    rates = plan.learning_rates()
    np.testing.assert_allclose([rates[row["step"] - 1] for row in logged], [row["learning_rate"] for row in logged],
                               rtol=1e-12)
    assert events(plan, "save").steps() == [int(p.name.split("-")[1]) for p in RUN.glob("checkpoint-*")]


def test_the_cli_plans_a_streaming_yaml(capsys, monkeypatch) -> None:
    monkeypatch.chdir(RUN.parent.parent)
    assert main(["plan", str(RUN / "config.yaml")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["max_steps"], out["num_samples"], out["num_samples_source"]) == (30, 960, "streaming")
    assert "max_steps_cuts_epochs" not in [w["code"] for w in out["warnings"]]
