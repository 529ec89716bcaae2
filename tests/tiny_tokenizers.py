"""Tiny tokenizer folders for tests, built in code (no hub): what `llamafactory.model.load_tokenizer` loads.

- `byte_level(folder, ...)`: a byte-level BPE (ByteLevel pre-tokenizer and decoder, as Qwen, LLaMA 3 and GPT
  tokenizers are, so spaces and newlines are tokens), trained here on a small fixed corpus; every byte has a
  token, so any text encodes without an unknown token. Its `tokenizer.json` carries Qwen's added tokens
  (`QWEN_ADDED`: `<|endoftext|>`, `<|im_start|>`, `<|im_end|>` special; `<think>`, `</think>`, `<tool_call>`,
  `</tool_call>`, `<tool_response>`, `</tool_response>` not special, as in Qwen3); other templates' markers
  (LLaMA 3's headers, `[INST]`, `<start_of_turn>`, …) are plain text to it unless a template's stop words add them.
- `word_level(folder, ...)`: the word-level tokenizer of `tests/data/llamafactory-runs/assets/tiny-qwen2`
  (whitespace and punctuation split, unknown words are `[UNK]`).

Both write `tokenizer.json`, `tokenizer_config.json` (`tokenizer_class: PreTrainedTokenizerFast`, the given
`bos_token` / `eos_token` / `pad_token`, optionally a `chat_template` and any `extra_config` keys) and
tiny-qwen2's `config.json`, and return the folder. Building is deterministic: the same arguments give the same files.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors, trainers

TINY_QWEN2 = Path(__file__).resolve().parent / "data" / "llamafactory-runs" / "assets" / "tiny-qwen2"

QWEN_ADDED = (("<|endoftext|>", True), ("<|im_start|>", True), ("<|im_end|>", True), ("<think>", False),
              ("</think>", False), ("<tool_call>", False), ("</tool_call>", False), ("<tool_response>", False),
              ("</tool_response>", False))
"""(content, special) of the added tokens in the byte-level `tokenizer.json` (Qwen3's, a few of them)."""

_CORPUS = [
    "You are a helpful assistant. Answer the question below.",
    "The quick brown fox jumps over the lazy dog.\nThe end.\n\n",
    "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud.<|im_end|>\n<|im_start|>user\nhello<|im_end|>\n",
    "<|start_header_id|>user<|end_header_id|>\n\nWhat is 2 + 2?<|eot_id|>",
    "[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi [/INST] Hello </s>",
    "<start_of_turn>user\nhi<end_of_turn>\n<start_of_turn>model\n",
    "Human: hi\nAssistant: hello\n### Instruction:\n### Response:\n",
    '{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}',
    '[{"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}]',
    "Action: search\nAction Input: {\"query\": \"llama\"}\n> Tool Name: Tool Description: Tool Args:\n",
    "<tool_call>\n</tool_call>\n<tool_response>\n</tool_response>\n<think>\n\n</think>\n\n",
    "def train(model, data):\n    for step in range(10):\n        loss = model(data)\n",
    "学习率预热，梯度累积，训练步数。你好，世界！",
    "Ünïcödé façade naïve café — “quotes” and ‘more’ … 😀 🚀",
    "1234567890 3.14159 2026-01-01 100%",
    "    indented\ttabbed\r\nwindows line\n",
]


def _trained() -> Tokenizer:
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=600, min_frequency=2, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), special_tokens=[])
    tokenizer.train_from_iterator(_CORPUS * 3, trainer=trainer)
    tokenizer.add_tokens([AddedToken(content, special=special, normalized=False) for content, special in QWEN_ADDED])
    return tokenizer


def _write(folder: Path, tokenizer_json: str, config: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tokenizer.json").write_text(tokenizer_json, encoding="utf-8")
    (folder / "tokenizer_config.json").write_text(json.dumps(config, ensure_ascii=False, indent=2), encoding="utf-8")
    shutil.copyfile(TINY_QWEN2 / "config.json", folder / "config.json")
    return folder


def _config(bos: str | None, eos: str | None, pad: str | None, chat_template: str | None, **extra) -> dict:
    config = {"tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": 1_000_000, **extra}
    for key, value in (("bos_token", bos), ("eos_token", eos), ("pad_token", pad), ("chat_template", chat_template)):
        if value is not None:
            config[key] = value
    return config


def byte_level(folder: Path, *, bos: str | None = None, eos: str | None = "<|endoftext|>", pad: str | None = None,
               chat_template: str | None = None, bos_in_post_processor: bool = False,
               extra_config: dict | None = None) -> Path:
    """A byte-level BPE tokenizer folder; `bos_in_post_processor` makes `encode(text)` start with `bos` (LLaMA 3);
    `extra_config` is merged into `tokenizer_config.json` (`added_tokens_decoder`, `additional_special_tokens`, ...)."""
    tokenizer = _trained()
    if bos_in_post_processor:
        if bos is None:
            raise ValueError("bos_in_post_processor needs a bos token")
        tokenizer.add_special_tokens([AddedToken(bos, special=True, normalized=False)])
        tokenizer.post_processor = processors.TemplateProcessing(
            single=f"{bos} $A", pair=f"{bos} $A {bos} $B", special_tokens=[(bos, tokenizer.token_to_id(bos))])
    else:
        tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    return _write(folder, tokenizer.to_str(), _config(bos, eos, pad, chat_template, **(extra_config or {})))


def word_level(folder: Path, *, chat_template: str | None = None, extra_config: dict | None = None) -> Path:
    """tiny-qwen2's word-level tokenizer (eos and pad `<|endoftext|>`, no bos), as a folder of its own."""
    config = json.loads((TINY_QWEN2 / "tokenizer_config.json").read_text(encoding="utf-8"))
    config = {key: value for key, value in config.items() if key not in ("tokenizer_class", "backend")}
    config.update(tokenizer_class="PreTrainedTokenizerFast", **(extra_config or {}))
    if chat_template is not None:
        config["chat_template"] = chat_template
    return _write(folder, (TINY_QWEN2 / "tokenizer.json").read_text(encoding="utf-8"), config)
