"""A LLaMA-Factory YAML that evaluates without an evaluation set: refused as LLaMA-Factory 0.9.5's `get_train_args`
refuses it ("Please make sure eval_dataset be provided or val_size >1e-6"), on generated combinations of the keys
that decide it, checked against the real pipeline (`tests/llamafactory_env.py`); a YAML that runs without one plans
with `has_eval_dataset` off, so `eval_on_start` meets the Trainer's own refusal."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
import yaml
from tiny_tokenizers import word_level

from steplab.errors import TrainerRefusal
from steplab.io.config_read import LLAMAFACTORY_NO_EVAL_SET, read_config
from steplab.io.safe_yaml import ConfigError
from steplab.trainer.plan import make_plan
from steplab.trainer.setup import setup_from_mapping

pytestmark = pytest.mark.oracle


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("lf-eval-set")
    rows = [{"instruction": f"say {i}", "input": "", "output": f"word {i}"} for i in range(24)]
    (root / "data.json").write_text(json.dumps(rows), encoding="utf-8")
    (root / "dataset_info.json").write_text(json.dumps({"d": {"file_name": "data.json"},
                                                        "e": {"file_name": "data.json"}}), encoding="utf-8")
    word_level(root / "model")
    return root


def _cases() -> list[dict]:
    keys = {"eval_strategy": [None, "no", "steps", "epoch"], "val_size": [None, 0, 1e-7, 0.1, 3],
            "eval_dataset": [None, "e"], "do_eval": [None, True, False]}
    return [dict(zip(keys, values, strict=True)) for values in itertools.product(*keys.values())]


def test_no_evaluation_set_is_refused_as_llamafactory_refuses_it(llamafactory_oracle, folder: Path) -> None:
    refused = 0
    for case in _cases():
        config = {"model_name_or_path": str(folder / "model"), "stage": "sft", "do_train": True, "dataset": "d",
                  "dataset_dir": str(folder), "template": "default", "cutoff_len": 64, "finetuning_type": "lora",
                  "per_device_train_batch_size": 2, "eval_steps": 2, "report_to": "none", "overwrite_cache": True,
                  **{key: value for key, value in case.items() if value is not None}}
        real = llamafactory_oracle.run(config, folder)
        real_refuses = "error" in real and real["error"]["message"] == LLAMAFACTORY_NO_EVAL_SET
        try:
            read_config(yaml.safe_dump(config), dataset_rows={"d": 24, "e": 24})
            ours = None
        except ConfigError as error:
            ours = error
        if real_refuses:
            refused += 1
            assert ours is not None and ours.code == "config_io.no_evaluation_set", case
            assert LLAMAFACTORY_NO_EVAL_SET in ours.message("en") and LLAMAFACTORY_NO_EVAL_SET in ours.message("zh")
        else:
            assert ours is None or ours.code != "config_io.no_evaluation_set", (case, real)
    assert 10 <= refused <= 100, refused


def test_eval_on_start_without_a_set_meets_the_trainers_refusal() -> None:
    text = "stage: sft\ndataset: alpaca_en_demo\nnum_samples: 40\neval_on_start: true\n"
    imported = read_config(text)
    assert imported.values["has_eval_dataset"] is False
    with pytest.raises(TrainerRefusal) as refusal:
        make_plan(setup_from_mapping(imported.values)[0])
    assert refusal.value.message == "Trainer: evaluation requires an eval_dataset."
    imported = read_config(text + "val_size: 0.1\n")
    assert imported.values["has_eval_dataset"] is True
    make_plan(setup_from_mapping(imported.values)[0])
