"""How many prompt and response messages each row of a dataset table converts to: all the processors' rules read.

`row_shapes` runs LLaMA-Factory's converter (`examples.convert`) on every row, unless the table has one of the
two shapes nearly every dataset has, which it counts with Arrow and numpy column by column, with the same
result (a property test holds the two to each other):
- alpaca whose text columns are text (or empty) and which has no history, kto or media columns in use;
- sharegpt (and `openai`-tagged sharegpt) whose messages are a list of {role, content} records, none null.
A row LLaMA-Factory would fail on (see `examples.Unconvertible`) raises `DatasetError` with its number.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from steplab.dataset.catalog import DatasetAttr
from steplab.dataset.errors import DatasetError
from steplab.dataset.examples import Example, Unconvertible, convert, kept
from steplab.i18n import msg

STRUCT_TEXT, STRUCT_NULL, EMPTY_LIST = "list<struct<role, content: string>>", "list<struct<role, content: null>>", (
    "list<null>")


def _value_type(values: list[Any]) -> str:
    """The type `datasets` infers for a column of these Python values ("null" when all are None)."""
    kinds = {type(value).__name__ for value in values if value is not None}
    return "null" if not kinds else ("string" if kinds == {"str"} else "|".join(sorted(kinds)))


def _messages_type(lists: list[tuple]) -> str:
    """The type of a `_prompt` or `_response` column: a list of {role, content} records, or of nothing at all."""
    contents = [content for messages in lists for _, content in messages]
    if not any(lists):
        return EMPTY_LIST
    kind = _value_type(contents)
    return STRUCT_TEXT if kind == "string" else STRUCT_NULL if kind == "null" else f"list<struct<role, {kind}>>"


def aligned(features: list[dict[str, str]]) -> str | None:
    """The first converted column whose types `datasets` cannot align across these datasets (None: all align).

    `concatenate_datasets` and `interleave_datasets` accept a column whose types are equal or where one is null;
    a list of messages never counts as null, so a dataset none of whose rows has a response cannot be merged
    with one that has responses.
    """
    for column in ("_prompt", "_response", "_system", "_tools"):
        kinds = {f[column] for f in features if f[column] != "null"}
        if len(kinds) > 1:
            return column
    return None


@dataclass(frozen=True)
class Shapes:
    """Per row: the number of prompt and of response messages after conversion, and whether its encoding must
    be checked row by row (`encodable.check`): the column-wise count vouches for the others."""

    prompt: np.ndarray
    response: np.ndarray
    suspect: np.ndarray
    features: dict[str, str]

    def __len__(self) -> int:
        return len(self.prompt)

    def kept(self, processor: str) -> np.ndarray:
        """Which rows the processor keeps (a boolean array): the rules of `examples.kept`, column-wise."""
        if processor == "pretrain":
            return np.ones(len(self.prompt), dtype=bool)
        odd = self.prompt % 2 == 1
        return odd & (self.response >= 2 if processor == "pairwise" else self.response == 1)


def _is_text(arrow_type: Any) -> bool:
    import pyarrow as pa

    return pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type)


def _textual(table: Any, column: str | None) -> bool:
    """The column is absent from the attr, or present and holds only text or nulls."""
    import pyarrow as pa

    if not column:
        return True
    return column in table.column_names and (
        _is_text(table.schema.field(column).type) or pa.types.is_null(table.schema.field(column).type))


def _strings(table: Any, column: str | None) -> np.ndarray:
    """Rows whose value in `column` is a string (`isinstance(value, str)` after `datasets`)."""
    if not column or column not in table.column_names or not _is_text(table.schema.field(column).type):
        return np.zeros(table.num_rows, dtype=bool)
    import pyarrow.compute as pc

    return pc.is_valid(table.column(column)).to_numpy(zero_copy_only=False)


def _all_null(table: Any, column: str) -> bool:
    return column in table.column_names and table.column(column).null_count == table.num_rows


def _media_free(table: Any, attr: DatasetAttr) -> bool:
    return all(not attr.column(role) for role in ("images", "videos", "audios"))


def _alpaca_fast(table: Any, attr: DatasetAttr) -> Shapes | None:
    column = attr.column
    if attr.formatting != "alpaca" or column("kto_tag") or not _media_free(table, attr):
        return None
    for role in ("history", "tools"):
        if column(role) and not _all_null(table, column(role)):
            return None
    needed = [column("system")] if column("system") else []
    if attr.ranking:
        needed += [column("chosen"), column("rejected")]
    if any(name is None or name not in table.column_names for name in needed):
        return None
    if not (_textual(table, column("prompt")) and _textual(table, column("query"))):
        return None
    if column("response") and column("response") not in table.column_names:
        return None
    rows = table.num_rows
    response = np.where(_strings(table, column("response")), 1, 0)
    if attr.ranking:
        pair = _strings(table, column("chosen")) & _strings(table, column("rejected"))
        response = np.where(pair, 2, response)
    features = {"_prompt": STRUCT_TEXT, "_response": STRUCT_TEXT if response.any() else EMPTY_LIST,
                "_system": "string" if not column("system") or _strings(table, column("system")).any() else "null",
                "_tools": "null" if column("tools") else "string"}
    return Shapes(np.ones(rows, dtype=np.int64), response.astype(np.int64), np.zeros(rows, dtype=bool), features)


def _messages(table: Any, attr: DatasetAttr) -> Any | None:
    """The messages column as one list array of {role, content} structs, or None if it has another shape."""
    import pyarrow as pa

    name = attr.column("messages")
    if not name or name not in table.column_names:
        return None
    column = table.column(name)
    kind = column.type
    if not (pa.types.is_list(kind) or pa.types.is_large_list(kind)) or not pa.types.is_struct(kind.value_type):
        return None
    fields = {kind.value_type.field(i).name: kind.value_type.field(i).type for i in range(kind.value_type.num_fields)}
    role, content = attr.tags["role_tag"], attr.tags["content_tag"]
    if role not in fields or content not in fields or not _is_text(fields[role]) or column.null_count:
        return None
    return column.combine_chunks()


def _sharegpt_fast(table: Any, attr: DatasetAttr) -> Shapes | None:
    import pyarrow as pa
    import pyarrow.compute as pc

    tags = attr.tags
    if attr.formatting != "sharegpt" or attr.ranking or attr.column("kto_tag") or not _media_free(table, attr):
        return None
    names = [tags[key] for key in ("user_tag", "assistant_tag", "observation_tag", "function_tag", "system_tag")]
    if not all(isinstance(name, str) and name for name in names) or len(set(names)) != len(names):
        return None
    if any(attr.column(role) and attr.column(role) not in table.column_names for role in ("system", "tools")):
        return None
    if not _textual(table, attr.column("system")):  # the system column is read only where no system message is
        return None
    messages = _messages(table, attr)
    if messages is None:
        return None
    rows = table.num_rows
    lengths = pc.list_value_length(messages).to_numpy(zero_copy_only=False).astype(np.int64)
    roles = pc.struct_field(pc.list_flatten(messages), tags["role_tag"])
    parents = pc.list_parent_indices(messages).to_numpy(zero_copy_only=False).astype(np.int64)
    starts = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])

    def is_in(values: tuple[str, ...]) -> np.ndarray:
        found = pc.is_in(roles, value_set=pa.array(values, roles.type))
        return pc.fill_null(found, False).to_numpy(zero_copy_only=False)

    position = np.arange(len(parents), dtype=np.int64) - starts[parents]
    system_first = np.zeros(rows, dtype=bool)
    has = lengths > 0
    first_is_system = is_in((tags["system_tag"],))
    system_first[has] = first_is_system[starts[:-1][has]]
    turn = position - system_first[parents]
    odd, even = is_in((tags["user_tag"], tags["observation_tag"])), is_in((tags["assistant_tag"], tags["function_tag"]))
    allowed = np.where(turn % 2 == 0, odd, even)
    bad = (turn >= 0) & ~allowed
    wrong_role = np.bincount(parents[bad], minlength=rows) > 0
    turns = lengths - system_first
    broken = wrong_role | (turns % 2 != 0)
    prompt = np.where(broken | (turns == 0), 0, turns - 1)
    response = np.where(broken | (turns == 0), 0, 1)
    contents = pc.struct_field(pc.list_flatten(messages), tags["content_tag"])
    odd_content = (turn >= 0) & (~pc.is_valid(contents).to_numpy(zero_copy_only=False) | is_in((tags["function_tag"],)))
    suspect = np.bincount(parents[odd_content], minlength=rows) > 0  # a null content, or a function call to parse
    if attr.column("tools") and not _all_null(table, attr.column("tools")):
        suspect |= pc.is_valid(table.column(attr.column("tools"))).to_numpy(zero_copy_only=False)
    kept = ~broken & (turns > 0)
    in_prompt = (turn >= 0) & kept[parents] & (turn < turns[parents] - 1)
    in_response = (turn >= 0) & kept[parents] & (turn == turns[parents] - 1)
    valid_content = pc.is_valid(contents).to_numpy(zero_copy_only=False)

    def messages_type(chosen: np.ndarray) -> str:
        return EMPTY_LIST if not chosen.any() else STRUCT_TEXT if valid_content[chosen].any() else STRUCT_NULL

    first_content = np.zeros(rows, dtype=bool)
    first_content[has] = valid_content[starts[:-1][has]]
    system_text = np.where(system_first, first_content,
                           _strings(table, attr.column("system")) if attr.column("system") else True)
    tools = attr.column("tools")
    features = {"_prompt": messages_type(in_prompt), "_response": messages_type(in_response),
                "_system": "string" if system_text.any() else "null",
                "_tools": ("string" if _strings(table, tools).any() else "null") if tools else "string"}
    return Shapes(prompt.astype(np.int64), response.astype(np.int64), suspect, features)


def fast_shapes(table: Any, attr: DatasetAttr) -> Shapes | None:
    """The shapes counted column-wise, or None when the table needs the row-by-row converter."""
    if table.num_rows == 0:
        return None
    return _alpaca_fast(table, attr) or _sharegpt_fast(table, attr)


def convert_row(row: dict[str, Any], attr: DatasetAttr, index: int) -> Example:
    """`examples.convert` for row `index` (0-based), a failure said as the dataset stage's error."""
    try:
        return convert(row, attr)
    except Unconvertible as failure:
        raise DatasetError("dataset.would_fail", dataset=attr.name, row=index + 1,
                           reason=msg(failure.code, **failure.values)) from None


def slow_shapes(table: Any, attr: DatasetAttr) -> Shapes:
    """The shapes from LLaMA-Factory's converter run on every row."""
    converted = [convert_row(row, attr, index) for index, row in enumerate(table.to_pylist())]
    features = {"_prompt": _messages_type([e.prompt for e in converted]),
                "_response": _messages_type([e.response for e in converted]),
                "_system": _value_type([e.system for e in converted]), "_tools": _value_type([e.tools for e in converted])}
    return Shapes(np.array([len(e.prompt) for e in converted], dtype=np.int64),
                  np.array([len(e.response) for e in converted], dtype=np.int64), np.ones(len(converted), dtype=bool),
                  features)


def row_shapes(table: Any, attr: DatasetAttr) -> Shapes:
    """Every row's shape; a dataset with no row stops LLaMA-Factory (its converter reads the first row)."""
    if table.num_rows == 0:
        raise DatasetError("dataset.empty", dataset=attr.name)
    return fast_shapes(table, attr) or slow_shapes(table, attr)


def examples(table: Any, attr: DatasetAttr, rows: np.ndarray) -> list[Example]:
    """The converted examples of the given rows (for token lengths)."""
    picked = table.take(rows).to_pylist() if len(rows) else []
    return [convert_row(row, attr, int(index)) for row, index in zip(picked, rows, strict=True)]


__all__ = ["Shapes", "examples", "fast_shapes", "kept", "row_shapes", "slow_shapes"]
