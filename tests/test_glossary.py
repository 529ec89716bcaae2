"""One vocabulary, the chapter's (`lessons/glossary.yaml`), in every Chinese string: lessons, questions, the sidebar,
the widgets and the engine's sentences; Chinese punctuation in Chinese sentences (issue 30).
"""

from __future__ import annotations

import re

import pytest
import yaml

from steplab.i18n import LOCALES, Text, catalogue
from steplab.teaching import quiz
from steplab.teaching.glossary import CODE_SPAN, glossary, misspellings
from steplab.teaching.lessons import load_lessons

CJK = r"[\u4e00-\u9fff\u3000-\u303f\uff00-\uffef]"
HALF_WIDTH = re.compile(rf"(?<={CJK})[,:;!?()]|[,:;!?()](?={CJK})|:(?=\{{)")
PAIRS = (("（", "）"), ("(", ")"), ("“", "”"), ("【", "】"))
LINK_TARGET = re.compile(r"\]\([^()\s]*\)")
AWKWARD_EPOCHS = re.compile(r"第\s*\d+\.\d+\s*轮|每\s*1\s*轮")  # "第 2.4 轮", "每 1 轮": say epoch = 2.4, 每轮


def _strings(value: object) -> list[str]:
    if isinstance(value, dict):
        return [text for form in value.values() for text in _strings(form)]
    return [value] if isinstance(value, str) else []


ZH_FILES = sorted(path.relative_to(LOCALES / "zh").as_posix() for path in (LOCALES / "zh").rglob("*.yaml"))


def _zh_entries(name: str) -> dict[str, list[str]]:
    entries = yaml.safe_load((LOCALES / "zh" / name).read_text(encoding="utf-8")) or {}
    return {key: _strings(value) for key, value in entries.items()}


def punctuation_slips(text: str) -> list[str]:
    """Half-width punctuation inside a Chinese sentence, and brackets or quotes that do not pair up (code aside)."""
    prose = LINK_TARGET.sub("]", CODE_SPAN.sub(" ", text))  # a Markdown link's (target) is no punctuation
    found = [match.group(0) for match in HALF_WIDTH.finditer(prose)]
    found += [f"{left}…{right}" for left, right in PAIRS if prose.count(left) != prose.count(right)]
    return found


# --------------------------------------------------------------------------- the checks themselves


@pytest.mark.parametrize("text", ["每卡批大小", "梯度累积步数", "在验证集上评估", "训练 loss 还在降", "词元", "每个提示生成",
                                  "一个 pipeline step"])
def test_the_glossary_finds_the_other_spellings(text):
    assert misspellings(text), text


@pytest.mark.parametrize("text", ["批处理大小", "梯度累积", "验证损失", "`eval_loss`", "`train_loss`", "token",
                                  "提示词", "流水线步（pipeline step）", "点右上角的提示", "`per_device_train_batch_size`"])
def test_the_glossary_lets_its_own_words_pass(text):
    assert not misspellings(text), misspellings(text)


@pytest.mark.parametrize("text", ["总步数 {max_steps}:学习率", "warmup_ratio:{first}", "（未闭合", "例如(3)说", "是,不是",
                                  "见[页面](run)页:这里"])
def test_the_punctuation_check_finds_slips(text):
    assert punctuation_slips(text), text


@pytest.mark.parametrize("text", ["warmup_steps: 0.1", "`a:b`", "（{n} 步）", "lr = 1e-4, wd = 0", "见 `steps (5)`"])
def test_the_punctuation_check_lets_code_and_english_pass(text):
    assert not punctuation_slips(text), punctuation_slips(text)


# --------------------------------------------------------------------------- what they check


@pytest.mark.parametrize("name", ZH_FILES)
def test_every_chinese_string_uses_the_glossary(name):
    found = {key: slips for key, texts in _zh_entries(name).items()
             if (slips := [m for text in texts for m in misspellings(text)])}
    assert not found, f"zh/{name}: words outside the glossary (term meant, spelling found): {found}"


@pytest.mark.parametrize("name", ZH_FILES)
def test_every_chinese_string_has_chinese_punctuation(name):
    found = {key: slips for key, texts in _zh_entries(name).items()
             if (slips := [m for text in texts for m in punctuation_slips(text)])}
    assert not found, f"zh/{name}: half-width punctuation or unpaired brackets in Chinese text: {found}"


def _lesson_zh(lesson) -> list[tuple[str, str]]:
    """(where, the Chinese text as the page says it) for a lesson's title, goals and blocks."""
    said = [("title", lesson.title.zh)] + [(f"goals[{i}]", lesson.say(goal, "zh")) for i, goal in enumerate(lesson.goals)]
    for i, block in enumerate(lesson.blocks):
        if block.kind in ("text", "aside"):
            said.append((f"blocks[{i}]", lesson.say(Text(block.data["zh"], block.data["en"]), "zh")))
        for name in ("title", "caption", "prompt", "reveal"):
            if name in block.data:
                said.append((f"blocks[{i}].{name}", lesson.say(block.text(name), "zh")))
    return said


@pytest.mark.parametrize("lesson", load_lessons(), ids=lambda lesson: lesson.id)
def test_every_lesson_says_it_in_the_glossarys_words(lesson):
    texts = _lesson_zh(lesson)
    found = {where: slips for where, text in texts
             if (slips := misspellings(text) + punctuation_slips(text) + AWKWARD_EPOCHS.findall(text))}
    assert not found, f"{lesson.source}: {found}"


def test_every_question_says_it_in_the_glossarys_words():
    found = {}
    for spec in quiz.load_bank():
        for seed in range(4):
            question = quiz.generate(spec, seed)
            texts = [question.prompt, question.hint, *question.options] + ([question.explanation] if question.explanation else [])
            slips = [m for text in texts for m in misspellings(text.zh) + punctuation_slips(text.zh)
                     + AWKWARD_EPOCHS.findall(text.zh)]
            if slips:
                found[spec.id] = slips
    assert not found, f"questions.yaml: {found}"


def test_the_sidebar_labels_its_fields_with_the_glossarys_terms():
    zh = catalogue("zh")
    for term in glossary():
        if term.field:
            assert zh[f"field.{term.field}"].startswith(term.label), (term.field, zh[f"field.{term.field}"])


def test_the_glossary_names_real_fields_and_every_term_both_ways():
    from steplab.trainer.fields import FIELDS

    assert len({term.term.zh for term in glossary()}) == len(glossary())
    for term in glossary():
        assert term.term.zh and term.term.en and term.meaning.zh and term.meaning.en
        assert term.field is None or term.field in FIELDS, term.field
        for pattern in term.avoid:  # a term never flags itself
            assert not pattern.search(term.term.zh), term.id


def test_a_fractional_epoch_is_said_as_epoch_equals():
    """"第 2.4 轮" reads as an ordinal: the calculator, the arithmetic and the warnings say "epoch = 2.4"."""
    from steplab.i18n import t
    from steplab.teaching.explain import explain
    from steplab.teaching.presets import presets
    from steplab.teaching.warnings import plan_warnings
    from steplab.trainer.plan import make_plan

    course = presets()["course_default"]
    plans = [make_plan(course.setup(max_steps=120)), make_plan(course.setup(max_steps=400)),
             make_plan(course.setup(num_samples=100, per_device_train_batch_size=4, trainer="hf-4.51"))]
    said = [t("zh", "card.epochs_run_value", epoch="2.4"),
            t("zh", "timeline.summary", steps=120, per_epoch=50, epochs="2.4")]
    for plan in plans:
        said += [line.note.zh for line in explain(plan) if line.note is not None]
        said += [warning.text.zh for warning in plan_warnings(plan)]
    assert any("epoch = 2.4" in text for text in said)
    assert not [text for text in said if AWKWARD_EPOCHS.search(text)]
