"""`trainer_state.json`: the Trainer's state as it saved it (the output folder's, or a checkpoint's)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from steplab.runfiles.errors import RunFileError
from steplab.runfiles.json_text import load_json
from steplab.runfiles.rows import INT64_MAX, Rows, number, rows_from_dicts, step_number
from steplab.runfiles.sources import Found, Source
from steplab.runfiles.text import decode_text

NUMBERS = ("global_step", "max_steps", "epoch", "num_train_epochs", "logging_steps", "eval_steps", "save_steps",
           "train_batch_size")
SUMMARY_KEYS = ("train_loss", "train_runtime", "train_samples_per_second", "train_steps_per_second", "total_flos")


@dataclass(frozen=True)
class StateFile:
    """The numbers of one `trainer_state.json` (each with its key as source), its logged rows and its summary row
    (the end-of-training `train_loss` row, when training finished)."""

    path: str
    checkpoint: int | None
    fields: dict[str, Found]
    rows: Rows
    summary: dict[str, float]
    dropped_rows: int  # rows of log_history without a step (not read)

    def value(self, name: str) -> Any:
        found = self.fields.get(name)
        return None if found is None else found.value


def _field(document: dict[str, Any], name: str) -> int | float | None:
    """A number of the state: `epoch` a float, the others whole numbers (None when absent or of another type)."""
    value = document.get(name)
    if name == "epoch":
        found = number(value)
        return None if found != found else found
    step = step_number(value)
    return None if step < 0 else step


def read_state(data: bytes, path: str, checkpoint: int | None) -> StateFile:
    """Read a `trainer_state.json`; `runfiles.state_not_object` / `runfiles.bad_json` when it is none."""
    document = load_json(decode_text(data, path), path)
    if not isinstance(document, dict):
        raise RunFileError("runfiles.state_not_object", path=path)
    fields = {}
    for name in NUMBERS:
        raw = document.get(name)
        if isinstance(raw, int | float) and not isinstance(raw, bool) and math.isfinite(raw) and abs(raw) > INT64_MAX:
            digits = len(str(abs(int(raw))))
            raise RunFileError("runfiles.number_too_big", path=path, key=name, digits=digits,
                               bits=INT64_MAX.bit_length() + 1)
        value = _field(document, name)
        if value is not None:
            fields[name] = Found(value, Source(path, key=name))
    history = document.get("log_history")
    if not isinstance(history, list):
        history = []
    dicts = [row for row in history if isinstance(row, dict)]
    summary_rows = [row for row in dicts if "train_loss" in row or "train_runtime" in row]
    summary_ids = {id(row) for row in summary_rows}
    logged = [row for row in dicts if id(row) not in summary_ids and step_number(row.get("step")) >= 0]
    summary = {key: number(summary_rows[-1].get(key)) for key in SUMMARY_KEYS if key in summary_rows[-1]} \
        if summary_rows else {}
    dropped = len(history) - len(logged) - len(summary_rows)
    return StateFile(path, checkpoint, fields, rows_from_dicts(logged, path), summary, dropped)
