"""The dataset funnel as a lesson block: lesson 9 validates with it, its placeholders are the engine's, and the
live widget on the lesson page shows `funnel_from_rows` for the learner's numbers (a refusal as an error)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from streamlit.testing.v1 import AppTest

from steplab.dataset.catalog import KNOWN_DATASET_ROWS
from steplab.dataset.errors import DatasetError
from steplab.dataset.load import funnel_from_rows
from steplab.i18n import LANGUAGES, catalogue, fmt_int
from steplab.teaching.lessons import LESSONS_DIR, LessonError, load_lessons, parse_lesson, yaml_val_size

ROOT = Path(__file__).resolve().parents[1]
PATH = LESSONS_DIR / "09_sample_count.yaml"
LESSON = next(lesson for lesson in load_lessons() if lesson.number == 9)
INDEX = next(i for i, block in enumerate(LESSON.blocks) if block.kind == "funnel")
BLOCK = LESSON.blocks[INDEX]
KEY = f"{LESSON.id}_{INDEX}"
SCENARIO = BLOCK.data["scenario"]
DATASETS = LESSON.llamafactory[SCENARIO]["dataset"]


def _data() -> dict:
    return yaml.safe_load(PATH.read_text(encoding="utf-8"))


def _yaml(max_samples: int | None, val_size: float | int) -> dict:
    values = {**LESSON.llamafactory[SCENARIO], "val_size": val_size}
    values.pop("max_samples", None)
    return values if max_samples is None else {**values, "max_samples": max_samples}


# --------------------------------------------------------------------------- the lesson file


def test_lesson_nine_has_a_funnel_on_two_known_datasets():
    assert BLOCK.data["scenario"] == "capped_val"
    names = DATASETS.split(",")
    assert len(names) == 2 and all(name in KNOWN_DATASET_ROWS for name in names)
    expected = funnel_from_rows(LESSON.llamafactory[SCENARIO], {name: KNOWN_DATASET_ROWS[name] for name in names})
    assert LESSON.funnel(SCENARIO) == expected
    assert [stage.code for stage in expected.stages] == ["rows", "rows", "max_samples", "merge", "split"]


def test_funnel_placeholders_are_the_engines_numbers():
    funnel = LESSON.funnel(SCENARIO)
    assert LESSON.fill("{capped_val.funnel.train_examples}") == fmt_int(funnel.train_examples)
    assert LESSON.fill("{capped_val.funnel.eval_examples}") == fmt_int(funnel.eval_examples)
    assert LESSON.fill("{capped_val.yaml.val_size}") == "0.1"
    assert LESSON.fill("{capped_val.yaml.max_samples}") == "500"
    # the Trainer's N in the funnel is the sample count the lesson's scenario plans with
    assert funnel.train_examples == LESSON.value("capped_val.num_samples")
    assert LESSON.fill("{capped.funnel.train_examples}") == LESSON.fill("{capped.num_samples}")


def test_the_funnel_section_names_its_numbers_by_placeholder():
    text = next(block for block in LESSON.blocks[:INDEX][::-1] if block.kind == "text")
    for lang in LANGUAGES:
        assert "{capped_val.funnel.train_examples}" in text.data[lang]
        assert "{capped_val.yaml.val_size}" in text.data[lang]


@pytest.mark.parametrize(("change", "problem"), [
    (lambda b: b.update(scenario="example_missing"), "needs a llamafactory scenario"),
    (lambda b: b.update(scenario="packed"), "token length"),
    (lambda b: b.update(colour="red"), "unknown keys ['colour']"),
    (lambda b: b.update(caption={"zh": "只有中文"}), "zh and en"),
])
def test_a_bad_funnel_block_gets_a_clear_error(change, problem):
    data = _data()
    change(data["blocks"][INDEX])
    with pytest.raises(LessonError) as error:
        parse_lesson(data, PATH.name)
    assert problem in str(error.value) and PATH.name in str(error.value)


def test_a_funnel_needs_a_llamafactory_scenario_with_one_or_two_known_datasets():
    data = _data()
    data["scenarios"]["three"] = {"llamafactory": {"dataset": "identity,alpaca_en_demo,identity"}}
    data["scenarios"]["plain"] = {"preset": "course_default"}
    for scenario, problem in (("three", "one or two datasets"), ("plain", "needs a llamafactory scenario")):
        data["blocks"][INDEX]["scenario"] = scenario
        with pytest.raises(LessonError, match=problem):
            parse_lesson(data, PATH.name)
    data["scenarios"]["one"] = {"llamafactory": {"dataset": "identity"}}
    data["blocks"][INDEX]["scenario"] = "one"
    assert parse_lesson(data, PATH.name).funnel("one").train_examples == KNOWN_DATASET_ROWS["identity"]


@pytest.mark.parametrize(("typed", "held"), [(0.0, 0), (0.1, 0.1), (1.0, 1), (100.0, 100), (2.5, 2.5)])
def test_a_typed_val_size_is_read_as_a_yaml_would_hold_it(typed, held):
    assert yaml_val_size(typed) == held and type(yaml_val_size(typed)) is type(held)


def test_the_locale_files_carry_the_same_funnel_keys():
    keys = {lang: {key for key in catalogue(lang) if key.startswith("lesson.funnel.")} for lang in LANGUAGES}
    assert keys["zh"] == keys["en"] and len(keys["en"]) >= 10
    for lang in LANGUAGES:
        own = yaml.safe_load((ROOT / "steplab" / "locales" / lang / "lesson_funnel.yaml").read_text(encoding="utf-8"))
        assert set(own) == keys[lang]  # the prefix lives in this file only


# --------------------------------------------------------------------------- the live widget


def _page(lang: str) -> AppTest:
    """The lesson with its predictions before the funnel answered (what follows a prediction waits for it)."""
    from steplab_ui.views.lesson import revealed_key

    at = AppTest.from_file(str(ROOT / "app_pages" / "lessons.py"), default_timeout=90)
    at.query_params["lesson"] = LESSON.id
    at.query_params["lang"] = lang
    for index, block in enumerate(LESSON.blocks[:INDEX]):
        if block.kind == "predict":
            at.session_state[revealed_key(f"{LESSON.id}_{index}")] = True
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _shown(at: AppTest, lang: str, name: str) -> str:
    label = catalogue(lang)[f"lesson.funnel.{name}"]
    return next(metric.value for metric in at.metric if metric.label == label)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_widget_shows_the_funnel_for_the_learners_numbers(lang):
    at = _page(lang)
    start = LESSON.funnel(SCENARIO)
    assert _shown(at, lang, "train") == fmt_int(start.train_examples)
    assert _shown(at, lang, "eval") == fmt_int(start.eval_examples)
    assert at.get("plotly_chart")  # the picture, with the stage notes in words below it
    notes = "\n".join(m.value for m in at.markdown)
    assert all(stage.note.get(lang) in notes for stage in start.stages)

    rows = {"identity": 250, "alpaca_en_demo": 4000}
    for name, count in rows.items():
        at.number_input(key=f"{KEY}_rows_{name}").set_value(count)
    at.number_input(key=f"{KEY}_max_samples").set_value(300)
    at.number_input(key=f"{KEY}_val_size").set_value(0.15).run()
    assert not at.exception and not at.error
    expected = funnel_from_rows(_yaml(300, 0.15), rows)
    assert _shown(at, lang, "train") == fmt_int(expected.train_examples)
    assert _shown(at, lang, "eval") == fmt_int(expected.eval_examples)
    assert expected.train_examples == 250 + 300 - 83  # ceil(0.15 × 550) = 83 held out

    at.number_input(key=f"{KEY}_max_samples").set_value(None)  # no cap
    at.number_input(key=f"{KEY}_val_size").set_value(40.0).run()  # a whole number counts rows
    expected = funnel_from_rows(_yaml(None, 40), rows)
    assert _shown(at, lang, "train") == fmt_int(expected.train_examples) == fmt_int(250 + 4000 - 40)

    at.button(key=f"{KEY}_use").click().run()  # the sidebar takes the count; nothing else changes
    assert not at.exception
    assert at.session_state["num_samples"] == expected.train_examples
    assert at.number_input(key="num_samples").value == expected.train_examples
    assert at.session_state["per_device_train_batch_size"] == 4


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("val_size", [591.0, 5000.0, 0.9999])
def test_an_impossible_val_size_is_an_error_not_a_traceback(lang, val_size):
    at = _page(lang)
    at.number_input(key=f"{KEY}_val_size").set_value(val_size).run()
    assert not at.exception, [e.value for e in at.exception]
    with pytest.raises(DatasetError) as refused:
        funnel_from_rows(_yaml(500, yaml_val_size(val_size)), {"identity": 91, "alpaca_en_demo": 999})
    assert any(refused.value.message(lang) in error.value for error in at.error), [e.value for e in at.error]
    train = catalogue(lang)["lesson.funnel.train"]
    assert not any(metric.label == train for metric in at.metric)  # no count for a run LLaMA-Factory refuses
    assert not [b for b in at.button if b.key == f"{KEY}_use"]
    at.number_input(key=f"{KEY}_val_size").set_value(0.1).run()  # and back to a good one
    assert not at.error and _shown(at, lang, "train") == fmt_int(LESSON.funnel(SCENARIO).train_examples)
