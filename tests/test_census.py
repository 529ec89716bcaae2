"""The census (`steplab/io/census.yaml`) against the real classes: every field of every release is classed, no
entry names a field no release has, and an irrelevant key is proven so by the real Trainer.

Sources: the suite's own transformers (5.24.0) and TRL (1.16.0) directly; transformers 4.46.3, 4.51.3 and 4.57.6
from their wheels (`tests/wheels.py`, read in a subprocess); LLaMA-Factory 0.9.5's argument classes, its
transformers 5.6.0 and TRL 0.24.0 inside its oracle environment (`llamafactory_worker.py`'s `fields` request); the
DeepSpeed keys `HfTrainerDeepSpeedConfig` reads, recorded while it fills a config with every value `auto`.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import textwrap
from functools import cache

import pytest

from steplab.io import census

OLD_TRANSFORMERS = ("4.46.3", "4.51.3", "4.57.6")
LLAMAFACTORY_CLASSES = {
    "llamafactory.hparams:ModelArguments": "llamafactory_model",
    "llamafactory.hparams:DataArguments": "llamafactory_data",
    "llamafactory.hparams:FinetuningArguments": "llamafactory_finetuning",
    "llamafactory.hparams:GeneratingArguments": "llamafactory_generating",
    "llamafactory.hparams:TrainingArguments": "llamafactory_training",
    "transformers:TrainingArguments": "training_arguments",
    "trl:GRPOConfig": "grpo", "trl:DPOConfig": "dpo", "trl:SFTConfig": "sft", "trl:KTOConfig": "kto",
}
"""The classes read inside LLaMA-Factory's environment (transformers 5.6.0, TRL 0.24.0), each with its family."""
TRAINER_OF = {"grpo": "GRPOTrainer", "dpo": "DPOTrainer", "sft": "SFTTrainer", "kto": "KTOTrainer"}

FIELDS_OF_WHEEL = textwrap.dedent('''
    import dataclasses, json, sys, types
    check = types.ModuleType("transformers.dependency_versions_check")
    check.dep_version_check = lambda pkg, hint=None: None
    sys.modules["transformers.dependency_versions_check"] = check
    sys.path.insert(0, sys.argv[1])
    from transformers import TrainingArguments
    print(json.dumps([f.name for f in dataclasses.fields(TrainingArguments) if f.init]))
''')


def _families(family: str) -> tuple[str, ...]:
    """The families a field of `family`'s class is looked up in, as a run of that class looks it up."""
    if family in TRAINER_OF:
        return census.families_for(TRAINER_OF[family])
    if family.startswith("llamafactory"):
        return census.families_for("Trainer", llamafactory=True)
    return (family,)


def _unclassed(names: list[str], family: str) -> list[str]:
    return [name for name in names if census.classify(name, _families(family)) is None]


def _init_fields(cls: type) -> list[str]:
    return [f.name for f in dataclasses.fields(cls) if f.init]


@cache
def _wheel_fields(release: str) -> tuple[str, ...]:
    from wheels import unpacked

    folder = unpacked(f"transformers=={release}")
    done = subprocess.run([sys.executable, "-c", FIELDS_OF_WHEEL, str(folder)], capture_output=True, text=True,
                          timeout=300, env={"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    return tuple(json.loads(done.stdout.strip().splitlines()[-1]))


@pytest.fixture(scope="module")
def llamafactory_fields(llamafactory_oracle) -> dict[str, list[str]]:
    return llamafactory_oracle.ask({"fields": list(LLAMAFACTORY_CLASSES)})


def deepspeed_keys_read() -> set[str]:
    """Every key `HfTrainerDeepSpeedConfig` reads while it fills a ZeRO-3 config whose values are all `auto`
    (`trainer_config_process`, then `trainer_config_finalize`: the dotted keys it asks for, as it asks)."""
    import torch
    import transformers.integrations.deepspeed as hf_deepspeed
    from accelerate.utils.deepspeed import HfDeepSpeedConfig
    from transformers import TrainingArguments

    read: list[str] = []

    class Recording(hf_deepspeed.HfTrainerDeepSpeedConfig, HfDeepSpeedConfig):  # accelerate's base: no deepspeed
        def find_config_node(self, ds_key_long):
            read.append(ds_key_long)
            return super().find_config_node(ds_key_long)

        def get_value(self, ds_key_long, default=None):
            read.append(ds_key_long)
            return super().get_value(ds_key_long, default)

    auto = "auto"
    config = {"train_micro_batch_size_per_gpu": auto, "train_batch_size": auto, "gradient_accumulation_steps": auto,
              "gradient_clipping": auto, "fp16": {"enabled": auto}, "bf16": {"enabled": auto},
              "optimizer": {"type": "AdamW", "params": {"lr": auto, "betas": auto, "eps": auto, "weight_decay": auto}},
              "scheduler": {"type": "WarmupDecayLR", "params": {"warmup_min_lr": auto, "warmup_max_lr": auto,
                                                                "warmup_num_steps": auto, "total_num_steps": auto}},
              "zero_optimization": {"stage": 3, "reduce_bucket_size": auto, "stage3_prefetch_bucket_size": auto,
                                    "stage3_param_persistence_threshold": auto}}
    original = hf_deepspeed.dep_version_check
    hf_deepspeed.dep_version_check = lambda *args, **kwargs: None  # the config class needs no deepspeed to read
    try:
        filled = Recording(config)
    finally:
        hf_deepspeed.dep_version_check = original
    args = TrainingArguments(output_dir="unused", use_cpu=True, report_to="none")
    filled.trainer_config_process(args)
    model = torch.nn.Linear(2, 2)
    model.config = type("Config", (), {"hidden_size": 4})()
    filled.trainer_config_finalize(args, model, 10)
    return set(read) | {key for key in config if isinstance(config[key], dict)} | {"optimizer.type", "scheduler.type"}


# --- every field is classed ---------------------------------------------------------------------------------------

def test_the_census_file_reads_and_names_only_known_codes():
    table = census.entries()
    assert set(table) == set(census.FAMILIES)
    for family in table.values():
        for entry in family.values():
            assert entry.status in ("irrelevant", "not_modelled")
            assert entry.may_change in (None, *census.MAY_CHANGE)


def test_every_field_of_transformers_5_24_and_trl_1_16_is_classed():
    import transformers
    import trl

    assert (transformers.__version__, trl.__version__) == ("5.24.0", "1.16.0")
    assert _unclassed(_init_fields(transformers.TrainingArguments), "training_arguments") == []
    for name, family in (("GRPOConfig", "grpo"), ("DPOConfig", "dpo"), ("SFTConfig", "sft")):
        assert _unclassed(_init_fields(getattr(trl, name)), family) == [], name


@pytest.mark.oracle
@pytest.mark.parametrize("release", OLD_TRANSFORMERS)
def test_every_field_of_an_older_transformers_is_classed(release):
    assert _unclassed(list(_wheel_fields(release)), "training_arguments") == []


@pytest.mark.oracle
def test_every_field_of_llamafactory_its_transformers_and_its_trl_is_classed(llamafactory_fields):
    unclassed = {name: _unclassed(fields, LLAMAFACTORY_CLASSES[name]) for name, fields in llamafactory_fields.items()}
    assert {name: missing for name, missing in unclassed.items() if missing} == {}


def test_every_deepspeed_key_the_trainer_reads_is_listed():
    read = deepspeed_keys_read()
    assert "scheduler.params.warmup_num_steps" in read and "train_micro_batch_size_per_gpu" in read
    assert sorted(read - set(census.entries()["deepspeed"])) == []


@pytest.mark.oracle
def test_no_entry_names_a_field_no_release_has(llamafactory_fields):
    """Each listed key is a field of some release of its family (a key that left every release is no census's)."""
    import transformers
    import trl

    real: dict[str, set[str]] = {family: set() for family in census.FAMILIES}
    real["training_arguments"].update(_init_fields(transformers.TrainingArguments))
    for release in OLD_TRANSFORMERS:
        real["training_arguments"].update(_wheel_fields(release))
    for name, family in (("GRPOConfig", "grpo"), ("DPOConfig", "dpo"), ("SFTConfig", "sft")):
        real[family].update(_init_fields(getattr(trl, name)))
    for name, fields in llamafactory_fields.items():
        real[LLAMAFACTORY_CLASSES[name]].update(fields)
    real["deepspeed"] = set(census.entries()["deepspeed"])  # checked the other way above
    stale = {family: sorted(set(listed) - real[family]) for family, listed in census.entries().items()}
    assert {family: keys for family, keys in stale.items() if keys} == {}


# --- the reader ---------------------------------------------------------------------------------------------------

def test_a_row_of_the_field_table_is_modelled_whatever_the_file_says(monkeypatch):
    from steplab.trainer import fields

    assert census.classify("eval_delay", ("training_arguments",)).status in ("modelled", "not_modelled")
    monkeypatch.setitem(fields.FIELDS, "optim", fields.Field("optim", "choice", "adamw_torch", choices=("sgd",)))
    census.modelled_keys.cache_clear()
    try:
        assert census.classify("optim", ("training_arguments",)).status == "modelled"
        assert census.unmodelled({"optim": "sgd"}) == []
        assert "optim" not in census.irrelevant()
    finally:
        monkeypatch.undo()
        census.modelled_keys.cache_clear()
    assert census.unmodelled({"optim": "sgd"}) == [census.Unmodelled("optim", "learning_rates")]


def test_a_misspelt_key_gets_the_key_meant_and_a_trainer_class_its_own_keys():
    checked = census.check({"gradient_acumulation_steps": 4, "lora_rank": 8, "learning_rate": 1e-4},
                           llamafactory=True)
    assert checked.unknown == (census.Unknown("gradient_acumulation_steps", "gradient_accumulation_steps"),)
    assert [item.key for item in checked.unmodelled] == ["lora_rank"]
    plain = census.check({"pref_beta": 0.1})  # LLaMA-Factory's key, not the plain Trainer's
    assert (plain.unmodelled, [item.key for item in plain.unknown]) == ((), ["pref_beta"])
    grpo = census.unmodelled({"per_device_eval_batch_size": 3, "beta": 0.1, "num_generations": 4}, "GRPOTrainer")
    assert grpo == [census.Unmodelled("per_device_eval_batch_size", "refusal"), census.Unmodelled("beta", "unchecked")]
    assert census.unmodelled({"per_device_eval_batch_size": 3}) == []  # irrelevant to the plain Trainer


def test_a_deepspeed_block_is_named_key_by_key():
    found = census.unmodelled({"deepspeed": {"train_batch_size": "auto", "scheduler": {"type": "WarmupLR"},
                                             "steps_per_print": 10}})
    assert found == [census.Unmodelled("deepspeed", "refusal"),
                     census.Unmodelled("deepspeed.train_batch_size", "refusal"),
                     census.Unmodelled("deepspeed.scheduler.type", "learning_rates"),
                     census.Unmodelled("deepspeed.steps_per_print", "unchecked")]


# --- the proof of irrelevance -------------------------------------------------------------------------------------

PROOF_CONFIG = {"num_samples": 23, "per_device_train_batch_size": 3, "gradient_accumulation_steps": 2,
                "num_train_epochs": 2, "lr_scheduler_type": "cosine", "warmup_steps": 2, "eval_strategy": "steps",
                "eval_steps": 3, "save_steps": 2, "logging_steps": 2, "logging_first_step": True}
"""23 samples in micro-batches of 3: a short last micro-batch and a last accumulation group of one."""


@pytest.mark.oracle
@pytest.mark.parametrize("key", sorted(census.irrelevant()))
def test_an_irrelevant_key_changes_nothing_the_real_trainer_counts(key):
    """Each value the census lists for the key, set in the real `TrainingArguments` (5.24.0, CPU, a tiny model):
    the run is StepLab's plan of the same setup without the key."""
    from oracle import assert_plan_is_the_real_run, run_trainer

    for value in census.irrelevant()[key]:
        assert_plan_is_the_real_run(PROOF_CONFIG, run_trainer(PROOF_CONFIG, {key: value}))


TRL_PROOF_CASES = {
    "grpo": {"trainer": "grpo", "num_samples": 6, "args": {
        "per_device_train_batch_size": 2, "gradient_accumulation_steps": 2, "num_train_epochs": 1, "max_steps": -1,
        "learning_rate": 1e-3, "lr_scheduler_type": "cosine", "warmup_steps": 1, "dataloader_drop_last": False,
        "num_generations": 2, "num_iterations": 2}},
    "dpo": {"trainer": "dpo", "num_samples": 7, "args": {
        "per_device_train_batch_size": 2, "gradient_accumulation_steps": 2, "num_train_epochs": 1.5, "max_steps": -1,
        "learning_rate": 1e-3, "lr_scheduler_type": "cosine", "warmup_steps": 1, "dataloader_drop_last": False}},
}
"""One small run of each trainer: 6 prompts in rounds of 4 completions, 7 pairs in micro-batches of 2."""


@pytest.mark.oracle
@pytest.mark.parametrize("family", sorted(TRL_PROOF_CASES))
def test_an_irrelevant_trl_key_changes_nothing_trl_counts(family):
    """Each value the census lists for a key of TRL's own config, set in the real config (TRL 1.16.0, CPU, a tiny
    model): every update, micro-batch, generation round, learning rate and the console's block are StepLab's plan of
    the same setup without the key (`test_trl_vs_steplab.compare`)."""
    import trl
    from test_trl_vs_steplab import run_batch
    from trl_env import TrlOracle

    assert trl.__version__ == "1.16.0"
    base = TRL_PROOF_CASES[family]
    cases = [{**base, "args": {**base["args"], key: value}}
             for key, values in sorted(census.irrelevant(family).items()) for value in values]
    assert len(cases) >= 10
    oracle = TrlOracle("1")
    try:
        answers = run_batch(oracle, cases)
    finally:
        oracle.close()
    assert all(answer["status"] == "ok" for answer in answers)  # a proof by runs that train, not by refusals
