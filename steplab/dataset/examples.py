"""Rows into LLaMA-Factory's standard example (prompt turns, response turns, system), and which rows it drops.

The converters follow `llamafactory/data/converter.py` (0.9.5); the drop rules follow the processors
(`processor/supervised.py`, `processor/pairwise.py`): an sft example needs an odd number of prompt turns and
exactly one response, a pairwise one an odd number of prompt turns and two responses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from steplab.dataset.catalog import DatasetAttr

USER, ASSISTANT, OBSERVATION, FUNCTION = "user", "assistant", "observation", "function"


@dataclass(frozen=True)
class Example:
    """One converted row: `prompt` and `response` are lists of (role, content); `broken` if the row was unreadable.

    Roles are LLaMA-Factory's: "user", "assistant", "observation", "function"; `tools` is the row's tools text
    (a JSON string of tool definitions, or "").
    """

    prompt: tuple[tuple[str, str], ...]
    response: tuple[tuple[str, str], ...]
    system: str = ""
    broken: bool = False
    tools: str = ""


BROKEN = Example((), (), "", True)


def _get(row: dict[str, Any], column: str | None) -> Any:
    return row.get(column) if column else None


def _alpaca(row: dict[str, Any], attr: DatasetAttr) -> Example:
    prompt: list[tuple[str, str]] = []
    history = _get(row, attr.column("history"))
    if isinstance(history, list):
        for turn in history:
            if not (isinstance(turn, (list, tuple)) and len(turn) == 2):
                return BROKEN
            prompt += [(USER, str(turn[0])), (ASSISTANT, str(turn[1]))]
    query = [str(part) for part in (_get(row, attr.column("prompt")), _get(row, attr.column("query"))) if part]
    prompt.append((USER, "\n".join(query)))
    chosen, rejected = _get(row, attr.column("chosen")), _get(row, attr.column("rejected"))
    answer = _get(row, attr.column("response"))
    if attr.ranking and isinstance(chosen, str) and isinstance(rejected, str):
        response = [(ASSISTANT, chosen), (ASSISTANT, rejected)]
    elif isinstance(answer, str):
        response = [(ASSISTANT, answer)]
    else:
        response = []
    system = _get(row, attr.column("system"))
    return Example(tuple(prompt), tuple(response), str(system or ""))


def _sharegpt(row: dict[str, Any], attr: DatasetAttr) -> Example:
    tags = attr.tags
    roles = {tags["user_tag"]: USER, tags["assistant_tag"]: ASSISTANT, tags["observation_tag"]: OBSERVATION,
             tags["function_tag"]: FUNCTION, tags["system_tag"]: "system"}
    odd, even = (tags["user_tag"], tags["observation_tag"]), (tags["assistant_tag"], tags["function_tag"])
    messages = _get(row, attr.column("messages"))
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        return BROKEN
    system = _get(row, attr.column("system")) or ""
    if tags["system_tag"] and messages and messages[0].get(tags["role_tag"]) == tags["system_tag"]:
        system, messages = messages[0].get(tags["content_tag"]) or "", messages[1:]
    aligned = []
    for index, message in enumerate(messages):
        role = message.get(tags["role_tag"])
        if role not in (odd, even)[index % 2]:
            return BROKEN
        aligned.append((roles[role], str(message.get(tags["content_tag"]))))
    if (len(aligned) % 2 == 0) != attr.ranking:  # sft needs user…assistant pairs; pairwise ends on a user turn
        return BROKEN
    if attr.ranking:
        chosen, rejected = _get(row, attr.column("chosen")), _get(row, attr.column("rejected"))
        if not (isinstance(chosen, dict) and isinstance(rejected, dict)):
            return Example(tuple(aligned), (), str(system))
        if chosen.get(tags["role_tag"]) not in even or rejected.get(tags["role_tag"]) not in even:
            return BROKEN
        response = ((ASSISTANT, str(chosen.get(tags["content_tag"]))), (ASSISTANT, str(rejected.get(tags["content_tag"]))))
        return Example(tuple(aligned), response, str(system))
    return Example(tuple(aligned[:-1]), tuple(aligned[-1:]), str(system))


def convert(row: Any, attr: DatasetAttr) -> Example:
    """One row in LLaMA-Factory's standard form; a row that is not a JSON object is broken."""
    if not isinstance(row, dict):
        return BROKEN
    return _sharegpt(row, attr) if attr.formatting == "sharegpt" else _alpaca(row, attr)


def kept(example: Example, kind: str) -> bool:
    """Whether the processor for `kind` ("supervised", "pairwise", "pretrain") keeps this example."""
    if kind == "pretrain":
        return bool(example.prompt)
    needed = 1 if kind == "supervised" else 2
    ok_response = len(example.response) == needed if kind == "supervised" else len(example.response) >= needed
    return len(example.prompt) % 2 == 1 and ok_response


def usable(row: Any, attr: DatasetAttr, kind: str) -> bool:
    """`kept(convert(row, attr), kind)` without building the example (the fast path for alpaca rows)."""
    if attr.formatting != "alpaca" or not isinstance(row, dict):
        return kept(convert(row, attr), kind)
    history = row.get(attr.column("history")) if attr.column("history") else None
    if isinstance(history, list) and not all(isinstance(t, (list, tuple)) and len(t) == 2 for t in history):
        return False
    if kind == "pretrain":
        return True
    if kind == "pairwise":
        return (attr.ranking and isinstance(row.get(attr.column("chosen") or ""), str)
                and isinstance(row.get(attr.column("rejected") or ""), str))
    response = attr.column("response")
    return bool(response) and isinstance(row.get(response), str)
