"""A DeepSpeed JSON's `auto` values and mismatches, held to transformers' own `HfTrainerDeepSpeedConfig`
(`trainer_config_process` then `trainer_config_finalize`) on generated configs.

The `deepspeed` package does not install on this CPU machine, and `HfDeepSpeedConfig.__init__` checks for it
(`dep_version_check("deepspeed")`, transformers `integrations/deepspeed.py:81`): the test makes the object without
its `__init__` (the config and the mismatch list set as `__init__` sets them; accelerate's `HfDeepSpeedConfig`, the
base it has when DeepSpeed is installed, brings the config reader) and runs the two real methods, which read and
write only the config (no hidden-size `auto` keys are drawn: those need a model). DeepSpeed's own
schedulers (`WarmupLR`, `WarmupDecayLR`, `WarmupCosineLR`) are not planned: `scheduler_block` names them.
"""

from __future__ import annotations

import copy
import random

import pytest

from steplab.errors import TrainerRefusal
from steplab.trainer.deepspeed import check_deepspeed, fill, scheduler_block
from steplab.trainer.plan import make_plan
from steplab.trainer.setup import setup_from_mapping

pytestmark = pytest.mark.oracle


def _real(config: dict, arguments: dict, steps: int):
    from accelerate.utils.deepspeed import HfDeepSpeedConfig as AccelerateConfig
    from transformers import TrainingArguments
    from transformers.integrations.deepspeed import HfTrainerDeepSpeedConfig

    # without the deepspeed package transformers' class stands on `object`; accelerate's base brings the config reader
    oracle = type("Oracle", (HfTrainerDeepSpeedConfig, AccelerateConfig), {})
    args = TrainingArguments(output_dir="out", report_to="none", use_cpu=True, **arguments)
    ds = object.__new__(oracle)
    ds.config, ds.mismatches, ds._dtype = copy.deepcopy(config), [], None
    ds.trainer_config_process(args, auto_find_batch_size=arguments.get("auto_find_batch_size", False))
    try:
        ds.trainer_config_finalize(args, None, steps)
    except ValueError as error:
        return ds.config, str(error)
    return ds.config, None


def _value(rng: random.Random, right, wrong):
    return rng.choice(["auto", right, wrong, None])


def _cases(count: int, seed: int) -> list[tuple[dict, dict, dict]]:
    rng = random.Random(seed)
    cases = []
    for _ in range(count):
        setup = {"num_samples": rng.randint(8, 80), "per_device_train_batch_size": rng.randint(1, 4),
                 "gradient_accumulation_steps": rng.randint(1, 4), "learning_rate": rng.choice([1e-4, 2e-5]),
                 "warmup_steps": rng.choice([0, 3, 0.1]), "num_train_epochs": rng.choice([1, 2])}
        arguments = {"max_grad_norm": rng.choice([1.0, 0.5]), "weight_decay": rng.choice([0.0, 0.1]),
                     "bf16": False, "auto_find_batch_size": rng.random() < 0.2}
        b, ga = setup["per_device_train_batch_size"], setup["gradient_accumulation_steps"]
        config = {"train_micro_batch_size_per_gpu": _value(rng, b, b + 1),
                  "gradient_accumulation_steps": _value(rng, ga, ga + 2),
                  "train_batch_size": _value(rng, b * ga, b * ga + 1),
                  "gradient_clipping": _value(rng, arguments["max_grad_norm"], 2.0),
                  "bf16": {"enabled": _value(rng, False, True)}}
        if rng.random() < 0.6:
            config["optimizer"] = {"type": "AdamW", "params": {
                "lr": _value(rng, setup["learning_rate"], 1e-3), "betas": _value(rng, [0.9, 0.999], [0.9, 0.95]),
                "eps": _value(rng, 1e-8, 1e-6), "weight_decay": _value(rng, arguments["weight_decay"], 0.3)}}
        if rng.random() < 0.6:
            config["scheduler"] = {"type": "WarmupDecayLR", "params": {
                "warmup_min_lr": _value(rng, 0, 1e-7), "warmup_max_lr": _value(rng, setup["learning_rate"], 5e-4),
                "total_num_steps": _value(rng, 7, 9999), "warmup_num_steps": _value(rng, 1, 500)}}
        config = {k: v for k, v in config.items() if v is not None}
        cases.append((setup, arguments, config))
    return cases


def test_auto_values_and_mismatches_as_the_trainer_fills_and_refuses_them() -> None:
    refused = filled_any = 0
    for setup_values, arguments, config in _cases(80, seed=11):
        plan = make_plan(setup_from_mapping({**setup_values, "trainer": "hf-5"})[0])
        trainer_arguments = {k: v for k, v in {**setup_values, **arguments}.items() if k != "num_samples"}
        real_config, real_error = _real(config, trainer_arguments, plan.max_steps)
        filled, _ = fill(config, plan, arguments)
        for key, value in filled.items():  # every auto the Trainer fills, with its value
            node = real_config
            for part in key.split("."):
                node = node[part]
            assert node == value, (key, config)
        filled_any += bool(filled)
        if real_error is None:
            check_deepspeed(config, plan, arguments)
            continue
        refused += 1
        with pytest.raises(TrainerRefusal) as refusal:
            check_deepspeed(config, plan, arguments)
        assert refusal.value.message == real_error, config
        assert scheduler_block(config) == ("optimizer" in config or "scheduler" in config)
    assert refused >= 20 and filled_any >= 20


def test_the_cli_refuses_a_mismatch_and_names_a_deepspeed_schedule(tmp_path, monkeypatch, capsys) -> None:
    import json

    from steplab.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.yaml").write_text("num_samples: 100\nper_device_train_batch_size: 2\ngradient_accumulation_steps: 4\n"
                                     "deepspeed: ds.json\n", encoding="utf-8")
    (tmp_path / "ds.json").write_text(json.dumps({"train_micro_batch_size_per_gpu": 4}), encoding="utf-8")
    assert main(["plan", "a.yaml"]) == 3
    assert "ds train_micro_batch_size_per_gpu=4 vs hf per_device_train_batch_size=2" in capsys.readouterr().out
    (tmp_path / "ds.json").write_text(json.dumps({"train_batch_size": "auto", "scheduler": {
        "type": "WarmupLR", "params": {"warmup_num_steps": "auto"}}}), encoding="utf-8")
    assert main(["plan", "a.yaml"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["deepspeed_filled"]["train_batch_size"] == 8
    assert "deepspeed_schedule" in [w["code"] for w in out["warnings"]]
    (tmp_path / "ds.json").unlink()
    assert main(["plan", "a.yaml"]) == 0
    assert "deepspeed_not_read" in [w["code"] for w in json.loads(capsys.readouterr().out)["warnings"]]
