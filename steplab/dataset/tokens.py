"""Token lengths as LLaMA-Factory computes them: the model's own tokenizer, the YAML's chat template, its cut-offs.

Only packing and `stage: pt` need tokens (other rows are truncated to `cutoff_len`, never dropped). The
tokenizer is the model folder's `tokenizer.json`, run by Hugging Face's `tokenizers` (what `transformers`
runs for it), with the special tokens `transformers` 5 adds when it loads `tokenizer_config.json` and those
LLaMA-Factory's `fix_special_tokens` adds for the template (a replaced eos, the stop words: text containing
them then tokenises differently). The templates are LLaMA-Factory's (`templates.py`).
"""

from __future__ import annotations

import bisect
import datetime
from pathlib import Path
from typing import Any

from steplab.dataset import chat_template
from steplab.dataset.errors import DatasetError, json_object
from steplab.dataset.examples import USER, Example
from steplab.dataset.templates import (
    Element,
    NamedToken,
    Template,
    TemplateOptions,
    encode_pairs,
    templates,
)

NAMED_SPECIAL = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")
"""`transformers`' named special tokens (`SPECIAL_TOKENS_ATTRIBUTES`), in its order."""


def _token_text(value: Any) -> str | None:
    """The text of a special token given as a string, a serialised `AddedToken` or an `AddedToken`."""
    if hasattr(value, "content") and not isinstance(value, dict):
        return value.content
    if isinstance(value, dict):
        content = value.get("content")
        return content if isinstance(content, str) else None
    return value if isinstance(value, str) else None


def _added_token(value: Any, special: bool | None = None) -> Any:
    """A config entry as `tokenizers.AddedToken`: a string (special), or a serialised `{"content": ..., flags}`."""
    from tokenizers import AddedToken

    if isinstance(value, AddedToken):
        return value
    if isinstance(value, str):
        return AddedToken(value, special=True) if special is None else AddedToken(value, special=special)
    flags = {key: bool(value[key]) for key in ("single_word", "lstrip", "rstrip", "normalized", "special")
             if key in value}
    return AddedToken(value["content"], **flags)


def _named_tokens(config: dict[str, Any]) -> dict[str, Any]:
    """The special tokens `transformers` names: the standard ones, then model-specific `*_token` keys."""
    named = {key: config[key] for key in NAMED_SPECIAL if _token_text(config.get(key)) is not None}
    extra = config.get("extra_special_tokens", config.get("additional_special_tokens"))
    specific = {key: value for key, value in config.items() if key.endswith("_token") and key not in NAMED_SPECIAL
                and (isinstance(value, str) or (isinstance(value, dict) and value.get("__type") == "AddedToken"))}
    if isinstance(extra, dict):
        specific.update({key: value for key, value in extra.items() if _token_text(value) is not None})
    return {**named, **specific}


def _extra_tokens(config: dict[str, Any]) -> list[Any]:
    extra = config.get("extra_special_tokens", config.get("additional_special_tokens"))
    return [token for token in extra if _token_text(token) is not None] if isinstance(extra, list) else []


class Tokenizer:
    """A model's tokenizer as LLaMA-Factory holds it for a template: loaded by `transformers`, then fixed.

    `tokenizer_json` is the text of `tokenizer.json`; `config` the mapping of `tokenizer_config.json` (empty
    when there is none; a `chat_template` in it is what an unnamed template is read from). `template` None
    is the YAML without `template:`: the tokenizer's chat template, else `empty`.
    """

    def __init__(self, tokenizer_json: str, config: dict[str, Any], template: Template | None,
                 options: TemplateOptions | None = None, label: str = "tokenizer.json"):
        from tokenizers import Tokenizer as Backend  # lazily: only packing and pt need it

        try:
            self.backend = Backend.from_str(tokenizer_json)
        except Exception:  # tokenizers raises a plain Exception for a file it cannot parse
            raise DatasetError("dataset.bad_tokenizer", path=label) from None
        self.options = options or TemplateOptions()
        try:
            self.named = self._load_special_tokens(config)
        except (KeyError, TypeError, ValueError):
            raise DatasetError("dataset.bad_tokenizer", path=label) from None
        self.eos_token = _token_text(self.named.get("eos_token"))
        self.bos_token = _token_text(self.named.get("bos_token"))
        self.template_name = template.name if template is not None else ""
        if template is None:
            template = self._unnamed_template(config.get("chat_template"))
        self.template = template.configured(self.options)
        self._fix_special_tokens(self.template)
        self.eos_id = self.backend.token_to_id(self.eos_token) if self.eos_token else None
        self.bos_id = self.backend.token_to_id(self.bos_token) if self.bos_token else None

    def _load_special_tokens(self, config: dict[str, Any]) -> dict[str, Any]:
        """Add the config's tokens as `transformers` 5 does when it loads a `tokenizer.json` (`TokenizersBackend`).

        First `added_tokens_decoder` entries the file lacks, then named and extra special tokens whose text is
        not an added token yet (a token the vocabulary has but not as an added token is added: it is then never
        split). Returns the named special tokens.
        """
        present = {repr(token) for token in self.backend.get_added_tokens_decoder().values()}
        decoder = config.get("added_tokens_decoder")
        to_add = []
        if isinstance(decoder, dict):
            entries = sorted(((int(index), _added_token(token)) for index, token in decoder.items()),
                             key=lambda item: item[0])
            to_add = [token for _, token in entries if repr(token) not in present]
            by_text = {str(token): token for _, token in entries}
        else:
            by_text = {}

        named = {key: by_text.get(_token_text(value), value) for key, value in _named_tokens(config).items()}
        known = {str(token) for token in self.backend.get_added_tokens_decoder().values()} | {
            str(token) for token in to_add}
        for value in (*named.values(), *_extra_tokens(config)):  # (their `special` flag changes no count)
            text = _token_text(value)
            if text not in known:
                to_add.append(_added_token(value))
                known.add(text)
        if to_add:
            self.backend.add_tokens(to_add)
        return named

    def _unnamed_template(self, source: Any) -> Template:
        """No `template:` in the YAML: the chat template read from the tokenizer, else `empty`."""
        if not isinstance(source, str):
            return templates()["empty"]
        prefix = self.backend.decode(self.backend.encode("", add_special_tokens=True).ids, skip_special_tokens=False)
        variables = {key: text for key, value in self.named.items() if (text := _token_text(value)) is not None}
        return chat_template.parse(source, prefix, variables)

    def _add_special(self, text: str) -> None:
        from tokenizers import AddedToken

        self.backend.add_special_tokens([AddedToken(text, rstrip=False, lstrip=False, normalized=False, special=True)])

    def _fix_special_tokens(self, template: Template) -> None:
        """`Template.fix_special_tokens`: eos replaced by the first stop word, else `<|endoftext|>` if none;
        the other stop words added as special tokens."""
        stop_words = list(template.stop_words)
        if template.replace_eos and stop_words:
            if self.eos_token != stop_words[0]:
                self._add_special(stop_words[0])
                self.eos_token = stop_words[0]
            stop_words = stop_words[1:]
        if self.eos_token is None or self.backend.token_to_id(self.eos_token) is None:
            self._add_special("<|endoftext|>")
            self.eos_token = "<|endoftext|>"
        for word in stop_words:
            self._add_special(word)

    @classmethod
    def from_folder(cls, folder: Path, template: Template | None, options: TemplateOptions | None = None) -> Tokenizer:
        """The tokenizer of a local model folder (`model_name_or_path`): `tokenizer.json`, its config, and a
        `chat_template.jinja` beside them (which `transformers` prefers to the config's `chat_template`)."""
        path = folder / "tokenizer.json"
        if not path.is_file():
            raise DatasetError("dataset.no_tokenizer", path=str(path))
        config_path = folder / "tokenizer_config.json"
        config = read_config(config_path.read_bytes() if config_path.is_file() else b"{}", str(config_path))
        jinja = folder / "chat_template.jinja"
        named = sorted((folder / "chat_templates").glob("*.jinja")) if (folder / "chat_templates").is_dir() else []
        if jinja.is_file() and not named:
            config = {**config, "chat_template": jinja.read_text(encoding="utf-8")}
        elif named:  # several templates: a mapping, which LLaMA-Factory does not parse
            config = {**config, "chat_template": {item.stem: item.read_text(encoding="utf-8") for item in named}}
        return cls(path.read_text(encoding="utf-8"), config, template, options, str(path))

    def count(self, text: str) -> int:
        """Tokens of one text, without special tokens around it (`encode(..., add_special_tokens=False)`)."""
        return len(self.backend.encode(text, add_special_tokens=False).ids) if text else 0

    def _lengths(self, messages: list[list[Element]]) -> list[int]:
        texts = {element for elements in messages for element in elements if isinstance(element, str)}
        counts = {text: self.count(text) for text in texts}  # each text once (a batch call costs more CPU here)
        out = []
        for elements in messages:
            total = 0
            for element in elements:
                if isinstance(element, str):
                    total += counts.get(element, 0)
                elif isinstance(element, NamedToken):
                    total += 1
                elif element.name == "bos_token":  # a set slot naming neither adds nothing (phi_small's)
                    total += self.bos_id is not None
                elif element.name == "eos_token":
                    total += self.eos_id is not None
            out.append(total)
        return out

    def pairs(self, example: Example) -> list[tuple[int, int]]:
        """(prompt, response) token lengths of each turn of an sft example, as `encode_multiturn` returns them."""
        messages = [*example.prompt, *example.response[:1]]
        day = self.options.today or datetime.date.today()
        turns = encode_pairs(self.template, messages, example.system, example.tools, self.options.mask_history, day)
        lengths = self._lengths([elements for turn in turns for elements in turn])
        return list(zip(lengths[0::2], lengths[1::2], strict=True))


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


def supervised_length(pairs: list[tuple[int, int]], cutoff_len: int, efficient_eos: bool = False,
                      mask_history: bool = False) -> int:
    """The tokens of one sft example after truncation (`SupervisedDatasetProcessor._encode_data_example`).

    Turns are cut in order, each to what `cutoff_len` leaves; `mask_history` cuts from the last turn back;
    `efficient_eos` adds one end-of-sequence token at the end.
    """
    total = 1 if efficient_eos else 0
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
    """Tokens one row adds to the `pt` stream: its first prompt turn and the end-of-sequence text, tokenised
    together (`processor/pretrain.py`: `<|end_of_text|>` for `template: llama3`, else the tokenizer's eos)."""
    eos = "<|end_of_text|>" if tokenizer.template_name == "llama3" else tokenizer.eos_token
    return tokenizer.count(example.prompt[0][1] + (eos or "")) if example.prompt else 0


__all__ = ["USER", "Template", "TemplateOptions", "Tokenizer", "greedy_packs", "infer_seqlen", "pretrain_tokens",
           "read_config", "supervised_length", "templates"]
