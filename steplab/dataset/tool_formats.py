"""How LLaMA-Factory 0.9.5 writes a row's tools into the system prompt and a function call into a turn.

Each tool format (`tool_format`) has two writers (`llamafactory/data/tool_utils.py`): `tools_text(tools)`
for the parsed `tools` JSON (a list of tool definitions) and `calls_text(calls)` for the (name, arguments
JSON) pairs of a function message. The prompts are data (`tool_prompts.yaml`). A value LLaMA-Factory cannot
write (a tool without `parameters`, arguments that are not an object, ...) raises here as it raises there;
`templates.py` turns that into a clear refusal, since the real run stops on it.
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

PROMPTS_FILE = Path(__file__).with_name("tool_prompts.yaml")
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
Call = tuple[Any, str]
"""A function call: its name (as the JSON gave it) and its arguments as JSON text."""


@lru_cache(maxsize=1)
def _prompts() -> dict[str, str]:
    return yaml.safe_load(PROMPTS_FILE.read_text(encoding="utf-8"))


def _prompt(prompt: str, /, **values: Any) -> str:
    """A prompt with its {placeholders} filled in one pass (a filled value is never read again; a value that is
    not text is written as `str.format` writes it)."""
    return re.sub(r"\{(tool_text|tool_names|date|name|body)\}", lambda found: str(values[found[1]]), _prompts()[prompt])


def _dumps(value: Any, indent: int | None = None) -> str:
    return json.dumps(value, ensure_ascii=False, indent=indent)


def day_text(day: datetime.date) -> str:
    """The day as LLaMA 3's tool prompt writes it (`%d %b %Y` in the C locale): 05 Dec 2026."""
    return f"{day.day:02d} {MONTHS[day.month - 1]} {day.year}"


def _unwrapped(tool: Any) -> Any:
    """A tool's definition: the `function` of an OpenAI-style `{"type": "function", ...}` entry ("" if none)."""
    return tool.get("function", "") if tool.get("type") == "function" else tool


def _function_or_self(tool: Any) -> Any:
    """The `function` of an OpenAI-style entry, or the entry itself when it has none (qwen3_5, lfm2, gemma4)."""
    return tool.get("function", tool) if tool.get("type") == "function" else tool


def _wrapped(tool: Any) -> Any:
    """A tool in OpenAI's shape: `{"type": "function", "function": ...}` unless it is one already."""
    return tool if tool.get("type") == "function" else {"type": "function", "function": tool}


def _arguments(calls: list[Call]) -> list[tuple[Any, Any]]:
    return [(name, json.loads(arguments)) for name, arguments in calls]


# --- default -------------------------------------------------------------------------------------------------

def _default_tools(tools: Any, day: datetime.date) -> str:
    tool_text, names = "", []
    for tool in tools:
        tool = _unwrapped(tool)
        lines = ""
        for name, param in tool["parameters"]["properties"].items():
            required = ", required" if name in tool["parameters"].get("required", []) else ""
            enum = ", should be one of [{}]".format(", ".join(param["enum"])) if param.get("enum", None) else ""
            items = (", where each item should be {}".format(param["items"].get("type", ""))
                     if param.get("items", None) else "")
            lines += f"  - {name} ({param.get('type', '')}{required}): {param.get('description', '')}{enum}{items}\n"
        tool_text += f"> Tool Name: {tool['name']}\nTool Description: {tool.get('description', '')}\nTool Args:\n{lines}\n"
        names.append(tool["name"])
    return _prompt("default", tool_text=tool_text, tool_names=", ".join(names))


def _default_calls(calls: list[Call]) -> str:
    return "\n".join(f"Action: {name}\nAction Input: {arguments}" for name, arguments in calls)


# --- glm4 ----------------------------------------------------------------------------------------------------

def _glm4_tools(tools: Any, day: datetime.date) -> str:
    tool_text = ""
    for tool in tools:
        tool = _unwrapped(tool)
        tool_text += _prompt("glm4_tool", name=tool["name"], body=_dumps(tool, indent=4))
    return _prompt("glm4", tool_text=tool_text)


def _glm4_calls(calls: list[Call]) -> str:
    if len(calls) > 1:
        raise ValueError("GLM-4 does not support parallel functions.")
    return f"{calls[0][0]}\n{calls[0][1]}"


# --- llama3 --------------------------------------------------------------------------------------------------

def _llama3_tools(tools: Any, day: datetime.date) -> str:
    tool_text = "".join(_dumps(_wrapped(tool), indent=4) + "\n\n" for tool in tools)
    return _prompt("llama3", date=day_text(day), tool_text=tool_text)


def _llama3_calls(calls: list[Call]) -> str:
    objects = [{"name": name, "parameters": arguments} for name, arguments in _arguments(calls)]
    return _dumps(objects[0] if len(objects) == 1 else objects)


# --- mistral -------------------------------------------------------------------------------------------------

def _mistral_tools(tools: Any, day: datetime.date) -> str:
    return "[AVAILABLE_TOOLS] " + _dumps([_wrapped(tool) for tool in tools]) + "[/AVAILABLE_TOOLS]"


def _mistral_calls(calls: list[Call]) -> str:
    return _dumps([{"name": name, "arguments": arguments} for name, arguments in _arguments(calls)])


# --- qwen, ling ----------------------------------------------------------------------------------------------

def _qwen_tool_text(tools: Any) -> str:
    return "".join("\n" + _dumps(_wrapped(tool)) for tool in tools)


def _qwen_tools(tools: Any, day: datetime.date) -> str:
    return _prompt("qwen", tool_text=_qwen_tool_text(tools))


def _qwen_calls(calls: list[Call]) -> str:
    texts = [_dumps({"name": name, "arguments": arguments}) for name, arguments in _arguments(calls)]
    return "\n".join(f"<tool_call>\n{text}\n</tool_call>" for text in texts)


def _ling_tools(tools: Any, day: datetime.date) -> str:
    return _prompt("ling", tool_text=_qwen_tool_text(tools)) + "\n" + "detailed thinking off"


# --- qwen3_5 -------------------------------------------------------------------------------------------------

def _text_value(value: Any) -> str:
    return value if isinstance(value, str) else _dumps(value)


def _qwen35_tools(tools: Any, day: datetime.date) -> str:
    tool_text = "".join("\n" + _dumps(_function_or_self(tool)) for tool in tools)
    return _prompt("qwen3_5", tool_text=tool_text)


def _qwen35_calls(calls: list[Call]) -> str:
    texts = []
    for name, arguments in _arguments(calls):
        text = f"<tool_call>\n<function={name}>"
        for key, value in arguments.items():
            text += f"\n<parameter={key}>" + f"\n{_text_value(value)}\n</parameter>"
        texts.append(text + "\n</function>\n</tool_call>")
    return "\n".join(texts)


# --- glm4_moe ------------------------------------------------------------------------------------------------

def _glm4_moe_tools(tools: Any, day: datetime.date) -> str:
    return _prompt("glm4_moe", tool_text=_qwen_tool_text(tools))


def _glm4_moe_calls(calls: list[Call]) -> str:
    texts = []
    for name, arguments in _arguments(calls):
        text = "\n<tool_call>" + name
        for key, value in arguments.items():
            text += "\n<arg_key>" + key + "</arg_key>" + "\n<arg_value>" + _text_value(value) + "</arg_value>"
        texts.append(text)
    return "\n".join(texts)


# --- minimax1, minimax2 --------------------------------------------------------------------------------------

def _minimax1_tools(tools: Any, day: datetime.date) -> str:
    return _prompt("minimax1", tool_text="".join(_dumps(_unwrapped(tool)) + "\n" for tool in tools))


def _minimax1_calls(calls: list[Call]) -> str:
    texts = [_dumps({"name": name, "arguments": arguments}) for name, arguments in _arguments(calls)]
    return "<tool_calls>\n" + "\n".join(texts) + "\n</tool_calls>"


def _minimax2_tools(tools: Any, day: datetime.date) -> str:
    return _prompt("minimax2", tool_text="".join("<tool>" + _dumps(_unwrapped(tool)) + "</tool>\n" for tool in tools))


def _minimax2_calls(calls: list[Call]) -> str:
    texts = []
    for name, arguments in _arguments(calls):
        text = f'<invoke name="{name}">'
        for key, value in arguments.items():
            text += f'\n<parameter name="{key}">' + _text_value(value) + "</parameter>"
        texts.append(text + "\n</invoke>")
    return "\n".join(texts)


# --- seed_oss ------------------------------------------------------------------------------------------------

def _seed_tools(tools: Any, day: datetime.date) -> str:
    return _prompt("seed_oss", tool_text="\n" + _dumps(tools))


def _seed_calls(calls: list[Call]) -> str:
    texts = []
    for name, arguments in _arguments(calls):
        text = "\n<seed:tool_call>\n<function=" + name
        for key, value in arguments.items():
            text += "\n<parameter=" + key + ">" + _text_value(value) + "</parameter>"
        texts.append(text + "\n</function>\n</seed:tool_call>")
    return "\n".join(texts)


# --- lfm2 ----------------------------------------------------------------------------------------------------

def _lfm2_tools(tools: Any, day: datetime.date) -> str:
    listed = [_function_or_self(tool) for tool in tools]
    return _prompt("lfm2", tool_text=_dumps(listed))


def _lfm2_calls(calls: list[Call]) -> str:
    written = []
    for name, arguments in _arguments(calls):
        parts = [f'{key}="{value}"' if isinstance(value, str) else f"{key}={_dumps(value)}"
                 for key, value in arguments.items()]
        written.append(f"{name}({', '.join(parts)})")
    return f"<|tool_call_start|>[{', '.join(written)}]<|tool_call_end|>"


# --- gemma4 --------------------------------------------------------------------------------------------------

QUOTE = '<|"|>'


def _gemma4_properties(properties: Any) -> str:
    parts = []
    for name, schema in properties.items():
        items = []
        if schema.get("description"):
            items.append(f"description:{QUOTE}{schema['description']}{QUOTE}")
        if schema.get("type"):
            items.append(f"type:{QUOTE}{str(schema['type']).upper()}{QUOTE}")
        parts.append(f"{name}:{{{','.join(items)}}}")
    return ",".join(parts)


def _gemma4_tools(tools: Any, day: datetime.date) -> str:
    declarations = []
    for tool in tools:
        function = _function_or_self(tool)
        text = f"declaration:{function['name']}{{description:{QUOTE}{function.get('description', '')}{QUOTE}"
        params = function.get("parameters")
        if params:
            parts = []
            if params.get("properties"):
                parts.append(f"properties:{{{_gemma4_properties(params['properties'])}}}")
            if params.get("required"):
                parts.append("required:[" + ",".join(f"{QUOTE}{item}{QUOTE}" for item in params["required"]) + "]")
            if params.get("type"):
                parts.append(f"type:{QUOTE}{str(params['type']).upper()}{QUOTE}")
            text += f",parameters:{{{','.join(parts)}}}"
        response = function.get("response")
        if response:
            parts = []
            if response.get("description"):
                parts.append(f"description:{QUOTE}{response['description']}{QUOTE}")
            kind = str(response.get("type", "")).upper()
            if kind == "OBJECT":
                parts.append(f"type:{QUOTE}{kind}{QUOTE}")
            text += f",response:{{{','.join(parts)}}}"
        declarations.append(text + "}")
    return "\n".join(declarations)


def _gemma4_value(value: Any, quote_keys: bool = True) -> str:
    if isinstance(value, str):
        return f"{QUOTE}{value}{QUOTE}"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "{" + ",".join((f"{QUOTE}{key}{QUOTE}" if quote_keys else str(key)) + ":"
                              + _gemma4_value(value[key], quote_keys) for key in sorted(value)) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_gemma4_value(item, quote_keys) for item in value) + "]"
    return "null" if value is None else str(value)


def _gemma4_calls(calls: list[Call]) -> str:
    texts = []
    for name, raw in calls:
        try:
            arguments = json.loads(raw)
        except (TypeError, json.JSONDecodeError):
            arguments = raw
        text = f"<|tool_call>call:{name}" + "{"
        if isinstance(arguments, dict):
            text += ",".join(f"{key}:{_gemma4_value(arguments[key], False)}" for key in sorted(arguments))
        elif isinstance(arguments, str):
            text += arguments
        else:
            text += _gemma4_value(arguments, False)
        texts.append(text + "}<tool_call|>")
    return "".join(texts)


ToolsWriter = Callable[[Any, datetime.date], str]
CallsWriter = Callable[[list[Call]], str]
FORMATS: dict[str, tuple[ToolsWriter, CallsWriter]] = {
    "default": (_default_tools, _default_calls),
    "gemma4": (_gemma4_tools, _gemma4_calls),
    "glm4": (_glm4_tools, _glm4_calls),
    "llama3": (_llama3_tools, _llama3_calls),
    "lfm2": (_lfm2_tools, _lfm2_calls),
    "minimax1": (_minimax1_tools, _minimax1_calls),
    "minimax2": (_minimax2_tools, _minimax2_calls),
    "mistral": (_mistral_tools, _mistral_calls),
    "qwen": (_qwen_tools, _qwen_calls),
    "qwen3_5": (_qwen35_tools, _qwen35_calls),
    "glm4_moe": (_glm4_moe_tools, _glm4_moe_calls),
    "seed_oss": (_seed_tools, _seed_calls),
    "ling": (_ling_tools, _qwen_calls),
}
"""Every tool format LLaMA-Factory 0.9.5 knows (`tool_utils.TOOLS`), by name: (tools writer, calls writer)."""


def tools_text(tool_format: str, tools_json: str, day: datetime.date) -> str:
    """The text a row's `tools` JSON becomes (`ToolFormatter.apply`): "" for an empty list or object."""
    tools = json.loads(tools_json)
    return FORMATS[tool_format][0](tools, day) if len(tools) != 0 else ""


def calls_text(tool_format: str, calls_json: str) -> str:
    """The text a function message's JSON (one call or a list of them) becomes in `tool_format`."""
    found = json.loads(calls_json)
    calls = found if isinstance(found, list) else [found]
    return FORMATS[tool_format][1]([(call["name"], _dumps(call["arguments"])) for call in calls])
