"""No lesson gives a prediction's answer away before the learner has answered it (issue 27, item 8).

Two sides: what a lesson *says* before a predict (no text, caption, prompt or widget before it shows the answer's
quantity with the answer's value), and what the page *draws* (nothing after an unanswered predict is on the page,
in either language, and it all appears once the answer is revealed).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from steplab.i18n import LANGUAGES, PLACEHOLDER, Text, t
from steplab.teaching.lessons import Block, Lesson, load_lessons
from steplab.teaching.rl_pipeline import RlvrSetup
from steplab.trainer.quantities import format_quantity, quantity
from steplab_ui.views.lesson import revealed_key

ROOT = Path(__file__).resolve().parents[1]
LESSONS = load_lessons()
PREDICTS = [(lesson, index) for lesson in LESSONS for index, block in enumerate(lesson.blocks)
            if block.kind == "predict"]


def _texts(block: Block) -> list[str]:
    """Every text of a block a learner can read, in both languages (a predict's reveal is not: it is hidden)."""
    texts = [block.data.get(lang) for lang in LANGUAGES if block.kind in ("text", "aside")]
    for name in ("title", "caption", "prompt"):
        if name in block.data:
            texts += [block.data[name][lang] for lang in LANGUAGES]
    return [text for text in texts if text]


def _same_value(a: object, b: object) -> bool:
    return isinstance(a, int | float) and isinstance(b, int | float) and abs(float(a) - float(b)) < 1e-9


def _placeholders_saying(lesson: Lesson, text: str, name: str, answer: object) -> list[str]:
    """The placeholders of `text` that state quantity `name` (of any scenario) with the answer's value."""
    found = []
    for match in PLACEHOLDER.finditer(text):
        reference = match.group(1).split(":")[0]
        head, _, rest = reference.partition(".")
        if rest == name and head in lesson.scenarios and _same_value(lesson.value(reference), answer):
            found.append(reference)
    return found


def _widget_shows(lesson: Lesson, block: Block, name: str, answer: object) -> list[str]:
    """The scenarios of a calculator or compare widget (they show every quantity) whose `name` is the answer."""
    if block.kind != "widget" or block.data["widget"] not in ("calculator", "compare"):
        return []
    names = block.data.get("scenarios") or [block.data["scenario"]]
    shown = []
    for scenario in names:
        try:
            value = quantity(lesson.plan(scenario), name)
        except (KeyError, ValueError, TypeError, ZeroDivisionError):
            continue
        if _same_value(value, answer):
            shown.append(scenario)
    return shown


@pytest.mark.parametrize(("lesson", "index"), PREDICTS, ids=[f"{lesson.id}-{index}" for lesson, index in PREDICTS])
def test_nothing_before_a_prediction_states_its_answer(lesson: Lesson, index: int) -> None:
    block = lesson.blocks[index]
    name, answer = block.data["quantity"], lesson.answer(block)
    told = []
    for earlier in lesson.blocks[:index]:
        if earlier.kind == "predict":  # its reveal is on the page once answered: it must not tell this answer
            told += _placeholders_saying(lesson, earlier.data["reveal"]["zh"], name, answer)
        for text in _texts(earlier):
            told += _placeholders_saying(lesson, text, name, answer)
        told += _widget_shows(lesson, earlier, name, answer)
    for goal in lesson.goals:
        told += _placeholders_saying(lesson, goal.zh, name, answer) + _placeholders_saying(lesson, goal.en, name, answer)
    for lang in LANGUAGES:  # the question itself may give the inputs, never the answer
        told += _placeholders_saying(lesson, block.data["prompt"][lang], name, answer)
    assert not told, f"{lesson.id} blocks[{index}] ({name} = {answer}) is given away by {told}"


def _page(lesson: Lesson, lang: str, revealed: int) -> AppTest:
    """The lesson page with its first `revealed` predictions answered (as a learner who pressed the button)."""
    at = AppTest.from_file(str(ROOT / "app_pages" / "lessons.py"), default_timeout=90)
    at.query_params["lesson"] = lesson.id
    at.query_params["lang"] = lang
    for _, index in [p for p in PREDICTS if p[0] is lesson][:revealed]:
        at.session_state[revealed_key(f"{lesson.id}_{index}")] = True
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _on_page(at: AppTest) -> str:
    """Everything the page says in words: Markdown, captions, metrics, alerts, expander labels."""
    parts = [e.value for e in at.markdown] + [e.value for e in at.caption] + [e.value for e in at.info]
    parts += [f"{m.label} {m.value}" for m in at.metric] + [e.label for e in at.expander]
    return "\n".join(parts)


def _said(lesson: Lesson, block: Block, lang: str) -> str:
    return lesson.say(Text(block.data["zh"], block.data["en"]), lang)


# each lesson in one language, the languages taking turns (the words a prediction hides are in both, and every
# predict's hidden text is checked in both by the test above)
_PREDICTING = [lesson for lesson in LESSONS if any(p[0] is lesson for p in PREDICTS)]
LESSON_LANGS = [(lesson, LANGUAGES[i % len(LANGUAGES)]) for i, lesson in enumerate(_PREDICTING)]


@pytest.mark.parametrize(("lesson", "lang"), LESSON_LANGS, ids=[f"{lesson.id}-{lang}" for lesson, lang in LESSON_LANGS])
def test_the_page_draws_nothing_past_an_unanswered_prediction(lesson: Lesson, lang: str) -> None:
    """Before each prediction is answered, no later block is on the page (its words, its widget's keys) and the
    answer's number is not among the cards; once revealed, the reveal and the next blocks appear."""
    indices = [index for other, index in PREDICTS if other is lesson]
    for position, index in enumerate(indices):
        at = _page(lesson, lang, position)
        text = _on_page(at)
        keys = {element.key for element in at.button} | {element.key for element in at.number_input}
        later = lesson.blocks[index + 1:]
        for offset, block in enumerate(later, start=index + 1):
            if block.kind in ("text", "aside"):
                assert _said(lesson, block, lang)[:60] not in text, (lesson.id, offset)
            assert not any(str(key).startswith(f"{lesson.id}_{offset}_") for key in keys), (lesson.id, offset)
        block = lesson.blocks[index]
        reveal = lesson.say(block.text("reveal"), lang)
        assert reveal[:60] not in text
        answer = format_quantity(lesson.answer(block))
        assert not any(metric.value == answer for metric in at.metric
                       if not isinstance(lesson.scenarios[block.data["scenario"]], RlvrSetup)), (lesson.id, index)
        assert t(lang, "lesson.answer_first") in text  # the page says why it stops here
        shown = _page(lesson, lang, position + 1)
        assert reveal[:60] in _on_page(shown)
        if later and later[0].kind in ("text", "aside"):
            assert _said(lesson, later[0], lang)[:60] in _on_page(shown)


def test_every_lesson_ends_with_the_way_on() -> None:
    """Answered all through, a lesson ends with the next lesson's button (the last one with the self-check)."""
    for lesson in (LESSONS[0], LESSONS[-1]):
        at = _page(lesson, "en", len([p for p in PREDICTS if p[0] is lesson]))
        nexts = [button for button in at.button if button.key == "lesson_next_lesson"]
        if lesson is LESSONS[-1]:
            assert not nexts and "self-check" in _on_page(at)
        else:
            (button,) = nexts
            assert LESSONS[1].title.en in button.label
            button.click().run()
            assert at.title[0].value == f"{LESSONS[1].number}. {LESSONS[1].title.en}"
            assert at.query_params["lesson"] == LESSONS[1].id
