"""The sidebar's advanced section draws its controls only while it is open (steplab_ui/shell/state.py `_advanced`); its
fields keep their values, in the setup and the URL, open or closed."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest
from test_app import run as run_page

from steplab.teaching.presets import presets
from steplab.trainer.fields import TRL_FIELD_NAMES
from steplab_ui.shell.state import ADVANCED_KEYS, ADVANCED_OPEN, control_key, control_value


def run(advanced: bool = False, **params: str) -> AppTest:
    return run_page("app_pages/calculator.py", session={ADVANCED_OPEN: advanced}, **params)


def arithmetic(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def shown(at: AppTest) -> dict[str, object]:
    """The advanced fields whose control is drawn, with the value it shows."""
    controls = {element.key: element.value for kind in ("number_input", "selectbox", "toggle", "text_input")
                for element in at.get(kind)}
    return {key: controls[control_key(key)] for key in ADVANCED_KEYS if control_key(key) in controls}


def drawn(at: AppTest) -> set[str]:
    return set(shown(at))


def test_a_closed_section_draws_none_of_its_controls_and_a_links_values_hold():
    at = run(lang="en", warmup_steps="10", lr_scheduler_type="cosine", eval_on_start="true", num_generations="4")
    assert drawn(at) == set()
    assert "`warmup_steps = 10`" in arithmetic(at)  # the engine's plan took the link's warmup
    assert (at.session_state["lr_scheduler_type"], at.session_state["eval_on_start"]) == ("cosine", True)
    at.run()
    at.run()
    assert "`warmup_steps = 10`" in arithmetic(at)
    assert {key: at.query_params[key] for key in ("warmup_steps", "lr_scheduler_type", "eval_on_start",
                                                  "num_generations")} == {
        "warmup_steps": "10", "lr_scheduler_type": "cosine", "eval_on_start": "true", "num_generations": "4"}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_what_was_set_in_the_open_section_survives_closing_and_reopening_it(lang):
    at = run(advanced=True, lang=lang)
    # Lightning's field shows for Lightning only; TRL's fields have their page's controls, not the sidebar's
    assert drawn(at) == set(ADVANCED_KEYS) - {"limit_train_batches", *TRL_FIELD_NAMES}
    at.number_input(key=control_key("warmup_steps")).set_value(12.0).run()
    at.selectbox(key=control_key("lr_scheduler_type")).set_value("cosine").run()
    at.session_state[ADVANCED_OPEN] = False
    for _ in range(3):  # between runs too (a callback reads it then): Streamlit drops a hidden control's state
        at.run()
        assert (at.session_state["warmup_steps"], at.session_state["lr_scheduler_type"]) == (12.0, "cosine")
    assert drawn(at) == set()
    assert "`warmup_steps = 12`" in arithmetic(at)
    assert (at.query_params["warmup_steps"], at.query_params["lr_scheduler_type"]) == ("12", "cosine")
    at.session_state[ADVANCED_OPEN] = True
    at.run()
    assert shown(at)["warmup_steps"] == 12.0 and shown(at)["lr_scheduler_type"] == "cosine"
    at.number_input(key=control_key("warmup_steps")).set_value(0.0).run()  # back to the default: it leaves the URL
    assert "warmup_steps" not in at.query_params and "`warmup_steps = 0`" in arithmetic(at)


def test_a_preset_chosen_while_the_section_is_closed_reaches_its_fields_and_the_url():
    preset = presets()["llamafactory_qwen3_lora_sft"].values  # sets five advanced fields
    expected = {key: control_value(key, value) for key, value in preset.items() if key in ADVANCED_KEYS}
    at = run(lang="en")
    at.selectbox(key="_preset_choice").set_value("llamafactory_qwen3_lora_sft").run()
    assert drawn(at) == set()
    assert {key: at.session_state[key] for key in expected} == expected
    assert at.query_params["lr_scheduler_type"] == "cosine" and at.query_params["warmup_ratio"] == "0.1"
    at.session_state[ADVANCED_OPEN] = True
    at.run()
    assert {key: shown(at)[key] for key in expected} == expected


def test_a_preset_chosen_while_the_section_is_open_shows_in_its_controls():
    preset = presets()["llamafactory_qwen3_lora_sft"].values
    expected = {key: control_value(key, value) for key, value in preset.items() if key in ADVANCED_KEYS}
    at = run(advanced=True, lang="zh")
    at.selectbox(key="_preset_choice").set_value("llamafactory_qwen3_lora_sft").run()
    assert {key: shown(at)[key] for key in expected} == expected
    at.number_input(key=control_key("warmup_ratio")).set_value(0.2).run()  # and an edit after it still takes
    assert at.session_state["warmup_ratio"] == 0.2 and at.query_params["warmup_ratio"] == "0.2"
