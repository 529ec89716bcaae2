"""No number is typed into prose: every number a learner reads comes from the engine.

A digit in a locale string, a lesson text or a question must be inside a placeholder (`{name}`, filled by
`steplab.i18n.fill` with the engine's value) or inside a code span (a release number such as `4.47`, a value
as it is typed in a config, a formula). The allow-list below is short, and each entry says why.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from steplab.i18n import LANGUAGES, LOCALES, PLACEHOLDER
from steplab.teaching.lessons import LESSONS_DIR

CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
DIGIT = re.compile(r"[0-9\uff10-\uff19]")  # ASCII and full-width digits
ALLOWED = (
    # A plotly hover template (`%{x:,}`, `%{customdata[0]:.3f}`): plotly fills it with the hovered value.
    re.compile(r"%\{[^{}]*\}"),
    # A Markdown ordered-list marker at the start of a line ("1. load the data"): list syntax, not a number.
    re.compile(r"^[ \t]*\d+\.(?=[ \t])", re.M),
    # The GPU the course measured on: a product name, not a quantity.
    re.compile(r"\bV100\b"),
    # DeepSpeed's stage names its kind of sharding (lesson 7): a name, not a quantity.
    re.compile(r"\bZeRO-3\b"),
)


NUMBER_WORDS = (
    # Chinese: a number word before a measure word ("三个", "两轮", "十步"), an ordinal past the first ("第二轮"),
    # halves and multiples ("一半", "两倍"). "一" alone stays allowed: "一步", "一轮" name the unit, not a count.
    re.compile(r"[两三四五六七八九十百千万]+(?:个|轮|步|次|倍|条|批|张|遍|成|项|组|种|列|行|份|段|部分|阶段|位|点)"),
    re.compile(r"第[二三四五六七八九十]"),
    re.compile(r"一半|半轮|半个|[一两双]倍|翻倍"),
    # English: numbers, ordinals past "first", halves and multiples, as words.
    re.compile(r"(?i)\b(?:half|halves|twice|thrice|double[ds]?|triple[ds]?|two|three|four|five|six|seven|eight|nine|ten|"
               r"eleven|twelve|twenty|hundreds?|thousands?|dozens?|second|third|fourth|fifth|sixth|seventh)\b"),
)


def number_words(text: str) -> list[str]:
    """Numbers written as words (outside code spans and placeholders): they state a count the engine should give."""
    prose = PLACEHOLDER.sub(" ", CODE_SPAN.sub(" ", text))
    return [match.group(0) for pattern in NUMBER_WORDS for match in pattern.finditer(prose)]


def typed_numbers(text: str) -> list[str]:
    """The words of `text` that hold a digit outside placeholders, code spans and the allow-list."""
    prose = CODE_SPAN.sub(" ", text)
    for pattern in ALLOWED:
        prose = pattern.sub(" ", prose)
    prose = PLACEHOLDER.sub(" ", prose)
    return [word for word in re.split(r"\s+", prose) if DIGIT.search(word)]


# --------------------------------------------------------------------------- the detector itself


@pytest.mark.parametrize("text", [
    "每 50 步评估一次", "lesson 3", "Skip to the end of epoch 1", "1,600 samples", "batch 4 × accumulation 8",
    "transformers 4.46 and later", "float64", "第 ５ 课", "{steps} steps, 50 of them", "`4.47` or 4.51",
    "{a}{b}3", "**0 到 1 之间**", "text\n  2nd line",
])
def test_the_detector_finds_typed_numbers(text):
    assert typed_numbers(text), text


@pytest.mark.parametrize("text", [
    "{n} 步", "`4.47`", "every {steps:d} steps", "`checkpoint-{step:d}`", "训练轮 %{customdata[0]:.3f}",
    "已见样本 %{x:,}", "1. load\n2. split\n  3. join", "one V100, the same model", "``a `4.46` b``",
    "batch {course.per_device_train_batch_size} × accumulation {course.gradient_accumulation_steps}",
    "no numbers at all", "the first epoch",
])
def test_the_detector_lets_placeholders_and_code_pass(text):
    assert not typed_numbers(text), typed_numbers(text)


@pytest.mark.parametrize("text", [
    "比原来的 {x} 少了一半", "多攒一倍的批数", "每半轮评估一次", "第一、二、三轮", "三个阶段的模型", "前两轮各走",
    "第三轮结束之前", "两张 GPU", "half of the original", "twice as many micro-batches", "the third epoch",
    "Two setups", "every half epoch",
])
def test_the_detector_finds_numbers_written_as_words(text):
    assert number_words(text), text


@pytest.mark.parametrize("text", [
    "一步就是一次参数更新", "一轮有多少个更新步", "两者相乘", "`two_gpus`", "{two.world_size} 张卡", "the first epoch",
    "one update every {n} micro-batches", "a {n}-step run", "两边", "second_epoch",
])
def test_the_detector_lets_units_and_names_pass(text):
    assert not number_words(text), number_words(text)


# --------------------------------------------------------------------------- what it checks


def _strings(value: object) -> list[str]:
    """A catalogue entry's texts: a plain string, or every form of a plural mapping."""
    if isinstance(value, dict):
        return [text for form in value.values() for text in _strings(form)]
    return [value] if isinstance(value, str) else []


NUMBER_WORDS_CHECKED = ("lessons.yaml", "quiz.yaml", "lesson_funnel.yaml", "engine/rl_pipeline.yaml", "engine/grpo_counting.yaml", "lesson_grpo.yaml",
                        "engine/quantities.yaml", "engine/progress.yaml")
"""The locale files whose sentences the lessons and the self-check say (the other pages' files are checked for
digits only: some name a count of controls or characters, not a result)."""
LOCALE_FILES = sorted(path.relative_to(LOCALES).as_posix() for path in LOCALES.rglob("*.yaml"))


@pytest.mark.parametrize("name", LOCALE_FILES)
def test_no_number_is_typed_into_a_locale_string(name):
    entries = yaml.safe_load((LOCALES / name).read_text(encoding="utf-8")) or {}
    words_too = name.split("/", 1)[1] in NUMBER_WORDS_CHECKED
    found = {key: words for key, value in entries.items()
             for words in [[w for text in _strings(value)
                            for w in typed_numbers(text) + (number_words(text) if words_too else [])]] if words}
    assert not found, f"{name}: numbers typed into prose (make them placeholders or code): {found}"


def _lesson_texts(data: dict) -> list[tuple[str, str]]:
    """(where, text) for a lesson's title, goals and every block's text, caption, prompt and reveal."""
    texts = [("title", data["title"]), *((f"goals[{i}]", goal) for i, goal in enumerate(data["goals"]))]
    for i, block in enumerate(data["blocks"]):
        if block["kind"] in ("text", "aside"):
            texts.append((f"blocks[{i}]", {lang: block[lang] for lang in LANGUAGES}))
        texts += [(f"blocks[{i}].{key}", block[key]) for key in ("caption", "prompt", "reveal", "title") if key in block]
    return [(f"{where}.{lang}", text[lang]) for where, text in texts for lang in LANGUAGES]


def _question_texts(item: dict) -> list[tuple[str, str]]:
    """(where, text) for a question's prompt, hint, explanation and options."""
    texts = [(key, item[key]) for key in ("prompt", "hint", "explanation") if key in item]
    texts += [(f"options[{i}]", option) for i, option in enumerate(item.get("options", []))]
    return [(f"{item['id']}.{where}.{lang}", text[lang]) for where, text in texts for lang in LANGUAGES]


LESSON_FILES = sorted(LESSONS_DIR.glob("[0-9][0-9]_*.yaml"))


@pytest.mark.parametrize("path", LESSON_FILES, ids=[p.name for p in LESSON_FILES])
def test_no_number_is_typed_into_a_lesson(path):
    texts = _lesson_texts(yaml.safe_load(path.read_text(encoding="utf-8")))
    assert len(texts) > 4
    found = {where: words for where, text in texts if (words := typed_numbers(text) + number_words(text))}
    assert not found, f"{path.name}: numbers typed into prose (make them placeholders or code): {found}"


def test_no_number_is_typed_into_a_question():
    bank = yaml.safe_load((LESSONS_DIR / "questions.yaml").read_text(encoding="utf-8"))
    texts = [text for item in bank for text in _question_texts(item)]
    assert len(texts) > len(bank)
    found = {where: words for where, text in texts if (words := typed_numbers(text) + number_words(text))}
    assert not found, f"questions.yaml: numbers typed into prose (make them placeholders or code): {found}"


def test_every_part_of_the_course_is_checked():
    """The file lists above are not empty by accident (a moved folder would make every test pass)."""
    assert len(LESSON_FILES) >= 10 and Path(LESSONS_DIR / "questions.yaml").exists()
    assert {name.split("/")[0] for name in LOCALE_FILES} == set(LANGUAGES)
    assert any(name.endswith("quiz.yaml") for name in LOCALE_FILES)
