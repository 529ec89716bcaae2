"""What a run file is, by its name (and, for pasted or oddly named text, by what it holds)."""

from __future__ import annotations

import re
from pathlib import PurePosixPath

STATE = "trainer_state"
TRAINER_LOG = "trainer_log"
RESULTS = "results"
CONFIG = "config"
CONSOLE = "console"
DATASET_INFO = "dataset_info"
TOKENIZER = "tokenizer"
DATA = "data"  # a dataset file, read when `dataset_info.json` names it
OTHER = "other"

RESULT_NAMES = ("all_results.json", "train_results.json", "eval_results.json")
TOKENIZER_NAMES = ("tokenizer.json", "tokenizer_config.json")
CONSOLE_SUFFIXES = (".log", ".txt", ".out", ".err")
DATA_SUFFIXES = (".json", ".jsonl", ".csv", ".parquet", ".arrow")
ARCHIVE_SUFFIXES = (".zip",)
_CHECKPOINT = re.compile(r"(?:^|/)checkpoint-(\d+)/")


def kind_of(path: str) -> str:
    """The kind of a file from its path (the base name decides; folders only say which checkpoint)."""
    name = PurePosixPath(path).name.lower()
    suffix = PurePosixPath(name).suffix
    if name == "trainer_state.json":
        return STATE
    if name.startswith("trainer_log") and suffix == ".jsonl":
        return TRAINER_LOG
    if name in RESULT_NAMES:
        return RESULTS
    if name == "dataset_info.json":
        return DATASET_INFO
    if name in TOKENIZER_NAMES:
        return TOKENIZER
    if suffix in (".yaml", ".yml"):
        return CONFIG
    if suffix in CONSOLE_SUFFIXES:
        return CONSOLE
    if suffix in DATA_SUFFIXES:
        return DATA
    return OTHER


def checkpoint_of(path: str) -> int | None:
    """N of the `checkpoint-N/` folder a file sits in (None outside one)."""
    found = _CHECKPOINT.findall("/" + path)
    return int(found[-1]) if found else None


def sniff(text: str) -> str:
    """The kind of pasted text: a `trainer_state.json`, a `trainer_log.jsonl`, a YAML config, or a console log."""
    head = text.lstrip()[:4096]
    if head.startswith("{") and '"log_history"' in text[:1_000_000]:
        return STATE
    if head.startswith("{") and ('"current_steps"' in head or '"total_steps"' in head):
        return TRAINER_LOG
    if "***** Running training *****" in text or re.search(r"\{'(loss|eval_loss|train_runtime)'", text):
        return CONSOLE
    if re.search(r"^(per_device_train_batch_size|gradient_accumulation_steps|num_train_epochs|stage|dataset)\s*:",
                 text, re.MULTILINE):
        return CONFIG
    return CONSOLE
