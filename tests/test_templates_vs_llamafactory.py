"""Chat templates token for token against LLaMA-Factory 0.9.5's own code (`tests/llamafactory_worker.py`).

Generated conversations (user / observation and assistant / function turns, tool calls, tools, system prompts,
unicode, newlines, text holding special-token strings and template placeholders) are encoded by StepLab and by
LLaMA-Factory's `encode_multiturn`, for every template in StepLab's table, on a byte-level BPE and a
word-level tokenizer (`tiny_tokenizers.py`), under each thinking option; the supervised processor's length at a
`cutoff_len` and the pt processor's tokens are compared too. A refusal on one side must be a refusal on the other.
"""

from __future__ import annotations

import datetime
import json
import random
from functools import lru_cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from steplab.dataset.errors import DatasetError
from steplab.dataset.examples import ASSISTANT, FUNCTION, OBSERVATION, USER, Example
from steplab.dataset.templates import NamedToken, Special, Template, TemplateOptions, templates
from steplab.dataset.tokens import Tokenizer, pretrain_tokens, supervised_length
from steplab.dataset.tool_formats import FORMATS, day_text
from tests.tiny_tokenizers import byte_level, word_level

TODAY = datetime.date(2026, 12, 5)
TABLE = templates()
TOKENIZERS = ("byte", "word")
CI = settings(derandomize=True, deadline=None, database=None, print_blob=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.large_base_example])


@pytest.fixture(scope="module")
def oracle(llamafactory_oracle):
    return llamafactory_oracle


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tokenizers")
    return {"byte": byte_level(root / "byte", bos="<|begin_of_text|>", bos_in_post_processor=True),
            "word": word_level(root / "word")}


# --- generated conversations ---------------------------------------------------------------------------------

FRAGMENTS = ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<think>", "</think>", "<think>\n", "\n</think>\n\n",
             "<tool_call>", "</tool_call>", "<|eot_id|>", "<|start_header_id|>", "[INST]", "[/INST]",
             "<end_of_turn>", "</s>", "<s>", "<|user|>", "<|end|>", "{{content}}", "{{idx}}", "\n", "\n\n", " ",
             "w1", "w23", "w200", "hello", "你好", "😀", "é", "<thi", "nk>\n", "<image>"]
characters = st.characters(codec="utf-8", exclude_categories=("Cs",))
pieces = st.one_of(st.sampled_from(FRAGMENTS), st.text(characters, min_size=1, max_size=8))
some_text = st.lists(pieces, min_size=1, max_size=8).map("".join)
text = st.one_of(st.just(""), some_text, some_text, some_text)
thought = st.tuples(st.sampled_from(["", "\n", "\n\n"]), text).map(lambda found: f"{found[0]}<think>\n{found[1]}\n</think>\n\n")
answer = st.one_of(text, st.tuples(thought, text).map("".join), st.tuples(st.just("\n"), text).map("".join))
words = st.sampled_from(["get_weather", "search", "w7", "名字", "a b", ""])
leaf = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6),
                 st.floats(allow_nan=False, allow_infinity=False, width=32), text)
values = st.recursive(leaf, lambda inner: st.lists(inner, max_size=2) | st.dictionaries(words, inner, max_size=2),
                      max_leaves=4)
objects = st.dictionaries(words, values, max_size=3)
arguments = st.one_of(objects, objects, objects, objects, values)  # not an object: some tool formats refuse


@st.composite
def function_content(draw) -> str:
    """A function message: tool calls as JSON, bare, in a <tool_call> block (once or twice) or after a thought."""
    calls = draw(st.lists(st.fixed_dictionaries({"name": words, "arguments": arguments}), min_size=1, max_size=2))
    body = json.dumps(calls if len(calls) > 1 or draw(st.booleans()) else calls[0], ensure_ascii=draw(st.booleans()))
    shape = draw(st.sampled_from(["plain", "plain", "plain", "tool_call", "tool_call", "twice", "thought", "broken"]))
    if shape in ("tool_call", "twice"):
        block = "<tool_call>" + body + "</tool_call>"
        return draw(text) + block + draw(text) + (block if shape == "twice" else "")
    if shape == "thought":
        return draw(thought) + body
    return draw(text) + "{" if shape == "broken" else body


@st.composite
def tool(draw) -> dict:
    """A tool definition, OpenAI-wrapped or bare; one in twenty lacks `parameters` (the default format refuses it)."""
    properties = draw(st.dictionaries(words, st.fixed_dictionaries(
        {"type": st.sampled_from(["string", "integer", "array"])},
        optional={"description": text, "enum": st.lists(words, max_size=2), "items": st.just({"type": "string"})}),
        max_size=3))
    parameters = {"type": "object", "properties": properties}
    if draw(st.booleans()):
        parameters["required"] = draw(st.lists(st.sampled_from([*sorted(properties), "x"]), max_size=2))
    definition = {"name": draw(words), "description": draw(text), "parameters": parameters}
    if draw(st.integers(0, 19)) == 0:
        definition.pop("parameters")
    return {"type": "function", "function": definition} if draw(st.booleans()) else definition


tool_list = st.lists(tool(), min_size=1, max_size=2).map(lambda found: json.dumps(found, ensure_ascii=False))
tools_text = st.one_of(tool_list, tool_list, tool_list, st.sampled_from(["[]", "{}", "null"]))  # null: both refuse


@st.composite
def conversation(draw) -> dict:
    """1 to 4 turns: user or observation, then assistant or function; a system prompt and tools or not."""
    messages = []
    for _ in range(draw(st.integers(1, 4))):
        messages.append({"role": draw(st.sampled_from([USER, USER, OBSERVATION])), "content": draw(text)})
        if draw(st.integers(0, 3)) == 0:
            messages.append({"role": FUNCTION, "content": draw(function_content())})
        else:
            messages.append({"role": ASSISTANT, "content": draw(answer)})
    return {"messages": messages, "system": draw(st.one_of(st.just(""), text)),
            "tools": draw(st.one_of(st.just(""), tools_text)), "cutoff_len": draw(st.integers(1, 120))}


def _example(case: dict) -> Example:
    messages = tuple((message["role"], message["content"]) for message in case["messages"])
    return Example(messages[:-1], messages[-1:], case["system"], False, case["tools"])


# --- StepLab's side ------------------------------------------------------------------------------------------

@lru_cache(maxsize=64)
def _tokenizer(folder: Path, name: str | None, options: TemplateOptions) -> Tokenizer:
    return Tokenizer.from_folder(folder, None if name is None else TABLE[name], options)


def ours(folder: Path, name: str | None, options: TemplateOptions, case: dict) -> dict:
    """StepLab's answer in the worker's shape: pairs, supervised length, pt tokens, or a refusal."""
    try:
        tokenizer = _tokenizer(folder, name, options)
        example = _example(case)
        pairs = tokenizer.pairs(example)
    except DatasetError as error:
        return {"refused": error.message("en")}
    answer = {"pairs": [list(pair) for pair in pairs],
              "supervised_length": supervised_length(pairs, case["cutoff_len"], tokenizer.template.efficient_eos,
                                                     options.mask_history),
              "pretrain": pretrain_tokens(tokenizer, example)}
    return answer


def _request(folder: Path, name: str | None, options: TemplateOptions, cases: list[dict]) -> dict:
    data_args = {"template": name, "enable_thinking": options.enable_thinking,
                 "preserve_thinking": options.preserve_thinking, "default_system": options.default_system,
                 "tool_format": options.tool_format, "mask_history": options.mask_history}
    return {"folder": str(folder), "data_args": data_args, "date": day_text(TODAY), "cases": cases}


def agree(oracle, folder: Path, configs: list[tuple[str | None, TemplateOptions, list[dict]]]) -> int:
    """Every (template, options, cases): the same pairs, supervised length and pt tokens, or a refusal on both
    sides. One request to the worker for all of them; returns how many cases were compared."""
    answers = oracle.ask({"encode": [_request(folder, name, options, cases) for name, options, cases in configs]})
    compared = 0
    for (name, options, cases), answer in zip(configs, answers, strict=True):
        assert "error" not in answer, (name, options, answer)
        for case, real in zip(cases, answer["cases"], strict=True):
            mine = ours(folder, name, options, case)
            said = f"template {name}, {options}, case {case}"
            if "error" in real:
                assert "refused" in mine, (said, real["error"], mine)
                continue
            assert "refused" not in mine, (said, mine)
            assert mine["pairs"] == real["pairs"], said
            if "supervised_length" in real:
                assert mine["supervised_length"] == real["supervised_length"], said
            assert mine["pretrain"] == real["pretrain"], said
            compared += 1
    return compared


def variant_options(rng: random.Random, name: str, enable_thinking: bool | None, mask_history: bool,
                    texts: list[str]) -> TemplateOptions:
    """Options for one variant: its thinking and history settings, the others picked by `rng`."""
    return TemplateOptions(enable_thinking=enable_thinking, mask_history=mask_history, today=TODAY,
                           preserve_thinking=TABLE[name].reasoning and rng.random() < 0.5,
                           default_system=rng.choice([None, None, None, "", *rng.sample(texts, 2)]),
                           tool_format=rng.choice([None, None, None, *sorted(FORMATS)]))


POOL = 24
VARIANTS = [(name, thinking, mask) for name in sorted(TABLE) for mask in (False, True)
            for thinking in ((True, False, None) if TABLE[name].reasoning else (True,))]
"""Every template with `mask_history` off and on; reasoning ones also with `enable_thinking` true, false, null."""


# --- the table is LLaMA-Factory's registry -------------------------------------------------------------------

CLASSES = {"plain": "Template", "llama2": "Llama2Template", "reasoning": "ReasoningTemplate",
           "glm47_reasoning": "Glm47ReasoningTemplate"}


def _registry_slots(slots) -> list:
    return [{"set": [slot.name]} if isinstance(slot, Special) else {"token": slot.content}
            if isinstance(slot, NamedToken) else slot for slot in slots]


def registry_form(template: Template) -> dict:
    """A StepLab template in the shape the worker's `registry` request gives LLaMA-Factory's."""
    def formatter(kind: str, slots, tool_format=None) -> dict:
        return {"type": kind, "slots": _registry_slots(slots), "tool_format": tool_format}

    tools = (formatter("StringFormatter", template.tools) if template.tools is not None
             else formatter("ToolFormatter", (), template.tool_format))
    return {"class": CLASSES[template.kind], "mm_plugin": template.multimodal or "BasePlugin",
            "user": formatter("StringFormatter", template.user),
            "assistant": formatter("StringFormatter", template.assistant),
            "system": formatter("StringFormatter", template.system),
            "function": formatter("FunctionFormatter", template.function, template.function_format),
            "observation": formatter("StringFormatter", template.observation), "tools": tools,
            "prefix": formatter("EmptyFormatter", template.prefix), "default_system": template.default_system,
            "stop_words": list(template.stop_words), "thought_words": list(template.thought_words),
            "tool_call_words": list(template.tool_call_words), "efficient_eos": template.efficient_eos,
            "replace_eos": template.replace_eos, "enable_thinking": template.enable_thinking,
            "preserve_thinking": template.preserve_thinking}


def test_the_table_is_llamafactorys_registry(oracle):
    registry = oracle.ask({"registry": True})
    assert sorted(registry) == sorted(TABLE)
    for name, template in TABLE.items():
        assert registry_form(template) == registry[name], name


# --- encodings -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("tokenizer", TOKENIZERS)
def test_every_template_encodes_as_llamafactory(oracle, folders, tokenizer):
    """Each example: a pool of conversations; every variant gets its own options and four of them.

    Options and picks come from a seeded `random.Random` (Hypothesis draws the seed): drawing them one by one
    for some 340 variants would overrun Hypothesis's buffer and silently leave only its smallest example.
    """
    seen = []

    @settings(CI, max_examples=3, phases=[Phase.explicit, Phase.generate])  # a failure names its case
    @given(pool=st.lists(conversation(), min_size=POOL, max_size=POOL, unique_by=repr), seed=st.integers(0, 2**32))
    def check(pool, seed):
        rng = random.Random(seed)
        texts = [message["content"] for case in pool for message in case["messages"]]
        configs = [(name, variant_options(rng, name, thinking, mask, texts), rng.sample(pool, 4))
                   for name, thinking, mask in VARIANTS]
        seen.append(agree(oracle, folders[tokenizer], configs))

    check()
    assert len(seen) == 3 and min(seen) > 2 * len(VARIANTS)  # every example ran; most cases were encoded


# --- no `template:`: the tokenizer's own chat template ----------------------------------------------------------

TURNS = ("{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + "
         "'<|im_end|>\\n' }}{% endfor %}")
PROMPT = "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
CHAT_TEMPLATES = {
    "chatml": TURNS + PROMPT,
    "thinking": ("{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' }}{% if message['role'] "
                 "== 'assistant' %}{{ '<think>\\n\\n</think>\\n\\n' }}{% endif %}{{ message['content'] + "
                 "'<|im_end|>\\n' }}{% endfor %}" + PROMPT),
    "default_system": ("{% if messages[0]['role'] != 'system' %}{{ '<|im_start|>system\\nYou are a helpful "
                       "assistant.<|im_end|>\\n' }}{% endif %}" + TURNS + PROMPT),
    "bos_llama": ("{{ bos_token }}{% for message in messages %}{{ '<|start_header_id|>' + message['role'] + "
                  "'<|end_header_id|>\\n\\n' + message['content'] | trim + '<|eot_id|>' }}{% endfor %}"
                  "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}"),
    "generation_tag": ("{% for message in messages %}{% if message['role'] == 'assistant' %}{% generation %}"
                       "{{ 'assistant: ' + message['content'] + eos_token }}{% endgeneration %}{% else %}{{ message['role'] + ': ' + "
                       "message['content'] + '\\n' }}{% endif %}{% endfor %}{% if add_generation_prompt %}"
                       "{{ 'assistant: ' }}{% endif %}"),
    "no_system_role": ("{% for message in messages %}{% if message['role'] == 'system' %}"
                       "{{ raise_exception('System role not supported') }}{% endif %}{% endfor %}" + TURNS + PROMPT),
    "drops_system": ("{% for message in messages %}{% if message['role'] != 'system' %}{{ message['role'] + ': ' + "
                     "message['content'] + '\\n' }}{% endif %}{% endfor %}" + PROMPT),
    "escapes_sandbox": "{{ ''.__class__.__mro__[1].__subclasses__() }}" + TURNS,
    "none": None,
}


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
def test_a_chat_template_is_read_as_llamafactory_reads_it(oracle, tmp_path, tokenizer):
    """`template` not given: LLaMA-Factory parses the tokenizer's chat template (or uses `empty`); so does StepLab,
    and where the template cannot be read, both refuse."""
    folders = {}
    for name, source in CHAT_TEMPLATES.items():
        if tokenizer == "byte":
            folders[name] = byte_level(tmp_path / name, bos="<|begin_of_text|>", bos_in_post_processor=True,
                                       chat_template=source)
        else:
            folders[name] = word_level(tmp_path / name, chat_template=source)
    refused = set()

    @settings(CI, max_examples=1, phases=[Phase.explicit, Phase.generate])
    @given(pool=st.lists(conversation(), min_size=8, max_size=8, unique_by=repr), seed=st.integers(0, 2**32))
    def check(pool, seed):
        rng = random.Random(seed)
        for name, folder in folders.items():
            options = TemplateOptions(enable_thinking=rng.choice([True, False, None]),
                                      mask_history=rng.random() < 0.5, today=TODAY)
            answer = oracle.ask({"encode": _request(folder, None, options, pool)})
            if "error" in answer:  # LLaMA-Factory cannot get a template out of it
                with pytest.raises(DatasetError):
                    _tokenizer(folder, None, options)
                refused.add(name)
                continue
            agree(oracle, folder, [(None, options, pool)])

    check()
    # the byte-level tokenizer's encode("") is its bos, which LLaMA-Factory cuts off every rendering: a template
    # that writes no bos loses its first letters (generation_tag its placeholder, so both refuse it)
    unreadable = {"no_system_role", "drops_system", "escapes_sandbox"}
    assert refused == (unreadable | {"generation_tag"} if tokenizer == "byte" else unreadable)


def test_a_runaway_chat_template_is_stopped(monkeypatch, tmp_path):
    from steplab.dataset import chat_template

    monkeypatch.setattr(chat_template, "CPU_SECONDS", 1)
    loop = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}" + TURNS
    with pytest.raises(DatasetError) as caught:
        Tokenizer.from_folder(word_level(tmp_path / "loop", chat_template=loop), None)
    assert caught.value.code == "dataset.chat_template_failed"
    for lang in ("zh", "en"):
        assert "1 s" in caught.value.message(lang)


# --- what tokenizer_config.json adds -----------------------------------------------------------------------------

CONFIGS = {
    "no_eos": {"eos": None},
    "named_and_extra": {"extra_config": {"additional_special_tokens": ["<|eot_id|>", "[INST]"],
                                         "image_token": "<image>", "sep_token": "<sep>"}},
    "added_tokens_decoder": {"extra_config": {"added_tokens_decoder": {
        "700": {"content": "<extra>", "lstrip": True, "rstrip": True, "normalized": False, "single_word": False,
                "special": True},
        "701": {"content": "Action", "lstrip": False, "rstrip": False, "normalized": True, "single_word": True,
                "special": False},
        "702": {"content": "<|eot_id|>", "lstrip": False, "rstrip": False, "normalized": False, "single_word": False,
                "special": False},
        "600": {"content": "<|endoftext|>", "lstrip": False, "rstrip": False, "normalized": False,
                "single_word": False, "special": True},  # the eos, as real configs list it
        "703": {"content": "<|begin_of_text|>", "lstrip": False, "rstrip": False, "normalized": False,
                "single_word": False, "special": True}}}},
    "eos_as_added_token": {"eos": None, "bos": None, "extra_config": {
        "eos_token": {"__type": "AddedToken", "content": "<|end|>", "lstrip": False, "rstrip": True,
                      "normalized": False, "single_word": False, "special": True},
        "bos_token": "<s>"}},
    "eos_is_a_plain_word": {"eos": "<think>", "pad": "<|im_end|>"},
}
CONFIG_TEMPLATES = ("qwen3", "llama3", "mistral", "default", "chatglm3", "glm4", "phi4_mini", "alpaca", "empty")


def test_tokenizer_configs_add_the_tokens_transformers_adds(oracle, tmp_path):
    """Special tokens named in `tokenizer_config.json` are added as `transformers` 5 adds them (then they are
    never split), before the template's own: the same lengths as LLaMA-Factory's."""
    folders = {name: byte_level(tmp_path / name, **{"bos": "<|begin_of_text|>", **spec}) for name, spec in CONFIGS.items()}

    @settings(CI, max_examples=1, phases=[Phase.explicit, Phase.generate])
    @given(pool=st.lists(conversation(), min_size=10, max_size=10, unique_by=repr), seed=st.integers(0, 2**32))
    def check(pool, seed):
        rng = random.Random(seed)
        texts = [message["content"] for case in pool for message in case["messages"]]
        pool = [{**case, "messages": [{**message, "content": message["content"] + rng.choice(
            ["<extra>", " Action ", "<image>", "<sep>", "<|end|>", "<s>", "[INST]", ""])} for message in case["messages"]]}
            for case in pool]  # the configs' own tokens inside the text
        for folder in folders.values():
            agree(oracle, folder, [(name, variant_options(rng, name, True, False, texts), rng.sample(pool, 5))
                                   for name in CONFIG_TEMPLATES])

    check()
