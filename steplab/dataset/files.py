"""A dataset file read into the Arrow table `datasets.load_dataset` (4.0, LLaMA-Factory 0.9.5's) builds from it.

The same libraries make the same table, so types, nulls and missing keys come out as LLaMA-Factory sees them:
- JSON / JSON Lines: `pyarrow.json` on 10 MiB chunks (each cut at a line end); a chunk it cannot read (a JSON
  array, mixed value types across lines) sends the whole file to `pandas.read_json` (pyarrow dtypes) instead.
- CSV: `pandas.read_csv` with its defaults, 10,000 rows at a time: an empty cell, "NA", "null", "None", "nan" …
  become nulls, a column of numbers becomes numbers.
- Parquet and Arrow (IPC stream, else IPC file) through `pyarrow`; text: one row per line, in a `text` column.
Every later part of a dataset (chunk or file) is cast to the first part's schema, as `datasets` writes them.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from steplab.dataset.catalog import FILE_TYPES
from steplab.dataset.errors import DatasetError

DATASETS_RELEASE = "4.0"
"""The `datasets` release whose readers and writer this stage follows (LLaMA-Factory 0.9.5 pins `datasets<=4.0.0`)."""
MAX_FILE_BYTES = 64 * 1024 * 1024
"""The largest dataset file the web page takes (its uploads are capped at 64 MB)."""
MAX_DISK_FILE_BYTES = 512 * 1024 * 1024
"""The largest dataset file the command line reads from disk (a larger one is refused, not cut)."""
MAX_ROWS = 5_000_000
"""The most rows StepLab counts in one dataset."""
JSON_CHUNK = 10 << 20
"""`datasets`' JSON reader takes files in chunks of this many bytes (then up to the next line end)."""
CSV_CHUNK = 10_000
"""`datasets`' CSV reader takes this many rows at a time, each chunk typed on its own."""


def _json_tables(data: bytes) -> list[Any]:
    import pyarrow as pa
    import pyarrow.json as paj

    tables = []
    start = 0
    while start < len(data):
        end = min(start + JSON_CHUNK, len(data))
        newline = data.find(b"\n", end)
        end = len(data) if newline < 0 or end == len(data) else newline + 1
        batch = data[start:end]
        block = max(JSON_CHUNK // 32, 16 << 10)
        try:
            while True:
                try:
                    tables.append(paj.read_json(io.BytesIO(batch), read_options=paj.ReadOptions(block_size=block)))
                    break
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as error:
                    if (isinstance(error, pa.ArrowInvalid) and "straddling" not in str(error)) or block > len(batch):
                        raise
                    block *= 2
        except pa.ArrowInvalid:
            return [*tables, _pandas_json(data)]  # as `datasets` does: the whole file, after what was read
        start = end
    return tables


def _pandas_json(data: bytes) -> Any:
    import pandas as pd
    import pyarrow as pa

    frame = pd.read_json(io.StringIO(data.decode("utf-8")), dtype_backend="pyarrow")
    if frame.columns.tolist() == [0]:
        frame.columns = ["text"]
    return pa.Table.from_pandas(frame, preserve_index=False)


def _csv_tables(data: bytes) -> list[Any]:
    import pandas as pd
    import pyarrow as pa

    reader = pd.read_csv(io.BytesIO(data), iterator=True, chunksize=CSV_CHUNK)
    return [pa.Table.from_pandas(frame) for frame in reader]


def _arrow_tables(data: bytes, kind: str) -> list[Any]:
    import pyarrow as pa

    if kind == "parquet":
        import pyarrow.parquet as pq

        return [pq.read_table(pa.BufferReader(data))]
    try:
        return [pa.ipc.open_stream(pa.BufferReader(data)).read_all()]
    except (OSError, pa.ArrowInvalid):
        return [pa.ipc.open_file(pa.BufferReader(data)).read_all()]


def _text_table(data: bytes) -> Any:
    import pyarrow as pa

    text = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8").read()  # universal newlines, as `open()` reads
    return pa.table({"text": pa.array([line.rstrip("\n") for line in io.StringIO(text).readlines()], pa.string())})


def table_parts(data: bytes, name: str, dataset: str, label: str) -> list[Any]:
    """The Arrow tables `datasets` builds from one file's bytes, in order (`name` gives the type by its ending)."""
    kind = FILE_TYPES.get(Path(name).suffix[1:])
    if kind is None:
        raise DatasetError("dataset.file_type", dataset=dataset, path=label, allowed=", ".join(FILE_TYPES))
    try:
        if kind == "json":
            try:
                return _json_tables(data)
            except Exception as error:  # noqa: BLE001 - say what is wrong in the user's terms when we can
                raise _json_failure(data, dataset, label, error) from None
        if kind == "csv":
            return _csv_tables(data)
        if kind == "text":
            return [_text_table(data)]
        return _arrow_tables(data, kind)
    except DatasetError:
        raise
    except Exception as error:  # noqa: BLE001 - pyarrow and pandas raise many kinds for a file they cannot read
        raise DatasetError("dataset.unreadable", dataset=dataset, path=label, reason=_reason(error)) from None


def _json_failure(data: bytes, dataset: str, label: str, error: Exception) -> DatasetError:
    """Why a JSON file did not load: bad JSON (where), not rows, or values `datasets` cannot put in one column."""
    import orjson

    try:
        whole = orjson.loads(data)
    except orjson.JSONDecodeError as bad:
        if data.lstrip().startswith(b"["):
            return DatasetError("dataset.bad_json", dataset=dataset, path=label, where=bad.pos)
        for number, line in enumerate(data.splitlines(), 1):
            try:
                if line.strip():
                    orjson.loads(line)
            except orjson.JSONDecodeError:
                return DatasetError("dataset.bad_json_line", dataset=dataset, path=label, line=number)
        return DatasetError("dataset.unreadable", dataset=dataset, path=label, reason=_reason(error))
    if not isinstance(whole, list | dict) or (isinstance(whole, list) and not all(isinstance(r, dict) for r in whole)):
        return DatasetError("dataset.not_rows", dataset=dataset, path=label)
    return DatasetError("dataset.column_types", dataset=dataset, path=label, reason=_reason(error))


def _reason(error: Exception) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0][:160]}" if text else type(error).__name__


def combine(parts: list[Any], dataset: str, label: str) -> Any:
    """One table of a dataset's parts: each later part cast to the first part's columns and types (a column a
    later part lacks is null there; a column only a later part has stops `datasets`).

    No row at all is refused: `datasets` finds no data, or LLaMA-Factory's converter has no first row to read.
    `datasets` writes a dataset with the first part's schema; a part with other columns, or with values that
    do not cast (text where the first part had numbers), stops LLaMA-Factory, and StepLab says so.
    """
    import pyarrow as pa

    parts = [part for part in parts if part.num_columns]  # a part without columns holds no data for `datasets`
    if not parts or not sum(part.num_rows for part in parts):
        raise DatasetError("dataset.empty", dataset=dataset)
    first = parts[0].schema
    cast = [parts[0]]
    for part in parts[1:]:
        extra = [name for name in part.schema.names if name not in first.names]
        if extra:  # a later part may lack a column (nulls there), never bring a new one
            raise DatasetError("dataset.columns_differ", dataset=dataset, path=label,
                               first=", ".join(first.names), other=", ".join(part.schema.names))
        for name in first.names:
            if name not in part.schema.names:
                part = part.append_column(first.field(name), pa.nulls(part.num_rows, first.field(name).type))
        try:
            cast.append(part.select(first.names).cast(first))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as error:
            raise DatasetError("dataset.unreadable", dataset=dataset, path=label, reason=_reason(error)) from None
    table = pa.concat_tables(cast)
    if table.num_rows > MAX_ROWS:
        raise DatasetError("dataset.too_many_rows", dataset=dataset, path=label, rows=table.num_rows, limit=MAX_ROWS)
    return table


def table_from_bytes(data: bytes, name: str, dataset: str, label: str) -> Any:
    """The table of one file's bytes (an uploaded file)."""
    return combine(table_parts(data, name, dataset, label), dataset, label)


def check_size(size: int, dataset: str, label: str, max_bytes: int = MAX_FILE_BYTES) -> None:
    """Refuse a file above `max_bytes` before reading it."""
    if size > max_bytes:
        raise DatasetError("dataset.too_large", dataset=dataset, path=label, size=size, limit=max_bytes)


def _read_bytes(path: Path, dataset: str, max_bytes: int) -> bytes:
    try:
        size = path.stat().st_size
    except OSError:
        raise DatasetError("dataset.missing_file", dataset=dataset, path=str(path)) from None
    check_size(size, dataset, str(path), max_bytes)
    try:
        return path.read_bytes()
    except OSError as error:
        raise DatasetError("dataset.unreadable", dataset=dataset, path=str(path), reason=type(error).__name__) from None


def read_dataset(paths: list[Path], dataset: str, max_bytes: int = MAX_DISK_FILE_BYTES) -> Any:
    """The table of all files of one dataset, in the order given (as `datasets` concatenates them)."""
    parts = []
    for path in paths:
        parts += table_parts(_read_bytes(path, dataset, max_bytes), path.name, dataset, str(path))
    return combine(parts, dataset, str(paths[0].parent if len(paths) > 1 else paths[0]))
