"""Re-record `tests/data/trl-runs/`: real TRL 1.16.0 runs on CPU, each leaving what a run leaves behind.

Each run is one process of `tests/trl_worker.py` (a case with `output_dir`: the Trainer's INFO log and tqdm on,
the folder kept) in the TRL oracle's Python (`tests/trl_env.python()`); its stderr is the run's `console.log`.
Kept per run, a few KB: `console.log`, each `checkpoint-N/trainer_state.json`, and `config.yaml`, the run's
arguments written as a `trl grpo|dpo|sft --config` file (TRL's CLI reads the same keys into the same config
class), and `recorded.json`, what the worker saw (no run file: the tests' facts, such as the generation rounds
GRPO really ran, or the exception a failed run raised). A failed run keeps its console (the traceback), config
and `recorded.json`.

    PYTHONPATH=$PWD /work/venv/bin/python scripts/record_trl_runs.py
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.trl_env import kept_run  # noqa: E402

OUT = ROOT / "tests" / "data" / "trl-runs"

RUNS: dict[str, dict] = {
    # GRPO: B=4 completions, GA=2 → S=2, Gb=8, G=4 → U=2 prompts a round; 24 prompts → 12 rounds, 24 micro-batches
    "grpo": {"trainer": "grpo", "num_samples": 24, "args": {
        "per_device_train_batch_size": 4, "gradient_accumulation_steps": 2, "num_generations": 4,
        "num_train_epochs": 1, "logging_steps": 2, "save_strategy": "steps", "save_steps": 5}},
    # GRPO with μ=2 and S given: each round's completions used twice; 11 prompts, the last round incomplete
    "grpo_iterations": {"trainer": "grpo", "num_samples": 11, "args": {
        "per_device_train_batch_size": 2, "gradient_accumulation_steps": 2, "num_generations": 4,
        "steps_per_generation": 4, "num_iterations": 2, "num_train_epochs": 2, "logging_steps": 3,
        "save_strategy": "steps", "save_steps": 16, "lr_scheduler_type": "linear"}},
    "dpo": {"trainer": "dpo", "num_samples": 20, "args": {
        "per_device_train_batch_size": 2, "gradient_accumulation_steps": 2, "num_train_epochs": 2,
        "logging_steps": 2, "save_strategy": "steps", "save_steps": 4}},
    "sft_packing": {"trainer": "sft", "lengths": [3, 5, 7, 2, 9, 4, 6, 8, 3, 5, 2, 7, 4, 6, 9, 3, 5, 8, 2, 4] * 2,
                    "args": {"per_device_train_batch_size": 2, "gradient_accumulation_steps": 1, "packing": True,
                             "max_length": 16, "num_train_epochs": 1, "logging_steps": 2, "save_strategy": "steps",
                             "save_steps": 4}},
    # the Trainer's own rules under SFTTrainer: intervals as ratios of the total, a scheduler's kwargs mapping
    "sft_ratios": {"trainer": "sft", "lengths": [4, 6, 3, 8, 5] * 6, "args": {
        "per_device_train_batch_size": 2, "gradient_accumulation_steps": 1, "num_train_epochs": 2,
        "logging_steps": 0.15, "save_strategy": "steps", "save_steps": 0.4, "learning_rate": 1e-4,
        "lr_scheduler_type": "cosine_with_min_lr", "lr_scheduler_kwargs": {"min_lr_rate": 0.1}}},
    # stopped at step 13 (Ctrl-C), resumed from checkpoint-10; 30 steps, logged every 4: the last two unlogged
    "sft_resumed": {"trainer": "sft", "lengths": [4, 6, 3, 8, 5] * 4, "stop_at": 13, "args": {
        "per_device_train_batch_size": 2, "gradient_accumulation_steps": 1, "num_train_epochs": 3,
        "logging_steps": 4, "save_strategy": "steps", "save_steps": 5, "learning_rate": 1e-4}},
    # two evaluation sets (the Trainer's dict of eval datasets, LLaMA-Factory's `eval_on_each_dataset`): each
    # evaluation logs `eval_<name>_loss`, one row per set
    "sft_two_evals": {"trainer": "sft", "lengths": [4, 6, 3, 8, 5] * 4, "eval_lengths": {"alpaca": [5] * 13,
                                                                                        "identity": [4] * 9},
                      "args": {"per_device_train_batch_size": 2, "gradient_accumulation_steps": 1,
                               "num_train_epochs": 1, "logging_steps": 2, "eval_strategy": "steps", "eval_steps": 4,
                               "per_device_eval_batch_size": 4, "save_strategy": "steps", "save_steps": 5}},
    # failed runs: TRL's and the Trainer's refusals, on the console as a script prints them
    "failed_grpo_divisible": {"trainer": "grpo", "num_samples": 8, "args": {
        "per_device_train_batch_size": 4, "gradient_accumulation_steps": 2, "num_generations": 3}},
    "failed_grpo_one_generation": {"trainer": "grpo", "num_samples": 8, "args": {
        "per_device_train_batch_size": 2, "gradient_accumulation_steps": 1, "num_generations": 1}},
    "failed_grpo_no_round": {"trainer": "grpo", "num_samples": 1, "args": {
        "per_device_train_batch_size": 4, "gradient_accumulation_steps": 1, "num_generations": 2}},
    # a failure StepLab has no rule for (sampling at temperature 0): said as StepLab's gap
    "failed_grpo_temperature": {"trainer": "grpo", "num_samples": 8, "args": {
        "per_device_train_batch_size": 4, "gradient_accumulation_steps": 1, "num_generations": 4,
        "temperature": 0.0}},
    "failed_grpo_both_sizes": {"trainer": "grpo", "num_samples": 8, "args": {
        "per_device_train_batch_size": 2, "gradient_accumulation_steps": 1, "num_generations": 2,
        "steps_per_generation": 2, "generation_batch_size": 4}},
}

COMMAND = {"grpo": "grpo", "dpo": "dpo", "sft": "sft"}


def config_yaml(case: dict) -> str:
    """The run's arguments as a TRL CLI config (`trl <command> --config config.yaml`)."""
    lines = [f"# trl {COMMAND[case['trainer']]} --config config.yaml (recorded by scripts/record_trl_runs.py)",
             "model_name_or_path: tiny-qwen2", "output_dir: out", "report_to: none", "use_cpu: true", "seed: 0"]
    lines += [f"{key}: {json.dumps(value)}" for key, value in case["args"].items()]
    return "\n".join(lines) + "\n"


def record(name: str, case: dict) -> None:
    target = OUT / name
    shutil.rmtree(target, ignore_errors=True)
    answer = kept_run(case, target)
    print(name, json.dumps(answer)[:300])
    (target / "config.yaml").write_text(config_yaml(case), encoding="utf-8")
    (target / "recorded.json").write_text(json.dumps(answer, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    for run_name in sys.argv[1:] or RUNS:
        record(run_name, RUNS[run_name])
