"""Figures measured in the course (not computed): kept as data in measurements.yaml, shown labelled as measured."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

FILE = Path(__file__).with_name("measurements.yaml")


@lru_cache(maxsize=1)
def measurements() -> dict[str, dict[str, Any]]:
    """{name: {per_device_train_batch_size, gradient_accumulation_steps, steps, peak_memory_gib, seconds}}."""
    return yaml.safe_load(FILE.read_text(encoding="utf-8"))
