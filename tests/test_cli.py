"""`python -m steplab plan`: a stable JSON interface, with exit codes 0, 2 and 3."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from golden import EXAMPLES

from steplab.cli import main

ROOT = Path(__file__).resolve().parents[1]
KEYS = {"max_steps", "optimizer_steps", "num_update_steps_per_epoch", "micro_batches_per_epoch",
        "total_train_batch_size", "final_epoch", "warmup_steps", "micro_batches_per_step_rle", "eval_at_steps",
        "save_at_steps", "log_at_steps", "warnings"}


def cli(*args: str, capsys) -> tuple[int, dict | None, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else None), err


def test_course_default(capsys):
    code, result, _ = cli("plan", "--set", "num_samples=1600", "--set", "per_device_train_batch_size=4",
                          "--set", "gradient_accumulation_steps=8", "--set", "num_train_epochs=3",
                          "--set", "eval_strategy=steps", "--set", "eval_steps=50", capsys=capsys)
    assert code == 0
    assert KEYS <= set(result)
    assert (result["micro_batches_per_epoch"], result["num_update_steps_per_epoch"], result["max_steps"]) == (400, 50, 150)
    assert result["eval_at_steps"] == [50, 100, 150]
    assert "learning_rates" not in result


def test_llamafactory_yaml_with_lr_and_versions(capsys):
    path = str(EXAMPLES / "train_lora__qwen3_lora_sft.yaml")
    code, result, _ = cli("plan", path, "--lr-per-step", capsys=capsys)
    assert code == 0 and result["max_steps"] == 411 and result["warmup_steps"] == 42
    assert len(result["learning_rates"]) == 411 and result["learning_rates"][0] == 0.0
    assert any(w["code"] == "warmup_ratio_deprecated" for w in result["warnings"])
    code, old, _ = cli("plan", path, "--trainer", "hf-4.51", capsys=capsys)
    assert (old["max_steps"], old["warmup_steps"], old["micro_batches_per_step_rle"][-1]) == (408, 41, [8, 134])


def test_invalid_input_exits_2_naming_the_field(capsys):
    code, result, err = cli("plan", "--set", "num_samples=1600", "--set", "per_device_train_batch_size=0",
                            capsys=capsys)
    assert code == 2 and result is None
    assert err.count("\n") == 1 and "per_device_train_batch_size" in err
    code, _, err = cli("plan", "--set", "per_device_train_batch_size=4", capsys=capsys)
    assert code == 2 and "num_samples" in err


def test_trainer_refusal_exits_3(capsys):
    code, result, _ = cli("plan", "--set", "num_samples=100", "--set", "eval_strategy=steps",
                          "--set", "eval_steps=37.5", capsys=capsys)
    assert code == 3
    assert result == {"trainer_error": {"type": "ValueError",
                                        "message": "--eval_steps must be an integer if bigger than 1: 37.5"}}


def test_a_misspelt_set_key_is_refused_with_the_key_meant(capsys):
    """`--set gradient_accumulation_step=8` planned 750 steps instead of 96 before the census: now nothing is planned."""
    code, result, err = cli("plan", "--set", "num_samples=1000", "--set", "gradient_accumulation_step=8", capsys=capsys)
    assert (code, result) == (2, None)
    assert err.startswith("error: --set gradient_accumulation_step:") and "gradient_accumulation_steps?" in err
    code, _, err = cli("plan", "--set", "num_samples=10", "--set", "zzz_not_a_key=1", capsys=capsys)
    assert code == 2 and "zzz_not_a_key" in err and "did you mean" not in err


def test_a_misspelt_yaml_key_is_named_with_the_key_meant(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.yaml").write_text("num_samples: 1000\nper_device_train_batch_size: 4\n"
                                       "gradient_acumulation_steps: 8\nnum_train_epochs: 3\n")
    code, result, _ = cli("plan", "run.yaml", capsys=capsys)
    assert code == 0 and result["max_steps"] == 750 and result["unknown_keys"] == ["gradient_acumulation_steps"]
    named = [w for w in result["warnings"] if w["code"] == "unknown_key"]
    assert [(w["key"], w["meant"]) for w in named] == [("gradient_acumulation_steps", "gradient_accumulation_steps")]
    assert cli("plan", "run.yaml", "--strict", capsys=capsys)[0] == 4


def test_keys_not_modelled_are_named_with_what_they_may_change(tmp_path, capsys, monkeypatch):
    """The census's classes reach the JSON, for the YAML's keys, its DeepSpeed JSON's and `--set`'s; the import's
    notes too. Exit 0 (the plan stands for what StepLab models), 4 with `--strict`."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ds.json").write_text('{"train_batch_size": "auto", "scheduler": {"type": "WarmupLR"}}')
    (tmp_path / "run.yaml").write_text("stage: sft\nfinetuning_type: lora\nnum_samples: 100\ndeepspeed: ds.json\n"
                                       "auto_find_batch_size: true\nseed: 3\n")
    code, result, _ = cli("plan", "run.yaml", "--set", "optim=sgd", capsys=capsys)
    assert code == 0
    assert [(item["key"], item["may_change"]) for item in result["not_modelled"]] == [
        ("finetuning_type", "refusal"), ("deepspeed", "refusal"),
        ("optim", "learning_rates"), ("deepspeed.train_batch_size", "refusal"),
        ("deepspeed.scheduler.type", "learning_rates")]  # auto_find_batch_size is a field now (GRPO refuses it):
    # what it does to the plain Trainer's batch on out-of-memory is the import's note below
    assert all(item["message"].startswith(f"`{item['key']}`") for item in result["not_modelled"])
    notes = {note["code"] for note in result["notes"]}
    assert {"config_io.note.deepspeed", "config_io.note.auto_find_batch_size"} <= notes
    assert cli("plan", "run.yaml", "--strict", capsys=capsys)[0] == 4
    code, plain, _ = cli("plan", "--set", "num_samples=100", "--set", "seed=3", "--strict", capsys=capsys)
    assert (code, plain["not_modelled"], plain["unknown_keys"]) == (0, [], [])  # seed: proven irrelevant


@pytest.mark.parametrize("args", [["plan", "--set", "num_samples=1600"]])
def test_module_entry_point(args):
    done = subprocess.run([sys.executable, "-m", "steplab", *args], capture_output=True, text=True, cwd=ROOT,
                          check=False)
    assert done.returncode == 0
    assert json.loads(done.stdout)["max_steps"] == 600  # default batch 8, accumulation 1, 3 epochs: 200 × 3


def test_a_run_too_long_to_list_is_refused_with_what_to_change(capsys):
    """10^12 samples at the Trainer's default save_steps of 500 would list 750 million checkpoints."""
    code, result, err = cli("plan", "--set", "num_samples=1000000000000", capsys=capsys)
    assert code == 2 and result is None
    assert err.startswith("error: save_steps: the run has 750,000,000 save steps") and "save_strategy=no" in err
    code, result, _ = cli("plan", "--set", "num_samples=1000000000000", "--set", "save_strategy=no",
                          "--set", "logging_strategy=no", capsys=capsys)
    assert code == 0 and result["max_steps"] == 375_000_000_000 and result["save_at_steps"] == []
    code, result, err = cli("plan", "--set", "num_samples=1000000000000", "--set", "save_strategy=no",
                            "--set", "logging_strategy=no", "--lr-per-step", capsys=capsys)
    assert code == 2 and "375,000,000,000 optimizer steps" in err


def test_a_reader_that_stops_early_gets_no_traceback():
    """`python -m steplab plan ... | head -c 100`: the rest of the JSON has nowhere to go; exit quietly."""
    command = [sys.executable, "-m", "steplab", "plan", "--set", "num_samples=300000", "--set",
               "per_device_train_batch_size=1", "--lr-per-step"]  # about 6 MB of JSON, far beyond a pipe's buffer
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout.read(100).startswith(b'{"trainer":"hf-5.6","max_steps":900000,')
    process.stdout.close()
    assert process.wait(timeout=120) == 141
    assert process.stderr.read() == b""


@pytest.mark.parametrize(("args", "status"), [
    (["plan", "--set", "num_samples=1600"], 141),  # the plan's JSON had nowhere to go
    (["plan", "--set", "num_samples=100", "--set", "eval_strategy=steps", "--set", "eval_steps=37.5"], 3),  # refusal
    (["plan", "--help"], 0),  # argparse's own output
])
def test_a_reader_gone_before_the_first_byte_gets_no_traceback(args, status):
    """`| true`, or `| head -c 0`: the reader closed the pipe before anything was written. Every way the CLI writes to
    stdout ends quietly; a refusal keeps its status 3 (what happened is still that the Trainer refused)."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([sys.executable, "-m", "steplab", *args], cwd=ROOT, stdout=write, stderr=subprocess.PIPE,
                              timeout=120, check=False)
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (status, b"")


def test_json_nested_deeper_than_the_parser_goes_is_an_input_error(capsys):
    """`--set lr_scheduler_kwargs=[[[[…`: json.loads raises RecursionError, which used to end in a traceback."""
    for key in ("lr_scheduler_kwargs", "num_samples"):
        code, result, err = cli("plan", "--set", "num_samples=100", "--set", f"{key}={'[' * 100_000}", capsys=capsys)
        assert code == 2 and result is None
        assert err.startswith(f"error: {key}: ") and err.count("\n") == 1 and "Traceback" not in err


def test_learning_rates_read_back_as_the_engines_floats(capsys):
    """The JSON's learning rates are the engine's float64 values, digit for digit."""
    from steplab.trainer.plan import make_plan
    from steplab.trainer.setup import setup_from_mapping

    code, result, _ = cli("plan", "--set", "num_samples=999", "--set", "lr_scheduler_type=cosine",
                          "--set", "warmup_steps=7", "--lr-per-step", capsys=capsys)
    plan = make_plan(setup_from_mapping({"num_samples": 999, "lr_scheduler_type": "cosine", "warmup_steps": 7})[0])
    assert code == 0 and result["learning_rates"] == plan.learning_rates().tolist()


def test_a_trainer_class_brings_its_own_keys(capsys):
    """`beta` is a key of DPO's config (proven irrelevant there), not of the plain Trainer's arguments; a misspelt
    GRPO key gets GRPO's key meant."""
    code, result, _ = cli("plan", "--set", "num_samples=10", "--set", "trainer_class=DPOTrainer", "--set", "beta=0.5",
                          capsys=capsys)
    assert (code, result["not_modelled"], result["unknown_keys"]) == (0, [], [])
    code, _, err = cli("plan", "--set", "num_samples=10", "--set", "beta=0.5", capsys=capsys)
    assert code == 2 and err.startswith("error: --set beta:")
    code, _, err = cli("plan", "--set", "num_samples=10", "--set", "trainer_class=GRPOTrainer",
                       "--set", "num_generation=4", capsys=capsys)
    assert code == 2 and "did you mean num_generations?" in err


def test_explain_names_a_misspelt_key_of_its_config(tmp_path, capsys, monkeypatch):
    """`explain --config`: the census of the run's YAML, as `plan` writes it (a finding says the key meant)."""
    runs = ROOT / "tests" / "data" / "llamafactory-runs"
    monkeypatch.chdir(runs)
    config = tmp_path / "config.yaml"
    config.write_text((runs / "artefacts" / "course" / "config.yaml").read_text() + "gradient_acumulation_steps: 2\n")
    code, result, _ = cli("explain", "artefacts/course", "--config", str(config), capsys=capsys)
    assert code == 0 and result["unknown_keys"] == ["gradient_acumulation_steps"]
    assert [(f["key"], f["meant"]) for f in result["findings"] if f["code"] == "unknown_key"] == [
        ("gradient_acumulation_steps", "gradient_accumulation_steps")]
    assert ("lora_rank", "unchecked") in [(item["key"], item["may_change"]) for item in result["not_modelled"]]
