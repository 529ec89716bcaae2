"""The chat-template rules, without LLaMA-Factory (fast; `test_templates_vs_llamafactory.py` checks them against it)."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import pytest
import yaml

from steplab.dataset.errors import DatasetError
from steplab.dataset.examples import ASSISTANT, FUNCTION, OBSERVATION, USER, Example
from steplab.dataset.templates import TemplateOptions, templates
from steplab.dataset.tokens import Tokenizer, pretrain_tokens, supervised_length
from steplab.dataset.tool_formats import FORMATS, tools_text
from tests.tiny_tokenizers import byte_level, word_level

EXAMPLES = Path(__file__).parent / "data" / "llamafactory-examples"
TABLE = templates()
THOUGHT = "<think>\n\n</think>\n\n"


@pytest.fixture(scope="module")
def byte(tmp_path_factory) -> Path:
    return byte_level(tmp_path_factory.mktemp("byte") / "tok", bos="<|begin_of_text|>", bos_in_post_processor=True)


def tokenizer(folder: Path, name: str | None, **options) -> Tokenizer:
    return Tokenizer.from_folder(folder, None if name is None else TABLE[name], TemplateOptions(**options))


def chat(*turns: tuple[str, str], system: str = "", tools: str = "") -> Example:
    return Example(turns[:-1], turns[-1:], system, False, tools)


TWO_TURNS = chat((USER, "hi there"), (ASSISTANT, "hello"), (USER, "and now?"), (ASSISTANT, "now this"))


def test_the_table_has_every_template_the_example_configs_and_the_course_use():
    used = {yaml.safe_load(path.read_text())["template"] for path in EXAMPLES.glob("*.yaml")
            if "template" in yaml.safe_load(path.read_text())}
    assert used - set(TABLE) == {"moss_vl"}  # newer than LLaMA-Factory 0.9.5: a real 0.9.5 run refuses it too
    assert {"qwen3", "qwen3_nothink", "llama3", "chatml", "qwen", "mistral", "gemma", "glm4", "deepseek3", "default",
            "alpaca", "empty"} <= set(TABLE)
    assert TABLE["qwen3"].reasoning and not TABLE["qwen3_nothink"].reasoning


def test_qwen3_puts_an_empty_thought_in_each_answer_as_enable_thinking_says(byte):
    thought = tokenizer(byte, "qwen3").count(THOUGHT)
    plain = tokenizer(byte, "qwen3_nothink").pairs(TWO_TURNS)
    assert thought > 0
    assert tokenizer(byte, "qwen3").pairs(TWO_TURNS) == [(s, t + thought) for s, t in plain]  # default: learned
    assert tokenizer(byte, "qwen3", enable_thinking=False).pairs(TWO_TURNS) == [(s + thought, t) for s, t in plain]
    assert tokenizer(byte, "qwen3", enable_thinking=None).pairs(TWO_TURNS) == [(s + thought, t) for s, t in plain]
    masked = tokenizer(byte, "qwen3", mask_history=True).pairs(TWO_TURNS)  # only the last turn gets one
    assert masked == [plain[0], (plain[1][0], plain[1][1] + thought)]
    assert tokenizer(byte, "qwen3", mask_history=True, preserve_thinking=True).pairs(TWO_TURNS) == [
        (s, t + thought) for s, t in plain]


def test_thoughts_are_kept_or_removed_as_enable_thinking_says(byte):
    thinking = chat((USER, "q"), (ASSISTANT, "<think>\nlong reasoning\n</think>\n\nanswer"))
    bare = chat((USER, "q"), (ASSISTANT, "answer"))
    kept = tokenizer(byte, "qwen3").pairs(thinking)
    assert kept == tokenizer(byte, "qwen3_nothink").pairs(thinking)  # a thought there: no empty one added
    removed = tokenizer(byte, "qwen3", enable_thinking=False).pairs(thinking)
    assert removed == tokenizer(byte, "qwen3", enable_thinking=False).pairs(bare) != kept


def test_stop_words_become_special_tokens_and_the_eos_is_replaced(byte):
    text = "a<|eot_id|>b<|eom_id|>c"
    llama3, qwen = tokenizer(byte, "llama3"), tokenizer(byte, "qwen")
    assert llama3.count(text) == llama3.count("a") + llama3.count("b") + llama3.count("c") + 2
    assert qwen.count(text) > llama3.count(text)  # the qwen template does not add them: plain text there
    assert (llama3.eos_token, qwen.eos_token, tokenizer(byte, "default").eos_token) == (
        "<|eot_id|>", "<|im_end|>", "<|endoftext|>")
    plain = chat((USER, "a b"), (ASSISTANT, "c"))
    assert pretrain_tokens(llama3, plain) == llama3.count("a b<|end_of_text|>")  # pt writes its own end for llama3
    assert pretrain_tokens(qwen, plain) == qwen.count("a b") + 1


def test_a_tokenizer_without_an_eos_gets_endoftext_and_bos_slots_need_a_bos(tmp_path):
    folder = byte_level(tmp_path / "noeos", eos=None)
    default = tokenizer(folder, "default")
    assert default.eos_token == "<|endoftext|>" and default.eos_id is not None
    assert default.bos_id is None  # deepseek3's {bos_token} prefix then writes nothing
    one = chat((USER, "hi"), (ASSISTANT, "yo"))
    assert tokenizer(folder, "deepseek3").pairs(one)[0][0] == tokenizer(folder, "deepseek3").count(
        "<｜User｜>hi<｜Assistant｜>")


def test_the_system_prompt_the_default_system_and_its_override(byte):
    one = chat((USER, "do it"), (ASSISTANT, "done"))
    alpaca = tokenizer(byte, "alpaca")
    default_system = TABLE["alpaca"].default_system
    assert alpaca.pairs(one)[0][0] == alpaca.count(default_system) + alpaca.count(
        "### Instruction:\ndo it\n\n### Response:\n")
    assert tokenizer(byte, "alpaca", default_system="").pairs(one)[0][0] == alpaca.count(
        "### Instruction:\ndo it\n\n### Response:\n")
    assert alpaca.pairs(chat((USER, "do it"), (ASSISTANT, "done"), system="Be brief."))[0][0] == alpaca.count(
        "Be brief.") + alpaca.count("### Instruction:\ndo it\n\n### Response:\n")


def test_llama2_writes_the_system_prompt_into_the_first_user_message(byte):
    llama2 = tokenizer(byte, "llama2")
    first = llama2.pairs(chat((USER, "hi"), (ASSISTANT, "yo"), system="S"))[0][0]
    assert first == 1 + llama2.count("[INST] <<SYS>>\nS\n<</SYS>>\n\nhi [/INST]")  # 1: the bos slot


def test_turn_numbers_and_placeholders_in_the_text(tmp_path):
    word = word_level(tmp_path / "word")
    empty = tokenizer(word, "empty")
    assert empty.pairs(chat((USER, "{{idx}}"), (ASSISTANT, "x"))) == [(1, 1)]  # '0': one unknown word


def test_tools_and_function_calls_are_written_in_the_template_s_tool_format(byte):
    tools = json.dumps([{"name": "search", "description": "look up", "parameters": {
        "type": "object", "properties": {"q": {"type": "string", "description": "query"}}, "required": ["q"]}}])
    call = json.dumps({"name": "search", "arguments": {"q": "llama"}})
    turns = ((USER, "find"), (FUNCTION, call), (OBSERVATION, "found"), (ASSISTANT, "here"))
    qwen = tokenizer(byte, "qwen")
    with_tools, without = qwen.pairs(chat(*turns, tools=tools)), qwen.pairs(chat(*turns))
    assert with_tools[0][0] > without[0][0] and with_tools[1:] == without[1:]  # the tool text is in turn 0 only
    assert with_tools[0][1] == qwen.count('<tool_call>\n{"name": "search", "arguments": {"q": "llama"}}\n</tool_call>'
                                          "<|im_end|>\n")
    as_mistral = tokenizer(byte, "qwen", tool_format="mistral").pairs(chat(*turns, tools=tools))
    assert as_mistral[0][1] == qwen.count('[{"name": "search", "arguments": {"q": "llama"}}]') + 1  # + eos slot
    assert sorted(FORMATS) == sorted(["default", "gemma4", "glm4", "llama3", "lfm2", "minimax1", "minimax2",
                                      "mistral", "qwen", "qwen3_5", "glm4_moe", "seed_oss", "ling"])


def test_llama3_s_tool_prompt_writes_the_day(byte):
    tools = json.dumps([{"name": "f", "parameters": {"type": "object", "properties": {}}}])
    assert "Today Date: 05 Mar 2026\n" in tools_text("llama3", tools, datetime.date(2026, 3, 5))
    llama3 = tokenizer(byte, "llama3", today=datetime.date(2026, 3, 5))
    system = "<|start_header_id|>system<|end_header_id|>\n\n" + tools_text("llama3", tools, datetime.date(2026, 3, 5))
    user = "<|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"
    first = llama3.pairs(chat((USER, "hi"), (ASSISTANT, "yo"), tools=tools))[0][0]
    assert first == 1 + llama3.count(system + "<|eot_id|>") + llama3.count(user)  # bos, system slot, user slot


@pytest.mark.parametrize(("turn", "tools", "code"), [
    ((FUNCTION, "not json"), "", "dataset.bad_function_call"),
    ((FUNCTION, json.dumps({"arguments": {}})), "", "dataset.bad_function_call"),
    ((ASSISTANT, "ok"), "null", "dataset.bad_tools"),
    ((ASSISTANT, "ok"), json.dumps([{"name": "no parameters"}]), "dataset.bad_tools"),
])
def test_rows_llamafactory_stops_on_are_refused_with_a_clear_message(byte, turn, tools, code):
    with pytest.raises(DatasetError) as caught:
        tokenizer(byte, "chatml").pairs(chat((USER, "q"), turn, tools=tools))
    assert caught.value.code == code
    for lang in ("zh", "en"):
        assert "chatml" in caught.value.message(lang) and "LLaMA-Factory" in caught.value.message(lang)


def test_an_unknown_tool_format_is_refused(byte):
    with pytest.raises(DatasetError) as caught:
        tokenizer(byte, "qwen", tool_format="xml")
    assert caught.value.code == "dataset.tool_format_unknown" and "qwen3_5" in caught.value.message("en")


def test_a_chat_template_is_used_when_the_yaml_names_none(tmp_path):
    source = ("{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + "
              "'<|im_end|>\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")
    parsed = tokenizer(byte_level(tmp_path / "chat", chat_template=source), None)
    chatml = tokenizer(byte_level(tmp_path / "chat"), "chatml")
    one = chat((USER, "hi"), (ASSISTANT, "yo"), system="S")
    assert parsed.template.user == ("<|im_start|>user\n{{content}}<|im_end|>\n<|im_start|>assistant\n",)
    assert parsed.pairs(one) == chatml.pairs(one)  # the same text; chatml's stop words are not added here
    assert tokenizer(byte_level(tmp_path / "plain"), None).template.name == "empty"  # no chat template
    jinja = tmp_path / "file"
    byte_level(jinja, chat_template="{{ raise_exception('the config one is not read') }}")
    (jinja / "chat_template.jinja").write_text(source)  # transformers prefers the file
    assert tokenizer(jinja, None).pairs(one) == parsed.pairs(one)


def test_a_chat_template_cannot_reach_outside_its_sandbox(tmp_path):
    hostile = "{{ ''.__class__.__mro__[1].__subclasses__() }}{% for message in messages %}{{ message['content'] }}{% endfor %}"
    with pytest.raises(DatasetError) as caught:
        tokenizer(byte_level(tmp_path / "hostile", chat_template=hostile), None)
    assert caught.value.code == "dataset.chat_template_failed" and "SecurityError" in caught.value.message("en")


def test_truncation_keeps_the_efficient_eos_and_cuts_from_the_last_turn_with_mask_history():
    assert supervised_length([(10, 10), (10, 10)], 100, efficient_eos=True) == 41
    assert supervised_length([(30, 30), (5, 5)], 20) == 20
    assert supervised_length([(30, 30), (5, 5)], 20, mask_history=True) == 20
    assert supervised_length([(3, 3), (50, 50)], 20, mask_history=True) == 20


@pytest.mark.parametrize("placeholder", ["<image>", "<video>", "<audio>"])
def test_a_multimodal_template_refuses_a_media_placeholder_in_a_text_row(byte, placeholder):
    row = chat((USER, f"look at {placeholder}"), (ASSISTANT, "ok"))
    assert tokenizer(byte, "qwen3_nothink").pairs(row)  # a text template: plain text
    with pytest.raises(DatasetError) as caught:
        tokenizer(byte, "qwen3_vl_nothink").pairs(row)
    assert caught.value.code == "dataset.media_placeholder"
    for lang in ("zh", "en"):
        assert placeholder in caught.value.message(lang)
