"""LLaMA-Factory's `trainer_log.jsonl`: one JSON object per logged step (`LogCallback.on_log`).

Today's LLaMA-Factory writes the learning rate as `lr` and drops null values; older releases wrote
`learning_rate` and every key, nulls included. A line cut off (a run killed mid-write) or not JSON is named
and skipped; the rest is read.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import orjson

from steplab.i18n import Message, msg
from steplab.runfiles.errors import RunFileError
from steplab.runfiles.json_text import load_json
from steplab.runfiles.rows import Rows, rows_from_dicts, step_column
from steplab.runfiles.text import decode_text, split_lines

MAX_BAD_LINES_NAMED = 5


@dataclass(frozen=True)
class TrainerLog:
    """The rows (steps are `current_steps`), the `total_steps` each row said, and what could not be read."""

    path: str
    rows: Rows
    total_steps: list[tuple[int, int]]  # (total_steps, line of its first row) for each value it took
    flavour: str  # "lr" (today) or "learning_rate" (older LLaMA-Factory, nulls written)
    problems: list[Message]


def _objects(lines: list[str], path: str) -> tuple[list[dict], list[int], list[Message]]:
    """Each non-empty line's object with its 1-based line; bad lines named (the first few) and counted."""
    numbered = [(i + 1, line) for i, line in enumerate(lines) if line.strip()]
    try:  # one parse of the whole file when every line is fine (10^5 lines in a few tens of ms)
        found = orjson.loads("[" + ",".join(line for _, line in numbered) + "]")
        if all(type(row) is dict for row in found):
            return found, [n for n, _ in numbered], []
    except orjson.JSONDecodeError:
        pass
    objects, where, bad = [], [], []
    for number, line in numbered:
        try:
            row = load_json(line, path)
        except RunFileError:
            row = None
        if isinstance(row, dict):
            objects.append(row)
            where.append(number)
        else:
            bad.append(number)
    problems = []
    if bad:
        shown = ", ".join(str(n) for n in bad[:MAX_BAD_LINES_NAMED])
        last_cut = bad == [numbered[-1][0]]
        problems.append(msg("runfiles.log_line_cut" if last_cut else "runfiles.log_bad_lines", path=path,
                            lines=shown, count=len(bad)))
    return objects, where, problems


def read_trainer_log(data: bytes, path: str) -> TrainerLog:
    """Read a `trainer_log.jsonl` (bad lines named in `problems`, the others kept)."""
    lines = split_lines(decode_text(data, path), path)
    objects, where, problems = _objects(lines, path)
    flavour = "learning_rate" if any("learning_rate" in row for row in objects[:50]) else "lr"
    rows = rows_from_dicts(objects, path, step_key="current_steps", lines=where)
    totals = step_column([row.get("total_steps", -1) for row in objects])
    changes = np.flatnonzero((totals >= 0) & np.concatenate([[True], totals[1:] != totals[:-1]]))
    said = [(int(totals[i]), where[i]) for i in changes]
    return TrainerLog(path, rows, said, flavour, problems)
