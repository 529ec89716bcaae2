"""Logged rows as columns: the step, the epoch and the values a run logs (NaN where a row has none)."""

from __future__ import annotations

import math
import re
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from steplab.i18n import whole

COLUMNS = ("loss", "learning_rate", "grad_norm", "eval_loss")
_EVAL_SET_LOSS = re.compile(r"^eval_(.+)_loss$")
"""With several evaluation sets (`eval_dataset` a dict; LLaMA-Factory's `eval_on_each_dataset`) each evaluation logs
`eval_<name>_loss`, one row per set: such a row is an evaluation row as `eval_loss` makes one."""
INT64_MAX = 2**63 - 1
"""The largest step a file may state: numbers past 64 bits are named as such, never computed with."""
ALIASES = {"lr": "learning_rate"}  # LLaMA-Factory's trainer_log.jsonl writes `lr` (older releases `learning_rate`)


@dataclass(frozen=True)
class Rows:
    """Rows in the order they were logged. `steps` is −1 where a file does not say (a console's dicts);
    `lines` are 1-based file lines (0 where none); `digits` the significant digits values were printed
    with (None: full floats)."""

    steps: np.ndarray
    epochs: np.ndarray
    values: Mapping[str, np.ndarray]
    lines: np.ndarray
    file: str
    digits: int | None = None
    present: Mapping[str, np.ndarray] | None = None  # which rows carry each column (a NaN loss is still a loss)
    epoch_decimals: int | None = None  # a 4.x console rounds the epoch it prints to two decimals
    keys: frozenset[str] = frozenset()  # every key the rows logged (TRL's own keys tell its trainer)

    def __len__(self) -> int:
        return len(self.steps)

    def column(self, name: str) -> np.ndarray:
        return self.values[name]

    def has(self, name: str) -> np.ndarray:
        """Which rows carry `name` (a diverged run's NaN loss included)."""
        return self.present[name] if self.present is not None else ~np.isnan(self.values[name])

    def where(self, mask: np.ndarray) -> Rows:
        present = None if self.present is None else {k: v[mask] for k, v in self.present.items()}
        return Rows(self.steps[mask], self.epochs[mask], {k: v[mask] for k, v in self.values.items()},
                    self.lines[mask], self.file, self.digits, present, self.epoch_decimals, self.keys)

    def with_steps(self, steps: np.ndarray) -> Rows:
        """The same rows at the given steps (a console's rows, placed on the plan's logging steps)."""
        return Rows(np.asarray(steps, dtype=np.int64), self.epochs, self.values, self.lines, self.file, self.digits,
                    self.present, self.epoch_decimals, self.keys)

    @property
    def train(self) -> Rows:
        """The rows with a training loss (what `logging_steps` logs)."""
        return self.where(self.has("loss"))

    @property
    def evals(self) -> Rows:
        return self.where(self.has("eval_loss"))


def eval_loss(row: Mapping[str, Any]) -> Any:
    """A row's evaluation loss: `eval_loss`, else its one `eval_<name>_loss` (several sets), else None."""
    if "eval_loss" in row:
        return row["eval_loss"]
    return next((value for key, value in row.items() if _EVAL_SET_LOSS.match(str(key))), None)


def number(value: Any) -> float:
    """A logged value as a float: numbers, numeric strings (5.x prints `'5.386'`), else NaN."""
    if isinstance(value, bool) or value is None:
        return math.nan
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return math.nan
    return math.nan


def step_number(value: Any) -> int:
    """A step as an int (−1 when it is none)."""
    if isinstance(value, bool):
        return -1
    if isinstance(value, int):
        return value if 0 <= value <= INT64_MAX else -1
    step = whole(value) if isinstance(value, float) else None
    return step if isinstance(step, int) and 0 <= step <= INT64_MAX else -1


def _column(values: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    """One key's values (None where a row lacks it) as floats and whether each row carries it.

    numpy converts numbers, numeric strings and None (NaN) at once; a NaN then means "absent" unless the file
    wrote NaN itself (a diverged loss), which one more pass tells apart. A list holding a bool goes value by
    value through `number` (`True in values` is a fast first look: it also matches 1.0).
    """
    maybe_bool = (True in values or False in values) and any(type(v) is bool for v in values)
    if not maybe_bool:
        try:
            floats = np.array(values, dtype=float)
        except (ValueError, TypeError, OverflowError):
            pass
        else:
            missing = np.isnan(floats)
            if not missing.any():
                return floats, np.ones(len(values), dtype=bool)
            return floats, np.fromiter((v is not None for v in values), dtype=bool, count=len(values))
    present = np.fromiter((v is not None for v in values), dtype=bool, count=len(values))
    return np.fromiter((number(v) for v in values), dtype=float, count=len(values)), present


def step_column(values: list[Any]) -> np.ndarray:
    """Whole numbers of steps (−1 where a row has none)."""
    if all(type(v) is int and 0 <= v <= INT64_MAX for v in values):
        return np.array(values, dtype=np.int64).reshape(len(values))
    return np.fromiter((step_number(v) for v in values), dtype=np.int64, count=len(values))


def rows_from_dicts(dicts: Sequence[Mapping[str, Any]], file: str, step_key: str = "step",
                    lines: Sequence[int] | None = None, digits: int | None = None,
                    epoch_decimals: int | None = None) -> Rows:
    """Rows from logged dicts (`log_history`, `trainer_log.jsonl` lines, a console's dicts)."""
    count = len(dicts)
    columns, present = {}, {}
    keys_seen = set().union(*dicts) if dicts else set()
    for name in COLUMNS:
        if name not in keys_seen and not any(ALIASES.get(k) == name for k in keys_seen) \
                and not (name == "eval_loss" and any(_EVAL_SET_LOSS.match(k) for k in keys_seen)):
            columns[name], present[name] = np.full(count, np.nan), np.zeros(count, dtype=bool)
            continue
        keys = [name, *(alias for alias, target in ALIASES.items() if target == name)]
        if name == "eval_loss" and any(_EVAL_SET_LOSS.match(k) for k in keys_seen):
            values = [eval_loss(d) for d in dicts]
        elif len(keys) > 1 and any(keys[1] in d for d in dicts):
            values = [d.get(keys[0]) if d.get(keys[0]) is not None else d.get(keys[1]) for d in dicts]
        else:
            values = [d.get(name) for d in dicts]
        columns[name], present[name] = _column(values)
    steps = step_column([d.get(step_key, -1) for d in dicts])
    epochs = _column([d.get("epoch") for d in dicts])[0]
    line_numbers = np.asarray(lines if lines is not None else np.zeros(count), dtype=np.int64)
    return Rows(steps, epochs, columns, line_numbers, file, digits, present, epoch_decimals,
                frozenset(str(key) for key in keys_seen))


class RowBuilder:
    """Logged dicts added one at a time and kept as columns (a float per row for each of `COLUMNS` and the epoch,
    whether the row had it, its line): a console of 10^6 logged lines holds a few bytes a row, not a dict."""

    def __init__(self) -> None:
        self.lines: array = array("q")
        self.values: dict[str, array] = {name: array("d") for name in (*COLUMNS, "epoch")}
        self.present: dict[str, array] = {name: array("b") for name in COLUMNS}
        self.keys: set[str] = set()
        self.first: tuple[dict[str, Any], int] | None = None  # the first row as logged, and its line

    def __len__(self) -> int:
        return len(self.lines)

    def __bool__(self) -> bool:
        return bool(self.lines)

    def add(self, row: Mapping[str, Any], line: int) -> None:
        if self.first is None:
            self.first = (dict(row), line)
        self.keys.update(row)
        self.lines.append(line)
        get = row.get
        for name, column in self.values.items():
            value = get(name)
            if value is None and name == "learning_rate":
                value = get("lr")
            if name != "epoch":
                self.present[name].append(value is not None)
            kind = value.__class__
            if kind is float:
                column.append(value)
            elif kind is str:
                try:
                    column.append(float(value))
                except ValueError:
                    column.append(math.nan)
            else:
                column.append(number(value))

    def rows(self, file: str) -> Rows:
        """The rows added, steps unknown (−1)."""
        count = len(self.lines)
        values = {name: np.frombuffer(self.values[name], dtype=float).copy() if count else np.zeros(0)
                  for name in COLUMNS}
        present = {name: np.frombuffer(self.present[name], dtype=np.int8).astype(bool) if count
                   else np.zeros(0, dtype=bool) for name in COLUMNS}
        epochs = np.frombuffer(self.values["epoch"], dtype=float).copy() if count else np.zeros(0)
        lines = np.frombuffer(self.lines, dtype=np.int64).copy() if count else np.zeros(0, dtype=np.int64)
        return Rows(np.full(count, -1, dtype=np.int64), epochs, values, lines, file, None, present, None,
                    frozenset(map(str, self.keys)))


def merged(parts: Sequence[Rows], file: str, digits: int | None, epoch_decimals: int | None) -> Rows:
    """Rows of several parts in the order of their lines (a console's training and evaluation dicts)."""
    order = np.argsort(np.concatenate([p.lines for p in parts]), kind="stable")
    values = {name: np.concatenate([p.values[name] for p in parts])[order] for name in COLUMNS}
    present = {name: np.concatenate([p.has(name) for p in parts])[order] for name in COLUMNS}
    return Rows(np.concatenate([p.steps for p in parts])[order], np.concatenate([p.epochs for p in parts])[order],
                values, np.concatenate([p.lines for p in parts])[order], file, digits, present, epoch_decimals,
                frozenset().union(*(p.keys for p in parts)))
