"""Named scenarios (course default, the chapter's alternatives, edge cases), kept as data in presets.yaml.

A preset's title is the catalogue entry `preset.<id>.title`, filled with the preset's own values.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from steplab.i18n import Message, msg
from steplab.trainer.setup import TrainingSetup, setup_from_mapping

PRESETS_FILE = Path(__file__).with_name("presets.yaml")


@dataclass(frozen=True)
class Preset:
    id: str
    title: Message
    values: dict[str, Any]
    model: str | None = None

    def setup(self, **changes: Any) -> TrainingSetup:
        """The preset as a validated setup (all other fields at the Trainer's defaults)."""
        return setup_from_mapping({**self.values, **changes})[0]


@lru_cache(maxsize=1)
def presets() -> dict[str, Preset]:
    data = yaml.safe_load(PRESETS_FILE.read_text(encoding="utf-8"))
    return {
        key: Preset(key, _title(key, item), dict(item["values"]), item.get("model"))
        for key, item in data.items()
    }


def _title(key: str, item: dict[str, Any]) -> Message:
    """`preset.<key>.title` with the preset's values, its model's short name and the example it reproduces."""
    model = item.get("model")
    return msg(f"preset.{key}.title", **item["values"], model=model.rsplit("/", 1)[-1] if model else None,
               example=item.get("example"))
