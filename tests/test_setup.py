"""The training setup: Trainer defaults, validation that names the field in both languages, unknown keys."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from steplab.errors import SetupError
from steplab.trainer.profiles import LLAMA_FACTORY_PROFILE
from steplab.trainer.setup import DEFAULTS, FIELD_NAMES, setup_from_mapping


def test_defaults_are_the_trainers():
    assert (DEFAULTS.per_device_train_batch_size, DEFAULTS.gradient_accumulation_steps) == (8, 1)
    assert (DEFAULTS.num_train_epochs, DEFAULTS.max_steps, DEFAULTS.learning_rate) == (3.0, -1, 5e-5)
    assert (DEFAULTS.lr_scheduler_type, DEFAULTS.save_steps, DEFAULTS.logging_steps) == ("linear", 500, 500)
    assert (DEFAULTS.eval_strategy, DEFAULTS.save_strategy, DEFAULTS.dataloader_drop_last) == ("no", "steps", False)


def test_unknown_keys_are_reported_not_dropped():
    setup, unknown = setup_from_mapping({"num_samples": 10, "lora_rank": 8, "evaluation_strategy": "epoch"})
    assert unknown == ["lora_rank"]
    assert setup.eval_strategy == "epoch"  # the old name of eval_strategy is an alias


def test_setup_is_immutable_and_hashable():
    setup = setup_from_mapping({"lr_scheduler_kwargs": {"num_cycles": 2}})[0]
    with pytest.raises(AttributeError):
        setup.num_samples = 5
    assert hash(setup) == hash(setup.replace())
    assert setup.scheduler_kwargs == {"num_cycles": 2}


@pytest.mark.parametrize(("field", "value", "allowed"), [
    ("per_device_train_batch_size", 0, "from 1"),
    ("per_device_train_batch_size", 2.5, "whole number"),
    ("gradient_accumulation_steps", "eight", "whole number"),
    ("num_samples", -1, "from 0"),
    ("num_train_epochs", float("nan"), "number"),
    ("num_train_epochs", float("inf"), "number"),
    ("world_size", True, "whole number"),
    ("eval_strategy", "sometimes", "no, steps, epoch"),
    ("lr_scheduler_type", 7, "linear"),  # not a name at all; a name the Trainer lacks is its to refuse
    ("trainer", "hf-3", "hf-5"),
    ("dataloader_drop_last", "maybe", "true or false"),
    ("lr_scheduler_kwargs", [1, 2], "mapping"),
    ("learning_rate", -1e-4, "from 0"),
])
def test_bad_values_name_the_field_in_both_languages(field, value, allowed):
    with pytest.raises(SetupError) as error:
        setup_from_mapping({field: value})
    assert error.value.field == field
    assert allowed in error.value.message("en")
    assert field in error.value.message("zh") and error.value.text.zh != error.value.text.en


def test_strings_are_read_like_the_argument_parser():
    setup = setup_from_mapping({"num_samples": "1,600".replace(",", ""), "num_train_epochs": "2.5",
                                "learning_rate": "1e-4", "dataloader_drop_last": "true", "max_steps": "0"})[0]
    assert (setup.num_samples, setup.num_train_epochs, setup.learning_rate) == (1600, 2.5, 1e-4)
    assert setup.dataloader_drop_last is True and setup.max_steps == -1  # 0 or negative: train by epochs


@given(st.dictionaries(st.sampled_from(FIELD_NAMES), st.one_of(
    st.integers(-10**12, 10**12), st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=20),
    st.booleans(), st.none())))
def test_any_input_either_validates_or_names_a_field(values):
    try:
        setup, unknown = setup_from_mapping(values)
    except SetupError as error:
        assert error.field in FIELD_NAMES or error.field.startswith("lr_scheduler_kwargs")
        return
    assert unknown == []
    assert setup.per_device_train_batch_size >= 1 and math.isfinite(setup.num_train_epochs)


def test_one_parse_reports_every_bad_field_and_keeps_the_rest():
    from steplab.trainer.setup import parse_setup

    parsed = parse_setup({"num_samples": "1000", "gradient_accumulation_steps": 0, "trainer": "hf-9",
                          "num_train_epochs": 2, "evaluation_strategy": "steps", "colour": "red"})
    assert set(parsed.problems) == {"gradient_accumulation_steps", "trainer"}
    assert "allowed" in parsed.problems["gradient_accumulation_steps"].text.en
    assert (parsed.setup.num_samples, parsed.setup.num_train_epochs, parsed.setup.eval_strategy) == (1000, 2.0, "steps")
    assert parsed.setup.gradient_accumulation_steps == 1 and parsed.setup.trainer == LLAMA_FACTORY_PROFILE  # the defaults
    assert parsed.unknown == ["colour"]
    with pytest.raises(SetupError) as first:
        setup_from_mapping({"gradient_accumulation_steps": 0, "trainer": "hf-9"})
    assert first.value.field == "gradient_accumulation_steps"


@pytest.mark.parametrize(("values", "error_type", "message"), [
    ({"lr_scheduler_type": "cosine_fancy"}, "ValueError", "cosine_fancy is not a valid SchedulerType, please select"),
    ({"lr_scheduler_type": "greedy"}, "ValueError", "lr_scheduler_type greedy requires an eval strategy"),
    ({"lr_scheduler_type": "greedy", "trainer": "hf-4.57"}, "ValueError", "greedy is not a valid SchedulerType"),
    ({"warmup_steps": -3}, "ValueError", "Got warmup_steps = -3, Expected value warmup_steps >= 0"),
    ({"warmup_steps": -0.5}, "ValueError", "Got warmup_steps = -0.5, Expected value warmup_steps >= 0"),
    ({"warmup_steps": -3, "trainer": "hf-4.46"}, "ValueError", "warmup_steps must be of type int and must be 0"),
])
def test_names_and_values_the_trainer_refuses_are_refused_in_its_words(values, error_type, message):
    from steplab.errors import TrainerRefusal
    from steplab.trainer.plan import make_plan

    setup, _ = setup_from_mapping({"num_samples": 100, **values})
    with pytest.raises(TrainerRefusal) as refused:
        make_plan(setup)
    assert refused.value.error_type == error_type and refused.value.message.startswith(message)


def test_greedy_with_evaluation_plans_its_steps_but_draws_no_curve():
    from steplab.trainer.plan import make_plan

    plan = make_plan(setup_from_mapping({"num_samples": 100, "lr_scheduler_type": "greedy", "eval_strategy": "steps",
                                         "eval_steps": 5})[0])
    assert plan.max_steps == 39
    assert set(plan.learning_rates()) == {plan.setup.learning_rate}  # until an evaluation moves it, as plateau
    with pytest.raises(SetupError, match="warmup_steps"):  # Lightning has no TrainingArguments to refuse it
        make_plan(setup_from_mapping({"num_samples": 1, "warmup_steps": -1, "trainer": "lightning-2"})[0])
