"""Reading a run's files (`steplab.runfiles`): each reader on the real runs' files, checked against what a separate
script recorded of them (`artefacts/summary.json`), and on hostile input: zip bombs, binaries, cut-off JSON,
broken and encrypted zips, paths that climb out, 10^5-line logs."""

from __future__ import annotations

import io
import json
import math
import zipfile
from pathlib import Path

import numpy as np
import pytest

from steplab.runfiles import gather as gather_module
from steplab.runfiles import kinds, limits
from steplab.runfiles.console import read_console
from steplab.runfiles.errors import RunFileError
from steplab.runfiles.gather import clean_path, gather, path_entries, text_entry, upload_entries
from steplab.runfiles.read import read_files
from steplab.runfiles.results import read_results
from steplab.runfiles.state_file import read_state
from steplab.runfiles.text import decode_text, split_lines
from steplab.runfiles.trainer_log import read_trainer_log

DATA = Path(__file__).resolve().parent / "data"
ARTEFACTS = DATA / "llamafactory-runs" / "artefacts"
RELEASES = DATA / "release-runs"
SUMMARY = json.loads((ARTEFACTS / "summary.json").read_text())
RUNS = sorted(SUMMARY)


def _int(text: str) -> int:
    return int(text.replace(",", ""))


# --------------------------------------------------------------------------- the console


@pytest.mark.parametrize("run", RUNS)
def test_console_block_is_what_the_summary_script_read(run):
    console = read_console((ARTEFACTS / run / "console.log").read_bytes(), "console.log")
    said = SUMMARY[run]["console"]
    block = {name: found.value for name, found in console.block.items()}
    assert block["num_examples"] == _int(said["num_examples"])
    assert block["num_epochs"] == _int(said["num_epochs"])
    assert block["update_steps_per_epoch"] == _int(said["update_steps_per_epoch"])
    assert block["per_device_train_batch_size"] == _int(said["per_device_bs"])
    assert block["total_train_batch_size"] == _int(said["total_train_batch_size"])
    assert block["gradient_accumulation_steps"] == _int(said["grad_accum"])
    assert block["total_optimization_steps"] == _int(said["total_optimization_steps"])
    assert console.metrics["train_loss"].value == said["final_train_loss_line"]
    assert [f.value for f in console.saves] == [s for s in SUMMARY[run]["checkpoints"]
                                                 if run != "resume_same" or s > 40]
    assert console.bar.value == SUMMARY[run]["state"]["global_step"]
    lines = (ARTEFACTS / run / "console.log").read_bytes().decode().split("\n")  # as `grep -n` counts them
    for found in console.block.values():  # the line a source names holds the value
        line = lines[found.source.line - 1]
        assert f"{found.value:,}" in line


def test_console_resume_lines_of_five_and_the_arguments_taken_from_the_checkpoint():
    console = read_console((ARTEFACTS / "resume_changed_batch" / "console.log").read_bytes(), "console.log")
    assert {k: f.value for k, f in console.resume.items()} == {
        "checkpoint": "out/resume_same/checkpoint-40", "epochs_trained": 0, "resumed_step": 40,
        "release_lines": "5", "epochs_skipped": 0, "batches_skipped": 160}
    assert [m[:3] for m in console.mismatches] == [("save_steps", "10", "20")]
    assert console.string_floats is not None and console.python_floats is None
    assert console.transformers_version.value == "5.6.0"


@pytest.mark.parametrize("profile", ["hf-4.57", "hf-4.51", "hf-4.46"])
def test_console_resume_lines_of_four(profile):
    path = RELEASES / profile / "resume_changed" / "console.log"
    console = read_console(path.read_bytes(), "console.log")
    resume = {k: f.value for k, f in console.resume.items()}
    assert resume["release_lines"] == "4" and resume["resumed_step"] == 3
    assert (resume["epochs_skipped"], resume["batches_skipped"]) == (0, 6)  # 3 steps × the new accumulation 2
    assert console.python_floats is not None and console.string_floats is None
    assert "update_steps_per_epoch" not in console.block  # 4.x prints no such line


def test_console_dicts_are_the_logged_rows_of_the_state():
    console = read_console((ARTEFACTS / "course_val" / "console.log").read_bytes(), "console.log")
    state = json.loads((ARTEFACTS / "course_val" / "trainer_state.json").read_text())
    train = [row for row in state["log_history"] if "loss" in row]
    evals = [row for row in state["log_history"] if "eval_loss" in row]
    assert len(console.train) == len(train) and len(console.eval_dicts) == len(evals)
    shown = console.train.rows("console.log")
    for index, row in enumerate(train):  # 5.x prints 4 significant digits
        assert shown.column("loss")[index] == pytest.approx(row["loss"], rel=5e-4)
        assert shown.column("learning_rate")[index] == pytest.approx(row["learning_rate"], rel=5e-4)
    assert console.eval_examples.value == 100 and console.eval_batch_size.value == 8


def test_an_interrupted_console_is_said_so():
    console = read_console((ARTEFACTS / "resume_same" / "console-part1.log").read_bytes(), "part1.log")
    assert console.interrupted is not None and console.bar.value == 41
    assert not console.resumed


def test_console_four_x_float_formats_and_bare_nan():
    text = "\n".join([
        "***** Running training *****", "  Num examples = 1,000", "  Num Epochs = 2",
        "  Instantaneous batch size per device = 8",
        "  Total train batch size (w. parallel, distributed & accumulation) = 32",
        "  Gradient Accumulation steps = 4", "  Total optimization steps = 62",
        "{'loss': nan, 'grad_norm': inf, 'learning_rate': 5e-05, 'epoch': 0.16}",
        "{'loss': 1.2345, 'grad_norm': 0.5, 'learning_rate': 4e-05, 'epoch': 0.32}",
        "{'loss': " + "[" * 5000 + "}",  # not a Trainer line: never parsed
    ])
    console = read_console(text, "pasted")
    rows = console.rows
    assert rows.has("loss").tolist() == [True, True] and math.isnan(rows.column("loss")[0])
    assert rows.column("learning_rate").tolist() == [5e-05, 4e-05]
    assert rows.epoch_decimals == 2 and rows.digits is None


# --------------------------------------------------------------------------- trainer_state.json, trainer_log.jsonl, results


@pytest.mark.parametrize("run", RUNS)
def test_state_is_what_json_reads(run):
    path = ARTEFACTS / run / "trainer_state.json"
    state = read_state(path.read_bytes(), "trainer_state.json", None)
    document = json.loads(path.read_text())
    for name in ("global_step", "max_steps", "epoch", "logging_steps", "save_steps", "train_batch_size"):
        assert state.value(name) == document[name]
    logged = [row for row in document["log_history"] if "train_loss" not in row]
    assert state.rows.steps.tolist() == [row["step"] for row in logged]
    assert state.rows.column("learning_rate")[state.rows.has("learning_rate")].tolist() == [
        row["learning_rate"] for row in logged if "learning_rate" in row]
    assert state.summary["train_loss"] == SUMMARY[run]["all_results"]["train_loss"]


def test_state_with_a_diverged_nan_loss_is_read():
    document = {"global_step": 2, "max_steps": 2, "log_history": [
        {"step": 1, "loss": float("nan"), "epoch": 0.5}, {"step": 2, "loss": 1.0, "epoch": 1.0}]}
    state = read_state(json.dumps(document).encode(), "s.json", None)  # json writes NaN, which orjson refuses
    assert state.rows.has("loss").tolist() == [True, True] and math.isnan(state.rows.column("loss")[0])


def test_cut_off_or_odd_states_are_refused_with_the_line():
    text = (ARTEFACTS / "course" / "trainer_state.json").read_text()
    with pytest.raises(RunFileError) as cut:
        read_state(text[: len(text) // 2].encode(), "trainer_state.json", None)
    assert cut.value.code == "runfiles.bad_json" and cut.value.line > 1
    with pytest.raises(RunFileError, match="JSON object"):
        read_state(b"[1, 2]", "trainer_state.json", None)
    odd = read_state(b'{"global_step": "many", "epoch": true, "log_history": [1, {"loss": 2}, {"step": 3}]}',
                     "s.json", None)
    assert odd.value("global_step") is None and odd.value("epoch") is None
    assert odd.rows.steps.tolist() == [3]


@pytest.mark.parametrize("run", RUNS)
def test_trainer_log_is_what_the_summary_script_read(run):
    log = read_trainer_log((ARTEFACTS / run / "trainer_log.jsonl").read_bytes(), "trainer_log.jsonl")
    assert log.rows.steps.tolist() == SUMMARY[run]["trainer_log_jsonl_steps"]
    assert log.flavour == "lr" and not log.problems


def test_older_trainer_log_with_learning_rate_key_and_nulls_reads_the_same():
    lines = (ARTEFACTS / "course_val" / "trainer_log.jsonl").read_text().splitlines()
    older = []
    for line in lines:
        row = json.loads(line)
        row["learning_rate"] = row.pop("lr", None)
        older.append(json.dumps({"loss": None, "eval_loss": None, "predict_loss": None, **row}))
    new = read_trainer_log("\n".join(lines).encode(), "a")
    old = read_trainer_log("\n".join(older).encode(), "b")
    assert old.flavour == "learning_rate"
    for column in ("loss", "eval_loss", "learning_rate"):
        assert old.rows.has(column).tolist() == new.rows.has(column).tolist()
        np.testing.assert_array_equal(old.rows.column(column), new.rows.column(column))


def test_a_cut_last_line_and_a_bad_middle_line_are_named_and_skipped():
    lines = (ARTEFACTS / "course" / "trainer_log.jsonl").read_text().splitlines()
    cut = read_trainer_log(("\n".join(lines[:-1]) + "\n" + lines[-1][:20]).encode(), "t.jsonl")
    assert len(cut.rows) == len(lines) - 1
    assert [p.key for p in cut.problems] == ["runfiles.log_line_cut"]
    assert str(len(lines)) in cut.problems[0].en
    bad = read_trainer_log("\n".join([lines[0], "not json", "[1]", *lines[1:]]).encode(), "t.jsonl")
    assert len(bad.rows) == len(lines) and bad.problems[0].key == "runfiles.log_bad_lines"
    assert "2, 3" in bad.problems[0].en


def test_a_hundred_thousand_line_log_is_read_whole():
    rows = "\n".join(json.dumps({"current_steps": s, "total_steps": 10**5, "loss": 1.0 / s, "lr": 1e-4,
                                 "epoch": s / 10**5}) for s in range(1, 10**5 + 1))
    log = read_trainer_log(rows.encode(), "trainer_log.jsonl")
    assert len(log.rows) == 10**5 and log.rows.steps[-1] == 10**5 and not log.problems


def test_results_files():
    results = read_results((ARTEFACTS / "course_val" / "eval_results.json").read_bytes(), "eval_results.json")
    assert results.values["eval_loss"] == pytest.approx(5.361152648925781)
    with pytest.raises(RunFileError):
        read_results(b'"a string"', "all_results.json")


# --------------------------------------------------------------------------- text


def test_utf16_logs_are_read_and_binaries_refused():
    text = (ARTEFACTS / "course" / "console.log").read_text()
    assert decode_text(text.encode("utf-16"), "powershell.log") == text  # what PowerShell's `>` writes
    with pytest.raises(RunFileError, match="not text"):
        decode_text(b"PK\x03\x04" + bytes(range(256)) * 100, "weights.log")
    with pytest.raises(RunFileError, match="not text"):
        decode_text(bytes(range(128, 256)) * 100, "latin.log")


def test_too_many_lines_is_said(monkeypatch):
    from steplab.runfiles import text

    monkeypatch.setattr(text, "MAX_LINES", 10)
    with pytest.raises(RunFileError) as error:
        split_lines("\n".join(["x"] * 11), "long.log")
    assert error.value.code == "runfiles.too_many_lines" and "11" in error.value.message("en")


# --------------------------------------------------------------------------- gathering: uploads, zips, folders


def _zip(members: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def test_a_zip_of_the_output_folder_keeps_its_nested_paths():
    folder = ARTEFACTS / "course"
    members = {f"out/{p.relative_to(folder).as_posix()}": p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    members["out/checkpoint-50/adapter_model.safetensors"] = bytes(1000)
    problems: list = []
    gathered = gather(upload_entries([("run.zip", _zip(members))], problems), problems)
    files = read_files(gathered)
    assert sorted(files.checkpoint_states) == [50, 100, 150] and files.state.path == "out/trainer_state.json"
    assert files.console.path == "out/console.log" and files.trainer_log is not None
    assert ("out/checkpoint-50/adapter_model.safetensors", "runfiles.skipped.unused") in [
        (path, why.key) for path, why in gathered.skipped]


def test_a_zip_bomb_is_not_expanded_past_the_cap(monkeypatch):
    bomb = _zip({"out/trainer_log.jsonl": b"0" * (8 * 2**20)})  # 8 MiB of zeros, ~8 KB zipped
    assert len(bomb) < 100_000
    monkeypatch.setattr(gather_module, "MAX_FILE_BYTES", 2**20)
    read: list[int] = []
    original = gather_module._read_capped

    def counting(entry, limit):
        data = original(entry, limit)
        read.append(limit)
        return data

    monkeypatch.setattr(gather_module, "_read_capped", counting)
    gathered = gather(upload_entries([("bomb.zip", bomb)], []))
    assert not gathered.files and gathered.read_bytes == 0
    assert [why.key for _, why in gathered.skipped] == ["runfiles.skipped.file_cap"]  # declared size: not opened
    assert read == []


def test_a_zip_whose_header_lies_about_its_size_stops_at_the_cap(monkeypatch):
    data = b"x" * (3 * 2**20)
    honest = _zip({"trainer_log.jsonl": data}, zipfile.ZIP_STORED)
    size = len(data).to_bytes(4, "little")
    lying = honest.replace(size, (100).to_bytes(4, "little"))  # local header and directory both say 100 bytes
    monkeypatch.setattr(gather_module, "MAX_FILE_BYTES", 2**20)
    gathered = gather(upload_entries([("liar.zip", lying)], []))
    assert gathered.read_bytes <= 2**20 and not gathered.files
    assert gathered.skipped and gathered.skipped[0][1].key in ("runfiles.skipped.unreadable", "runfiles.skipped.expands")


def test_a_member_that_expands_past_the_cap_while_read_is_stopped(monkeypatch):
    entry = gather_module.Entry("trainer_log.jsonl", 10, lambda: io.BytesIO(b"y" * 5000))  # declares 10 bytes
    monkeypatch.setattr(gather_module, "MAX_FILE_BYTES", 1000)
    gathered = gather([entry])
    assert not gathered.files and gathered.skipped[0][1].key == "runfiles.skipped.expands"


def test_the_total_cap_and_the_file_count_cap(monkeypatch):
    monkeypatch.setattr(gather_module, "MAX_TOTAL_BYTES", 2500)
    monkeypatch.setattr(gather_module, "MAX_FILES", 3)
    entries = [text_entry(f"run{i}/console.log", "x" * 1000) for i in range(5)]
    gathered = gather(entries)
    assert len(gathered.files) == 2 and gathered.read_bytes == 2000
    assert [why.key for _, why in gathered.skipped] == ["runfiles.skipped.total_cap"] * 3


def test_too_many_names_broken_encrypted_and_nested_zips(monkeypatch):
    monkeypatch.setattr(gather_module, "MAX_ENTRIES", 10)
    problems: list = []
    upload_entries([("many.zip", _zip({f"f{i}.log": b"x" for i in range(11)}))], problems)
    assert [p.key for p in problems] == ["runfiles.zip_too_many"]
    problems = []
    assert upload_entries([("broken.zip", b"PK\x03\x04 not really a zip")], problems) == []
    assert [p.key for p in problems] == ["runfiles.zip_broken"]
    plain = _zip({"console.log": b"hello"}, zipfile.ZIP_STORED)
    encrypted = bytearray(plain)
    encrypted[6] |= 1  # the local header's flag: encrypted
    directory = plain.rfind(b"PK\x01\x02")
    encrypted[directory + 8] |= 1  # and the central directory's
    problems = []
    assert upload_entries([("locked.zip", bytes(encrypted))], problems) == []
    assert [p.key for p in problems] == ["runfiles.zip_encrypted"]
    nested = gather(upload_entries([("outer.zip", _zip({"inner.zip": plain, "console.log": b"x"}))], []))
    assert [(p, w.key) for p, w in nested.skipped] == [("inner.zip", "runfiles.skipped.nested_zip")]


@pytest.mark.parametrize(("name", "clean"), [
    ("../../etc/passwd", "etc/passwd"), ("/abs/trainer_state.json", "abs/trainer_state.json"),
    ("C:\\runs\\out\\checkpoint-5\\trainer_state.json", "runs/out/checkpoint-5/trainer_state.json"),
    ("./a/./b/../c.log", "a/b/c.log"), ("", "unnamed"),
])
def test_paths_never_climb_out(name, clean):
    assert clean_path(name) == clean


def test_checkpoint_of_a_path():
    assert kinds.checkpoint_of("out/checkpoint-50/trainer_state.json") == 50
    assert kinds.checkpoint_of("checkpoint-7/x/trainer_state.json") == 7
    assert kinds.checkpoint_of("out/trainer_state.json") is None
    assert kinds.checkpoint_of("out/my-checkpoint-5/trainer_state.json") is None


def test_a_binary_named_like_a_log_is_reported_not_raised():
    gathered = gather([gather_module.Entry("console.log", 3000, lambda: io.BytesIO(bytes(3000)))])
    files = read_files(gathered)
    assert not files.readable
    assert [(r.path, r.read, r.note.key) for r in files.reports] == [("console.log", False, "runfiles.binary")]


def test_pasted_text_is_told_apart_by_what_it_holds():
    assert kinds.sniff((ARTEFACTS / "course" / "trainer_state.json").read_text()) == kinds.STATE
    assert kinds.sniff((ARTEFACTS / "course" / "trainer_log.jsonl").read_text()) == kinds.TRAINER_LOG
    assert kinds.sniff((ARTEFACTS / "course" / "console.log").read_text()) == kinds.CONSOLE
    assert kinds.sniff((ARTEFACTS / "course" / "config.yaml").read_text()) == kinds.CONFIG


def test_a_folder_on_disk_is_walked_and_symlinks_are_not_followed(tmp_path):
    (tmp_path / "run" / "checkpoint-3").mkdir(parents=True)
    (tmp_path / "run" / "checkpoint-3" / "trainer_state.json").write_text('{"global_step": 3}')
    (tmp_path / "secret.txt").write_text("secret")
    (tmp_path / "run" / "link.log").symlink_to(tmp_path / "secret.txt")
    problems: list = []
    entries = path_entries([tmp_path / "run", tmp_path / "missing"], problems)
    assert [e.path for e in entries] == ["run/checkpoint-3/trainer_state.json"]
    assert [p.key for p in problems] == ["runfiles.no_such_path"]


def test_limits_are_what_the_page_states():
    assert limits.MAX_LINES >= 10**5 and limits.MAX_FILE_BYTES >= 32 * 2**20
