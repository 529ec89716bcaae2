"""One field table: every numeric field has the same range in the engine, the URL, the sidebar, the YAML
import and the CLI; a value one of them takes, every other takes, end to end through the pages."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest
import yaml
from streamlit.testing.v1 import AppTest
from test_app import first_button

from steplab.cli import main
from steplab.errors import SetupError
from steplab.i18n import catalogue, fmt_int, t
from steplab.io.config_read import read_config
from steplab.io.safe_yaml import ConfigError
from steplab.trainer.fields import FIELDS, TRL_FIELD_NAMES
from steplab.trainer.plan import make_plan
from steplab.trainer.query import value_problem
from steplab.trainer.setup import DEFAULTS, TrainingSetup, setup_from_mapping
from steplab_ui.shell import state

ROOT = Path(__file__).resolve().parents[1]
NUMBERS = [name for name, field in FIELDS.items() if field.is_number]
# The sidebar's number controls, and what must be set for each to be drawn.
SIDEBAR = {name: {} for name in (*state.MAIN_FIELDS, "learning_rate", "warmup_steps", "warmup_ratio", "eval_steps",
                                 "save_steps", "logging_steps")}
SIDEBAR["limit_train_batches"] = {"trainer": "lightning-2"}


def boundaries(name: str) -> list[tuple[float, bool]]:
    """(value, allowed): each end of the range, and a step beyond each end."""
    field = FIELDS[name]
    step = 1 if field.whole else 0.5
    return [(field.low, True), (field.high, True), (field.low - step, False), (field.high * 10, False)]


def cases():
    for name in NUMBERS:
        for value, allowed in boundaries(name):
            yield pytest.param(name, value, allowed, id=f"{name}={value:g}")


def as_text(name: str, value: float) -> str:
    return str(int(value)) if FIELDS[name].whole or value == int(value) else repr(float(value))


def engine_takes(name: str, value: float) -> bool:
    try:
        setup_from_mapping({name: value})
    except SetupError:
        return False
    return True


def url_takes(name: str, value: float) -> bool:
    return value_problem(name, as_text(name, value)) is None


def yaml_takes(name: str, value: float) -> bool:
    samples = {} if name == "num_samples" else {"num_samples": 100}
    try:
        imported = read_config(yaml.safe_dump({name: value, **samples}))
        setup_from_mapping({"num_samples": 1, **imported.values})
    except (ConfigError, SetupError):
        return False
    return imported.values[name] == value or (name == "max_steps" and value <= 0)


def yaml_leaves_out(name: str, value: float) -> bool:
    """TRL's fields are no LLaMA-Factory YAML key: the import reads none of them, whatever the value."""
    return name not in read_config(yaml.safe_dump({name: value, "num_samples": 100})).values


def cli_takes(name: str, value: float, capsys) -> bool:
    # a short run, so that the lists of event steps the JSON carries stay small whatever the value
    short = {"num_samples": 100, "max_steps": 10, "save_strategy": "no", "logging_strategy": "no"}
    others = [f"--set={key}={item}" for key, item in short.items() if key != name]
    code = main(["plan", "--set", f"{name}={as_text(name, value)}", *others])
    capsys.readouterr()
    return code in (0, 3)  # 3: the Trainer itself would refuse it (e.g. no samples); the input was read


@pytest.mark.parametrize("name, value, allowed", list(cases()))
def test_one_range_in_the_engine_the_url_the_yaml_import_and_the_cli(name, value, allowed, capsys):
    assert engine_takes(name, value) is allowed
    assert url_takes(name, value) is allowed
    assert yaml_leaves_out(name, value) if name in TRL_FIELD_NAMES else yaml_takes(name, value) is allowed
    assert cli_takes(name, value, capsys) is allowed


@pytest.mark.parametrize("trainer", sorted({str(params.get("trainer", "hf-5")) for params in SIDEBAR.values()}))
def test_the_sidebar_controls_have_the_fields_range(trainer):
    at = AppTest.from_file(str(ROOT / "app_pages/calculator.py"), default_timeout=60)
    at.query_params["trainer"] = trainer
    at.session_state[state.ADVANCED_OPEN] = True  # its controls are drawn only when the section is open
    at.run()
    for name, params in SIDEBAR.items():
        if params.get("trainer", "hf-5") != trainer or name in state.MAIN_FIELDS:
            continue
        control = at.number_input(key=state.control_key(name))
        field = FIELDS[name]
        assert (control.min, control.max) == (field.low, field.high), name
        if field.whole:
            assert control.step == 1, name


@pytest.mark.parametrize("name", state.MAIN_FIELDS)
def test_the_sidebar_exact_inputs_take_exactly_the_fields_range(name):
    """The exact inputs have no browser range (it refused silently, issue 16 item 6): the sidebar checks the field
    table's range in Python. Each end is taken; a step beyond each end keeps the value in use and says why, with
    the table's range, right under the field (in the field's own box)."""
    at = AppTest.from_file(str(ROOT / "app_pages/calculator.py"), default_timeout=60)
    at.query_params["lang"] = "en"
    at.run()
    field = FIELDS[name]
    assert at.number_input(key=name).step == (1 if field.whole else 0.5)
    for value, allowed in boundaries(name):
        kept = at.number_input(key=name).value
        typed = int(value) if field.whole else float(value)
        at.number_input(key=name).set_value(typed).run()
        assert not at.exception
        said = [w.value for w in at.sidebar.warning]
        if allowed:
            assert at.number_input(key=name).value == typed, (name, value)
            assert not said, said
        else:
            assert at.number_input(key=name).value == kept, (name, value)
            assert said == [state.refusal_text("en", name, kept, typed)], said
            assert f"from {fmt_int(int(field.low))} to {fmt_int(int(field.high))}" in said[0], said


def test_the_setup_record_is_the_table():
    assert tuple(f.name for f in fields(TrainingSetup)) == tuple(FIELDS)
    assert {name: getattr(DEFAULTS, name) for name in FIELDS} == {name: f.default for name, f in FIELDS.items()}


def test_the_compare_columns_take_the_fields_range():
    at = AppTest.from_file(str(ROOT / "app_pages/compare.py"), default_timeout=60).run()
    for name in ("num_samples", "per_device_train_batch_size", "gradient_accumulation_steps", "world_size",
                 "num_train_epochs"):
        control = at.number_input(key=f"cmp_0_{name}")
        assert (control.min, control.max) == (FIELDS[name].low, FIELDS[name].high), name


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_an_imported_accumulation_of_2000_reaches_every_page(lang):
    """A YAML the engine takes is applied whole: the sidebar, the URL, the plan and the exported YAML all
    say 2000 (the sidebar used to stop at 1,024 and silently fall back to 1)."""
    at = AppTest.from_file(str(ROOT / "app_pages/config.py"), default_timeout=60)
    at.query_params["lang"] = lang
    at.run()
    at.text_area(key="config_text").set_value("gradient_accumulation_steps: 2000\nnum_samples: 1600\n").run()
    first_button(at).click().run()
    assert at.success and not at.exception and not at.warning
    assert at.number_input(key="gradient_accumulation_steps").value == 2000
    assert at.query_params["gradient_accumulation_steps"] == "2000"
    exported = yaml.safe_load(at.code[0].value)
    assert exported["gradient_accumulation_steps"] == 2000
    at.run()  # the next rerun keeps it and blames no link
    assert at.number_input(key="gradient_accumulation_steps").value == 2000 and not at.warning

    calculator = AppTest.from_file(str(ROOT / "app_pages/calculator.py"), default_timeout=60)
    for key, value in at.query_params.items():
        calculator.query_params[key] = value
    calculator.run()
    plan = make_plan(setup_from_mapping({**state.presets()[state.COURSE_PRESET].values,
                                         "gradient_accumulation_steps": 2000})[0])
    cards = {m.label: m.value for m in calculator.metric}
    assert cards[catalogue(lang)["card.total_steps"]] == fmt_int(plan.max_steps)
    assert calculator.number_input(key="gradient_accumulation_steps").value == 2000
    notice = t(lang, "url.ignored", key="gradient_accumulation_steps", value="2000")
    assert notice not in [w.value for w in calculator.warning]  # no "ignored a hand-edited link"
