"""TRL's runs and failed runs explained from their own files: real TRL 1.16.0 runs on CPU (`tests/data/trl-runs/`,
re-recorded by `scripts/record_trl_runs.py`; `recorded.json` holds what the worker saw), and fresh runs of
generated GRPO setups trained here by the real TRL."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from steplab.runfiles.explain import explain_entries
from steplab.runfiles.failure import TracebackReader
from steplab.runfiles.gather import path_entries

RUNS = Path(__file__).parent / "data" / "trl-runs"
TRAINED = {"grpo": "GRPOTrainer", "grpo_iterations": "GRPOTrainer", "dpo": "DPOTrainer", "sft_packing": "SFTTrainer"}
FAILED = ("failed_grpo_divisible", "failed_grpo_one_generation", "failed_grpo_both_sizes")


def explain(folder: Path, with_config: bool = True):
    problems: list = []
    config = None
    if with_config and (folder / "config.yaml").exists():
        config = ("config.yaml", (folder / "config.yaml").read_text(encoding="utf-8"))
    entries = [e for e in path_entries([folder], problems) if not e.path.endswith(("config.yaml", "recorded.json"))]
    return explain_entries(entries, problems, config=config)


def recorded(name: str) -> dict:
    return json.loads((RUNS / name / "recorded.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(TRAINED))
@pytest.mark.parametrize("with_config", [True, False])
def test_a_trl_run_reconciles_on_every_field_with_its_trainer(name: str, with_config: bool) -> None:
    ex = explain(RUNS / name, with_config)
    assert ex.setup.value("trainer_class") == TRAINED[name]
    checks = ex.reconciliation.by_name()
    compared = [c for c in checks.values() if c.agree is not None]
    assert len(compared) >= 8
    assert [c.name for c in compared if not c.agree] == []
    assert checks["steps_run"].run == recorded(name)["optimizer_steps"]
    codes = [f.code for f in ex.findings]
    assert "agrees" in codes and "trainer_class" in codes
    assert ("dpo_pairs" in codes) == (name == "dpo")
    assert ("sft_packed" in codes) == (name == "sft_packing" and with_config)  # packing is said by the config


@pytest.mark.parametrize("name", ["grpo", "grpo_iterations"])
def test_grpo_generation_rounds_are_the_real_ones(name: str) -> None:
    ex = explain(RUNS / name)
    rounds = ex.reconciliation.by_name()["generation_rounds"]
    assert rounds.steplab == recorded(name)["generation_rounds"] > 0
    assert ex.planning.planned.grpo is not None
    assert any(f.code == "grpo_rounds" for f in ex.findings)


def test_the_plain_trainer_plan_would_not_fit_a_grpo_run() -> None:
    """The run's files without any TRL key: the Trainer's plan of B completions per micro-batch disagrees."""
    ex = explain(RUNS / "grpo", with_config=True)
    assert ex.setup.values["trainer_class"].source.file == "config.yaml"
    from steplab.runfiles.planning import plan_setup

    plain = plan_setup(ex.setup, ex.planning.profile.value, trainer_class="Trainer")
    assert plain.max_steps != ex.reconciliation.by_name()["total_optimization_steps"].run


@pytest.mark.parametrize("name", FAILED)
def test_a_failed_run_is_named_and_matched_to_steplabs_refusal(name: str) -> None:
    ex = explain(RUNS / name)
    real = recorded(name)
    failure = ex.files.failure
    assert failure is not None
    assert (failure.error_type, failure.message) == (real["error_type"], real["error"])
    assert failure.raised_at is not None and failure.raised_at.file.startswith("trl/")
    codes = [f.code for f in ex.findings]
    assert codes[:2] == ["failed", "failure_matched"]
    assert ex.planning.refusal.message == real["error"]


def test_a_run_with_no_round_is_matched_to_steplabs_refusal_under_one_round() -> None:
    """One prompt, rounds of two: the Trainer's empty-dataloader refusal; no file says N, so StepLab says it refuses
    the same below one round's prompts."""
    ex = explain(RUNS / "failed_grpo_no_round")
    assert ex.files.failure.raised_at.file == "transformers/trainer.py"
    codes = [f.code for f in ex.findings]
    assert codes[:2] == ["failed", "failure_matched_if"]
    assert "fewer than 2" in ex.findings[1].message.en


def test_a_failed_run_steplab_cannot_check_says_why() -> None:
    """The same console without its config: no trainer class, no sizes, nothing to hold the error against."""
    from steplab.runfiles.gather import text_entry

    ex = explain_entries([text_entry("console.log", (RUNS / "failed_grpo_no_round" / "console.log").read_text())])
    assert [f.code for f in ex.findings][:2] == ["failed", "failure_unchecked"]


def test_a_real_failure_steplab_has_no_rule_for_is_said_as_its_gap() -> None:
    """GRPO sampling at temperature 0: transformers' generation refuses it mid-training (the traceback follows a
    progress bar on the same line); StepLab plans the setup, so it says the gap is its own."""
    ex = explain(RUNS / "failed_grpo_temperature")
    real = recorded("failed_grpo_temperature")
    assert (ex.files.failure.error_type, ex.files.failure.message) == (real["error_type"], real["error"])
    assert [f.code for f in ex.findings][:2] == ["failed", "failure_gap"]


def test_a_failure_steplab_would_not_refuse_is_said_as_its_gap() -> None:
    """The GRPO run's own files, with a traceback StepLab has no rule for appended as a console's end."""
    folder = RUNS / "grpo"
    console = (folder / "console.log").read_text(encoding="utf-8")
    tail = ('Traceback (most recent call last):\n  File "/x/site-packages/torch/nn/modules/module.py", line 1, in f\n'
            "    raise\ntorch.OutOfMemoryError: CUDA out of memory.\n")
    from steplab.runfiles.gather import text_entry

    entries = [text_entry("console.log", console + tail)]
    ex = explain_entries(entries, [], config=("config.yaml", (folder / "config.yaml").read_text(encoding="utf-8")))
    codes = [f.code for f in ex.findings]
    assert codes[:2] == ["failed", "failure_gap"]
    assert ex.files.failure.short_type == "OutOfMemoryError"


def test_tracebacks_of_torchrun_and_chained_exceptions() -> None:
    reader = TracebackReader("log")
    lines = ["[rank0]: Traceback (most recent call last):", '[rank0]:   File "/a/b.py", line 3, in one',
             "[rank0]:     x()", "[rank0]: KeyError: 'a'", "", "During handling of the above exception, another "
             "exception occurred:", "", "Traceback (most recent call last):",
             '  File "/usr/lib/python3/site-packages/transformers/trainer.py", line 9, in train',
             "    ^^^^", "ValueError: bad", "more words"]
    for number, line in enumerate(lines, start=1):
        reader.feed(number, line)
    assert reader.failure.error_type == "ValueError" and reader.failure.message == "bad"
    assert str(reader.failure.raised_at) == "transformers/trainer.py:9 (train)"
    assert reader.failure.source.line == 11


def test_generated_grpo_runs_trained_by_real_trl_reconcile(tmp_path: Path) -> None:
    """Generated GRPO setups, trained by TRL 1.16.0 on CPU, explained from the files they leave."""
    from tests.trl_env import kept_run

    rng = random.Random(38)
    for index in range(2):
        batch, accumulation = rng.choice([2, 4]), rng.choice([1, 2, 3])
        generations = rng.choice([g for g in (2, 4) if (batch * accumulation) % g == 0])
        args = {"per_device_train_batch_size": batch, "gradient_accumulation_steps": accumulation,
                "num_generations": generations, "num_iterations": rng.choice([1, 2]), "num_train_epochs": 1,
                "logging_steps": rng.choice([1, 2, 3]), "save_strategy": "steps", "save_steps": rng.choice([3, 4])}
        case = {"trainer": "grpo", "num_samples": rng.randint(5, 14), "args": args}
        folder = tmp_path / f"run{index}"
        answer = kept_run(case, folder)
        assert answer["status"] == "ok", answer
        config = "".join(f"{key}: {json.dumps(value)}\n" for key, value in args.items())
        (folder / "config.yaml").write_text(config, encoding="utf-8")
        ex = explain(folder)
        checks = ex.reconciliation.by_name()
        assert [c.name for c in checks.values() if c.agree is False] == [], case
        assert checks["generation_rounds"].steplab == answer["generation_rounds"], case
        assert checks["steps_run"].run == answer["optimizer_steps"]


LLAMAFACTORY = Path(__file__).parent / "data" / "llamafactory-runs" / "artefacts"


def test_llamafactory_consoles_failed_and_stopped_are_read() -> None:
    """Real LLaMA-Factory 0.9.5 consoles (transformers 5.6.0): a streaming run that died in the data pipeline
    (`StopIteration`, no message), and a run stopped by Ctrl-C mid-training."""
    from steplab.runfiles.gather import text_entry

    streaming = LLAMAFACTORY / "streaming"
    ex = explain_entries([text_entry("console.log", (streaming / "console-failed-dataloader_num_workers0.log")
                                     .read_text(encoding="utf-8"))])
    failure = ex.files.failure
    assert (failure.error_type, failure.message) == ("StopIteration", "")
    assert str(failure.raised_at) == "llamafactory/data/converter.py:410 (align_dataset)"
    assert ex.findings[0].message.en.startswith("The run failed: `StopIteration`, raised in")
    stopped = explain_entries([text_entry("console.log", (LLAMAFACTORY / "resume_same" / "console-part1.log")
                                          .read_text(encoding="utf-8"))])
    assert stopped.files.failure.short_type == "KeyboardInterrupt"
    assert [f.code for f in stopped.findings][:2] == ["failed", "failure_stopped"]


def test_an_earlier_parts_error_is_not_the_finished_runs() -> None:
    """The real run stopped at step 13 and resumed: its first console's `KeyboardInterrupt` is no failure of
    the run, which finished."""
    ex = explain(RUNS / "sft_resumed")
    assert ex.files.failure is None and "failed" not in [f.code for f in ex.findings]
    assert any(c.failure is not None for c in ex.files.earlier_consoles)
