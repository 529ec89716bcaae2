"""Lessons as data: every lesson validates, both languages carry every block, every reference resolves."""

from __future__ import annotations

import re
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
    """Lesson 11's ROLL widget: the engine's counts for the numbers typed, and ROLL's own assertion, word for word,
    where ROLL would stop (an uneven split over the ranks)."""
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
    at.number_input(key=f"{key}_ppo_epochs").set_value(3).run()
    at.number_input(key=f"{key}_gradient_accumulation_steps").set_value(8).run()
    expected = rlvr_quantities(RlvrSetup(**{**lesson.scenarios[lesson.blocks[index].data["scenario"]].to_dict(),
                                           "ppo_epochs": 3, "gradient_accumulation_steps": 8}))
    shown = {m.label: m.value for m in at.metric}
    assert shown[en["rlvr.quantity.updates_per_pipeline_step"]] == f"{expected['updates_per_pipeline_step']:,}"
    assert shown[en["rlvr.quantity.actor_updates"]] == f"{expected['actor_updates']:,}"
    at.number_input(key=f"{key}_dp").set_value(7).run()
    errors = " ".join(error.value for error in at.error)
    assert "AssertionError: 512 % 7 != 0" in errors and "do not split evenly" in errors
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


def test_a_lesson_rlvr_scenario_roll_would_stop_on_is_refused_at_load():
    """A scenario ROLL's own assertions stop (an uneven split over the ranks) cannot reach a learner."""
    data = yaml.safe_load((LESSONS_DIR / "11_rl_steps.yaml").read_text(encoding="utf-8"))
    data["scenarios"]["roll"]["rlvr"].update({"dp": 7})
    with pytest.raises(LessonError, match=r"scenarios.roll: ROLL refuses it: AssertionError: 512 % 7 != 0"):
        parse_lesson(data, "11_rl_steps.yaml")


EXAMPLES = ROOT / "tests" / "data" / "llamafactory-examples"


def test_a_scenario_keeps_every_key_of_the_example_it_cites():
    """A lesson that names a LLaMA-Factory example (`qwen3_lora_sft.yaml`) and sets up a scenario on its datasets
    keeps every key of that example (a variant may change a value or add a key): a key left out can change the
    counts (lesson 9's packing floor moves from 2 to 16 sequences with `preprocessing_num_workers: 16`)."""
    checked = 0
    for lesson in LESSONS:
        said = " ".join(block.data.get(lang, "") for block in lesson.blocks if block.kind in ("text", "aside")
                        for lang in ("zh", "en"))
        for path in EXAMPLES.glob("*.yaml"):
            name = path.name.split("__")[-1]
            if f"`{name}`" not in said:
                continue
            example = yaml.safe_load(path.read_text(encoding="utf-8"))
            for scenario, keys in lesson.llamafactory.items():
                if keys.get("dataset") != example["dataset"]:
                    continue
                missing = sorted(set(example) - set(keys))
                assert not missing, f"lesson {lesson.number}, scenario {scenario}: {name}'s keys {missing} left out"
                checked += 1
    assert checked >= 6  # lesson 9: the example and its five variants
    lesson = next(lesson for lesson in LESSONS if "packed" in lesson.llamafactory)
    assert lesson.value("packed.funnel.fewest") == lesson.llamafactory["packed"]["preprocessing_num_workers"]


def test_lesson_10_names_the_releases_with_a_last_step_evaluation_from_the_rows():
    """"evaluates once more at the last step" holds for the releases whose profile row has `final_eval` (5.4 on; the
    rows are held to their real releases by tests/test_golden.py): lesson 10 says the rows' range, every row from
    its first release on has the behaviour, and none before it."""
    from steplab.i18n import Text
    from steplab.teaching.lessons import releases_with
    from steplab.trainer.profiles import PROFILES

    lesson = next(lesson for lesson in LESSONS if lesson.number == 10)
    span = releases_with("final_eval")
    for lang in LANGUAGES:
        said = " ".join(lesson.say(Text(block.data["zh"], block.data["en"]), lang) for block in lesson.blocks
                        if block.kind == "text")
        assert f"transformers {span} " in said
    release = lambda text: tuple(int(part) for part in text.split("."))  # noqa: E731
    first = release(span.split(" – ")[0])
    for profile in PROFILES.values():
        if profile.framework == "transformers":
            assert profile.final_eval == (release(profile.releases.split(" – ")[0]) >= first), profile.id



def test_releases_with_refuses_rows_that_make_no_single_range(monkeypatch):
    """A behaviour the rows have, lose and have again is no one range: the lesson's sentence cannot say it so."""
    import dataclasses

    from steplab.teaching import lessons as lessons_module
    from steplab.trainer.profiles import PROFILES

    broken = {key: dataclasses.replace(row, final_eval=row.final_eval or key == "hf-4.46") for key, row in PROFILES.items()}
    monkeypatch.setattr(lessons_module, "PROFILES", broken)
    with pytest.raises(ValueError, match="do not make one range"):
        lessons_module.releases_with("final_eval")


LANGUAGE_SLIPS = {
    r"(?:这里|Trainer|StepLab|这个|错误)\s*的?算法|算法核对": "a worked calculation is 算式 (算法 is an algorithm, as GRPO is)",
    r"一台\s*\{[^}]*\}\s*个": "a run is not 一台 (a machine's measure word) of processes",
    r"变小多少[^。]*加多少": "a factor, not an amount: 缩小为几分之一 … 扩大为几倍",
    r"为正在": "English word order (`max_steps` 为正 在 …): say where the check is as its own clause",
    r"同样多个": "一样多的 … 个个都是满的",
    r"(?i)must divide by": "English: 'must be divisible by'",
}


def test_the_lessons_and_questions_avoid_the_language_slips_a_reader_found():
    """Issue 39's language findings, each a pattern with its reason, in every lesson and question text and the
    sentences the lessons' widgets and the self-check say."""
    from steplab.teaching.quiz.bank import load_bank

    texts = [(f"lesson {lesson.number}", block.data.get(lang) or "") for lesson in LESSONS for block in lesson.blocks
             for lang in LANGUAGES]
    texts += [(f"lesson {lesson.number}", block.data[name][lang]) for lesson in LESSONS for block in lesson.blocks
              for name in ("prompt", "reveal", "caption") if name in block.data for lang in LANGUAGES]
    for spec in load_bank():
        for text in (spec.prompt, spec.hint, spec.explanation, *(option.text for option in spec.options)):
            if text is not None:
                texts += [(spec.id, text.zh), (spec.id, text.en)]
    from steplab.i18n import LOCALES

    for name in ("lessons.yaml", "lesson_grpo.yaml", "lesson_funnel.yaml", "quiz.yaml", "engine/grpo_counting.yaml",
                 "engine/rl_pipeline.yaml", "app.yaml", "grpo.yaml"):
        for lang in LANGUAGES:
            entries = yaml.safe_load((LOCALES / lang / name).read_text(encoding="utf-8")) or {}
            texts += [(f"{lang}/{name}:{key}", value) for key, value in entries.items() if isinstance(value, str)]
    found = [(where, why) for where, text in texts for pattern, why in LANGUAGE_SLIPS.items()
             if isinstance(text, str) and re.search(pattern, text)]
    assert not found, found


@pytest.mark.parametrize("lang", LANGUAGES)
def test_lesson_5_says_where_a_step_sits_one_way(lang):
    """Lesson 5 (and lab C's card and text alternative it embeds) says where the best step sits with the engine's one
    phrase, `readings.step_position` (its epoch of the run's epochs), never a fractional epoch beside a step."""
    from steplab.labs import readings
    from steplab_ui.views.labs import overfitting as overfitting_lab

    lesson = next(lesson for lesson in LESSONS if any(b.data.get("lab") == "overfitting" for b in lesson.blocks))
    at = AppTest.from_file(str(ROOT / "app_pages" / "lessons.py"), default_timeout=120)
    at.query_params["lesson"] = lesson.id
    at.query_params["lang"] = lang
    for i, block in enumerate(lesson.blocks):
        if block.kind == "predict":
            at.session_state[f"{lesson.id}_{i}_revealed"] = True
    at.run()
    assert not at.exception
    page = " ".join(element.value for element in [*at.markdown, *at.caption] if isinstance(element.value, str))
    result = overfitting_lab.run_overfitting(overfitting_lab.OVERFIT_EPOCHS, overfitting_lab.OVERFIT_SEED)
    position = readings.step_position(result, result.best_step).get(lang)
    assert position in page
    other_way = r"第\s*[\d,]+\s*步（第\s*\d+\.\d+\s*轮）|step [\d,]+ \(epoch \d+\.\d+\)|步\s*·\s*第"
    assert not re.search(other_way, page), re.search(other_way, page)
    alt = overfitting_lab.loss_sentence(result, lang)
    assert position in alt and not re.search(other_way, alt)
    card = overfitting_lab.overfit_cards(result, lang)[0]
    assert card.delta == position
