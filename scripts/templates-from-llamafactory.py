"""Write steplab/dataset/templates.yaml from LLaMA-Factory 0.9.5's own template registry (`TEMPLATES`).

Run from the repository root with the suite's Python: `python scripts/templates-from-llamafactory.py`.
It starts the test oracle (`tests/llamafactory_env.py`: LLaMA-Factory's venv, built once), asks its worker
for every registered template as data and writes the table, leaving out what equals the table's defaults
(`steplab.dataset.templates` reads it back with the same defaults). Review `git diff` afterwards;
tests/test_templates_vs_llamafactory.py checks the table against the registry and the encodings.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from llamafactory_env import Oracle  # noqa: E402

TABLE = ROOT / "steplab" / "dataset" / "templates.yaml"
CLASSES = {"Template": None, "Llama2Template": "llama2", "ReasoningTemplate": "reasoning",
           "Glm47ReasoningTemplate": "glm47_reasoning"}
HEADER = """\
# LLaMA-Factory 0.9.5's chat templates (llamafactory/data/template.py, `register_template`), every one, as
# data: written by scripts/templates-from-llamafactory.py from the registry itself (each value in JSON
# notation, which YAML reads as it is), checked against it and
# against its encodings by tests/test_templates_vs_llamafactory.py. Read by steplab/dataset/templates.py.
#
# A slot list is what a formatter writes: text ({{content}} is the message; {{idx}} the turn number), a
# special token ({special: bos_token} / {special: eos_token}: written only when the tokenizer has one) or a
# token by name ({token: ...}: always one token). Each text slot is tokenised on its own.
# Left out, a key takes its default: system ["{{content}}"]; observation = user; function = assistant;
# assistant ["{{content}}", {special: eos_token}] (["{{content}}"] with efficient_eos); tool_format and
# function_format "default"; class plain (`Template`; llama2 = `Llama2Template`, reasoning =
# `ReasoningTemplate`, glm47_reasoning = `Glm47ReasoningTemplate`); thought_words ["<think>\\n",
# "\\n</think>\\n\\n"]; tool_call_words ["<tool_call>", "</tool_call>"]; multimodal: none (a plugin name
# says the template expects images, videos or audio beside the text).
"""
DEFAULT_THOUGHT = ["<think>\n", "\n</think>\n\n"]
DEFAULT_TOOL_CALL = ["<tool_call>", "</tool_call>"]


def _slots(slots: list) -> list:
    out = []
    for slot in slots:
        if isinstance(slot, dict) and "set" in slot:
            (name,) = slot["set"]
            out.append({"special": name})
        else:
            out.append(slot)
    return out


def entry(template: dict) -> dict:
    """One registry template as the table writes it, defaults left out."""
    out: dict = {}
    kind = CLASSES[template["class"]]
    if kind:
        out["class"] = kind
    user = _slots(template["user"]["slots"])
    assistant = _slots(template["assistant"]["slots"])
    default_assistant = ["{{content}}"] if template["efficient_eos"] else ["{{content}}", {"special": "eos_token"}]
    if user != ["{{content}}"]:
        out["user"] = user
    if assistant != default_assistant:
        out["assistant"] = assistant
    if _slots(template["system"]["slots"]) != ["{{content}}"]:
        out["system"] = _slots(template["system"]["slots"])
    if _slots(template["observation"]["slots"]) != user:
        out["observation"] = _slots(template["observation"]["slots"])
    if _slots(template["function"]["slots"]) != assistant:
        out["function"] = _slots(template["function"]["slots"])
    if template["function"]["tool_format"] != "default":
        out["function_format"] = template["function"]["tool_format"]
    if template["tools"]["type"] == "StringFormatter":
        out["tools"] = _slots(template["tools"]["slots"])
    elif template["tools"]["tool_format"] != "default":
        out["tool_format"] = template["tools"]["tool_format"]
    if template["prefix"]["slots"]:
        out["prefix"] = _slots(template["prefix"]["slots"])
    for key in ("default_system", "stop_words"):
        if template[key]:
            out[key] = template[key]
    for key in ("efficient_eos", "replace_eos"):
        if template[key]:
            out[key] = True
    if list(template["thought_words"]) != DEFAULT_THOUGHT:
        out["thought_words"] = list(template["thought_words"])
    if list(template["tool_call_words"]) != DEFAULT_TOOL_CALL:
        out["tool_call_words"] = list(template["tool_call_words"])
    if template["mm_plugin"] != "BasePlugin":
        out["multimodal"] = template["mm_plugin"]
    return out


def main() -> None:
    oracle = Oracle()
    try:
        registry = oracle.ask({"registry": True})
    finally:
        oracle.close()
    table = {name: entry(template) for name, template in registry.items()}
    lines = [HEADER.rstrip("\n")]
    for name, fields in table.items():
        lines.append(f"{name}:" if fields else f"{name}: {{}}")
        lines += [f"  {key}: {json.dumps(value, ensure_ascii=False)}" for key, value in fields.items()]
    text = "\n".join(lines) + "\n"
    if yaml.safe_load(text) != table:  # JSON is YAML: each value is written as JSON, read back as it was
        raise SystemExit("the table does not read back as written")
    TABLE.write_text(text, encoding="utf-8")
    print(f"{len(table)} templates written to {TABLE.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
