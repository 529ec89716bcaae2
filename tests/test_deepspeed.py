"""DeepSpeed's batch triple (reference §5.2, edge case 28) and the HF "auto" fill-in."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from steplab.deepspeed import NEITHER_MESSAGE, hf_auto_fill, resolve_batch_triple
from steplab.errors import SetupError, TrainerRefusal

# --------------------------------------------------------------------------- edge case 28


def test_edge_28_train_and_micro_give_ga():
    assert resolve_batch_triple(64, 4, None, 2) == (64, 4, 8)


def test_edge_28_non_divisible_train_fails_with_deepspeeds_message():
    with pytest.raises(TrainerRefusal) as info:
        resolve_batch_triple(60, 4, None, 2)
    assert info.value.error_type == "AssertionError"
    assert info.value.message == (
        "Check batch related parameters. train_batch_size is not equal to "
        "micro_batch_per_gpu * gradient_acc_step * world_size 60 != 4 * 7 * 2"
    )


def test_edge_28_micro_only():
    assert resolve_batch_triple(None, 4, None, 2) == (8, 4, 1)


# --------------------------------------------------------------------------- the rest of the table


@pytest.mark.parametrize(
    ("given", "world_size", "expected"),
    [
        ((32, 4, 8), 1, (32, 4, 8)),  # all three: nothing derived
        ((64, None, 8), 2, (64, 4, 8)),  # train, ga → micro = 64 // 2 // 8
        ((None, 4, 8), 2, (64, 4, 8)),  # micro, ga → train
        ((64, None, None), 4, (64, 16, 1)),  # train only → ga 1, micro = train // ws
        ((None, 3, None), 1, (3, 3, 1)),  # micro only, one GPU
    ],
)
def test_fill_in_table(given, world_size, expected):
    assert resolve_batch_triple(*given, world_size) == expected


@pytest.mark.parametrize("given", [(None, None, None), (None, None, 8)])
def test_neither_train_nor_micro(given):
    with pytest.raises(TrainerRefusal) as info:
        resolve_batch_triple(*given, 2)
    assert info.value.error_type == "AssertionError"
    assert info.value.message == NEITHER_MESSAGE
    assert info.value.message == "Either train_batch_size or train_micro_batch_size_per_gpu needs to be provided"


def test_all_three_given_but_inconsistent():
    with pytest.raises(TrainerRefusal, match=r"32 != 4 \* 8 \* 2"):
        resolve_batch_triple(32, 4, 8, 2)


def test_integer_division_to_zero_is_the_positive_check():
    # 4 // 4 // 2 == 0: DeepSpeed's own "> 0" assertion fires before the equality check
    with pytest.raises(TrainerRefusal) as info:
        resolve_batch_triple(4, 4, None, 2)
    assert info.value.message == "Gradient accumulation steps: 0 has to be greater than 0"


def test_train_only_smaller_than_world_size():
    with pytest.raises(TrainerRefusal, match="Micro batch size per gpu: 0 has to be greater than 0"):
        resolve_batch_triple(1, None, None, 2)


def test_zero_divisor_is_zero_division():
    with pytest.raises(TrainerRefusal) as info:
        resolve_batch_triple(64, 0, None, 2)
    assert info.value.error_type == "ZeroDivisionError"


@pytest.mark.parametrize("bad", [1.5, "4", True])
def test_non_integer_input_is_a_setup_error(bad):
    with pytest.raises(SetupError) as info:
        resolve_batch_triple(bad, 4, None, 1)
    assert info.value.field == "train_batch_size"


def test_world_size_must_be_positive():
    with pytest.raises(SetupError) as info:
        resolve_batch_triple(8, 4, None, 0)
    assert info.value.field == "world_size"


# --------------------------------------------------------------------------- properties

maybe = st.one_of(st.none(), st.integers(min_value=-4, max_value=512))


@settings(max_examples=300, deadline=None)
@given(train=maybe, micro=maybe, ga=maybe, world_size=st.integers(min_value=1, max_value=64))
def test_whatever_is_returned_satisfies_the_equation(train, micro, ga, world_size):
    try:
        result = resolve_batch_triple(train, micro, ga, world_size)
    except TrainerRefusal as refusal:
        assert refusal.error_type in ("AssertionError", "ZeroDivisionError")
        return
    t, m, g = result
    assert t == m * g * world_size
    assert t > 0 and m > 0 and g > 0
    # given values are never changed
    for given_value, returned in ((train, t), (micro, m), (ga, g)):
        if given_value is not None:
            assert given_value == returned


@settings(max_examples=200, deadline=None)
@given(
    micro=st.integers(min_value=1, max_value=64),
    ga=st.integers(min_value=1, max_value=64),
    world_size=st.integers(min_value=1, max_value=64),
    drop=st.sampled_from([(), ("train",), ("micro",), ("ga",), ("train", "ga"), ("micro", "ga")]),
)
def test_consistent_triples_survive_dropping_a_derivable_value(micro, ga, world_size, drop):
    train = micro * ga * world_size
    values = {"train": train, "micro": micro, "ga": ga}
    for name in drop:
        values[name] = None
    t, m, g = resolve_batch_triple(values["train"], values["micro"], values["ga"], world_size)
    assert t == m * g * world_size
    if len(drop) <= 1:
        assert (t, m, g) == (train, micro, ga)
    else:  # only one of train / micro left: DeepSpeed sets ga to 1
        assert g == 1


# --------------------------------------------------------------------------- HF "auto"

AUTO = {
    "train_batch_size": "auto",
    "train_micro_batch_size_per_gpu": "auto",
    "gradient_accumulation_steps": "auto",
    "zero_optimization": {"stage": 3},
}


def test_auto_values_are_filled_from_training_arguments():
    filled = hf_auto_fill(4, 8, 2, AUTO)
    assert filled["train_batch_size"] == 64
    assert filled["train_micro_batch_size_per_gpu"] == 4
    assert filled["gradient_accumulation_steps"] == 8
    assert filled["zero_optimization"] == {"stage": 3}
    assert AUTO["train_batch_size"] == "auto"  # the input is not modified
    assert resolve_batch_triple(filled["train_batch_size"], filled["train_micro_batch_size_per_gpu"],
                                filled["gradient_accumulation_steps"], 2) == (64, 4, 8)


def test_absent_keys_stay_absent_and_deepspeed_fills_them():
    filled = hf_auto_fill(4, 8, 2, {"train_micro_batch_size_per_gpu": "auto"})
    assert filled == {"train_micro_batch_size_per_gpu": 4}
    assert resolve_batch_triple(None, 4, None, 2) == (8, 4, 1)


def test_matching_explicit_values_pass():
    values = {"train_batch_size": 64, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 8}
    assert hf_auto_fill(4, 8, 2, values) == values


def test_mismatches_are_listed_in_hf_order_and_wording():
    values = {"train_batch_size": 60, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 7}
    with pytest.raises(TrainerRefusal) as info:
        hf_auto_fill(4, 8, 2, values)
    assert info.value.error_type == "ValueError"
    assert info.value.message == (
        "Please correct the following DeepSpeed config values that mismatch TrainingArguments values:\n"
        "- ds gradient_accumulation_steps=7 vs hf gradient_accumulation_steps=8\n"
        "- ds train_batch_size=60 vs hf train_batch_size (calculated)=64\n"
        "The easiest method is to set these DeepSpeed config values to 'auto'."
    )


def test_auto_find_batch_size_skips_the_batch_comparisons():
    values = {"train_batch_size": 60, "train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 8}
    assert hf_auto_fill(4, 8, 2, values, auto_find_batch_size=True) == values
