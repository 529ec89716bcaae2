"""The training setup: an immutable, validated record that uses the `TrainingArguments` field names."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields, make_dataclass, replace
from dataclasses import field as dataclass_field
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


# The Python type of each kind of field (what a TrainingSetup holds after validation).
KIND_TYPES: dict[str, Any] = {"int": int, "float": float, "interval": float, "limit": float, "choice": str,
                              "bool": bool, "kwargs": tuple[tuple[str, Any], ...]}


class SetupMethods:
    """What a `TrainingSetup` does besides holding its fields (the fields come from the field table)."""

    __slots__ = ()

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


def _annotation(field: Field) -> Any:
    kind = KIND_TYPES[field.kind]
    return kind | None if field.optional else kind


TrainingSetup = make_dataclass(
    "TrainingSetup", [(f.name, _annotation(f), dataclass_field(default=f.default)) for f in FIELDS.values()],
    bases=(SetupMethods,), frozen=True,
    namespace={"__module__": __name__, "__qualname__": "TrainingSetup", "__doc__": """One training run as the Trainer sees it, plus StepLab's own `num_samples`, `world_size`
    and `trainer`: one field per row of `steplab.trainer.fields.FIELDS`, in its order, named as `TrainingArguments`
    names them (`setup.num_samples`, `setup.per_device_train_batch_size`, ...), with the table's defaults (the
    Trainer's, except `num_samples`, which the Trainer reads from the dataset). Frozen: `replace` gives a validated
    copy."""})

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
    """One parse of raw setup values: the setup (a field that failed keeps the base's value), the fields that
    failed with why, and the keys that are no setup field."""

    setup: TrainingSetup
    problems: dict[str, SetupError]
    unknown: list[str]


def parse_setup(values: Mapping[str, Any], base: TrainingSetup = DEFAULTS) -> Parsed:
    """Check every field once, keeping going past a bad one (the URL and the widgets report them all); a field
    not given, or given badly, keeps `base`'s value."""
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
    return Parsed(replace(base, **known), problems, unknown)


def setup_from_mapping(values: Mapping[str, Any]) -> tuple[TrainingSetup, list[str]]:
    """Build a validated setup from a mapping; return it and the keys it did not know (never silently dropped).

    Raises `SetupError` naming the first invalid field (YAML import, CLI: nothing half-applied).
    """
    parsed = parse_setup(values)
    if parsed.problems:
        raise next(iter(parsed.problems.values()))
    return parsed.setup, parsed.unknown
