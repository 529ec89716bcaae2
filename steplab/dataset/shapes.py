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
HAS, TEXT, NULL, OTHER = 1, 2, 4, 8
"""Per-row type bits of a converted column: the row has messages; a value (or message content) is text, null,
something else. Or-ed over rows, they give the type `datasets` infers for those rows."""
COLUMNS = ("_prompt", "_response", "_system", "_tools")


def _value_bits(value: Any) -> int:
    return NULL if value is None else TEXT if isinstance(value, str) else OTHER


def _messages_bits(messages: tuple) -> int:
    bits = HAS if messages else 0
    for _, content in messages:
        bits |= _value_bits(content)
    return bits


def column_type(column: str, bits: int) -> str:
    """The type `datasets` infers for a converted column whose rows' bits or together to `bits`."""
    if column in ("_prompt", "_response"):
        if not bits & HAS:
            return EMPTY_LIST
        return "list<struct<role, other>>" if bits & OTHER else STRUCT_TEXT if bits & TEXT else STRUCT_NULL
    return "other" if bits & OTHER else "string" if bits & TEXT else "null"


def aligned(features: list[dict[str, str]]) -> str | None:
    """The first converted column whose types `datasets` cannot align across these parts (None: all align).

    `concatenate_datasets` and `interleave_datasets` (and `map` joining its workers' shards) accept a column whose
    types are equal or where one is null; a list of messages never counts as null, so rows none of which has a
    response cannot be joined with rows that have one.
    """
    for column in COLUMNS:
        kinds = {f[column] for f in features if f[column] != "null"}
        if len(kinds) > 1:
            return column
    return None


@dataclass(frozen=True)
class Shapes:
    """Per row: the number of prompt and of response messages after conversion, whether its encoding must be
    checked row by row (`encodable.check`: the column-wise count vouches for the others), and the type bits of
    each converted column."""

    prompt: np.ndarray
    response: np.ndarray
    suspect: np.ndarray
    bits: dict[str, np.ndarray]

    def __len__(self) -> int:
        return len(self.prompt)

    def kept(self, processor: str) -> np.ndarray:
        """Which rows the processor keeps (a boolean array): the rules of `examples.kept`, column-wise."""
        if processor == "pretrain":
            return np.ones(len(self.prompt), dtype=bool)
        odd = self.prompt % 2 == 1
        return odd & (self.response >= 2 if processor == "pairwise" else self.response == 1)

    def features_of(self, rows: range | None = None) -> dict[str, str]:
        """The converted columns' types over these rows (all of them by default)."""
        chosen = slice(None) if rows is None else slice(rows.start, rows.stop)
        return {column: column_type(column, int(np.bitwise_or.reduce(self.bits[column][chosen], initial=0)))
                for column in COLUMNS}

    @property
    def features(self) -> dict[str, str]:
        return self.features_of()


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
    system = _strings(table, column("system")) if column("system") else np.ones(rows, dtype=bool)
    bits = {"_prompt": np.full(rows, HAS | TEXT, dtype=np.uint8),
            "_response": np.where(response > 0, HAS | TEXT, 0).astype(np.uint8),
            "_system": np.where(system, TEXT, NULL).astype(np.uint8),
            "_tools": np.full(rows, NULL if column("tools") else TEXT, dtype=np.uint8)}
    return Shapes(np.ones(rows, dtype=np.int64), response.astype(np.int64), np.zeros(rows, dtype=bool), bits)


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

    def messages_bits(chosen: np.ndarray) -> np.ndarray:
        out = np.zeros(rows, dtype=np.uint8)
        for flag, elements in ((HAS, chosen), (TEXT, chosen & valid_content), (NULL, chosen & ~valid_content)):
            out[np.bincount(parents[elements], minlength=rows) > 0] |= flag
        return out

    first_content = np.zeros(rows, dtype=bool)
    first_content[has] = valid_content[starts[:-1][has]]
    system_text = np.where(system_first, first_content,
                           _strings(table, attr.column("system")) if attr.column("system") else True)
    tools = attr.column("tools")
    tools_text = _strings(table, tools) if tools else np.ones(rows, dtype=bool)
    bits = {"_prompt": messages_bits(in_prompt), "_response": messages_bits(in_response),
            "_system": np.where(system_text, TEXT, NULL).astype(np.uint8),
            "_tools": np.where(tools_text, TEXT, NULL).astype(np.uint8)}
    return Shapes(prompt.astype(np.int64), response.astype(np.int64), suspect, bits)


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
    bits = {"_prompt": np.array([_messages_bits(e.prompt) for e in converted], dtype=np.uint8),
            "_response": np.array([_messages_bits(e.response) for e in converted], dtype=np.uint8),
            "_system": np.array([_value_bits(e.system) for e in converted], dtype=np.uint8),
            "_tools": np.array([_value_bits(e.tools) for e in converted], dtype=np.uint8)}
    return Shapes(np.array([len(e.prompt) for e in converted], dtype=np.int64),
                  np.array([len(e.response) for e in converted], dtype=np.int64), np.ones(len(converted), dtype=bool),
                  bits)


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
