"""The template LLaMA-Factory reads from a tokenizer's own chat template when the YAML names none.

`llamafactory/data/template.py`'s `parse_template`: the Jinja chat template is rendered on four fixed
conversations whose messages are the text `{{content}}`, and the differences between the renderings become
the slots of a plain template (a reasoning one if the assistant's part has `<think>`). The rendering runs in
a child process (`jinja_render.py`: Jinja's sandbox, capped memory and time), since a chat template is code.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from steplab.dataset.errors import DatasetError
from steplab.dataset.templates import Template

RENDERER = Path(__file__).with_name("jinja_render.py")
CPU_SECONDS = 10
TIMEOUT_SECONDS = 30
PLACEHOLDER = "{{content}}"
PROBES = (
    ([{"role": "system", "content": PLACEHOLDER}], False),
    ([{"role": "system", "content": ""}, {"role": "user", "content": PLACEHOLDER}], True),
    ([{"role": "user", "content": PLACEHOLDER}], True),
    ([{"role": "user", "content": PLACEHOLDER}, {"role": "assistant", "content": PLACEHOLDER}], False),
)
"""(messages, add_generation_prompt) of the four renderings `parse_template` makes."""


def render(source: str, variables: dict[str, str]) -> list[str]:
    """The four renderings, or a clear refusal: the real run stops where the template fails."""
    request = json.dumps({"template": source, "variables": variables, "probes": PROBES, "cpu_seconds": CPU_SECONDS})
    try:
        done = subprocess.run([sys.executable, "-I", str(RENDERER)], input=request, capture_output=True,
                              text=True, timeout=TIMEOUT_SECONDS, check=False)
    except subprocess.TimeoutExpired:
        raise DatasetError("dataset.chat_template_failed", reason=f"> {TIMEOUT_SECONDS} s") from None
    try:
        answer = json.loads(done.stdout)
    except json.JSONDecodeError:  # killed at its CPU or memory cap
        raise DatasetError("dataset.chat_template_failed", reason=f"> {CPU_SECONDS} s / exit {done.returncode}") from None
    if "error" in answer:
        raise DatasetError("dataset.chat_template_failed", reason=answer["error"])
    return answer["rendered"]


def _extra_letters(short: str, long: str) -> str:
    """`find_diff`: the letters of `long` skipped while walking both texts in step."""
    i = j = 0
    found = []
    while i < len(short) and j < len(long):
        if short[i] == long[j]:
            i += 1
        else:
            found.append(long[j])
        j += 1
    return "".join(found)


def _has_placeholder(slot: str) -> bool:
    return re.search(r"\{\{[a-zA-Z_][a-zA-Z0-9_]*\}\}", slot) is not None


def parse(source: str, prefix: str, variables: dict[str, str]) -> Template:
    """`parse_template`: the template a chat template gives, `prefix` being the tokenizer's `decode(encode(""))`."""
    system_all, user_empty_system_all, user_all, assistant_all = render(source, variables)
    system_slot = system_all[len(prefix):]
    user_empty_system = user_empty_system_all[len(prefix):]
    user_slot = user_all[len(prefix):]
    assistant_slot = assistant_all[len(prefix) + len(user_slot):]
    kind = "reasoning" if "<think>" in assistant_slot else "plain"
    assistant_slot = assistant_slot.replace("<think>", "").replace("</think>", "").lstrip("\n")
    default_system = ""
    if len(user_slot) > len(user_empty_system):
        default_system = _extra_letters(user_empty_system, user_slot)
        user_slot = user_slot[len(system_slot.replace(PLACEHOLDER, default_system, 1)):]
    for slot in (user_slot, assistant_slot, system_slot):  # StringFormatter wants a placeholder in its slots
        if not _has_placeholder(slot):
            raise DatasetError("dataset.chat_template_failed", reason=f"no placeholder in {slot[:80]!r}")
    if _has_placeholder(prefix):  # and EmptyFormatter none
        raise DatasetError("dataset.chat_template_failed", reason=f"a placeholder in {prefix[:80]!r}")
    return Template("", kind=kind, user=(user_slot,), assistant=(assistant_slot,), system=(system_slot,),
                    observation=(user_slot,), function=(assistant_slot,), prefix=(prefix,) if prefix else (),
                    default_system=default_system)
