"""Whether LLaMA-Factory can write a kept example with its chat template, or stops the run on it.

The processors encode every example they keep (`Template._encode`, `formatter.py`), tokens needed or not, and
the formatters raise on what is not text: a message content that is not a string ("Expected a string"), a
function-call message whose content is not JSON naming a function and its arguments ("Invalid JSON format in
function message"), a tools value that is not JSON text ("Invalid JSON format in tool description"), a system
prompt that is not text. `check` raises `Unconvertible` for those, as LLaMA-Factory would raise.
"""

from __future__ import annotations

import datetime
import json
import re
from typing import Any

from steplab.dataset.errors import DatasetError
from steplab.dataset.examples import FUNCTION, Example, Unconvertible
from steplab.dataset.templates import Template, TemplateOptions, encode_pairs

THOUGHT_WORDS = ("<think>\n", "\n</think>\n\n")
TOOL_CALL_WORDS = ("<tool_call>", "</tool_call>")
"""LLaMA-Factory's default thought and tool-call words (`register_template`), which its function formatter strips."""


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise Unconvertible("dataset.fail.not_text", value=repr(value)[:60])
    return value


def _function_calls(content: Any) -> None:
    """The function formatter's parse: the JSON inside tool-call words, or the content less its thought."""
    content = _text(content)
    inner = re.search(f"{re.escape(TOOL_CALL_WORDS[0])}(.*?){re.escape(TOOL_CALL_WORDS[1])}", content, re.DOTALL)
    if inner is not None:
        part = inner.group(1)
    else:
        thought = re.search(f"{re.escape(THOUGHT_WORDS[0])}(.*?){re.escape(THOUGHT_WORDS[1])}", content, re.DOTALL)
        part = content.replace(thought.group(0), "") if thought else content
    try:
        calls = json.loads(part)
    except json.JSONDecodeError:
        raise Unconvertible("dataset.fail.function_json", value=repr(content)[:60]) from None
    for call in calls if isinstance(calls, list) else [calls]:
        try:
            call["name"], json.dumps(call["arguments"], ensure_ascii=False)
        except (TypeError, KeyError, IndexError):
            raise Unconvertible("dataset.fail.function_call", value=repr(call)[:60]) from None


def _tools(tools: Any) -> None:
    if not tools:
        return
    if not isinstance(tools, str | bytes | bytearray):
        raise Unconvertible("dataset.fail.not_text", value=repr(tools)[:60])
    try:
        json.loads(tools)
    except json.JSONDecodeError:
        raise Unconvertible("dataset.fail.tools_json", value=repr(tools)[:60]) from None


def _messages(messages: list[tuple[str, Any]]) -> None:
    for role, content in messages:
        if role == FUNCTION:
            _function_calls(content)
        else:
            _text(content)


def _written(example: Example, processor: str, template: Template, options: TemplateOptions) -> None:
    """The example written out by the template as the processor writes it (each answer of a pair on its own)."""
    day = options.today or datetime.date.today()
    answers = example.response[:2] if processor == "pairwise" else example.response[:1]
    conversations = [[*example.prompt, answer] for answer in answers] if processor == "pairwise" else [
        [*example.prompt, *answers]]
    for messages in conversations:
        try:
            encode_pairs(template, messages, example.system, example.tools, options.mask_history, day)
        except DatasetError as error:
            raise Unconvertible("dataset.fail.template", reason=error.text) from None


def check(example: Example, processor: str, template: Template | None = None,
          options: TemplateOptions | None = None) -> None:
    """Raise `Unconvertible` where LLaMA-Factory's template encoding of this kept example would raise.

    With the template (as the YAML's options configure it) the example is written out exactly; without one
    (no `template:` and no tokenizer to read its own from) the checks that hold for every template are made.
    """
    if processor == "pretrain":
        return
    system = example.system or (template.default_system if template is not None else "")
    if system and not isinstance(system, str):
        raise Unconvertible("dataset.fail.not_text", value=repr(system)[:60])
    _tools(example.tools)
    if processor == "pairwise":
        _messages(list(example.prompt) + list(example.response[:2]))
    else:
        _messages(list(example.prompt) + list(example.response[:1]))
    if template is not None:
        _written(example, processor, template, options or TemplateOptions())
