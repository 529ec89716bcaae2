"""A run explained (`python -m steplab explain`, `steplab.runfiles`): the nine real LLaMA-Factory runs reconcile on
every field given their YAML and dataset files; real runs of every transformers release reconcile and are told
apart; copies with a planted difference get the right first cause; each pattern on real or constructed logs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from steplab.cli import main
from steplab.runfiles.explain import explain_entries
from steplab.runfiles.explanation import Explanation
from steplab.runfiles.gather import path_entries, text_entry
from steplab.runfiles.patterns import grad_spikes, staircase, train_loss_from_rows
from steplab.runfiles.rows import rows_from_dicts

DATA = Path(__file__).resolve().parent / "data"
RUNS_DIR = DATA / "llamafactory-runs"
ARTEFACTS = RUNS_DIR / "artefacts"
RELEASES = DATA / "release-runs"
SUMMARY = json.loads((ARTEFACTS / "summary.json").read_text())
RUNS = sorted(SUMMARY)
CASES = sorted((p.parent.name, p.name) for p in RELEASES.glob("*/*") if p.is_dir())


def cli_json(capsys, *argv: str) -> tuple[int, dict]:
    code = main(["explain", *argv])
    out = capsys.readouterr().out
    return code, json.loads(out) if out else {}


def explain_folder(folder: Path, config: Path | None = None, base: Path | None = None, **kwargs) -> Explanation:
    problems: list = []
    entries = path_entries([folder], problems)
    given = (str(config), config.read_text()) if config else None
    return explain_entries(entries, problems, config=given, base=base, **kwargs)


def fields(result: dict) -> dict[str, dict]:
    return {f["name"]: f for f in result["fields"]}


# --------------------------------------------------------------------------- the nine shared runs


@pytest.mark.parametrize("run", RUNS)
def test_every_shared_run_agrees_on_every_field(run, capsys, monkeypatch):
    monkeypatch.chdir(RUNS_DIR)  # the YAML's dataset_dir and model are relative to where llamafactory-cli ran
    code, result = cli_json(capsys, f"artefacts/{run}", "--config", f"artefacts/{run}/config.yaml")
    assert code == 0
    assert set(result) == {"setup", "fields", "findings", "causes", "not_modelled", "unknown_keys", "notes"}
    assert result["unknown_keys"] == []  # every key of a real LLaMA-Factory run's YAML is in the census
    config = (RUNS_DIR / "artefacts" / run / "config.yaml").read_text()
    assert all(f"\n{item['key']}:" in config for item in result["not_modelled"])
    table = fields(result)
    assert [name for name, f in table.items() if f["agree"] is not True] == []
    summary = SUMMARY[run]
    block = summary["console"]
    assert table["num_examples"]["run"] == int(block["num_examples"].replace(",", ""))
    assert table["total_optimization_steps"]["steplab"] == summary["state"]["max_steps"]
    assert table["steps_run"]["steplab"] == summary["state"]["global_step"]
    assert table["final_epoch"]["steplab"] == summary["state"]["epoch"]
    assert table["save_steps"]["run"] == [s for s in summary["checkpoints"] if run != "resume_same" or s > 40]
    assert table["logging_steps"]["run"] == summary["train_log_steps"]
    assert set(table) >= {"num_examples", "num_epochs", "per_device_train_batch_size", "total_train_batch_size",
                          "gradient_accumulation_steps", "total_optimization_steps", "steps_run", "final_epoch",
                          "warmup_steps", "logging_steps", "save_steps", "learning_rates", "epochs_logged"}
    assert result["setup"]["trainer"]["value"] == "hf-5.6"  # the runs' transformers 5.6.0 (LLaMA-Factory 0.9.5's newest)
    for field in result["fields"]:
        assert field["source"] is None or field["source"].startswith(f"{run}/")


def test_the_sample_count_comes_from_the_dataset_stage_and_the_processes_from_the_log(capsys, monkeypatch):
    monkeypatch.chdir(RUNS_DIR)
    _, packed = cli_json(capsys, "artefacts/packing", "--config", "artefacts/packing/config.yaml")
    assert packed["setup"]["num_samples"] == {"value": 400,
                                              "source": "artefacts/packing/config.yaml (dataset stage)"}
    _, two = cli_json(capsys, "artefacts/two_processes", "--config", "artefacts/two_processes/config.yaml")
    assert two["setup"]["world_size"]["value"] == 2
    assert two["setup"]["world_size"]["source"].startswith("two_processes/console.log:")
    _, val = cli_json(capsys, "artefacts/course_val", "--config", "artefacts/course_val/config.yaml")
    assert fields(val)["eval_examples"] == {**fields(val)["eval_examples"], "run": 100, "steplab": 100, "agree": True}
    assert fields(val)["eval_steps"]["run"] == summary_eval_steps("course_val")


def summary_eval_steps(run: str) -> list[int]:
    return SUMMARY[run]["eval_at_steps"]


def test_the_cli_exit_codes(capsys, tmp_path):
    (tmp_path / "weights.bin").write_bytes(bytes(100))
    assert main(["explain", str(tmp_path)]) == 2
    assert "error:" in capsys.readouterr().err
    assert main(["explain", str(tmp_path / "nowhere")]) == 2
    assert "does not exist" in capsys.readouterr().err
    code, result = cli_json(capsys, str(ARTEFACTS / "course" / "trainer_state.json"))
    assert code == 0 and fields(result)["steps_run"]["run"] == 150  # a state alone is read
    assert main(["explain", str(ARTEFACTS / "course"), "--config", str(tmp_path / "none.yaml")]) == 2


def test_the_cli_as_a_process_writes_the_json(tmp_path):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "steplab", "explain", "artefacts/dpo", "--config",
                           "artefacts/dpo/config.yaml"], cwd=RUNS_DIR, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert all(f["agree"] is True for f in result["fields"])
    nothing = subprocess.run([sys.executable, "-m", "steplab", "explain", str(tmp_path)], capture_output=True,
                             timeout=120)
    assert nothing.returncode == 2 and nothing.stdout == b""


# --------------------------------------------------------------------------- real runs of every release


@pytest.mark.parametrize(("profile", "case"), CASES, ids=[f"{p}-{c}" for p, c in CASES])
def test_real_runs_of_every_release_reconcile_and_name_their_release(profile, case):
    folder = RELEASES / profile / case
    explanation = explain_folder(folder, folder / "config.yaml")
    disagree = [(c.name, c.run, c.steplab) for c in explanation.reconciliation.checks if c.agree is False]
    assert disagree == []
    assert profile in explanation.planning.tied and explanation.planning.profile.value in explanation.planning.tied
    assert len([c for c in explanation.reconciliation.checks if c.agree]) >= 12


@pytest.mark.parametrize(("profile", "case"), CASES, ids=[f"{p}-{c}" for p, c in CASES])
def test_real_runs_without_their_yaml_still_reconcile_with_themselves(profile, case):
    explanation = explain_folder(RELEASES / profile / case)
    assert [c.name for c in explanation.reconciliation.checks if c.agree is False] == []
    assert profile in explanation.planning.tied


def test_the_four_x_releases_are_told_apart_by_their_numbers():
    """`4.46`–`4.51` round the updates per epoch down, `4.57` up; `4.46` logs the next update's rate."""
    assert explain_folder(RELEASES / "hf-4.57" / "plain").planning.tied == ("hf-4.57",)
    assert explain_folder(RELEASES / "hf-4.51" / "plain", RELEASES / "hf-4.51" / "plain" / "config.yaml"
                          ).planning.tied == ("hf-4.51",)
    assert explain_folder(RELEASES / "hf-4.46" / "plain", RELEASES / "hf-4.46" / "plain" / "config.yaml"
                          ).planning.tied == ("hf-4.46",)


@pytest.mark.oracle
def test_a_live_run_of_the_installed_release_reconciles(tmp_path):
    from release_runs import record_case

    folder = record_case("hf-5", "resume_changed", tmp_path / "run")
    explanation = explain_folder(folder, folder / "config.yaml")
    assert [c.name for c in explanation.reconciliation.checks if c.agree is False] == []
    assert explanation.planning.profile.value == "hf-5"
    codes = [f.code for f in explanation.findings]
    assert "resume_accumulation" in codes and "resume_intervals" in codes


# --------------------------------------------------------------------------- planted differences


def _copy(run: str, tmp_path: Path) -> Path:
    target = tmp_path / run
    shutil.copytree(ARTEFACTS / run, target)
    return target


def first_cause(explanation: Explanation) -> str:
    return explanation.causes[0].code


def test_a_changed_accumulation_is_the_first_cause(tmp_path):
    folder = _copy("course", tmp_path)
    config = folder / "config.yaml"
    config.write_text(config.read_text().replace("gradient_accumulation_steps: 8", "gradient_accumulation_steps: 4"))
    explanation = explain_folder(folder, config, RUNS_DIR)
    assert first_cause(explanation) == "accumulation"
    assert explanation.findings[0].code == "accumulation"
    table = explanation.reconciliation.by_name()
    assert (table["total_optimization_steps"].run, table["total_optimization_steps"].steplab) == (150, 300)
    assert table["total_optimization_steps"].why[0].code == "accumulation"
    assert "gradient_accumulation_steps" in explanation.setup.conflicts()


def test_two_processes_not_said_are_the_first_cause(tmp_path):
    folder = _copy("two_processes", tmp_path)
    (folder / "console.log").unlink()  # nothing says the world size any more
    explanation = explain_folder(folder, folder / "config.yaml", RUNS_DIR)
    assert first_cause(explanation) == "processes"
    cause = explanation.causes[0]
    assert cause.reproduces and "total_optimization_steps" in cause.fixes
    assert "2" in cause.message.en and cause.lesson == "several-gpus"


def test_a_resume_with_more_epochs_given_the_old_yaml_is_the_first_cause(tmp_path):
    folder = _copy("resume_more_epochs", tmp_path)
    config = folder / "config.yaml"
    config.write_text(config.read_text().replace("num_train_epochs: 5.0", "num_train_epochs: 3.0"))
    explanation = explain_folder(folder, config, RUNS_DIR)
    assert first_cause(explanation) == "resume"
    assert "num_train_epochs: 5" in explanation.causes[0].message.en


def test_rows_dropped_by_the_pipeline_are_explained(tmp_path):
    base = tmp_path / "base"
    shutil.copytree(RUNS_DIR / "assets", base / "assets")
    rows = json.loads((base / "assets/data/alp1600.json").read_text())
    rows += [{"instruction": f"w{i}", "input": "", "output": None} for i in range(10)]  # LLaMA-Factory drops these
    (base / "assets/data/alp1600.json").write_text(json.dumps(rows))
    folder = _copy("course", tmp_path)
    explanation = explain_folder(folder, folder / "config.yaml", base)
    assert all(c.agree for c in explanation.reconciliation.checks)
    dropped = next(f for f in explanation.findings if f.code == "rows_dropped")
    assert "10 of your 1,610 rows" in dropped.message.en


def test_a_dataset_with_more_rows_than_the_run_trained_on_has_rows_dropped_first(tmp_path):
    base = tmp_path / "base"
    shutil.copytree(RUNS_DIR / "assets", base / "assets")
    rows = json.loads((base / "assets/data/alp1600.json").read_text())
    (base / "assets/data/alp1600.json").write_text(json.dumps(rows + rows[:10]))
    folder = _copy("course", tmp_path)
    explanation = explain_folder(folder, folder / "config.yaml", base)
    assert first_cause(explanation) == "rows_dropped"
    assert explanation.reconciliation.by_name()["num_examples"].why[0].code == "rows_dropped"


def test_nine_hundred_examples_ten_epochs_why_560_steps():
    """The issue's question: 900 examples, batch 2, accumulation 8, 10 epochs: 4.46–4.51 round 56.25 down."""
    block = ("***** Running training *****\n  Num examples = 900\n  Num Epochs = 10\n"
             "  Instantaneous batch size per device = 2\n"
             "  Total train batch size (w. parallel, distributed & accumulation) = 16\n"
             "  Gradient Accumulation steps = 8\n  Total optimization steps = 560\n")
    explanation = explain_entries([text_entry("console.log", block)])
    assert explanation.planning.tied == ("hf-4.51", "hf-4.46")
    assert all(c.agree is not False for c in explanation.reconciliation.checks)
    with_yaml = explain_entries([text_entry("console.log", block)], config=("c.yaml", "\n".join([
        "per_device_train_batch_size: 2", "gradient_accumulation_steps: 8", "num_train_epochs: 10",
        "num_samples: 900"])), trainer="hf-5")
    assert first_cause(with_yaml) == "release"
    assert with_yaml.reconciliation.by_name()["total_optimization_steps"].steplab == 570


# --------------------------------------------------------------------------- patterns


def test_train_loss_is_the_weighted_mean_of_the_logged_losses_and_a_resume_divides_by_all_steps():
    course = explain_folder(ARTEFACTS / "course")
    rows = course.reconciliation.rows
    assert train_loss_from_rows(rows, 150, None) == pytest.approx(5.343258285522461, rel=1e-12)
    resumed = explain_folder(ARTEFACTS / "resume_same")
    assert train_loss_from_rows(resumed.reconciliation.rows, 150, 40) == pytest.approx(3.9077319208780925,
                                                                                         rel=1e-12)
    assert "steps 41 to 150" in next(f for f in resumed.findings if f.code == "train_loss").message.en


def test_findings_of_the_resumed_runs():
    changed = explain_folder(ARTEFACTS / "resume_changed_batch", ARTEFACTS / "resume_changed_batch" / "config.yaml",
                             RUNS_DIR)
    said = {f.code: f.message.en for f in changed.findings}
    assert "skipped 0 epochs and then 160 micro-batches" in said["resume"]
    assert "accumulation 8 (320 micro-batches)" in said["resume_accumulation"]
    assert "`save_steps: 10`" in said["resume_intervals"] and "used 20" in said["resume_intervals"]
    assert changed.planning.earlier.changed == ("gradient_accumulation_steps",)
    more = explain_folder(ARTEFACTS / "resume_more_epochs", ARTEFACTS / "resume_more_epochs" / "config.yaml",
                          RUNS_DIR)
    assert more.planning.earlier.plan.max_steps == 150 and more.planning.earlier.changed == ("num_train_epochs",)
    assert "built again for 250 steps" in {f.code: f.message.en for f in more.findings}["resume_schedule"]
    finished = explain_folder(RELEASES / "hf-5" / "resume_finished", RELEASES / "hf-5" / "resume_finished" /
                              "config.yaml")
    assert "nothing was left to train" in {f.code: f.message.en for f in finished.findings}["resume_finished"]


def test_streaming_epochs_and_the_last_row_and_the_evaluation_after_training():
    streaming = {f.code: f.message.en for f in explain_folder(ARTEFACTS / "streaming").findings}
    assert "9,223,372,036,854,775,807" in streaming["streaming_epochs"]
    assert "has no loss" in streaming["last_row_without_loss"]
    val = {f.code: f.message.en for f in explain_folder(ARTEFACTS / "course_val").findings}
    assert "5.3612" in val["eval_after_training"]


@pytest.mark.parametrize(("yaml_lines", "trainer", "key"), [
    ([], None, "no_data"),
    (["val_size: 0.1", "eval_strategy: 'no'"], None, "strategy_no"),
    (["val_size: 0.1", "eval_strategy: steps", "eval_steps: 100000"], "hf-4.57", "too_rare"),
    (["val_size: 0.1", "eval_strategy: steps", "eval_steps: 100000"], "hf-5.6", "unexplained"),  # 5.x: at the end
])
def test_no_eval_loss_says_why(yaml_lines, trainer, key):
    config = (ARTEFACTS / "course" / "config.yaml").read_text() + "\n".join(yaml_lines) + "\n"
    problems: list = []
    explanation = explain_entries(path_entries([ARTEFACTS / "course" / "trainer_state.json"], problems), problems,
                                  config=("c.yaml", config), base=RUNS_DIR, trainer=trainer)
    finding = next(f for f in explanation.findings if f.code == "no_eval_loss")
    assert finding.message.key == f"runfiles.finding.no_eval.{key}"


def _rows(losses, grads=None):
    return rows_from_dicts([{"step": 5 * (i + 1), "loss": loss, "grad_norm": (grads or [1.0] * len(losses))[i],
                             "epoch": (i + 1) / 10} for i, loss in enumerate(losses)], "x")


def test_a_loss_staircase_at_epoch_starts_is_found_and_a_smooth_curve_is_not():
    smooth = [2.0 - 0.01 * i for i in range(30)]
    stairs = [2.0 - 0.001 * i - 0.3 * (i >= 10) - 0.3 * (i >= 20) for i in range(30)]
    assert staircase(_rows(stairs), [50, 100]) == [50, 100]
    assert staircase(_rows(smooth), [50, 100]) == []


def test_grad_norm_spikes():
    grads = [0.5] * 20
    grads[7] = 9.0
    assert grad_spikes(_rows([1.0] * 20, grads)).tolist() == [40]
    assert grad_spikes(_rows([1.0] * 20)).tolist() == []


def test_record_is_plain_json_in_either_language():
    explanation = explain_folder(ARTEFACTS / "resume_changed_batch", ARTEFACTS / "resume_changed_batch" /
                                 "config.yaml", RUNS_DIR)
    for lang in ("en", "zh"):
        record = explanation.record(lang)
        assert json.loads(json.dumps(record)) == record
    assert all(isinstance(v, (int, float)) and not isinstance(v, np.generic)
               for f in explanation.record()["fields"] for v in ([f["run"]] if not isinstance(f["run"], list)
                                                                   else f["run"]) if v is not None)


CONSOLES = sorted([*ARTEFACTS.glob("*/console.log"), *RELEASES.glob("*/*/console.log")])


@pytest.mark.parametrize("path", CONSOLES, ids=[f"{p.parent.parent.name}-{p.parent.name}" for p in CONSOLES])
def test_a_console_alone_reconciles(path):
    """Pasted alone, a console still says its counts, its checkpoints and its rhythm: nothing disagrees, and the
    release it names (or the releases that count it alike) is the one that wrote it."""
    explanation = explain_entries([text_entry("console.log", path.read_text())])
    assert [c.name for c in explanation.reconciliation.checks if c.agree is False] == []
    assert sum(1 for c in explanation.reconciliation.checks if c.agree) >= 5
    profile = path.parent.parent.name if path.parent.parent.name.startswith("hf-") else "hf-5.6"  # LLaMA-Factory's runs
    assert profile in explanation.planning.tied


def test_llamaboards_training_args_yaml_is_the_runs_config(tmp_path):
    """LlamaBoard writes the run's arguments as `training_args.yaml` in the output folder; a YAML elsewhere (a
    copy the user edited since) is named as not used."""
    folder = _copy("course", tmp_path)
    (folder / "config.yaml").rename(folder / "training_args.yaml")
    (folder / "drafts").mkdir()
    (folder / "drafts" / "next.yaml").write_text("gradient_accumulation_steps: 4\n")
    explanation = explain_folder(folder, base=RUNS_DIR)
    assert explanation.files.config[0] == "course/training_args.yaml"
    assert all(c.agree is not False for c in explanation.reconciliation.checks)
    said = {f.code: f.message.en for f in explanation.findings}
    assert "course/drafts/next.yaml" in said["configs_not_used"]
