"""The training setup: an immutable, validated record that uses the `TrainingArguments` field names."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from steplab.errors import SetupError
from steplab.trainer.fields import (
    FIELD_NAMES,
    FIELDS,
    MAX_SAMPLES,
    MAX_STEPS_LIMIT,
    PROFILE_IDS,
    STRATEGIES,
    Field,
)

__all__ = ["DEFAULTS", "FIELD_NAMES", "MAX_SAMPLES", "MAX_STEPS_LIMIT", "PROFILE_IDS", "STRATEGIES", "Parsed",
           "TrainingSetup", "parse_setup", "setup_from_mapping"]


def _default(name: str) -> Any:
    return FIELDS[name].default


@dataclass(frozen=True)
class TrainingSetup:
    """One training run as the Trainer sees it, plus StepLab's own `num_samples`, `world_size` and `trainer`.

    Fields, kinds, ranges and defaults come from `steplab.trainer.fields.FIELDS` (the Trainer's defaults, except
    `num_samples`, which the Trainer reads from the dataset).
    """

    num_samples: int = _default("num_samples")
    per_device_train_batch_size: int = _default("per_device_train_batch_size")
    gradient_accumulation_steps: int = _default("gradient_accumulation_steps")
    world_size: int = _default("world_size")
    num_train_epochs: float = _default("num_train_epochs")
    max_steps: int = _default("max_steps")
    learning_rate: float = _default("learning_rate")
    lr_scheduler_type: str = _default("lr_scheduler_type")
    lr_scheduler_kwargs: tuple[tuple[str, Any], ...] = _default("lr_scheduler_kwargs")
    warmup_steps: float = _default("warmup_steps")
    warmup_ratio: float | None = _default("warmup_ratio")
    eval_strategy: str = _default("eval_strategy")
    eval_steps: float | None = _default("eval_steps")
    save_strategy: str = _default("save_strategy")
    save_steps: float = _default("save_steps")
    logging_strategy: str = _default("logging_strategy")
    logging_steps: float = _default("logging_steps")
    logging_first_step: bool = _default("logging_first_step")
    eval_on_start: bool = _default("eval_on_start")
    dataloader_drop_last: bool = _default("dataloader_drop_last")
    limit_train_batches: float | None = _default("limit_train_batches")
    trainer: str = _default("trainer")

    @property
    def scheduler_kwargs(self) -> dict[str, Any]:
        """`lr_scheduler_kwargs` as a dict (a fresh copy)."""
        return dict(self.lr_scheduler_kwargs)

    @property
    def uses_max_steps(self) -> bool:
        """The Trainer takes `max_steps` instead of epochs whenever it is positive."""
        return self.max_steps > 0

    def replace(self, **changes: Any) -> TrainingSetup:
        """A validated copy with some fields changed."""
        values = self.to_dict()
        values.update(changes)
        return setup_from_mapping(values)[0]

    def to_dict(self) -> dict[str, Any]:
        """Plain field values (kwargs as a dict), for YAML, JSON and URLs."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values["lr_scheduler_kwargs"] = self.scheduler_kwargs
        return values


assert tuple(f.name for f in fields(TrainingSetup)) == FIELD_NAMES, "TrainingSetup must list FIELDS in order"
DEFAULTS = TrainingSetup()
ALIASES = {"evaluation_strategy": "eval_strategy"}
KWARGS_EXAMPLE = '{"num_cycles": 1}'  # what a `lr_scheduler_kwargs` error shows as an example


def _shown(value: Any) -> str:
    """A value as an error quotes it: its repr, cut to 40 characters."""
    shown = repr(value)
    return shown if len(shown) <= 40 else shown[:37] + "..."


# The error codes of a value of the wrong kind, and of a number outside the field's range.
_NOT_KIND = {"int": "setup.not_int", "float": "setup.not_number", "bool": "setup.not_bool"}
_OUT_OF_RANGE = {"int": "setup.int_range", "float": "setup.number_range"}


def _bad(name: str, value: Any, kind: str, low: float | None = None, high: float | None = None) -> SetupError:
    """`value` is not what field `name` allows: a `kind` ("int", "float", "bool"), in [low, high] if given."""
    if low is not None and high is not None:
        return SetupError(_OUT_OF_RANGE[kind], field=name, value=_shown(value), lo=low, hi=high)
    return SetupError(_NOT_KIND[kind], field=name, value=_shown(value))


def _as_number(name: str, value: Any, kind: str) -> float:
    """Read a YAML/URL/CLI value as a number the way `HfArgumentParser` would (strings allowed)."""
    if isinstance(value, bool):
        raise _bad(name, value, kind)
    if isinstance(value, str):
        try:
            value = float(value.strip()) if kind == "float" or "." in value or "e" in value.lower() else int(value)
        except ValueError:
            raise _bad(name, value, kind) from None
    if not isinstance(value, int | float) or not math.isfinite(value):
        raise _bad(name, value, kind)
    return value


def _int(name: str, value: Any, low: int, high: int) -> int:
    number = _as_number(name, value, "int")
    if number != int(number) or not low <= number <= high:
        raise _bad(name, value, "int", low, high)
    return int(number)


def _float(name: str, value: Any, low: float, high: float) -> float:
    number = float(_as_number(name, value, "float"))
    if not low <= number <= high:
        raise _bad(name, value, "float", low, high)
    return number


def _bool(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "1", "0", "yes", "no"):
        return value.strip().lower() in ("true", "1", "yes")
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise _bad(name, value, "bool")


def _choice(name: str, value: Any, choices: tuple[str, ...]) -> str:
    text = str(value).strip() if isinstance(value, str | int | float) and not isinstance(value, bool) else None
    if text not in choices:
        raise SetupError("setup.choice", field=name, value=_shown(value), allowed=", ".join(choices))
    return text


def _kwargs(name: str, value: Any) -> tuple[tuple[str, Any], ...]:
    if value in (None, "", {}):
        return ()
    if isinstance(value, str):
        import json

        try:
            value = json.loads(value)
        except (ValueError, RecursionError):  # RecursionError: `[[[[...` nested deeper than the parser goes
            raise SetupError("setup.kwargs_mapping", field=name, example=KWARGS_EXAMPLE) from None
    if not isinstance(value, Mapping):
        raise SetupError("setup.kwargs_mapping", field=name, example=KWARGS_EXAMPLE)
    items = []
    for key, item in value.items():
        if not isinstance(key, str) or not (item is None or isinstance(item, str | int | float | bool)):
            raise SetupError("setup.kwargs_item", field=name, key=repr(key))
        if isinstance(item, float) and not math.isfinite(item):
            raise _bad(f"{name}.{key}", item, "float")
        items.append((key, item))
    return tuple(sorted(items))


MAX_NAME = 64  # the longest free name an open choice takes


def check_field(field: Field, value: Any) -> Any:
    """Validate and normalise one field's value, by its kind and range in the field table."""
    name, kind = field.name, field.kind
    if value is None and field.optional:
        return None
    if kind == "int":
        number = _int(name, value, int(field.low), int(field.high))
        return number if name != "max_steps" or number > 0 else -1
    if kind == "float":
        return _float(name, value, field.low, field.high)
    if kind == "interval":
        number = _float(name, value, field.low, field.high)
        return int(number) if number == int(number) else number
    if kind == "limit":  # a fraction of the epoch up to 1, else a number of batches
        number = _float(name, value, field.low, field.high)
        return int(number) if number == int(number) and number > 1 else number
    if kind == "choice" and field.open and isinstance(value, str) and 0 < len(value.strip()) <= MAX_NAME:
        return value.strip()  # the Trainer's own check decides (a TrainerRefusal from the plan)
    if kind == "choice":
        return _choice(name, str(value).lower() if name.endswith("_strategy") and isinstance(value, str) else value,
                       field.choices)
    if kind == "bool":
        return _bool(name, value)
    return _kwargs(name, value)


@dataclass(frozen=True)
class Parsed:
    """One parse of raw setup values: the setup (a field that failed keeps its default), the fields that
    failed with why, and the keys that are no setup field."""

    setup: TrainingSetup
    problems: dict[str, SetupError]
    unknown: list[str]


def parse_setup(values: Mapping[str, Any]) -> Parsed:
    """Check every field once, keeping going past a bad one (the URL and the widgets report them all)."""
    known: dict[str, Any] = {}
    problems: dict[str, SetupError] = {}
    unknown: list[str] = []
    for key, value in values.items():
        name = ALIASES.get(key, key)
        if name not in FIELDS:
            unknown.append(str(key))
            continue
        try:
            known[name] = check_field(FIELDS[name], value)
        except SetupError as error:
            problems[name] = error
    return Parsed(replace(DEFAULTS, **known), problems, unknown)


def setup_from_mapping(values: Mapping[str, Any]) -> tuple[TrainingSetup, list[str]]:
    """Build a validated setup from a mapping; return it and the keys it did not know (never silently dropped).

    Raises `SetupError` naming the first invalid field (YAML import, CLI: nothing half-applied).
    """
    parsed = parse_setup(values)
    if parsed.problems:
        raise next(iter(parsed.problems.values()))
    return parsed.setup, parsed.unknown
