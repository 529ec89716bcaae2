"""`dataset_info.json`: how LLaMA-Factory finds each dataset a YAML names, and how it reads its columns."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from steplab.dataset.errors import DatasetError, json_object

INFO_FILE = "dataset_info.json"
FILE_TYPES = {"arrow": "arrow", "csv": "csv", "json": "json", "jsonl": "json", "parquet": "parquet", "txt": "text"}
"""File endings LLaMA-Factory reads (its `FILEEXT2TYPE`), and the reader each one uses."""

COLUMN_DEFAULTS: dict[str, str | None] = {
    "prompt": "instruction", "query": "input", "response": "output", "history": None,
    "messages": "conversations", "system": None, "tools": None, "images": None, "videos": None,
    "audios": None, "chosen": None, "rejected": None, "kto_tag": None,
}
TAG_DEFAULTS = {
    "role_tag": "from", "content_tag": "value", "user_tag": "human", "assistant_tag": "gpt",
    "observation_tag": "observation", "function_tag": "function_call", "system_tag": "system",
}
FORMATTINGS = ("alpaca", "sharegpt", "openai")
"""The row formats LLaMA-Factory 0.9.5 converts (`converter.py`'s `DATASET_CONVERTERS`)."""
REMOTE_KEYS = ("hf_hub_url", "ms_hub_url", "om_hub_url", "script_url", "cloud_file_name")

LLAMAFACTORY_RELEASE = "0.9.5"
"""The LLaMA-Factory release whose data pipeline the dataset stage follows."""
LLAMAFACTORY_TRL = ">=0.18.0,<=0.24.0"
"""The TRL releases LLaMA-Factory 0.9.5 accepts (`extras/misc.py`, `check_dependencies`)."""
LLAMAFACTORY_PPO_TRL = ">=0.8.6,<=0.9.6"
"""The TRL releases its PPO trainer accepts (`train/ppo/trainer.py`, `CustomPPOTrainer.__init__`): none of the above,
so `stage: ppo` stops before its first step in any environment 0.9.5 accepts."""
LLAMAFACTORY_COMMIT = "ff6d4d12e"
"""The LLaMA-Factory commit the demo datasets' sizes were read at (named when they are used)."""
KNOWN_DATASET_ROWS: dict[str, int] = {"identity": 91, "alpaca_en_demo": 999, "dpo_en_demo": 300, "c4_demo": 300}
"""Rows of LLaMA-Factory's bundled demo datasets (trainer-math.md §3.6): used when no count or file is given."""


@dataclass(frozen=True)
class DatasetAttr:
    """One `dataset_info.json` entry: the file, its formatting and column names, as LLaMA-Factory reads them."""

    name: str
    file_name: str | None
    formatting: str = "alpaca"
    ranking: bool = False
    num_samples: int | None = None
    columns: dict[str, str | None] = field(default_factory=lambda: dict(COLUMN_DEFAULTS))
    tags: dict[str, str] = field(default_factory=lambda: dict(TAG_DEFAULTS))
    remote: str | None = None  # a hub / script / cloud source StepLab cannot open

    def column(self, role: str) -> str | None:
        return self.columns.get(role)


def _attr(name: str, entry: Any) -> DatasetAttr:
    if not isinstance(entry, dict):
        raise DatasetError("dataset.bad_entry", dataset=name, path=INFO_FILE)
    remote = next((entry[key] for key in REMOTE_KEYS if key in entry), None)
    columns = dict(COLUMN_DEFAULTS)
    given = entry.get("columns") or {}
    if not isinstance(given, dict):
        raise DatasetError("dataset.bad_entry", dataset=name, path=INFO_FILE)
    columns.update({role: given.get(role) for role in COLUMN_DEFAULTS if "columns" in entry})
    tags = dict(TAG_DEFAULTS)
    if isinstance(entry.get("tags"), dict):
        tags.update({tag: entry["tags"].get(tag) for tag in TAG_DEFAULTS})
    formatting = entry.get("formatting", "alpaca")
    if formatting not in FORMATTINGS:
        raise DatasetError("dataset.formatting", dataset=name, formatting=str(formatting))
    if entry.get("split", "train") != "train":  # a local file has only the split `datasets` calls "train"
        raise DatasetError("dataset.split_unknown", dataset=name, split=str(entry.get("split")))
    num_samples = entry.get("num_samples")
    if num_samples is not None and (isinstance(num_samples, bool) or not isinstance(num_samples, int)
                                    or num_samples < 0):
        raise DatasetError("dataset.bad_entry", dataset=name, path=INFO_FILE)
    file_name = entry.get("file_name")
    if remote is None and not isinstance(file_name, str):
        raise DatasetError("dataset.bad_entry", dataset=name, path=INFO_FILE)
    return DatasetAttr(name, file_name if remote is None else None, formatting, bool(entry.get("ranking", False)),
                       num_samples, columns, tags, str(remote) if remote is not None else None)


def read_info(text: str | bytes, names: list[str], source: str = INFO_FILE) -> list[DatasetAttr]:
    """The entries for `names` from the text of a `dataset_info.json`; a name it lacks is an error."""
    info = json_object(text, "dataset.info_unreadable", path=source)
    missing = [name for name in names if name not in info]
    if missing:
        raise DatasetError("dataset.undefined", dataset=", ".join(missing), path=source)
    return [_attr(name, info[name]) for name in names]


def dataset_names(value: Any) -> list[str]:
    """The YAML's `dataset` (a comma-separated string or a list) as names, the way LLaMA-Factory splits it."""
    if value is None:
        return []
    items = value if isinstance(value, list) else str(value).split(",")
    return [str(item).strip() for item in items if str(item).strip()]


def dataset_paths(attr: DatasetAttr, dataset_dir: Path) -> list[Path]:
    """The files of one dataset: its `file_name` under `dataset_dir`, or every entry of that folder.

    A folder's entries come in `os.listdir` order, as LLaMA-Factory lists them (it does not sort: `max_samples`
    then keeps the first rows of whichever file the file system lists first); all must be of one file type.
    """
    if attr.remote is not None:
        raise DatasetError("dataset.remote", dataset=attr.name, source=attr.remote)
    path = dataset_dir / str(attr.file_name)
    if path.is_dir():
        files = [path / entry for entry in os.listdir(path)]
    elif path.is_file():
        files = [path]
    else:
        raise DatasetError("dataset.missing_file", dataset=attr.name, path=str(path))
    kinds = {FILE_TYPES.get(p.suffix[1:]) for p in files}
    if not files or None in kinds:
        raise DatasetError("dataset.file_type", dataset=attr.name, path=str(path),
                           allowed=", ".join(FILE_TYPES))
    if len(kinds) > 1:
        raise DatasetError("dataset.mixed_types", dataset=attr.name, path=str(path))
    return files
