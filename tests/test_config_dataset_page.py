"""/config's dataset section without a browser (Streamlit's AppTest): typed row counts go through the dataset
stage, the funnel is shown, the sample count reaches the setup; a bad count or an impossible split says why."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest
from test_app import first_button

from steplab.dataset.load import funnel_from_rows
from steplab.i18n import fmt_int, t

ROOT = Path(__file__).resolve().parents[1]
YAML = (ROOT / "tests" / "data" / "llamafactory-runs" / "configs" / "b_val01.yaml").read_text()


def page(lang: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app_pages" / "config.py"), default_timeout=60)
    at.query_params["lang"] = lang
    return at.run()


def test_typed_rows_fill_the_sample_count_through_the_dataset_stage():
    for lang in ("zh", "en"):
        at = page(lang)
        at.text_area(key="config_text").set_value(YAML).run()
        at.number_input(key="config_rows_alp1000").set_value(1000).run()
        first_button(at).click().run()
        assert not at.exception and at.success
        expected = funnel_from_rows({"dataset": "alp1000", "val_size": 0.1}, {"alp1000": 1000}).train_examples
        assert at.session_state["num_samples"] == expected == 900
        shown = " ".join(m.value for m in at.markdown)
        assert fmt_int(900) in shown and t(lang, "config.data.title") in shown


def test_an_impossible_split_is_said_and_nothing_changes():
    at = page("en")
    before = at.session_state["num_samples"]
    at.text_area(key="config_text").set_value(YAML.replace("val_size: 0.1", "val_size: 5000")).run()
    at.number_input(key="config_rows_alp1000").set_value(1000).run()
    first_button(at).click().run()
    assert not at.exception and at.error
    assert at.session_state["num_samples"] == before


def test_a_scheduler_name_the_trainer_lacks_is_refused_in_its_words_and_nothing_changes():
    at = page("en")
    at.text_area(key="config_text").set_value("num_samples: 100\nlr_scheduler_type: cosine_fancy\n").run()
    first_button(at).click().run()
    assert not at.exception and at.session_state["lr_scheduler_type"] == "linear"
    shown = " ".join([e.value for e in at.error] + [c.value for c in at.code])
    assert "cosine_fancy is not a valid SchedulerType" in shown


def test_new_trainer_flags_come_in_from_a_yaml_and_reach_the_sidebar():
    at = page("en")
    at.text_area(key="config_text").set_value("num_samples: 100\nlogging_first_step: true\neval_on_start: true\n").run()
    first_button(at).click().run()
    assert not at.exception
    assert at.session_state["logging_first_step"] is True and at.session_state["eval_on_start"] is True


def test_packing_without_a_tokenizer_is_applied_as_a_labelled_upper_end():
    packed = (ROOT / "tests" / "data" / "llamafactory-runs" / "configs" / "d_packing.yaml").read_text()
    expected = funnel_from_rows({"dataset": "short1600", "packing": True, "cutoff_len": 128}, {"short1600": 1600})
    low, high = expected.estimate.train
    for lang in ("zh", "en"):
        at = page(lang)
        at.text_area(key="config_text").set_value(packed).run()
        at.number_input(key="config_rows_short1600").set_value(1600).run()
        first_button(at).click().run()
        assert not at.exception and at.session_state["num_samples"] == high
        warning = " ".join(w.value for w in at.warning)
        assert fmt_int(low) in warning and fmt_int(high) in warning
        assert t(lang, "config.data.sidebar_estimate", n=fmt_int(high)) in [c.value for c in at.caption]


def test_the_processes_beside_the_funnel_say_where_their_number_comes_from_and_set_the_setup():
    for lang in ("zh", "en"):
        at = page(lang)
        at.text_area(key="config_text").set_value(YAML).run()
        at.number_input(key="config_rows_alp1000").set_value(1000).run()
        first_button(at).click().run()
        field = at.number_input(key="config_world_size")
        assert field.label == t(lang, "config.processes") and field.value == 1
        assert t(lang, "config.processes_assumed", world_size=1) in [c.value for c in at.caption]
        assert t(lang, "config_io.note.no_world_size") not in [i.value for i in at.info]  # the field says it once
        field.set_value(2).run()
        assert not at.exception and at.session_state["world_size"] == 2
        stated = page(lang)
        stated.text_area(key="config_text").set_value(YAML + "world_size: 3\n").run()
        stated.number_input(key="config_rows_alp1000").set_value(1000).run()
        first_button(stated).click().run()
        assert stated.number_input(key="config_world_size").value == 3
        assert t(lang, "config.processes_stated", world_size=3) in [c.value for c in stated.caption]
