"""`python -m steplab plan --set trainer_class=...`: TRL's trainers through the CLI (the rules themselves are held
to real TRL runs in `tests/test_trl_vs_steplab.py`)."""

from __future__ import annotations

from test_cli import cli

from steplab.cli import main
from steplab.trainer.setup import setup_from_mapping
from steplab.trl.grpo import plan_grpo

GRPO = ["--set", "trainer_class=GRPOTrainer", "--set", "num_samples=5498", "--set", "per_device_train_batch_size=8",
        "--set", "world_size=7", "--set", "gradient_accumulation_steps=4", "--set", "num_generations=8"]
GRPO_KEYS = {"trainer_class", "num_examples", "num_generations", "steps_per_generation", "generation_batch_size",
             "num_iterations", "unique_prompts_per_round", "rounds_per_epoch", "prompts_dropped_per_epoch",
             "micro_batches_per_round", "generation_rounds", "completions_per_update", "update_rounds"}


def test_grpo_json_keeps_every_field_and_adds_the_rounds(capsys):
    code, trainer, _ = cli("plan", *GRPO[2:10], capsys=capsys)  # the same setup under the plain Trainer
    assert code == 0
    code, grpo, _ = cli("plan", *GRPO, "--lr-per-step", capsys=capsys)
    assert code == 0
    assert set(trainer) - {"learning_rates"} <= set(grpo)
    assert GRPO_KEYS <= set(grpo)
    setup = setup_from_mapping({"num_samples": 5498, "per_device_train_batch_size": 8, "world_size": 7,
                                "gradient_accumulation_steps": 4, "learning_rate": 1e-6, "logging_steps": 10,
                                "trainer_class": "GRPOTrainer", "num_generations": 8})[0]
    plan = plan_grpo(setup)
    assert grpo["max_steps"] == plan.trainer.max_steps != trainer["max_steps"]
    assert grpo["generation_rounds"] == plan.generation_rounds
    assert grpo["total_train_batch_size"] == grpo["completions_per_update"] == 8 * 4 * 7
    assert grpo["num_samples"] == grpo["num_examples"] == 5498
    assert len(grpo["learning_rates"]) == len(grpo["update_rounds"]) == plan.trainer.optimizer_steps
    assert grpo["learning_rates"][0] == 1e-6  # GRPOConfig's default, not TrainingArguments' 5e-5


def test_trl_refusal_exits_3_with_trl_words(capsys):
    code, result, _ = cli("plan", *GRPO, "--set", "num_generations=6", capsys=capsys)
    assert code == 3
    assert result == {"trainer_error": {"type": "ValueError", "message":
                      "generation_batch_size (224) must be divisible by num_generations (6)."}}
    code, result, _ = cli("plan", *GRPO, "--set", "steps_per_generation=2", "--set", "generation_batch_size=112",
                          capsys=capsys)
    assert code == 3 and "can not be both configured" in result["trainer_error"]["message"]


def test_bad_trl_values_exit_2_naming_the_field(capsys):
    for setting, field in (("num_iterations=0", "num_iterations"), ("trainer_class=PPOTrainer", "trainer_class"),
                           ("packing=true", "packing")):
        code = main(["plan", "--set", "trainer_class=SFTTrainer", "--set", "num_samples=10", "--set", setting])
        _, err = capsys.readouterr()
        assert code == 2 and err.startswith(f"error: {field}:"), err


def test_dpo_json_says_sequences_per_micro_batch(capsys):
    code, result, _ = cli("plan", "--set", "trainer_class=DPOTrainer", "--set", "num_samples=100",
                          "--set", "per_device_train_batch_size=4", "--lr-per-step", capsys=capsys)
    assert code == 0
    assert result["sequences_per_micro_batch"] == 8 and result["learning_rates"][0] == 1e-6
