"""DeepSpeed's batch triple: how `train_batch_size`, `train_micro_batch_size_per_gpu` and
`gradient_accumulation_steps` are completed and checked (reference §5.2, edge case 28).

DeepSpeed (`deepspeed/runtime/config.py`, 0.19.6) insists on

    train_batch_size == train_micro_batch_size_per_gpu * gradient_accumulation_steps * world_size

where `world_size` is the data-parallel size. `DeepSpeedConfig._set_batch_related_parameters` fills
whichever of the three values is missing, using integer division, and `_batch_assertion` then checks
that all three are positive and that the equality holds. Because of the integer division a
non-divisible input is not "rounded" into something valid: it fails the equality check.

Under the Hugging Face Trainer the JSON usually says `"auto"` for all three values, and the HF
integration (`HfTrainerDeepSpeedConfig.trainer_config_process`) replaces each `"auto"` with the value
implied by `TrainingArguments`; an explicit value that disagrees is collected as a mismatch and the
Trainer raises one `ValueError` listing all of them (`hf_auto_fill` below).

Failures are reported as `TrainerRefusal(exception type, message)` with the framework's own wording.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from steplab.errors import SetupError, TrainerRefusal

TRAIN = "train_batch_size"
MICRO = "train_micro_batch_size_per_gpu"
GA = "gradient_accumulation_steps"
BATCH_KEYS = (TRAIN, MICRO, GA)

NEITHER_MESSAGE = "Either train_batch_size or train_micro_batch_size_per_gpu needs to be provided"
ZERO_DIVISION_MESSAGE = "integer division or modulo by zero"


def _optional_int(name: str, value: Any) -> int | None:
    """`None` (not given) or a whole number; anything else is StepLab input it cannot use."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise SetupError(name, f"got {value!r}; allowed: a whole number or nothing.",
                         f"收到 {value!r};允许的值:整数或不填。")
    return value


def _world_size(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SetupError("world_size", f"got {value!r}; allowed: a whole number of at least 1.",
                         f"收到 {value!r};允许的值:不小于 1 的整数。")
    return value


def _floordiv(a: int, b: int) -> int:
    """`a // b` as DeepSpeed computes it; a zero divisor is the `ZeroDivisionError` DeepSpeed would hit."""
    if b == 0:
        raise TrainerRefusal("ZeroDivisionError", ZERO_DIVISION_MESSAGE)
    return a // b


def resolve_batch_triple(
    train_batch_size: int | None,
    micro_batch_per_gpu: int | None,
    gradient_accumulation_steps: int | None,
    world_size: int,
) -> tuple[int, int, int]:
    """Complete and check the triple the way `DeepSpeedConfig` does; return `(train, micro, ga)`.

    `None` means "not in the config". Fill-in table (integer division where DeepSpeed uses it):

    | given             | derived                                   |
    |-------------------|-------------------------------------------|
    | train, micro, ga  | nothing                                   |
    | train, micro      | ga = train // micro // world_size         |
    | train, ga         | micro = train // world_size // ga         |
    | micro, ga         | train = micro * ga * world_size           |
    | train only        | ga = 1, micro = train // world_size       |
    | micro only        | train = micro * world_size, ga = 1        |
    | neither train nor micro | AssertionError                      |

    Then every value must be > 0 and `train == micro * ga * world_size`, otherwise
    `TrainerRefusal("AssertionError", <DeepSpeed's message>)`. A zero divisor among the given values
    raises `TrainerRefusal("ZeroDivisionError", ...)`, as DeepSpeed itself would crash.
    Raises `SetupError` for inputs that are not whole numbers (or `world_size` < 1).
    """
    train = _optional_int(TRAIN, train_batch_size)
    micro = _optional_int(MICRO, micro_batch_per_gpu)
    ga = _optional_int(GA, gradient_accumulation_steps)
    ws = _world_size(world_size)

    if train is not None and micro is not None and ga is not None:
        pass
    elif train is not None and micro is not None:
        ga = _floordiv(_floordiv(train, micro), ws)
    elif train is not None and ga is not None:
        micro = _floordiv(_floordiv(train, ws), ga)
    elif micro is not None and ga is not None:
        train = micro * ga * ws
    elif train is not None:
        ga = 1
        micro = _floordiv(train, ws)
    elif micro is not None:
        train = micro * ws
        ga = 1
    else:
        raise TrainerRefusal("AssertionError", NEITHER_MESSAGE)

    assert train is not None and micro is not None and ga is not None
    if not train > 0:
        raise TrainerRefusal("AssertionError", f"Train batch size: {train} has to be greater than 0")
    if not micro > 0:
        raise TrainerRefusal("AssertionError", f"Micro batch size per gpu: {micro} has to be greater than 0")
    if not ga > 0:
        raise TrainerRefusal("AssertionError", f"Gradient accumulation steps: {ga} has to be greater than 0")
    if train != micro * ga * ws:
        raise TrainerRefusal(
            "AssertionError",
            "Check batch related parameters. train_batch_size is not equal to "
            "micro_batch_per_gpu * gradient_acc_step * world_size "
            f"{train} != {micro} * {ga} * {ws}",
        )
    return train, micro, ga


def hf_auto_fill(
    per_device: int,
    ga: int,
    world_size: int,
    ds_values: Mapping[str, Any],
    *,
    auto_find_batch_size: bool = False,
) -> dict[str, Any]:
    """The HF Trainer's treatment of the batch keys of a DeepSpeed config; returns the filled copy.

    For each of `train_micro_batch_size_per_gpu` (HF value: `per_device`),
    `gradient_accumulation_steps` (`ga`) and `train_batch_size` (`world_size * per_device * ga`),
    in that order, as `HfTrainerDeepSpeedConfig.fill_match` does:

    * the value `"auto"` is replaced by the HF value;
    * a key that is absent (or null) is left alone, so DeepSpeed fills it later
      (see `resolve_batch_triple`);
    * any other value is compared with `!=` (so the string `"8"` differs from the number 8) and each
      disagreement becomes a line `- ds <key>=<ds value> vs hf <hf name>=<hf value>`;
    * with `auto_find_batch_size` the micro-batch and train-batch keys are filled but not compared
      (HF passes `must_match=False` for those two).

    Mismatches raise `TrainerRefusal("ValueError", ...)` with HF's message, all lines joined by
    newlines. Other keys of `ds_values` are copied unchanged. Only the batch keys are handled here;
    HF fills `"auto"` in the optimizer, scheduler and precision sections the same way.
    """
    hf_values = (
        (MICRO, per_device, "per_device_train_batch_size", not auto_find_batch_size),
        (GA, ga, "gradient_accumulation_steps", True),
        (TRAIN, world_size * per_device * ga, "train_batch_size (calculated)", not auto_find_batch_size),
    )
    filled = dict(ds_values)
    mismatches: list[str] = []
    for key, hf_value, hf_name, must_match in hf_values:
        ds_value = filled.get(key)
        if ds_value == "auto":
            filled[key] = hf_value
            continue
        if must_match and ds_value is not None and ds_value != hf_value:
            mismatches.append(f"- ds {key}={ds_value} vs hf {hf_name}={hf_value}")
    if mismatches:
        lines = "\n".join(mismatches)
        raise TrainerRefusal(
            "ValueError",
            "Please correct the following DeepSpeed config values that mismatch TrainingArguments"
            f" values:\n{lines}\nThe easiest method is to set these DeepSpeed config values to 'auto'.",
        )
    return filled
