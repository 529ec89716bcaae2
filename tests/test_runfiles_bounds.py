"""Reading within bounds: non-regular files refused, a config read no further than its cap, numbers past 64 bits
named, nothing readable said file by file, and the fast readers held to Python's own (the dict parser to
`ast.literal_eval`, the line iterator to `str.split`)."""

from __future__ import annotations

import ast
import json
import os
import random
from pathlib import Path

import pytest

from steplab.cli import main
from steplab.runfiles.console import _flat_dict, read_console
from steplab.runfiles.text import iter_lines

DATA = Path(__file__).parent / "data"
GRPO = DATA / "trl-runs" / "grpo"


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["explain", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_device_and_a_fifo_are_refused_by_name(capsys, tmp_path: Path) -> None:
    fifo = tmp_path / "console.log"
    os.mkfifo(fifo)
    code, out, err = cli(capsys, "/dev/zero", str(fifo))
    assert code == 2 and out == ""
    assert "`/dev/zero` is not a regular file" in err and f"`{fifo}` is not a regular file" in err


@pytest.mark.parametrize("config", ["/dev/zero", "big"])
def test_a_config_is_read_no_further_than_its_cap(capsys, tmp_path: Path, config: str) -> None:
    if config == "big":
        path = tmp_path / "big.yaml"
        path.write_text("# padding\n" * 300_000)  # 3 MB of a YAML
        config = str(path)
    code, _, err = cli(capsys, str(GRPO / "console.log"), "--config", config)
    assert code == 2
    assert "not a regular file" in err or "larger than a training config can be" in err


def test_a_step_past_64_bits_is_named_and_the_json_is_written(capsys, tmp_path: Path) -> None:
    state = json.loads((GRPO / "checkpoint-12" / "trainer_state.json").read_text())
    state["global_step"] = 2**70
    state["log_history"][0]["step"] = 2**80
    (tmp_path / "trainer_state.json").write_text(json.dumps(state))
    (tmp_path / "console.log").write_text((GRPO / "console.log").read_text().replace(
        "Num examples = 24", f"Num examples = {10**20:,}"))
    code, out, _ = cli(capsys, str(tmp_path))
    assert code == 0
    record = json.loads(out)
    said = " ".join(f["message"] for f in record["findings"])
    assert "22 digits" in said and "past what 64 bits hold" in said  # global_step: 2^70 has 22 digits
    assert "`num_examples`" in said and "21 digits" in said


def test_nothing_readable_names_each_file_with_its_reason(capsys, tmp_path: Path) -> None:
    (tmp_path / "trainer_log.jsonl").write_text("")
    (tmp_path / "trainer_state.json").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    code, _, err = cli(capsys, str(tmp_path))
    assert code == 2
    lines = err.splitlines()
    assert any("trainer_log.jsonl" in line and "empty" in line for line in lines)
    assert any("trainer_state.json" in line and "not text" in line for line in lines)


def _python_dict(rng: random.Random, five: bool) -> dict:
    keys = ["loss", "grad_norm", "learning_rate", "epoch", "eval_loss", "completions/mean_length", "num_tokens"]
    values = {}
    for key in rng.sample(keys, rng.randint(1, len(keys))):
        number = rng.choice([rng.uniform(-5, 5), rng.uniform(0, 1e-6), rng.randint(0, 10**6), 0.0, 1e-05])
        values[key] = f"{number:.4g}" if five else number
    return values


def test_the_dict_reader_reads_what_python_reads() -> None:
    rng = random.Random(38)
    for _ in range(2000):
        logged = _python_dict(rng, rng.random() < 0.5)
        text = str(logged)  # how the Trainer's callbacks print a dict
        assert _flat_dict(text) == ast.literal_eval(text) == logged
    assert _flat_dict("{'loss': [1, 2]}") is None and _flat_dict("{'loss': 1.0") is None


def test_lines_are_iterated_as_split_gives_them() -> None:
    rng = random.Random(7)
    for _ in range(300):
        text = "".join(rng.choice(["a", "\n", "\r", "\r\n", "{'", " "]) for _ in range(rng.randint(0, 40)))
        assert list(iter_lines(text, "x")) == text.split("\n")


def test_a_console_reads_the_same_rows_fast_and_slow() -> None:
    """The TRL run's console (GRPO's long dicts): the column store holds what the dicts said."""
    console = read_console((GRPO / "console.log").read_bytes(), "console.log")
    rows = console.rows
    assert len(rows) == 6 and rows.has("loss").all()
    assert "completions/mean_length" in rows.keys
    state = json.loads((GRPO / "checkpoint-12" / "trainer_state.json").read_text())
    logged = [row["learning_rate"] for row in state["log_history"] if "loss" in row]
    assert rows.column("learning_rate") == pytest.approx(logged, rel=5e-4)


def test_a_large_input_is_explained_apart_as_here() -> None:
    """/run's large uploads are explained in a child at the lowest priority: its answer is the same explanation
    (a failed run's refusal included, which pickles through `apart`'s reducer)."""
    import pickle
    import subprocess
    import sys

    from steplab.runfiles.apart import APART_BYTES, PACKAGE_ROOT, explain_apart, explain_given

    folder = DATA / "trl-runs" / "failed_grpo_divisible"
    given = {"uploads": [("console.log", (folder / "console.log").read_bytes() + b" " * APART_BYTES),
                         ("config.yaml", (folder / "config.yaml").read_bytes())],
             "paste": "", "yaml": "", "trainer": None}
    done = subprocess.run([sys.executable, "-m", "steplab.runfiles.apart"], input=pickle.dumps(given),
                          capture_output=True, check=True, cwd=PACKAGE_ROOT)
    apart = pickle.loads(done.stdout)
    here = explain_given(given)
    assert apart.record("zh") == here.record("zh") == explain_apart(given).record("zh")
    assert apart.planning.refusal.message == here.planning.refusal.message
    assert [f.code for f in apart.findings][:2] == ["failed", "failure_matched"]
