"""`resume_from_checkpoint` in a YAML: the global step a run resumes from, and the intervals its checkpoint carries.

The Trainer resumes from the folder's `trainer_state.json` (`Trainer._init_training_state`: `TrainerState.load_from_json`,
which brings the checkpoint's `logging_steps`, `eval_steps` and `save_steps` along and keeps them over this run's);
when the folder is not at hand, its name `checkpoint-N` still says the step. Anything else (`true`, a path with no
step in its name) is named as unknown, never guessed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

STATE_FILE = "trainer_state.json"
INTERVALS = ("logging_steps", "eval_steps", "save_steps")
_FOLDER = re.compile(r"checkpoint-(\d+)/?$")


@dataclass(frozen=True)
class Checkpoint:
    """What a run resumes from: its global step (None when unknown), where that came from ("trainer_state",
    "folder_name" or "unknown"), and the intervals its `trainer_state.json` holds (empty without it)."""

    value: str
    step: int | None
    source: str
    intervals: dict[str, int] = field(default_factory=dict)


def read_checkpoint(value: Any, base: Path) -> Checkpoint:
    """The checkpoint `resume_from_checkpoint: value` names, its folder looked for from `base` (the current folder,
    as `llamafactory-cli` and the Trainer look for it)."""
    text = str(value).strip()
    folder = Path(text) if Path(text).is_absolute() else base / text
    state_file = folder / STATE_FILE
    if isinstance(value, str) and state_file.is_file():
        try:
            state = json.loads(state_file.read_text(encoding="utf-8"))
            step = int(state["global_step"])
        except (OSError, ValueError, KeyError, TypeError):
            pass
        else:
            intervals = {name: int(state[name]) for name in INTERVALS
                         if isinstance(state.get(name), int | float) and not isinstance(state.get(name), bool)}
            return Checkpoint(text, step, "trainer_state", intervals)
    match = _FOLDER.search(text) if isinstance(value, str) else None
    if match:
        return Checkpoint(text, int(match.group(1)), "folder_name")
    return Checkpoint(text, None, "unknown")
