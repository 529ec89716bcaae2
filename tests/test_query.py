"""The setup's link form (`steplab.trainer.query`): a round trip over generated setups, every notice, hostile values.

The oracle for what a value means is the engine's own parse (`parse_setup`, the field table's rules); the codec
must give back exactly the setup it wrote, on any base, and name every parameter it drops.
"""

from __future__ import annotations

import math
from urllib.parse import parse_qs, urlencode

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from steplab.classroom import polls
from steplab.errors import SetupError
from steplab.teaching.presets import presets
from steplab.trainer.fields import FIELD_NAMES, FIELDS, Field
from steplab.trainer.query import (
    LINK_REFUSED,
    MAX_LINK_QUERY,
    MAX_URL_PARAMETER,
    Notice,
    from_query,
    plain_value,
    query_text,
    to_query,
    value_problem,
)
from steplab.trainer.setup import DEFAULTS, TrainingSetup, parse_setup, setup_from_mapping

COURSE = presets()["course_default"].setup()


def field_values(field: Field) -> st.SearchStrategy:
    """Values the field takes, as a YAML or a control gives them (ints, floats, names, flags, kwargs)."""
    if field.kind == "int":
        values = st.integers(int(field.low), int(field.high))
    elif field.kind in ("float", "interval", "limit"):
        values = st.one_of(st.integers(int(field.low), int(min(field.high, 10**9))),
                           st.floats(field.low, field.high, allow_nan=False, allow_infinity=False))
    elif field.kind == "choice":
        values = st.sampled_from(field.choices)
    elif field.kind == "bool":
        values = st.booleans()
    else:
        scalar = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.text(max_size=8),
                           st.floats(allow_nan=False, allow_infinity=False))
        values = st.dictionaries(st.text(min_size=1, max_size=8), scalar, max_size=3)
    return st.one_of(st.none(), values) if field.optional else values


SETUPS = st.fixed_dictionaries({}, optional={name: field_values(field) for name, field in FIELDS.items()}).map(
    lambda values: setup_from_mapping(values)[0])


@settings(max_examples=150, deadline=None)
@given(SETUPS, st.sampled_from([DEFAULTS, COURSE]))
def test_a_setup_comes_back_from_its_link(setup, base):
    query = to_query(setup, base)
    assert list(query) == [name for name in FIELD_NAMES if name in query]  # the field table's order
    assert all(isinstance(text, str) for text in query.values())
    back = from_query(query, base)
    assert back.notices == ()
    assert back.setup == setup
    assert back.given == frozenset(query)
    # and through a real query string, as a browser sends it
    sent = parse_qs(urlencode(query), keep_blank_values=True)
    assert from_query(sent, base).setup == setup


@settings(max_examples=100, deadline=None)
@given(SETUPS, st.sampled_from([DEFAULTS, COURSE]))
def test_a_link_writes_only_what_differs_from_its_base(setup, base):
    query = to_query(setup, base)
    for name in FIELD_NAMES:
        differs = getattr(setup, name) != getattr(base, name)
        if name == "max_steps":  # written only when on: 0 or less trains by epochs, as no max_steps does
            differs = setup.max_steps > 0
        assert (name in query) == differs, name


@settings(max_examples=100, deadline=None)
@given(SETUPS)
def test_a_polls_stored_values_are_the_links_values(setup):
    """The class polls store the setup with the same codec: the same fields as a link on the Trainer's defaults,
    each the JSON value whose text the link writes."""
    stored = dict(polls.setup_values(setup))
    query = to_query(setup)
    assert list(stored) == list(query)
    for name, value in stored.items():
        assert query_text(name, value) == query[name]
    assert setup_from_mapping(stored)[0] == setup


def test_whole_numbers_flags_and_kwargs_as_a_link_writes_them():
    setup = DEFAULTS.replace(num_train_epochs=3.0, eval_steps=50.0, learning_rate=2e-5, logging_first_step=True,
                             lr_scheduler_kwargs={"num_cycles": 2, "a": 0.5}, warmup_ratio=0.1)
    query = to_query(setup)
    assert "num_train_epochs" not in query  # 3.0 is the Trainer's default
    assert query["eval_steps"] == "50" and query["learning_rate"] == "2e-05"
    assert query["logging_first_step"] == "true" and query["warmup_ratio"] == "0.1"
    assert query["lr_scheduler_kwargs"] == '{"a": 0.5, "num_cycles": 2}'
    assert plain_value("eval_steps", 50.0) == 50 and isinstance(plain_value("eval_steps", 50.0), int)
    assert plain_value("learning_rate", 1e16) == 1e16  # too large to be written as a whole number
    assert plain_value("lr_scheduler_kwargs", ()) == ""


def test_not_set_where_the_base_sets_it():
    """An optional field left unset where the base sets it (the course's `eval_steps` 50) is written `null`."""
    setup = COURSE.replace(eval_steps=None)
    assert to_query(setup, COURSE) == {"eval_steps": "null"}
    assert from_query({"eval_steps": "null"}, COURSE).setup == setup


def test_each_notice_kind():
    parsed = from_query({
        "gradient_acumulation_steps": "2",  # misspelt
        "num_samples": "x" * MAX_URL_PARAMETER,  # too long
        LINK_REFUSED[0]: LINK_REFUSED[1],  # the balancer refused the link
        "per_device_train_batch_size": "0",  # out of range
        "lr_scheduler_type": "my_schedule",  # a name the controls do not offer
        "world_size": "4",  # fine
        "lesson": "3", "utm_source": "x",  # a page's own key, a tracker's: not named
    }, COURSE)
    assert parsed.notices == (
        Notice("url.unknown", "gradient_acumulation_steps", "gradient_accumulation_steps"),
        Notice("url.too_long", "num_samples", len("num_samples=") + MAX_URL_PARAMETER),
        Notice("url.link_refused", "link", MAX_LINK_QUERY),
        Notice("url.ignored", "per_device_train_batch_size", "0"),
        Notice("url.ignored", "lr_scheduler_type", "my_schedule"),
    )
    assert parsed.dropped == ("gradient_acumulation_steps", "num_samples", "link", "per_device_train_batch_size",
                              "lr_scheduler_type")
    assert parsed.given == {"world_size"}
    assert parsed.setup == COURSE.replace(world_size=4)  # every refused value keeps the base's


def test_a_repeated_key_counts_its_last_value_and_its_longest_for_the_length():
    assert from_query({"num_samples": ["1000", "2000"]}).setup.num_samples == 2000
    long = ["1", "9" * MAX_URL_PARAMETER]
    assert from_query({"num_samples": long}).notices[0].code == "url.too_long"


HOSTILE = st.one_of(
    st.sampled_from(["nan", "NaN", "inf", "-inf", "1e309", "-0", "0x10", "1_000", "３", "1.5", "", " ", "null", "[]",
                     "{}", "[" * 5000, "[" * 980, '{"a": NaN}', "true", "1e-400", "  7  ", "\x00", "é"]),
    st.integers(-(10**30), 10**30).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(max_size=40),
)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(FIELD_NAMES), HOSTILE)
def test_a_hostile_value_is_named_or_means_what_the_engine_reads(name, text):
    """Any text: the link either names it (`url.ignored`, the setup keeps the base's value) or its value is what
    the engine's own parse makes of it; never an exception, never a value outside the field table."""
    parsed = from_query({name: text}, COURSE)
    if len(name) + 1 + len(text) > MAX_URL_PARAMETER:
        assert parsed.notices == (Notice("url.too_long", name, len(name) + 1 + len(text)),)
        assert parsed.setup == COURSE
        return
    problem = value_problem(name, text)
    if problem is not None:
        assert parsed.notices == (Notice("url.ignored", name, text),)
        assert getattr(parsed.setup, name) == getattr(COURSE, name)
        return
    assert parsed.notices == () and parsed.given == {name}
    value = getattr(parsed.setup, name)
    field = FIELDS[name]
    if field.is_number and value is not None:
        assert math.isfinite(value) and field.low <= value <= field.high
    if field.kind == "choice":
        assert value in field.choices
    engine = parse_setup({name: parsed.setup.to_dict()[name]}, COURSE)
    assert not engine.problems and engine.setup == parsed.setup
    assert from_query(to_query(parsed.setup, COURSE), COURSE).setup == parsed.setup


@pytest.mark.parametrize(("name", "text", "reason"), [
    ("num_samples", "-1", "setup.int_range"), ("gradient_accumulation_steps", "2.5", "setup.int_range"),
    ("num_train_epochs", "inf", "setup.not_number"), ("dataloader_drop_last", "maybe", "setup.not_bool"),
    ("eval_strategy", "sometimes", "setup.choice"), ("lr_scheduler_kwargs", "[1]", "setup.kwargs_mapping"),
    ("lr_scheduler_type", "x" * 65, "setup.choice"), ("trainer", "hf-3", "setup.choice"),
])
def test_the_reason_is_the_engines(name, text, reason):
    with pytest.raises(SetupError) as raised:
        setup_from_mapping({name: text if FIELDS[name].kind in ("choice", "kwargs") else _json(text)})
    assert raised.value.code == reason or name == "lr_scheduler_type"  # a long name: the engine refuses it later
    assert value_problem(name, text) is not None


def _json(text: str):
    import json

    try:
        return json.loads(text)
    except ValueError:
        return text


def test_a_setup_is_a_value_not_a_widget_state():
    """The codec needs no Streamlit: it is the engine's (the sidebar, LlamaBoard's link and the polls use it)."""
    import steplab.trainer.query as query

    assert "streamlit" not in open(query.__file__, encoding="utf-8").read()
    assert isinstance(from_query({}).setup, TrainingSetup) and from_query({}).setup == DEFAULTS


def test_trl_fields_travel_in_the_link_only_when_set():
    """TRL's rows (trainer class, GRPO's counts) are setup fields: a link without them reads as the plain Trainer's
    setup always did and `to_query` writes none of them at their defaults; a GRPO link comes back whole."""
    from steplab.trainer.fields import TRL_FIELD_NAMES
    from steplab.trl.grpo import GrpoPlan
    from steplab.trl.plan import plan_trl

    plain = from_query({"num_samples": "100", "gradient_accumulation_steps": "4"}, COURSE)
    assert not set(to_query(plain.setup, COURSE)) & set(TRL_FIELD_NAMES)
    assert all(getattr(plain.setup, name) == FIELDS[name].default for name in TRL_FIELD_NAMES)
    link = {"num_samples": "100", "trainer_class": "GRPOTrainer", "num_generations": "4", "num_iterations": "2",
            "generation_batch_size": "16", "eval_strategy": "no"}
    parsed = from_query(link, COURSE)
    assert not parsed.notices and to_query(parsed.setup, COURSE) == link
    plan = plan_trl(parsed.setup)  # the course's batch size 4: Gb 16 is S = 4 micro-batches of 4, U = 16 / 4 prompts
    assert COURSE.per_device_train_batch_size == 4 and COURSE.world_size == 1
    assert isinstance(plan, GrpoPlan) and plan.unique_prompts_per_round == 4 and plan.micro_batches_per_round == 8
    refused = from_query({"trainer_class": "PPOTrainer", "num_generations": "-1"}, COURSE)
    assert {notice.key for notice in refused.notices} == {"trainer_class", "num_generations"}
