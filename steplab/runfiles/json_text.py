"""JSON as the Trainer writes it: Python's `json` module, which writes a diverged loss as `NaN`."""

from __future__ import annotations

import json
from typing import Any

import orjson

from steplab.runfiles.errors import RunFileError


def load_json(text: str, path: str) -> Any:
    """The JSON value of a text (orjson, or the standard reader for `NaN` / `Infinity`), else
    `runfiles.bad_json` with the line the text stops making sense at (a file cut off mid-write included)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        pass
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise RunFileError("runfiles.bad_json", path=path, line=error.lineno) from None
    except RecursionError:
        raise RunFileError("runfiles.bad_json", path=path, line=1) from None
