"""One row into LLaMA-Factory's standard example, exactly as its converters do it, and which rows its processors drop.

The converters follow `llamafactory/data/converter.py` (0.9.5) line by line, including where they fail: a row
that would stop LLaMA-Factory (a column the dataset lacks, a history turn that is not a pair, text that is not
text) raises `Unconvertible`, which the funnel reports with the dataset and the row. The processors'
rules (`processor/supervised.py`, `pairwise.py`, `pretrain.py`): an sft example needs an odd number of prompt
messages and exactly one response, a pairwise one an odd number and at least two; pt keeps every row.
Rows are dicts as `datasets` hands them over (every column present, `None` where a value is missing).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from steplab.dataset.catalog import DatasetAttr

USER, ASSISTANT, OBSERVATION, FUNCTION, SYSTEM = "user", "assistant", "observation", "function", "system"
SHORT_SYSTEM = "detailed thinking off"
"""The system text LLaMA-Factory's `openai` converter adds when a row has no tools."""


@dataclass(frozen=True)
class Example:
    """One converted row: `prompt` and `response` are tuples of (role, content); `broken` if the row was unreadable.

    Roles are LLaMA-Factory's: "user", "assistant", "observation", "function"; `tools` is the row's tools text
    (a JSON string of tool definitions, or "").
    """

    prompt: tuple[tuple[str, Any], ...]
    response: tuple[tuple[str, Any], ...]
    system: Any = ""
    broken: bool = False
    tools: Any = ""


BROKEN = Example((), (), "", True)


class Unconvertible(Exception):  # noqa: N818 - a row LLaMA-Factory cannot convert, said with a catalogue key
    """A row on which LLaMA-Factory's converter raises: `code` is a `dataset.fail.*` key, `values` fill it."""

    def __init__(self, code: str, **values: Any) -> None:
        super().__init__(code)
        self.code = code
        self.values = values


def _column(row: dict[str, Any], column: str | None) -> Any:
    """`example[column]` as LLaMA-Factory writes it: a column the dataset lacks stops the run (KeyError)."""
    if column not in row:
        raise Unconvertible("dataset.fail.missing_column", column=str(column))
    return row[column]


def _item(mapping: Any, key: str | None, what: str) -> Any:
    """`message[key]` of one message (a dict in every row, from the table's struct type)."""
    if not isinstance(mapping, dict):
        raise Unconvertible("dataset.fail.not_a_message", what=what)
    if key not in mapping:
        raise Unconvertible("dataset.fail.missing_key", key=str(key), what=what)
    return mapping[key]


def _text_join(parts: list[Any]) -> str:
    if not all(isinstance(part, str) for part in parts):
        raise Unconvertible("dataset.fail.not_text", value=repr(next(p for p in parts if not isinstance(p, str)))[:60])
    return "\n".join(parts)


def _medias(row: dict[str, Any], attr: DatasetAttr) -> None:
    for role in ("images", "videos", "audios"):
        column = attr.column(role)
        if column and _column(row, column) not in (None, []):
            raise Unconvertible("dataset.fail.multimodal", column=column)


def _kto(row: dict[str, Any], attr: DatasetAttr) -> bool:
    return bool(attr.column("kto_tag")) and isinstance(_column(row, attr.column("kto_tag")), bool)


def _alpaca(row: dict[str, Any], attr: DatasetAttr) -> Example:
    prompt: list[tuple[str, Any]] = []
    history = attr.column("history")
    if history and isinstance(_column(row, history), list):
        for turn in row[history]:
            try:
                old_prompt, old_response = turn
            except (TypeError, ValueError):
                raise Unconvertible("dataset.fail.history_turn", turn=repr(turn)[:60]) from None
            prompt += [(USER, old_prompt), (ASSISTANT, old_response)]
    query = []
    for role in ("prompt", "query"):
        column = attr.column(role)
        if column and _column(row, column):
            query.append(row[column])
    prompt.append((USER, _text_join(query)))
    response_column = attr.column("response")
    if _kto(row, attr):
        answer = (ASSISTANT, _column(row, response_column))
        response = [answer, (ASSISTANT, "")] if row[attr.column("kto_tag")] else [(ASSISTANT, ""), answer]
    elif (attr.ranking and isinstance(_column(row, attr.column("chosen")), str)
          and isinstance(_column(row, attr.column("rejected")), str)):
        response = [(ASSISTANT, row[attr.column("chosen")]), (ASSISTANT, row[attr.column("rejected")])]
    elif response_column and isinstance(_column(row, response_column), str):
        response = [(ASSISTANT, row[response_column])]
    else:
        response = []
    system = _column(row, attr.column("system")) if attr.column("system") else ""
    tools = _column(row, attr.column("tools")) if attr.column("tools") else ""
    _medias(row, attr)
    return Example(tuple(prompt), tuple(response), system, False, tools)


def _tag_mapping(attr: DatasetAttr) -> dict[Any, str]:
    tags = attr.tags
    mapping: dict[Any, str] = {}
    for tag, role in (("user_tag", USER), ("assistant_tag", ASSISTANT), ("observation_tag", OBSERVATION),
                      ("function_tag", FUNCTION), ("system_tag", SYSTEM)):
        mapping[tags[tag]] = role  # a tag given as None maps None, the last such role winning, as in a dict literal
    return mapping


def _role(mapping: dict[Any, str], role: Any) -> str:
    try:
        return mapping[role]
    except (KeyError, TypeError):
        raise Unconvertible("dataset.fail.unknown_role", role=repr(role)[:40]) from None


def _leading_system(row: dict[str, Any], attr: DatasetAttr, messages: Any) -> tuple[bool, Any, Any]:
    """Whether the first message is the system prompt, its text, and the messages after it."""
    tags = attr.tags
    if isinstance(messages, str | dict) and not messages:
        messages = []  # an empty text or mapping iterates like an empty list
    if not isinstance(messages, list):
        raise Unconvertible("dataset.fail.no_messages", column=str(attr.column("messages")))
    if tags["system_tag"] and messages and _item(messages[0], tags["role_tag"], "0") == tags["system_tag"]:
        return True, _item(messages[0], tags["content_tag"], "0"), messages[1:]
    return False, None, messages


def _pairwise_response(row: dict[str, Any], attr: DatasetAttr, mapping: dict[Any, str]) -> tuple | None:
    """(chosen, rejected) of a ranking row whose answers are messages; None when they are not both dicts.

    LLaMA-Factory flags an answer with a prompt-side role as broken but keeps the example all the same.
    """
    chosen, rejected = _column(row, attr.column("chosen")), _column(row, attr.column("rejected"))
    if not (attr.ranking and isinstance(chosen, dict) and isinstance(rejected, dict)):
        return None
    tags = attr.tags
    return tuple((_role(mapping, _item(answer, tags["role_tag"], name)), _item(answer, tags["content_tag"], name))
                 for answer, name in ((chosen, "chosen"), (rejected, "rejected")))


def _split(row: dict[str, Any], attr: DatasetAttr, aligned: list[tuple[str, Any]], broken: bool,
           mapping: dict[Any, str]) -> tuple[list, list]:
    """Prompt and response of aligned messages, the same way in the sharegpt and openai converters."""
    if broken:
        return [], []
    if _kto(row, attr):
        answer = aligned[-1:]
        response = answer + [(ASSISTANT, "")] if row[attr.column("kto_tag")] else [(ASSISTANT, "")] + answer
        return aligned[:-1], response
    if attr.ranking:
        pair = _pairwise_response(row, attr, mapping)
        if pair is not None:
            return aligned, list(pair)
    return aligned[:-1], aligned[-1:]


def _count_broken(aligned: list, attr: DatasetAttr) -> bool:
    return (not attr.ranking and len(aligned) % 2 != 0) or (attr.ranking and len(aligned) % 2 == 0)


def _sharegpt(row: dict[str, Any], attr: DatasetAttr) -> Example:
    tags, mapping = attr.tags, _tag_mapping(attr)
    accept = ((tags["user_tag"], tags["observation_tag"]), (tags["assistant_tag"], tags["function_tag"]))
    found, system, messages = _leading_system(row, attr, _column(row, attr.column("messages")))
    if not found:
        system = _column(row, attr.column("system")) if attr.column("system") else ""
    aligned: list[tuple[str, Any]] = []
    broken = False
    for index, message in enumerate(messages):
        role = _item(message, tags["role_tag"], str(index))
        if role not in accept[index % 2]:
            broken = True
            break
        aligned.append((_role(mapping, role), _item(message, tags["content_tag"], str(index))))
    broken = broken or _count_broken(aligned, attr)
    prompt, response = _split(row, attr, aligned, broken, mapping)
    tools = _column(row, attr.column("tools")) if attr.column("tools") else ""
    _medias(row, attr)
    return Example(tuple(prompt), tuple(response), system, broken, tools)


def _openai(row: dict[str, Any], attr: DatasetAttr) -> Example:
    tags, mapping = attr.tags, _tag_mapping(attr)
    found, system, messages = _leading_system(row, attr, _column(row, attr.column("messages")))
    if not found:
        system = row.get(attr.column("system"), "") if attr.column("system") else ""
    aligned: list[tuple[str, Any]] = []
    tool_responses: list[Any] = []
    for index, message in enumerate(messages):
        role = _item(message, tags["role_tag"], str(index))
        content = _item(message, tags["content_tag"], str(index))
        if role in (tags["assistant_tag"], tags["function_tag"]) and message.get("tool_calls"):
            try:
                content = json.dumps([call["function"] for call in message["tool_calls"]], ensure_ascii=False)
            except (TypeError, KeyError, ValueError):
                raise Unconvertible("dataset.fail.tool_calls", what=str(index)) from None
            role = tags["function_tag"]
        if role == tags["observation_tag"]:
            tool_responses.append(content)
            continue
        if tool_responses:
            aligned.append((OBSERVATION, _text_join_with(tool_responses)))
            tool_responses = []
        aligned.append((_role(mapping, role), content))
    accept = ((USER, OBSERVATION), (ASSISTANT, FUNCTION))
    broken = any(role not in accept[index % 2] for index, (role, _) in enumerate(aligned))
    broken = broken or _count_broken(aligned, attr)
    prompt, response = _split(row, attr, aligned, broken, mapping)
    tools = row.get(attr.column("tools"), "") if attr.column("tools") else ""
    if isinstance(tools, dict | list):
        tools = json.dumps(tools, ensure_ascii=False)
    system = _openai_system(system, tools)
    _medias(row, attr)
    return Example(tuple(prompt), tuple(response), system, broken, tools)


def _text_join_with(parts: list[Any]) -> str:
    if not all(isinstance(part, str) for part in parts):
        raise Unconvertible("dataset.fail.not_text", value=repr(next(p for p in parts if not isinstance(p, str)))[:60])
    return "\n</tool_response>\n<tool_response>\n".join(parts)


def _openai_system(system: Any, tools: Any) -> Any:
    """The system text the openai converter writes: "detailed thinking off" added when the row has no tools."""
    if not system:
        return SHORT_SYSTEM if not tools else system
    if tools:
        return _concat(system, "\n")
    if "detailed thinking on" in system or SHORT_SYSTEM in system:
        return system
    return _concat(system, "\n" + SHORT_SYSTEM)


def _concat(left: Any, right: str) -> str:
    if not isinstance(left, str):
        raise Unconvertible("dataset.fail.not_text", value=repr(left)[:60])
    return left + right


CONVERTERS = {"alpaca": _alpaca, "sharegpt": _sharegpt, "openai": _openai}


def convert(row: dict[str, Any], attr: DatasetAttr) -> Example:
    """One row (a dict of every column) in LLaMA-Factory's standard form; raises `Unconvertible` where it fails."""
    return CONVERTERS[attr.formatting](row, attr)


def kept(example: Example, processor: str) -> bool:
    """Whether the processor ("supervised", "packed", "pairwise", "pretrain") keeps this example."""
    if processor == "pretrain":
        return True
    if processor == "pairwise":
        return len(example.prompt) % 2 == 1 and len(example.response) >= 2
    return len(example.prompt) % 2 == 1 and len(example.response) == 1


def pretrain_text(example: Example) -> str:
    """The text of a `stage: pt` row: its first prompt message (LLaMA-Factory fails on a row without one)."""
    if not example.prompt:
        raise Unconvertible("dataset.fail.pt_no_text")
    content = example.prompt[0][1]
    if not isinstance(content, str):
        raise Unconvertible("dataset.fail.not_text", value=repr(content)[:60])
    return content
