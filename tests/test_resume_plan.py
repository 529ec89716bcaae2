"""`resume_from_checkpoint` in `plan`: the resumed part's updates, evaluations, checkpoints and logs, held to real
resumed runs of each release (`tests/release_runs.py` recorded them with the real Trainer: part 1, then a resume from
its `checkpoint-3`, with the same, more-epoch or changed arguments, or from its last checkpoint). The checkpoint's
`trainer_state.json` gives the step and the intervals the resumed run keeps; without the folder its name gives the
step (and the warning names the intervals assumed); releases that restart the count are named, not planned."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from steplab.cli import main

RUNS = Path(__file__).parent / "data" / "release-runs"
CASES = ["resume_same", "resume_more_epochs", "resume_changed", "resume_finished"]


def _real(folder: Path, step: int) -> dict:
    """What the resumed run did after `step`: its logged losses, evaluations and the checkpoints it wrote."""
    state = json.loads((folder / "trainer_state.json").read_text(encoding="utf-8"))
    rows = [row for row in state["log_history"] if row["step"] > step]
    saves = sorted(int(p.name.split("-")[1]) for p in folder.glob("checkpoint-*"))
    return {"log_at_steps": [row["step"] for row in rows if "loss" in row],
            "eval_at_steps": [row["step"] for row in rows if "eval_loss" in row],
            "save_at_steps": [s for s in saves if s > step], "global_step": state["global_step"]}


def _plan(tmp_path: Path, folder: Path, profile: str, with_state: bool, capsys) -> dict:
    config = (folder / "config.yaml").read_text(encoding="utf-8")
    checkpoint = config.split("resume_from_checkpoint:")[1].strip()
    if with_state:
        shutil.copytree(folder / Path(checkpoint).name, tmp_path / checkpoint)
    (tmp_path / "config.yaml").write_text(config, encoding="utf-8")
    code = main(["plan", str(tmp_path / "config.yaml"), "--trainer", profile])
    assert code == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("profile", ["hf-5", "hf-4.57"])
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("with_state", [True, False])
def test_the_resumed_part_is_the_real_resumed_runs(tmp_path, monkeypatch, capsys, profile, case, with_state) -> None:
    folder = RUNS / profile / case
    monkeypatch.chdir(tmp_path)
    ours = _plan(tmp_path, folder, profile, with_state, capsys)
    step = ours["resumed_from_step"]
    assert ours["resume_step_source"] == ("trainer_state" if with_state else "folder_name")
    real = _real(folder, step)
    codes = [w["code"] for w in ours["warnings"]]
    assert ("resume_intervals_assumed" in codes) == (not with_state)
    if not with_state and case == "resume_changed":  # its save_steps changed: only the state file knows the old
        assert ours["save_at_steps"] != real["save_at_steps"]
        return
    assert {k: ours[k] for k in ("log_at_steps", "eval_at_steps", "save_at_steps")} == {
        k: real[k] for k in ("log_at_steps", "eval_at_steps", "save_at_steps")}
    assert step + ours["resumed_optimizer_steps"] == real["global_step"]


@pytest.mark.parametrize("profile", ["hf-4.51", "hf-4.46"])
def test_releases_that_restart_the_count_are_named(tmp_path, monkeypatch, capsys, profile) -> None:
    monkeypatch.chdir(tmp_path)
    ours = _plan(tmp_path, RUNS / profile / "resume_same", profile, True, capsys)
    assert "resumed_from_step" not in ours
    assert "resume_not_planned" in [w["code"] for w in ours["warnings"]]


def test_a_checkpoint_with_no_step_is_named(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text("num_samples: 40\nresume_from_checkpoint: true\n", encoding="utf-8")
    assert main(["plan", "c.yaml"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "resume_not_planned" in [w["code"] for w in out["warnings"]] and "resumed_from_step" not in out
