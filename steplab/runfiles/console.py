"""A training console (what `llamafactory-cli train` or a Trainer script prints), read line by line.

It finds the `***** Running training *****` block, the resume lines of every release (4.x: "Continuing training
from checkpoint" / "Will skip the first … epochs then the first … batches"; 5.x: "Resuming training from
checkpoint with epoch … and global step …" / "Fast-forwarding the dataloader past … epochs and … batches"), the
arguments a resumed run took from its checkpoint, the logged dicts (4.x prints floats, 5.x strings of four
significant digits), evaluations, checkpoints saved, the progress bar, the train metrics block, and what
LLaMA-Factory adds (processes, a deleted trainer log). Line numbers count `\\n` as `grep -n` does.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

from steplab.runfiles.failure import Failure, TracebackReader
from steplab.runfiles.limits import MAX_LINE_CHARACTERS
from steplab.runfiles.rows import INT64_MAX, RowBuilder, Rows, merged, rows_from_dicts
from steplab.runfiles.sources import Found, Source
from steplab.runfiles.text import decode_text, iter_lines, screen_parts

BLOCK_LINES = {
    "num_examples": r"Num examples = ([\d,]+)",
    "num_epochs": r"Num Epochs = ([\d,]+)",
    "update_steps_per_epoch": r"Num update steps per epoch = ([\d,]+)",
    "per_device_train_batch_size": r"Instantaneous batch size per device = ([\d,]+)",
    "total_train_batch_size": r"Total train batch size \(w\. parallel, distributed & accumulation\) = ([\d,]+)",
    "gradient_accumulation_steps": r"Gradient Accumulation steps = ([\d,]+)",
    "total_optimization_steps": r"Total optimization steps = ([\d,]+)",
    "trainable_parameters": r"Number of trainable parameters = ([\d,]+)",
}
_BLOCK = {name: re.compile(pattern) for name, pattern in BLOCK_LINES.items()}
_RESUME = {
    "resume_5": re.compile(r"Resuming training from checkpoint with epoch (\d+) and global step (\d+)"),
    "skip_5": re.compile(r"Fast-forwarding the dataloader past (\d+) epochs and (\d+) batches"),
    "resume_4": re.compile(r"Continuing training from checkpoint, will skip to saved global_step"),
    "epoch_4": re.compile(r"Continuing training from epoch (\d+)"),
    "step_4": re.compile(r"Continuing training from global step (\d+)"),
    "skip_4": re.compile(r"Will skip the first (\d+) epochs then the first (\d+) batches in the first epoch"),
    "loading": re.compile(r"Loading model from (.+?checkpoint-(\d+))\.?\s*$"),
    "llamafactory": re.compile(r"Resuming training from (.+?checkpoint-(\d+))\.?\s*$"),
}
_MISMATCH = re.compile(r"^\s*(\w+): (\S+) \(from args\) != (\S+) \(from trainer_state\.json\)")
_DICT_START = re.compile(r"\{'(loss|eval_\w+|train_runtime|train_loss|learning_rate|grad_norm)'")
MAX_DICT_CHARACTERS = 20_000  # a GRPO run with several reward functions logs dicts of a few thousand characters
_BARE_FLOAT = re.compile(r"(?<=[:\s])(-?inf|nan)(?=\s*[,}])")
_BAR = re.compile(r"\|\s*(\d+)/(\d+) \[")
_SAVE = re.compile(r"Saving model checkpoint to (.*?checkpoint-(\d+))\s*$")
_WORLD = re.compile(r"Process rank: (\d+), world size: (\d+)")
_TASKS = re.compile(r"Initializing (\d+) distributed tasks")
_VERSION = re.compile(r'"transformers_version": "(\d+\.\d+(?:\.\d+)?)')
_METRIC = re.compile(r"^\s+(\w+)\s+=\s+(\S+)\s*$")
_EVAL_NUM = re.compile(r"Num examples = ([\d,]+)")
_EVAL_BATCH = re.compile(r"Batch size = ([\d,]+)")


@dataclass
class Console:
    """What a console log says, each value with its line."""

    path: str
    block: dict[str, Found] = field(default_factory=dict)  # the last `***** Running training *****` block
    blocks: int = 0
    resume: dict[str, Found] = field(default_factory=dict)  # resumed_step, epochs_skipped, batches_skipped, ...
    mismatches: list[tuple[str, str, str, Source]] = field(default_factory=list)  # name, from args, from state
    train: RowBuilder = field(default_factory=RowBuilder)  # the training dicts, as columns
    eval_dicts: list[tuple[dict[str, Any], int]] = field(default_factory=list)
    summary: tuple[dict[str, Any], int] | None = None
    eval_examples: Found | None = None
    eval_batch_size: Found | None = None
    saves: list[Found] = field(default_factory=list)  # checkpoint steps, in print order
    bar: Found | None = None  # the training bar's furthest count (its total is the block's total)
    world_size: Found | None = None
    transformers_version: Found | None = None
    string_floats: Found | None = None  # a dict printed with strings of 4 significant digits (5.x)
    python_floats: Found | None = None  # a dict printed with plain floats (4.x)
    trainer_log_deleted: Found | None = None
    interrupted: Found | None = None
    metrics: dict[str, Found] = field(default_factory=dict)  # the `***** train metrics *****` block
    failure: Failure | None = None  # the exception the run died of (the last traceback printed)
    unparsed_dicts: list[int] = field(default_factory=list)  # lines of logged dicts that could not be read
    too_big: list[tuple[str, int, Source]] = field(default_factory=list)  # (field, digits, line): past 64 bits
    _rows: Rows | None = field(default=None, repr=False)

    @property
    def rows(self) -> Rows:
        """The logged dicts (training, then evaluations merged in print order); steps unknown (−1)."""
        if self._rows is None:
            five = self.string_floats is not None
            evals = rows_from_dicts([d for d, _ in self.eval_dicts], self.path, step_key="__no_step__",
                                    lines=[line for _, line in self.eval_dicts])
            self._rows = merged([self.train.rows(self.path), evals], self.path, 4 if five else None,
                                None if five else 2)
        return self._rows

    @property
    def resumed(self) -> bool:
        return "resumed_step" in self.resume


def _int(text: str) -> int:
    return int(text.replace(",", ""))


_VALUE = r"'[^'\\]*'|-?(?:\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|inf|nan)|True|False|None"
_PAIR = re.compile(rf"'([^'\\]*)': ({_VALUE})")
_FLAT_DICT = re.compile(rf"\{{(?:'[^'\\]*': (?:{_VALUE}), )*'[^'\\]*': (?:{_VALUE})\}}")
_CONSTANTS = {"True": True, "False": False, "None": None}


def _flat_dict(text: str) -> dict[str, Any] | None:
    """A flat dict of names and numbers (or numeric strings), as every release prints one, read by two regular
    expressions instead of Python's parser (a console of 10^6 of them); None for anything else."""
    if not _FLAT_DICT.fullmatch(text):
        return None
    found: dict[str, Any] = {}
    for key, value in _PAIR.findall(text):
        if value[0] == "'":
            found[key] = value[1:-1]
        elif value in _CONSTANTS:
            found[key] = _CONSTANTS[value]
        elif value.lstrip("-").isdigit():
            found[key] = int(value)
        else:
            found[key] = float(value)
    return found


def _logged_dict(part: str) -> dict[str, Any] | None:
    """The dict a progress callback printed (`{'loss': 1.23, ...}` or `{'loss': '1.23', ...}`), or None."""
    start = _DICT_START.search(part)
    end = part.rfind("}")
    if not start or end < start.start() or end - start.start() > MAX_DICT_CHARACTERS:
        return None
    flat = _flat_dict(part[start.start():end + 1])
    if flat is not None:
        return flat
    text = _BARE_FLOAT.sub(lambda m: f"'{m.group(1)}'", part[start.start():end + 1])
    try:
        found = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        return None
    return found if isinstance(found, dict) else None


class _Reader:
    """One pass over the lines; a small state machine for the blocks that span lines."""

    def __init__(self, path: str):
        self.console = Console(path)
        self.in_block = False
        self.block_left = 0
        self.in_eval = 0
        self.in_metrics = False
        self.mismatch_lines = 0
        self.traceback = TracebackReader(path)
        self.evaluated_between = False  # a training row came after the first evaluation began

    def source(self, line: int) -> Source:
        return Source(self.console.path, line)

    def line(self, number: int, raw: str) -> None:
        c = self.console
        if len(raw) > MAX_LINE_CHARACTERS:
            if _DICT_START.search(raw[:200]):
                c.unparsed_dicts.append(number)
            return
        if self.traceback.inside or "Traceback" in raw:
            self.traceback.feed(number, raw)
        if "\r" in raw or "\x1b" in raw:
            for part in screen_parts(raw):
                self.part(number, part)
        elif raw and not raw.isspace():
            self.part(number, raw)
        if "Traceback (most recent call last)" in raw or raw.startswith("KeyboardInterrupt"):
            c.interrupted = c.interrupted or Found(raw.strip()[:80], self.source(number))

    def part(self, number: int, text: str) -> None:
        c = self.console
        in_a_block = bool(self.in_block or self.in_eval or self.in_metrics or self.mismatch_lines)
        if "{'" in text and not in_a_block and self.logged(text, number):
            return  # a logged dict: nothing else stands on its line
        src = self.source(number)
        if "***** Running training *****" in text:
            c.blocks += 1
            c.block = {}
            self.in_block, self.block_left = True, 12
            return
        if "***** Running Evaluation *****" in text:
            self.in_eval = 4
            return
        if "***** train metrics *****" in text:
            self.in_metrics = True
            return
        if self.in_block:
            self.block_left -= 1
            for name, pattern in _BLOCK.items():
                found = pattern.search(text)
                if found and name not in c.block:
                    value = _int(found.group(1))
                    if value > INT64_MAX:  # named as such, never planned with
                        c.too_big.append((name, len(str(value)), src))
                    else:
                        c.block[name] = Found(value, src)
            if self.block_left <= 0:
                self.in_block = False
        if self.in_eval:
            self.in_eval -= 1
            if found := _EVAL_NUM.search(text):
                if c.eval_examples is None:
                    c.eval_examples = Found(_int(found.group(1)), src)
                elif not self.evaluated_between:  # another set of the first evaluation: counted with it
                    c.eval_examples = Found(c.eval_examples.value + _int(found.group(1)), c.eval_examples.source)
            if (found := _EVAL_BATCH.search(text)) and c.eval_batch_size is None:
                c.eval_batch_size = Found(_int(found.group(1)), src)
        if self.in_metrics:
            found = _METRIC.match(text)
            if found:
                c.metrics[found.group(1)] = Found(found.group(2), src)
                return
            self.in_metrics = False
        self.resume_lines(text, src)
        if self.mismatch_lines or "do not match the ones in the `trainer_state.json`" in text:
            if "do not match" in text:
                self.mismatch_lines = 8
            self.mismatch_lines -= 1
            found = _MISMATCH.match(text)
            if found:
                c.mismatches.append((found.group(1), found.group(2), found.group(3), src))
        if "{'" in text and in_a_block:
            self.logged(text, number)
        self.others(text, src)

    def resume_lines(self, text: str, src: Source) -> None:
        c = self.console
        if "training from" not in text and "Fast-forwarding" not in text and "Will skip" not in text \
                and "Loading model from" not in text:
            return
        if found := _RESUME["resume_5"].search(text):
            c.resume.update(epochs_trained=Found(int(found.group(1)), src), resumed_step=Found(int(found.group(2)), src),
                            release_lines=Found("5", src))
        elif found := _RESUME["skip_5"].search(text):
            c.resume.update(epochs_skipped=Found(int(found.group(1)), src),
                            batches_skipped=Found(int(found.group(2)), src))
        elif _RESUME["resume_4"].search(text):
            c.resume["release_lines"] = Found("4", src)
        elif found := _RESUME["epoch_4"].search(text):
            c.resume["epochs_trained"] = Found(int(found.group(1)), src)
        elif found := _RESUME["step_4"].search(text):
            c.resume["resumed_step"] = Found(int(found.group(1)), src)
        elif found := _RESUME["skip_4"].search(text):
            c.resume.update(epochs_skipped=Found(int(found.group(1)), src),
                            batches_skipped=Found(int(found.group(2)), src))
        elif found := (_RESUME["loading"].search(text) or _RESUME["llamafactory"].search(text)):
            c.resume.setdefault("checkpoint", Found(found.group(1), src))

    def logged(self, text: str, number: int) -> bool:
        """Read a logged dict of the line; False when it holds none (or one that does not parse: counted)."""
        c = self.console
        found = _logged_dict(text)
        if found is None:
            if _DICT_START.search(text):
                c.unparsed_dicts.append(number)
            return False
        types = set(map(type, found.values()))
        if str in types and float not in types:  # 5.x: every number a string of four significant digits
            c.string_floats = c.string_floats or Found(True, self.source(number))
        elif float in types:
            c.python_floats = c.python_floats or Found(True, self.source(number))
        if "train_runtime" in found or "train_loss" in found:
            c.summary = (found, number)
        elif "'eval_" in text and any(key.startswith("eval_") for key in found):  # one row per evaluation set
            c.eval_dicts.append((found, number))
        elif "loss" in found or "learning_rate" in found:
            c.train.add(found, number)
            self.evaluated_between = c.eval_examples is not None
        return True

    def others(self, text: str, src: Source) -> None:
        c = self.console
        if "checkpoint-" in text and (found := _SAVE.search(text)):
            c.saves.append(Found(int(found.group(2)), src))
        if "/" in text and (found := _BAR.search(text)):
            total = c.block.get("total_optimization_steps")
            if total is not None and int(found.group(2)) == total.value:
                n = int(found.group(1))
                if c.bar is None or n >= c.bar.value:
                    c.bar = Found(n, src)
        if "world size" in text and (found := _WORLD.search(text)):
            c.world_size = Found(int(found.group(2)), src)
        elif "distributed tasks" in text and c.world_size is None and (found := _TASKS.search(text)):
            c.world_size = Found(int(found.group(1)), src)
        if "transformers_version" in text and (found := _VERSION.search(text)):
            c.transformers_version = c.transformers_version or Found(found.group(1), src)
        if "Previous trainer log in this folder will be deleted" in text:
            c.trainer_log_deleted = Found(True, src)


def read_console(data: bytes | str, path: str) -> Console:
    """Read a console log (bytes as uploaded, or pasted text)."""
    text = data if isinstance(data, str) else decode_text(data, path)
    reader = _Reader(path)
    for number, raw in enumerate(iter_lines(text, path), start=1):
        reader.line(number, raw)
    reader.console.failure = reader.traceback.failure
    return reader.console
