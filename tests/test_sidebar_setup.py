"""The sidebar returns the setup as a value, parsed once a run (steplab_ui/shell/state.py), and its URL is the codec's."""

from __future__ import annotations

import pytest
from test_app import run

from steplab.trainer import query
from steplab.trainer import setup as engine_setup
from steplab_ui.shell import state

PAGE = "app_pages/calculator.py"


@pytest.fixture
def parses(monkeypatch):
    """Every full parse of a setup in this process (the sidebar's, the link's), one list entry each."""
    seen: list[tuple[str, ...]] = []
    original = engine_setup.parse_setup

    def counted(values, base=engine_setup.DEFAULTS):
        if len(values) > 1:  # a typed value's own check (`_check_exact`) is one field
            seen.append(tuple(values))
        return original(values, base)

    monkeypatch.setattr(state, "parse_setup", counted)
    monkeypatch.setattr(query, "parse_setup", counted)
    state._read_link.cache_clear()
    return seen


def test_a_rerun_parses_the_setup_once(parses):
    at = run(PAGE, lang="en", gradient_accumulation_steps="4", warmup_steps="10")
    parses.clear()
    at.run()
    assert len(parses) == 1  # the sidebar's values; the link, unchanged, is not read again
    at.number_input(key="gradient_accumulation_steps").set_value(16).run()
    assert len(parses) == 2
    assert at.query_params["gradient_accumulation_steps"] == "16"


def test_the_url_is_the_codecs_form_of_the_setup():
    at = run(PAGE, lang="en", warmup_steps="10.0", learning_rate="0.0002", lr_scheduler_kwargs='{"num_cycles":2}',
             lr_scheduler_type="cosine_with_restarts", eval_steps="null")
    setup = query.from_query({key: at.query_params[key] for key in at.query_params}, state.course_setup()).setup
    written = query.to_query(setup, state.course_setup())
    assert written == {key: at.query_params[key] for key in written}
    assert written["warmup_steps"] == "10" and written["eval_steps"] == "null"
    assert written["lr_scheduler_kwargs"] == '{"num_cycles": 2}'


def test_a_typed_refusal_is_said_once_beside_its_field_and_keeps_the_value_in_use():
    at = run(PAGE, lang="en", gradient_accumulation_steps="4")
    at.number_input(key="gradient_accumulation_steps").set_value(0).run()
    assert at.number_input(key="gradient_accumulation_steps").value == 4  # the value in use, kept
    said = [w.value for w in at.warning]
    assert said == [state.refusal_text("en", "gradient_accumulation_steps", 4, 0)]
    at.select_slider(key="gradient_accumulation_steps__slider").set_value(16).run()
    assert not at.warning and at.query_params["gradient_accumulation_steps"] == "16"

