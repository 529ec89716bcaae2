"""Lessons as data: every lesson validates, both languages carry every block, every reference resolves."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from streamlit.testing.v1 import AppTest

from steplab.i18n import LANGUAGES, PLACEHOLDER
from steplab.teaching import grpo_counting
from steplab.teaching.grpo_counting import GrpoSetup
from steplab.teaching.lessons import LESSONS_DIR, LessonError, load_lessons, parse_lesson
from steplab.teaching.rl_pipeline import RlvrSetup, rlvr_quantities
from steplab.trainer.quantities import is_quantity

ROOT = Path(__file__).resolve().parents[1]
LESSONS = load_lessons()
FILES = sorted(LESSONS_DIR.glob("[0-9][0-9]_*.yaml"))


def test_the_eleven_lessons_of_the_course():
    assert [lesson.number for lesson in LESSONS] == list(range(1, 12))


@pytest.mark.parametrize("lesson", LESSONS, ids=[lesson.id for lesson in LESSONS])
def test_lesson_blocks(lesson):
    kinds = [block.kind for block in lesson.blocks]
    assert kinds[-1] == "check" and "predict" in kinds and "widget" in kinds
    for block in lesson.blocks:
        for lang in LANGUAGES:  # every placeholder resolves and no text is left with a raw {...}
            texts = [block.data.get(lang)] + [block.data[k][lang] for k in ("caption", "prompt", "reveal") if k in block.data]
            for text in filter(None, texts):
                filled = lesson.fill(text)
                assert "{" not in filled and "}" not in filled
        if block.kind == "predict":
            scenario = lesson.scenarios[block.data["scenario"]]
            if isinstance(scenario, RlvrSetup):
                assert block.data["quantity"] in rlvr_quantities(scenario)
            elif isinstance(scenario, GrpoSetup):
                assert grpo_counting.is_quantity(block.data["quantity"])
            else:
                assert is_quantity(block.data["quantity"])


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_zh_and_en_have_the_same_blocks(path):
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    for block in data["blocks"]:
        for value in block.values():
            if isinstance(value, dict) and set(value) & set(LANGUAGES):
                assert set(value) == set(LANGUAGES)
        if block["kind"] == "text":
            assert block["zh"].strip() and block["en"].strip()
            assert set(PLACEHOLDER.findall(block["zh"])) == set(PLACEHOLDER.findall(block["en"])), block["zh"][:60]


@pytest.mark.parametrize(("change", "problem"), [
    (lambda d: d.pop("title"), "missing keys"),
    (lambda d: d["blocks"].append({"kind": "video"}), "kind must be one of"),
    (lambda d: d["blocks"].insert(0, {"kind": "text", "zh": "只有中文"}), "zh and en"),
    (lambda d: d["blocks"].insert(0, {"kind": "text", "zh": "{course.nope}", "en": "x"}), "does not resolve"),
    (lambda d: d["blocks"].insert(0, {"kind": "text", "zh": "第 {lesson.nope} 课", "en": "x"}), "{lesson.nope}"),
    (lambda d: d["scenarios"].update({"lesson": {"preset": "course_default"}}), "placeholders of their own"),
    (lambda d: d["blocks"].insert(0, {"kind": "widget", "widget": "calculator", "scenario": "missing"}), "unknown scenario"),
    (lambda d: d["scenarios"].update({"bad": {"preset": "no_such_preset"}}), "unknown preset"),
    (lambda d: d["scenarios"].update({"bad": {"set": {"per_device_train_batch_size": 0}}}), "per_device_train_batch_size"),
    (lambda d: d["blocks"].pop(), "ends with a self-check"),
])
def test_authors_mistakes_get_a_clear_error(change, problem):
    data = yaml.safe_load(FILES[0].read_text(encoding="utf-8"))
    change(data)
    with pytest.raises(LessonError) as error:
        parse_lesson(data, FILES[0].name)
    assert problem in str(error.value) and FILES[0].name in str(error.value)


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("lesson", LESSONS, ids=[lesson.id for lesson in LESSONS])
def test_every_lesson_renders(lesson, lang):
    at = AppTest.from_file(str(ROOT / "app_pages" / "lessons.py"), default_timeout=90)
    at.query_params["lesson"] = lesson.id
    at.query_params["lang"] = lang
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == f"{lesson.number}. {lesson.title.get(lang)}"


def test_predict_then_reveal():
    lesson = next(lesson for lesson in LESSONS if lesson.id == "one-step")
    index = next(i for i, block in enumerate(lesson.blocks) if block.kind == "predict")
    block = lesson.blocks[index]
    answer = lesson.value(f"{block.data['scenario']}.{block.data['quantity']}")
    at = AppTest.from_file(str(ROOT / "app_pages" / "lessons.py"), default_timeout=90)
    at.query_params["lesson"] = lesson.id
    at.query_params["lang"] = "en"
    at.run()
    key = f"{lesson.id}_{index}"
    assert at.button(key=f"{key}_reveal").disabled  # no answer before a guess
    at.number_input(key=f"{key}_guess").set_value(answer + 1).run()
    at.button(key=f"{key}_reveal").click().run()
    assert not at.exception
    assert any(f"You guessed {answer + 1:,}" in w.value for w in at.warning)
    at = AppTest.from_file(str(ROOT / "app_pages" / "lessons.py"), default_timeout=90)
    at.query_params["lesson"] = lesson.id
    at.run()
    at.number_input(key=f"{key}_guess").set_value(answer).run()
    at.button(key=f"{key}_reveal").click().run()
    assert any("答对了" in s.value for s in at.success)


@pytest.mark.parametrize("lesson", LESSONS, ids=[lesson.id for lesson in LESSONS])
def test_chinese_paragraphs_join_their_lines_without_a_space(lesson):
    """A line break inside a Chinese paragraph would show as a stray space; `say` joins such lines."""
    import re

    from steplab.i18n import Text

    joined = 0
    for block in lesson.blocks:
        if block.kind != "text":
            continue
        source = block.data["zh"]
        said = lesson.say(Text(source, block.data["en"]), "zh")
        assert not re.search(r"[\u4e00-\u9fff\u3000-\u303f\uff00-\uffef]\n[\u4e00-\u9fff\uff00-\uffef]", said)
        joined += source.count("\n") - said.count("\n")
        assert "\n\n" not in source or "\n\n" in said  # paragraphs stay paragraphs
    assert lesson.say(Text("第一行\n第二行\n\n下一段", "x"), "zh") == "第一行第二行\n\n下一段"  # the join happens


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_questions_name_each_lesson_by_its_own_title(lang):
    """The self-check's caption takes the title from the lesson file (a copied title had drifted in lesson 6)."""
    from steplab_ui.views.quiz import lesson_title

    for lesson in LESSONS:
        caption = lesson_title(lesson.number, lang)
        assert lesson.title.get(lang) in caption and str(lesson.number) in caption


def test_the_question_bank_and_progress_codes_know_every_lesson():
    from steplab.teaching import progress
    from steplab.teaching.quiz.schema import LESSONS as QUIZ_LESSONS
    assert QUIZ_LESSONS == tuple(lesson.number for lesson in LESSONS)
    assert progress.LESSON_COUNT == len(LESSONS)


def test_a_lessons_animation_writes_no_word_smaller_than_its_floor():
    """Issue 27 item 14: lesson 3's bucket labels were about 9 px (the half-column size in a full column)."""
    import json

    from steplab_ui.views.lesson_widgets import LESSON_MIN_FONT

    for lesson in LESSONS:
        if not any(b.kind == "widget" and b.data["widget"] == "animation" for b in lesson.blocks):
            continue
        at = AppTest.from_file(str(ROOT / "app_pages" / "lessons.py"), default_timeout=90)
        at.query_params["lesson"] = lesson.id
        for index, block in enumerate(lesson.blocks):  # every part drawn
            if block.kind == "predict":
                at.session_state[f"{lesson.id}_{index}_revealed"] = True
        at.run()
        specs = [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]
        sizes = [note["font"]["size"] for spec in specs for note in spec["layout"].get("annotations", [])
                 if note.get("text") and "GPU" in str(spec)]  # the animation's figures (their lanes name GPUs)
        assert sizes and min(sizes) >= LESSON_MIN_FONT, (lesson.id, min(sizes))


def test_a_return_visit_through_the_menu_opens_the_lesson_left_last():
    """Another page's run clears the chooser's state; the menu's link carries no `?lesson=`: the lesson the page
    last put in the URL comes back (it used to fall back to lesson 1). A link to a former id opens its lesson."""
    at = AppTest.from_file(str(ROOT / "app_pages" / "lessons.py"), default_timeout=90)
    at.session_state["_lesson_in_url"] = LESSONS[2].id
    at.run()
    assert at.title[0].value == f"{LESSONS[2].number}. {LESSONS[2].title.zh}"
    split = next(lesson for lesson in LESSONS if lesson.aliases)
    at = AppTest.from_file(str(ROOT / "app_pages" / "lessons.py"), default_timeout=90)
    at.query_params["lesson"] = split.aliases[0]
    at.run()
    assert at.title[0].value == f"{split.number}. {split.title.zh}" and at.query_params["lesson"] == split.id
    assert not at.warning


@pytest.mark.parametrize("lesson", [LESSONS[0], LESSONS[-1]], ids=lambda lesson: lesson.id)
def test_a_lessons_number_opens_it(lesson):
    """Issue 39: the lessons are numbered everywhere, and `/lessons?lesson=11` was refused as an unknown id."""
    at = AppTest.from_file(str(ROOT / "app_pages" / "lessons.py"), default_timeout=90)
    at.query_params["lesson"] = str(lesson.number)
    at.run()
    assert at.title[0].value == f"{lesson.number}. {lesson.title.zh}" and at.query_params["lesson"] == lesson.id
    assert not at.warning
    at = AppTest.from_file(str(ROOT / "app_pages" / "lessons.py"), default_timeout=90)
    at.query_params["lesson"] = str(len(LESSONS) + 1)  # a number no lesson has is still refused, and said
    at.run()
    assert at.warning and at.title[0].value.startswith(f"{LESSONS[0].number}. ")



def test_the_roll_widget_counts_what_the_learner_types():
    """Lesson 11's ROLL widget: the engine's counts for the numbers typed, and a word where ROLL's split is uneven
    or a rank has too few samples for an update."""
    from steplab.i18n import catalogue
    from steplab.teaching.rl_pipeline import RlvrSetup, rlvr_quantities

    lesson = next(lesson for lesson in LESSONS if any(b.data.get("widget") == "roll" for b in lesson.blocks))
    index = next(i for i, b in enumerate(lesson.blocks) if b.data.get("widget") == "roll")
    at = AppTest.from_file(str(ROOT / "app_pages" / "lessons.py"), default_timeout=90)
    at.query_params["lesson"] = lesson.id
    at.query_params["lang"] = "en"
    for i, block in enumerate(lesson.blocks):
        if block.kind == "predict":
            at.session_state[f"{lesson.id}_{i}_revealed"] = True
    at.run()
    en = catalogue("en")
    key = f"{lesson.id}_{index}"
    at.number_input(key=f"{key}_dp").set_value(7).run()
    at.number_input(key=f"{key}_gradient_accumulation_steps").set_value(128).run()
    expected = rlvr_quantities(RlvrSetup(**{**lesson.scenarios[lesson.blocks[index].data["scenario"]].to_dict(),
                                           "dp": 7, "gradient_accumulation_steps": 128}))
    shown = {m.label: m.value for m in at.metric}
    assert shown[en["rlvr.quantity.samples_per_rank"]] == f"{expected['samples_per_rank']:,}"
    assert shown[en["rlvr.quantity.updates_per_pipeline_step"]] == "0" == str(expected["updates_per_pipeline_step"])
    notes = " ".join(info.value for info in at.info)
    assert "do not split evenly" in notes and "no update at all" in notes
    assert not at.exception


@pytest.mark.parametrize("bad", [{"dp": 0}, {"ppo_epochs": 1.5}, {"max_steps": True}, {"rollout_batch_size": 10**9}])
def test_an_rlvr_setup_outside_what_roll_takes_is_named(bad):
    from steplab.teaching.rl_pipeline import RlvrError, RlvrSetup

    with pytest.raises(RlvrError) as error:
        RlvrSetup(**bad)
    (field,) = bad
    assert error.value.field == field and error.value.text.zh and error.value.text.en
    data = yaml.safe_load((LESSONS_DIR / "11_rl_steps.yaml").read_text(encoding="utf-8"))
    data["scenarios"]["roll"]["rlvr"].update(bad)
    with pytest.raises(LessonError, match="scenarios.roll"):
        parse_lesson(data, "11_rl_steps.yaml")


def test_the_rlvr_arithmetic_shows_its_numbers():
    from steplab.teaching.rl_pipeline import RlvrSetup, rlvr_quantities, worked

    setup = RlvrSetup(ppo_epochs=2, dp=7)
    counts = rlvr_quantities(setup)
    lines = dict((label.en, formula) for label, formula in worked(setup))
    assert lines["Samples per process"] == f"⌊512 ÷ 7⌋ = {counts['samples_per_rank']}"
    assert lines["Updates per pipeline step"].endswith(f"= {counts['updates_per_pipeline_step']}")
    assert lines["Actor updates in all"] == f"500 × {counts['updates_per_pipeline_step']} = {counts['actor_updates']:,}"
