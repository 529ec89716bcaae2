"""Reading a dataset's rows as LLaMA-Factory's loader sees them: JSON / JSON Lines by orjson, the rest by pyarrow."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from steplab.dataset.catalog import FILE_TYPES
from steplab.dataset.errors import DatasetError

MAX_FILE_BYTES = 64 * 1024 * 1024
"""The largest dataset file StepLab reads (the page and the CLI say so; a larger one is refused, not cut)."""
MAX_ROWS = 2_000_000
"""The most rows StepLab counts in one dataset."""

Row = dict[str, Any]


def _json_rows(data: bytes, dataset: str, path: str) -> list[Any]:
    """A JSON array of rows, or JSON Lines (one row per line): both are what `datasets`' json reader takes."""
    try:
        whole = orjson.loads(data)
    except orjson.JSONDecodeError as error:
        if data.lstrip().startswith(b"["):
            raise DatasetError("dataset.bad_json", dataset=dataset, path=path, where=error.pos) from None
    else:
        if isinstance(whole, list):
            return whole
        if isinstance(whole, dict):
            return [whole]  # one line of JSON Lines
        raise DatasetError("dataset.not_rows", dataset=dataset, path=path)
    rows = []
    for number, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append(orjson.loads(line))
        except orjson.JSONDecodeError:
            raise DatasetError("dataset.bad_json_line", dataset=dataset, path=path, line=number) from None
    return rows


def _arrow_rows(data: bytes, kind: str) -> list[Any]:
    import pyarrow as pa  # lazily: only CSV, Parquet and Arrow files need it

    source = pa.BufferReader(data)
    if kind == "csv":
        from pyarrow import csv

        table = csv.read_csv(source)
    elif kind == "parquet":
        from pyarrow import parquet

        table = parquet.read_table(source)
    else:
        table = pa.ipc.open_stream(source).read_all()
    return table.to_pylist()


def rows_from_bytes(data: bytes, name: str, dataset: str, label: str) -> list[Any]:
    """Every row of one dataset file's bytes (`name` gives the type by its ending; `label` names it in messages).

    A row that is not a JSON object stays as it is, to be counted as broken.
    """
    kind = FILE_TYPES.get(Path(name).suffix[1:])
    if kind is None:
        raise DatasetError("dataset.file_type", dataset=dataset, path=label, allowed=", ".join(FILE_TYPES))
    try:
        if kind == "json":
            rows = _json_rows(data, dataset, label)
        elif kind == "text":
            rows = [{"text": line} for line in data.decode("utf-8").splitlines()]
        else:
            rows = _arrow_rows(data, kind)
    except DatasetError:
        raise
    except (OSError, UnicodeDecodeError, ValueError) as error:  # pyarrow's errors are ValueErrors
        raise DatasetError("dataset.unreadable", dataset=dataset, path=label, reason=type(error).__name__) from None
    if not isinstance(rows, list):
        raise DatasetError("dataset.not_rows", dataset=dataset, path=label)
    if len(rows) > MAX_ROWS:
        raise DatasetError("dataset.too_many_rows", dataset=dataset, path=label, rows=len(rows), limit=MAX_ROWS)
    return rows


def check_size(size: int, dataset: str, label: str, max_bytes: int = MAX_FILE_BYTES) -> None:
    """Refuse a file above `max_bytes` before reading it."""
    if size > max_bytes:
        raise DatasetError("dataset.too_large", dataset=dataset, path=label, size=size, limit=max_bytes)


def read_rows(path: Path, dataset: str, max_bytes: int = MAX_FILE_BYTES) -> list[Any]:
    """Every row of one dataset file on disk."""
    try:
        size = path.stat().st_size
    except OSError:
        raise DatasetError("dataset.missing_file", dataset=dataset, path=str(path)) from None
    check_size(size, dataset, str(path), max_bytes)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise DatasetError("dataset.unreadable", dataset=dataset, path=str(path), reason=type(error).__name__) from None
    return rows_from_bytes(data, path.name, dataset, str(path))


def read_dataset(paths: list[Path], dataset: str, max_bytes: int = MAX_FILE_BYTES) -> list[Any]:
    """The rows of all files of one dataset, in the order `datasets` concatenates them."""
    rows: list[Any] = []
    for path in paths:
        rows.extend(read_rows(path, dataset, max_bytes))
    return rows
