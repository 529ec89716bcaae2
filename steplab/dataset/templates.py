"""LLaMA-Factory 0.9.5's chat templates: how a conversation is written out, turn by turn, before tokenising.

The table (`templates.yaml`) is every template LLaMA-Factory registers. `Template.configured` applies what the
YAML changes (`TemplateOptions`, as `get_template_and_fix_tokenizer` does); `encode_pairs` writes a
conversation as `Template.encode_multiturn` does, each message a list of elements (`Element`): text, or a
special token. The tokenizer (`tokens.py`) turns elements into token counts, one text element at a time,
as `Template._convert_elements_to_ids` does.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from steplab.dataset import tool_formats
from steplab.dataset.errors import DatasetError
from steplab.dataset.examples import ASSISTANT, FUNCTION, OBSERVATION, USER
from steplab.i18n import code as as_code

TEMPLATES_FILE = Path(__file__).with_name("templates.yaml")
THOUGHT_WORDS = ("<think>\n", "\n</think>\n\n")
TOOL_CALL_WORDS = ("<tool_call>", "</tool_call>")
KINDS = ("plain", "llama2", "reasoning", "glm47_reasoning")
"""Template classes: `Template`, `Llama2Template` (the system prompt goes into the first user message),
`ReasoningTemplate` (an empty thought in assistant turns), `Glm47ReasoningTemplate` (its empty thought is
only the closing tag)."""


@dataclass(frozen=True)
class Special:
    """A special token slot (`{"bos_token"}` / `{"eos_token"}`): one token when the tokenizer has it."""

    name: str


@dataclass(frozen=True)
class NamedToken:
    """A token slot by its text (`{"token": "<|user|>"}`): always one token id."""

    content: str


Slot = str | Special | NamedToken
Slots = tuple[Slot, ...]
Element = Slot
"""What a formatter writes: text (tokenised on its own), or a special or named token."""
EOS, BOS = Special("eos_token"), Special("bos_token")


@dataclass(frozen=True)
class TemplateOptions:
    """The YAML keys (LLaMA-Factory's `DataArguments`) that change how rows are written, with its defaults.

    `today` is not a YAML key: the day LLaMA 3's tool prompt writes (None: the day the count runs, as the
    real run writes the day it runs).
    """

    enable_thinking: bool | None = True
    preserve_thinking: bool = False
    default_system: str | None = None
    tool_format: str | None = None
    mask_history: bool = False
    today: datetime.date | None = None


@dataclass(frozen=True)
class Template:
    """A chat template's formatters and settings (LLaMA-Factory's `Template` and its subclasses)."""

    name: str
    kind: str = "plain"
    user: Slots = ("{{content}}",)
    assistant: Slots = ("{{content}}", EOS)
    system: Slots = ("{{content}}",)
    observation: Slots = ("{{content}}",)
    function: Slots = ("{{content}}", EOS)
    function_format: str = "default"
    tool_format: str = "default"
    tools: Slots | None = None  # a plain string formatter for the tools text (phi4_mini); None: tool_format's
    prefix: Slots = ()
    default_system: str = ""
    stop_words: tuple[str, ...] = ()
    thought_words: tuple[str, str] = THOUGHT_WORDS
    tool_call_words: tuple[str, str] = TOOL_CALL_WORDS
    efficient_eos: bool = False
    replace_eos: bool = False
    multimodal: str | None = None  # the multimodal plugin's name: images, videos or audio beside the text
    enable_thinking: bool | None = True
    preserve_thinking: bool = False

    @property
    def reasoning(self) -> bool:
        """Whether assistant turns get an empty thought (`ReasoningTemplate` and its subclass)."""
        return self.kind in ("reasoning", "glm47_reasoning")

    def configured(self, options: TemplateOptions) -> Template:
        """The template as `get_template_and_fix_tokenizer` leaves it for these options."""
        template = self
        if options.tool_format is not None:
            if options.tool_format not in tool_formats.FORMATS:
                raise DatasetError("dataset.tool_format_unknown", tool_format=options.tool_format,
                                   known=", ".join(tool_formats.FORMATS))
            function = ("{{content}}",) if self.efficient_eos else ("{{content}}", EOS)
            template = replace(template, function=function, function_format=options.tool_format,
                               tool_format=options.tool_format, tools=None)
        if options.default_system is not None:
            template = replace(template, default_system=options.default_system)
        if self.reasoning:
            template = replace(template, enable_thinking=options.enable_thinking,
                               preserve_thinking=options.preserve_thinking)
        return template

    def thought(self) -> str:
        """The empty thought (`add_thought()`): both thought words; the closing one alone for GLM-4.7."""
        return self.thought_words[1] if self.kind == "glm47_reasoning" else "".join(self.thought_words)

    def without_thought(self, content: str) -> str:
        """`remove_thought`: every thought block taken out, then leading newlines."""
        start, end = (re.escape(word) for word in self.thought_words)
        return re.sub(f"{start}(.*?){end}", "", content, flags=re.DOTALL).lstrip("\n")


def _slots(raw: list[Any]) -> Slots:
    out: list[Slot] = []
    for slot in raw:
        if isinstance(slot, str):
            out.append(slot)
        elif "special" in slot:
            out.append(Special(slot["special"]))
        else:
            out.append(NamedToken(slot["token"]))
    return tuple(out)


def _template(name: str, entry: dict[str, Any]) -> Template:
    efficient = bool(entry.get("efficient_eos", False))
    user = _slots(entry.get("user", ["{{content}}"]))
    assistant = _slots(entry["assistant"]) if "assistant" in entry else (
        ("{{content}}",) if efficient else ("{{content}}", EOS))
    return Template(
        name, kind=entry.get("class", "plain"), user=user, assistant=assistant,
        system=_slots(entry.get("system", ["{{content}}"])),
        observation=_slots(entry["observation"]) if "observation" in entry else user,
        function=_slots(entry["function"]) if "function" in entry else assistant,
        function_format=entry.get("function_format", "default"), tool_format=entry.get("tool_format", "default"),
        tools=_slots(entry["tools"]) if "tools" in entry else None, prefix=_slots(entry.get("prefix", [])),
        default_system=entry.get("default_system", ""), stop_words=tuple(entry.get("stop_words", ())),
        thought_words=tuple(entry.get("thought_words", THOUGHT_WORDS)),  # type: ignore[arg-type]
        tool_call_words=tuple(entry.get("tool_call_words", TOOL_CALL_WORDS)),  # type: ignore[arg-type]
        efficient_eos=efficient, replace_eos=bool(entry.get("replace_eos", False)),
        multimodal=entry.get("multimodal"),
    )


@lru_cache(maxsize=1)
def templates() -> dict[str, Template]:
    """Every template LLaMA-Factory 0.9.5 has, by its name."""
    table = yaml.safe_load(TEMPLATES_FILE.read_text(encoding="utf-8"))
    return {name: _template(name, entry or {}) for name, entry in table.items()}


def _apply(slots: Slots, **values: str) -> list[Element]:
    """`StringFormatter.apply`: in each text slot, each `{{name}}` replaced once, in the order given."""
    out: list[Element] = []
    for slot in slots:
        if isinstance(slot, str):
            for name, value in values.items():
                slot = slot.replace("{{" + name + "}}", value, 1)
        out.append(slot)
    return out


def _refused(code: str, template: Template, text: str, error: Exception) -> DatasetError:
    shown = text if len(text) <= 120 else text[:117] + "..."
    return DatasetError(code, template=template.name or "-", text=as_code(shown),
                        error=as_code(f"{type(error).__name__}: {error}"))


def tools_text(template: Template, tools: str, day: datetime.date) -> str:
    """What a row's tools text becomes in the system prompt (`format_tools.apply(content=tools)[0]`)."""
    if template.tools is not None:
        first = _apply(template.tools, content=tools)[0]
        return first if isinstance(first, str) else ""
    try:
        return tool_formats.tools_text(template.tool_format, tools, day)
    except Exception as error:  # noqa: BLE001 - whatever LLaMA-Factory's writer raises stops the real run
        raise _refused("dataset.bad_tools", template, tools, error) from None


def function_text(template: Template, content: str, words: bool) -> str:
    """What a function message becomes (`FunctionFormatter.apply`), before the function slots.

    With `words` (every template but the Llama-2 kind): a `<tool_call>…</tool_call>` block is the JSON and
    the text around it is kept before the calls; otherwise a thought block is kept before them and the rest
    is the JSON.
    """
    try:
        if words:
            start, end = (re.escape(word) for word in template.tool_call_words)
            call = re.search(f"{start}(.*?){end}", content, re.DOTALL)
            if call is not None:
                return content.replace(call.group(0), "") + tool_formats.calls_text(template.function_format,
                                                                                      call.group(1))
            start, end = (re.escape(word) for word in template.thought_words)
            thought = re.search(f"{start}(.*?){end}", content, re.DOTALL)
            if thought is not None:
                return thought.group(0) + tool_formats.calls_text(template.function_format,
                                                                  content.replace(thought.group(0), ""))
        return tool_formats.calls_text(template.function_format, content)
    except Exception as error:  # noqa: BLE001 - whatever LLaMA-Factory's writer raises stops the real run
        raise _refused("dataset.bad_function_call", template, content, error) from None


def encode_messages(template: Template, messages: list[tuple[str, str]], system: str, tools: str,
                    day: datetime.date) -> list[list[Element]]:
    """Each message's elements (`Template._encode` / `Llama2Template._encode`): prefix and system in message 0."""
    system = system or template.default_system
    llama2 = template.kind == "llama2"
    encoded = []
    for index, (role, content) in enumerate(messages):
        elements: list[Element] = []
        system_text = ""
        if index == 0:
            elements += template.prefix
            if system or tools:
                tool_text = tools_text(template, tools, day) if tools else ""
                written = _apply(template.system, content=system + tool_text)
                if llama2:
                    system_text = written[0] if isinstance(written[0], str) else ""
                else:
                    elements += written
        if role == USER:
            elements += (_apply(template.user, content=system_text + content) if llama2
                         else _apply(template.user, content=content, idx=str(index // 2)))
        elif role == ASSISTANT:
            elements += _apply(template.assistant, content=content)
        elif role == OBSERVATION:
            elements += _apply(template.observation, content=content)
        elif role == FUNCTION:
            elements += _apply(template.function, content=function_text(template, content, words=not llama2))
        else:
            raise ValueError(f"unexpected role {role!r}")
        encoded.append(elements)
    return encoded


MEDIA_PLACEHOLDERS = ("<image>", "<video>", "<audio>")
"""LLaMA-Factory's media placeholders (`extras/constants.py`): a multimodal template counts them in the text."""


def check_media(template: Template, messages: list[tuple[str, str]]) -> None:
    """A multimodal template's plugin refuses text holding a media placeholder when the row has no such media
    (`_validate_messages`: the counts must match, and a text row has none)."""
    if template.multimodal is None:
        return
    for _, content in messages:
        for placeholder in MEDIA_PLACEHOLDERS:
            if placeholder in content:
                shown = content if len(content) <= 120 else content[:117] + "..."
                raise DatasetError("dataset.media_placeholder", template=template.name or "-", text=shown,
                                   placeholder=placeholder)


def encode_pairs(template: Template, messages: list[tuple[str, str]], system: str, tools: str,
                 mask_history: bool, day: datetime.date) -> list[tuple[list[Element], list[Element]]]:
    """(prompt, response) elements of each turn, as `encode_multiturn` returns them to the sft processor.

    A reasoning template first drops thoughts (all of them with `enable_thinking: false`; with `mask_history`
    and not `preserve_thinking`, all but the last turn's), then puts an empty thought, tokenised on its own,
    at the end of the prompt (`enable_thinking` false or null: no loss on it) or the start of the response
    (true) of every turn whose answer has no thought tag — only the last turn with `mask_history`.
    """
    check_media(template, messages)
    discarding = mask_history and not template.preserve_thinking
    if template.reasoning:  # two passes, as there: a second pass can find a block the first one joined
        messages = list(messages)
        answers = range(1, len(messages), 2) if template.enable_thinking is False else range(0)
        history = range(1, len(messages) - 2, 2) if discarding else range(0)
        for index in (*answers, *history):
            messages[index] = (messages[index][0], template.without_thought(messages[index][1]))
    encoded = encode_messages(template, messages, system, tools, day)
    if template.reasoning:
        tags = tuple(word.strip() for word in template.thought_words)
        for index in [len(messages) - 2] if discarding else range(0, len(messages), 2):
            answer = messages[index + 1][1]
            if tags[0] not in answer and tags[1] not in answer:
                if template.enable_thinking:
                    encoded[index + 1].insert(0, template.thought())
                else:
                    encoded[index].append(template.thought())
    return [(encoded[index], encoded[index + 1]) for index in range(0, len(encoded), 2)]
