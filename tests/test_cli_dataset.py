"""`python -m steplab plan CONFIG.yaml` without `num_samples`: the datasets give it, as in the real runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from steplab.cli import main

RUNS = Path(__file__).parent / "data" / "llamafactory-runs"
REAL = {run["case"]: run["real"] for run in json.loads((RUNS / "real-runs.json").read_text())["runs"]}


def plan(capsys, *args: str) -> tuple[int, dict | None, str]:
    code = main(["plan", *args])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else None), err


@pytest.mark.parametrize("case", sorted(REAL))
def test_each_real_run_through_the_cli_from_its_folder(case, capsys, monkeypatch):
    monkeypatch.chdir(RUNS)  # llamafactory-cli ran from here: dataset_dir and the model are relative to it
    code, result, err = plan(capsys, f"configs/{case}.yaml")
    real = REAL[case]
    assert code == 0, err
    assert (result["num_samples"], result["num_eval_samples"]) == (real["num_examples"], real["eval_num_examples"])
    assert result["num_samples_source"] == "dataset"
    assert result["max_steps"] == real["total_optimization_steps"] == result["optimizer_steps"]
    assert result["num_update_steps_per_epoch"] == real["num_update_steps_per_epoch"]
    assert result["eval_at_steps"] == real["eval_at_steps"] and result["save_at_steps"] == real["save_at_steps"]
    assert result["dataset_stages"][0]["rows_in"] > 0


def test_a_given_count_wins_and_the_bypassed_keys_are_named(capsys, monkeypatch):
    monkeypatch.chdir(RUNS)
    code, result, _ = plan(capsys, "configs/b_val01.yaml", "--set", "num_samples=640")
    assert code == 0 and result["num_samples"] == 640 and result["num_samples_source"] == "given"
    warning = next(w for w in result["warnings"] if w["code"] == "num_samples_bypasses_datasets")
    assert "val_size" in warning["message"] and "dataset" in warning["message"]


def test_row_counts_plan_without_the_files_and_say_so(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no dataset files here
    code, result, _ = plan(capsys, str(RUNS / "configs" / "b_val01.yaml"), "--dataset-rows", "alp1000=2000")
    assert code == 0 and (result["num_samples"], result["num_eval_samples"]) == (1800, 200)
    assert any("assumed" in line for line in result["dataset_assumptions"])
    assert result["dataset_stages"][0]["note"].startswith("`alp1000`: 2,000 rows (the count given")


def test_missing_files_exit_2_naming_the_path_and_the_fix(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, result, err = plan(capsys, str(RUNS / "configs" / "d_packing.yaml"))
    assert code == 2 and result is None
    assert "dataset_info.json" in err and "--dataset-rows" in err and "Traceback" not in err
    (tmp_path / "assets" / "data").mkdir(parents=True)
    (tmp_path / "assets" / "data" / "dataset_info.json").write_text('{"short1600": {"file_name": "short1600.json"}}')
    code, _, err = plan(capsys, str(RUNS / "configs" / "d_packing.yaml"))
    assert code == 2 and "short1600" in err and "short1600.json" in err
    code, result, _ = plan(capsys, str(RUNS / "configs" / "d_packing.yaml"), "--dataset-rows", "short1600=1600")
    assert code == 0 and result["num_samples_source"] == "estimate"  # packing counts tokens: rows give a range


def test_without_a_tokenizer_the_count_is_a_labelled_range_that_holds_the_real_run(capsys, tmp_path, monkeypatch):
    """d_packing with its model folder gone: LLaMA-Factory made 400 packs and 39 steps; the CLI says a range."""
    monkeypatch.chdir(RUNS)
    yaml_path = tmp_path / "d.yaml"
    yaml_path.write_text((RUNS / "configs" / "d_packing.yaml").read_text().replace("assets/tiny-qwen2", "no-model"))
    code, result, err = plan(capsys, str(yaml_path))
    real = REAL["d_packing"]
    assert code == 0, err
    low, high = result["num_samples_range"]
    assert result["num_samples_source"] == "estimate" and result["num_samples"] == high
    assert low <= real["num_examples"] <= high
    steps_low, steps_high = result["max_steps_range"]
    assert steps_low <= real["total_optimization_steps"] <= steps_high == result["max_steps"]
    warning = next(w for w in result["warnings"] if w["code"] == "num_samples_estimated")
    assert f"{steps_high:,}" in warning["message"] and "tokenizer.json" in warning["message"]
    assert any("no-model" in line for line in result["dataset_assumptions"])  # where it looked
    yaml_path.write_text(yaml_path.read_text().replace("stage: sft", "stage: pt"))
    code, result, _ = plan(capsys, str(yaml_path), "--dataset-rows", "short1600=1600")
    assert code == 2 and result is None  # pt blocks from row counts alone: nothing bounds them


def test_bad_rows_option_exits_2(capsys):
    code, _, err = plan(capsys, str(RUNS / "configs" / "a_course.yaml"), "--dataset-rows", "alp1600=many")
    assert code == 2 and "--dataset-rows alp1600" in err
