"""Where a value was read: a file, and the line or JSON key in it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Source:
    """A file path as the user gave it, and the 1-based line or the JSON key the value stands on."""

    file: str
    line: int | None = None
    key: str | None = None

    def __str__(self) -> str:
        if self.line is not None:
            return f"{self.file}:{self.line}"
        return f"{self.file} ({self.key})" if self.key else self.file


@dataclass(frozen=True)
class Found:
    """A value and where it was read."""

    value: Any
    source: Source
