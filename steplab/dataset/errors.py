"""What can go wrong while reading datasets, said through the catalogue (`dataset.*` keys)."""

from __future__ import annotations

from typing import Any

import orjson

from steplab.errors import InputError


class DatasetError(InputError):
    """A dataset StepLab cannot read or count: which dataset, which path, and what to change."""


def json_object(data: str | bytes, code: str, **values: Any) -> dict[str, Any]:
    """A JSON text that must hold an object (`dataset_info.json`, `tokenizer_config.json`), else `code`."""
    try:
        found = orjson.loads(data)
    except orjson.JSONDecodeError:
        raise DatasetError(code, **values) from None
    if not isinstance(found, dict):
        raise DatasetError(code, **values)
    return found
