"""Token lengths as LLaMA-Factory computes them: the model's own tokenizer, the YAML's chat template, its cut-offs.

Only packing and `stage: pt` need tokens (other rows are truncated to `cutoff_len`, never dropped). The
tokenizer is the model folder's `tokenizer.json`, run by Hugging Face's `tokenizers` (the library
`transformers` itself runs for these files); the templates are LLaMA-Factory's (`templates.yaml`).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from steplab.dataset.errors import DatasetError, json_object
from steplab.dataset.examples import ASSISTANT, USER, Example

TEMPLATES_FILE = Path(__file__).with_name("templates.yaml")
Slot = str | dict[str, str]


@dataclass(frozen=True)
class Template:
    """A chat template's slots and its end-of-sequence rules (LLaMA-Factory's `Template`, what lengths need)."""

    name: str
    user: tuple[Slot, ...] = ("{{content}}",)
    assistant: tuple[Slot, ...] = ("{{content}}", {"special": "eos_token"})
    system: tuple[Slot, ...] | None = None  # None: written like a user turn
    prefix: tuple[Slot, ...] = ()
    default_system: str = ""
    stop_words: tuple[str, ...] = ()
    replace_eos: bool = False
    efficient_eos: bool = False


@lru_cache(maxsize=1)
def templates() -> dict[str, Template]:
    """Every template StepLab can count with, by LLaMA-Factory's name."""
    table = yaml.safe_load(TEMPLATES_FILE.read_text(encoding="utf-8"))
    out = {}
    for name, entry in table.items():
        slots = {key: tuple(entry[key]) for key in ("user", "assistant", "system", "prefix") if key in entry}
        out[name] = Template(name, **slots, default_system=entry.get("default_system", ""),
                             stop_words=tuple(entry.get("stop_words", ())), replace_eos=entry.get("replace_eos", False))
    return out


def _token_text(value: Any) -> str | None:
    return value.get("content") if isinstance(value, dict) else value


class Tokenizer:
    """A model's tokenizer with the special tokens LLaMA-Factory gives it for a template.

    `tokenizer_json` is the text of `tokenizer.json`; `config` the mapping of `tokenizer_config.json` (its
    `eos_token`, `bos_token`), empty when there is none.
    """

    def __init__(self, tokenizer_json: str, config: dict[str, Any], template: Template, label: str = "tokenizer.json"):
        from tokenizers import Tokenizer as Backend  # lazily: only packing and pt need it

        try:
            self.backend = Backend.from_str(tokenizer_json)
        except Exception:  # tokenizers raises a plain Exception for a file it cannot parse
            raise DatasetError("dataset.bad_tokenizer", path=label) from None
        eos = _token_text(config.get("eos_token"))
        if template.replace_eos and template.stop_words:
            eos = template.stop_words[0]
        self.eos_token = eos or "<|endoftext|>"
        self.eos_id = self.backend.token_to_id(self.eos_token)
        bos = _token_text(config.get("bos_token"))
        self.bos_id = self.backend.token_to_id(bos) if bos else None
        self.template = template

    @classmethod
    def from_folder(cls, folder: Path, template: Template) -> Tokenizer:
        """The tokenizer of a local model folder (`model_name_or_path`): `tokenizer.json` and its config."""
        path = folder / "tokenizer.json"
        if not path.is_file():
            raise DatasetError("dataset.no_tokenizer", path=str(path))
        config_path = folder / "tokenizer_config.json"
        return cls(path.read_text(encoding="utf-8"), read_config(config_path.read_bytes() if config_path.is_file()
                                                                  else b"{}", str(config_path)), template, str(path))

    def count(self, text: str) -> int:
        """Tokens of one text slot, without special tokens around it (`encode(..., add_special_tokens=False)`)."""
        return len(self.backend.encode(text, add_special_tokens=False).ids) if text else 0

    def slots(self, slots: tuple[Slot, ...], content: str = "") -> int:
        total = 0
        for slot in slots:
            if isinstance(slot, dict):
                special = self.bos_id if slot["special"] == "bos_token" else self.eos_id
                total += special is not None
            else:
                total += self.count(slot.replace("{{content}}", content))
        return total

    def turns(self, example: Example) -> list[int]:
        """Token lengths of each message, as `Template._encode` writes them (system and prefix in turn 0)."""
        template = self.template
        system = example.system or template.default_system
        lengths = []
        for index, (role, content) in enumerate((*example.prompt, *example.response[:1])):
            length = 0
            if index == 0:
                length += self.slots(template.prefix)
                if system:
                    length += self.slots(template.system or template.user, system)
            length += self.slots(template.user if role != ASSISTANT else template.assistant, content)
            lengths.append(length)
        return lengths


def read_config(data: bytes, label: str = "tokenizer_config.json") -> dict[str, Any]:
    """A `tokenizer_config.json` as a mapping (an unreadable one is an error naming it)."""
    return json_object(data, "dataset.bad_tokenizer", path=label)


def infer_seqlen(source_len: int, target_len: int, cutoff_len: int) -> tuple[int, int]:
    """How LLaMA-Factory truncates a prompt and its response to fit `cutoff_len` (`processor_utils.infer_seqlen`)."""
    if target_len * 2 < cutoff_len:
        max_target_len = cutoff_len
    elif source_len * 2 < cutoff_len:
        max_target_len = cutoff_len - source_len
    else:
        max_target_len = int(cutoff_len * (target_len / (source_len + target_len)))
    new_target_len = min(max_target_len, target_len)
    new_source_len = min(max(cutoff_len - new_target_len, 0), source_len)
    return new_source_len, new_target_len


def supervised_length(turns: list[int], cutoff_len: int, efficient_eos: bool = False,
                      mask_history: bool = False) -> int:
    """The tokens of one sft example after truncation (`SupervisedDatasetProcessor._encode_data_example`).

    Turns are cut in order, each to what `cutoff_len` leaves; `mask_history` cuts from the last turn back.
    """
    total = 1 if efficient_eos else 0
    pairs = list(zip(turns[0::2], turns[1::2], strict=False))
    for source, target in reversed(pairs) if mask_history else pairs:
        if total >= cutoff_len:
            break
        source, target = infer_seqlen(source, target, cutoff_len - total)
        total += source + target
    return total


def greedy_packs(lengths: list[int], capacity: int) -> int:
    """How many packs LLaMA-Factory's greedy knapsack makes (`processor_utils.greedy_knapsack`)."""
    numbers = sorted(lengths)
    packs = 0
    while numbers:
        remaining = capacity
        while True:
            index = bisect.bisect(numbers, remaining)
            if index == 0:
                break
            remaining -= numbers.pop(index - 1)
        packs += 1
    return packs


def pretrain_tokens(tokenizer: Tokenizer, example: Example) -> int:
    """Tokens one row adds to the `pt` stream: its first prompt turn and the end-of-sequence text.

    `processor/pretrain.py` writes `<|end_of_text|>` for the llama3 template and the tokenizer's eos otherwise.
    """
    eos = "<|end_of_text|>" if tokenizer.template.name == "llama3" else tokenizer.eos_token
    return tokenizer.count(example.prompt[0][1] + eos) if example.prompt else 0


__all__ = ["USER", "Template", "Tokenizer", "greedy_packs", "infer_seqlen", "pretrain_tokens",
           "supervised_length", "templates"]
