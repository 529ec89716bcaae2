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
)


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


# --------------------------------------------------------------------------- what it checks


def _strings(value: object) -> list[str]:
    """A catalogue entry's texts: a plain string, or every form of a plural mapping."""
    if isinstance(value, dict):
        return [text for form in value.values() for text in _strings(form)]
    return [value] if isinstance(value, str) else []


LOCALE_FILES = sorted(path.relative_to(LOCALES).as_posix() for path in LOCALES.rglob("*.yaml"))


@pytest.mark.parametrize("name", LOCALE_FILES)
def test_no_number_is_typed_into_a_locale_string(name):
    entries = yaml.safe_load((LOCALES / name).read_text(encoding="utf-8")) or {}
    found = {key: words for key, value in entries.items()
             for words in [[w for text in _strings(value) for w in typed_numbers(text)]] if words}
    assert not found, f"{name}: numbers typed into prose (make them placeholders or code): {found}"


def _lesson_texts(data: dict) -> list[tuple[str, str]]:
    """(where, text) for a lesson's title, goals and every block's text, caption, prompt and reveal."""
    texts = [("title", data["title"]), *((f"goals[{i}]", goal) for i, goal in enumerate(data["goals"]))]
    for i, block in enumerate(data["blocks"]):
        if block["kind"] == "text":
            texts.append((f"blocks[{i}]", {lang: block[lang] for lang in LANGUAGES}))
        texts += [(f"blocks[{i}].{key}", block[key]) for key in ("caption", "prompt", "reveal") if key in block]
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
    found = {where: words for where, text in texts if (words := typed_numbers(text))}
    assert not found, f"{path.name}: numbers typed into prose (make them placeholders or code): {found}"


def test_no_number_is_typed_into_a_question():
    bank = yaml.safe_load((LESSONS_DIR / "questions.yaml").read_text(encoding="utf-8"))
    texts = [text for item in bank for text in _question_texts(item)]
    assert len(texts) > len(bank)
    found = {where: words for where, text in texts if (words := typed_numbers(text))}
    assert not found, f"questions.yaml: numbers typed into prose (make them placeholders or code): {found}"


def test_every_part_of_the_course_is_checked():
    """The file lists above are not empty by accident (a moved folder would make every test pass)."""
    assert len(LESSON_FILES) >= 10 and Path(LESSONS_DIR / "questions.yaml").exists()
    assert {name.split("/")[0] for name in LOCALE_FILES} == set(LANGUAGES)
    assert any(name.endswith("quiz.yaml") for name in LOCALE_FILES)
