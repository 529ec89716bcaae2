"""The training setup: an immutable, validated record that uses the `TrainingArguments` field names."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from steplab.errors import SetupError

PROFILE_IDS = ("hf-5", "hf-4.57", "hf-4.51", "hf-4.46", "lightning-2")
STRATEGIES = ("no", "steps", "epoch")
MAX_SAMPLES = 10**12
MAX_STEPS_LIMIT = 10**9


@dataclass(frozen=True)
class TrainingSetup:
    """One training run as the Trainer sees it, plus StepLab's own `num_samples`, `world_size` and `trainer`.

    Defaults are the Trainer's (`TrainingArguments` of transformers 5.x), except `num_samples`,
    which the Trainer reads from the dataset.
    """

    num_samples: int = 1600
    per_device_train_batch_size: int = 8
    gradient_accumulation_steps: int = 1
    world_size: int = 1
    num_train_epochs: float = 3.0
    max_steps: int = -1
    learning_rate: float = 5e-5
    lr_scheduler_type: str = "linear"
    lr_scheduler_kwargs: tuple[tuple[str, Any], ...] = ()
    warmup_steps: float = 0
    warmup_ratio: float | None = None
    eval_strategy: str = "no"
    eval_steps: float | None = None
    save_strategy: str = "steps"
    save_steps: float = 500
    logging_strategy: str = "steps"
    logging_steps: float = 500
    dataloader_drop_last: bool = False
    limit_train_batches: float | None = None
    trainer: str = "hf-5"

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


FIELD_NAMES: tuple[str, ...] = tuple(f.name for f in fields(TrainingSetup))
DEFAULTS = TrainingSetup()
ALIASES = {"evaluation_strategy": "eval_strategy"}


def _describe(kind: str, low: float | None = None, high: float | None = None) -> tuple[str, str]:
    """English and Chinese wording of what a field allows."""
    names = {
        "int": ("a whole number", "整数"),
        "float": ("a number", "数字"),
        "bool": ("true or false", "true 或 false"),
        "str": ("a text value", "文本"),
    }
    en, zh = names[kind]
    if low is not None and high is not None:
        return f"{en} from {low:,} to {high:,}", f"{low:,} 到 {high:,} 之间的{zh}"
    if low is not None:
        return f"{en} of at least {low:,}", f"不小于 {low:,} 的{zh}"
    return en, zh


def _bad(name: str, value: Any, kind: str, low: float | None = None, high: float | None = None) -> SetupError:
    en, zh = _describe(kind, low, high)
    shown = repr(value)
    if len(shown) > 40:
        shown = shown[:37] + "..."
    return SetupError(name, f"got {shown}; allowed: {en}.", f"收到 {shown};允许的值:{zh}。")


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


def _interval(name: str, value: Any, allow_none: bool = False) -> float | None:
    """`eval_steps`/`save_steps`/`logging_steps`/`warmup_steps`: an int, or a float below 1 read as a ratio."""
    if value is None and allow_none:
        return None
    number = _float(name, value, 0, MAX_STEPS_LIMIT)
    return int(number) if number == int(number) else number


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
        allowed = ", ".join(choices)
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
        raise SetupError(name, f"got {shown}; allowed: {allowed}.", f"收到 {shown};允许的值:{allowed}。")
    return text


def _kwargs(name: str, value: Any) -> tuple[tuple[str, Any], ...]:
    if value in (None, "", {}):
        return ()
    if isinstance(value, str):
        import json

        try:
            value = json.loads(value)
        except ValueError:
            raise SetupError(name, "must be a mapping such as {\"num_cycles\": 1}.",
                             "必须是一个映射,例如 {\"num_cycles\": 1}。") from None
    if not isinstance(value, Mapping):
        raise SetupError(name, "must be a mapping such as {\"num_cycles\": 1}.",
                         "必须是一个映射,例如 {\"num_cycles\": 1}。")
    items = []
    for key, item in value.items():
        if not isinstance(key, str) or not (item is None or isinstance(item, str | int | float | bool)):
            raise SetupError(name, f"key {key!r} must be a name with a plain number or text value.",
                             f"键 {key!r} 必须是名称,值必须是数字或文本。")
        if isinstance(item, float) and not math.isfinite(item):
            raise _bad(f"{name}.{key}", item, "float")
        items.append((key, item))
    return tuple(sorted(items))


def _check(name: str, value: Any) -> Any:
    """Validate and normalise one field's value."""
    from steplab.schedules import SCHEDULER_TYPES

    if name == "num_samples":
        return _int(name, value, 0, MAX_SAMPLES)
    if name in ("per_device_train_batch_size", "gradient_accumulation_steps", "world_size"):
        return _int(name, value, 1, 1_000_000)
    if name == "num_train_epochs":
        return _float(name, value, 0, 1_000_000)
    if name == "max_steps":
        number = _int(name, value, -(10**9), MAX_STEPS_LIMIT)
        return number if number > 0 else -1
    if name == "learning_rate":
        return _float(name, value, 0, 1e6)
    if name == "lr_scheduler_type":
        return _choice(name, value, SCHEDULER_TYPES)
    if name == "lr_scheduler_kwargs":
        return _kwargs(name, value)
    if name == "warmup_steps":
        return _interval(name, value)
    if name == "warmup_ratio":
        return None if value is None else _float(name, value, 0, 1_000_000)
    if name in ("eval_strategy", "save_strategy", "logging_strategy"):
        return _choice(name, str(value).lower() if isinstance(value, str) else value, STRATEGIES)
    if name == "eval_steps":
        return _interval(name, value, allow_none=True)
    if name in ("save_steps", "logging_steps"):
        return _interval(name, value)
    if name == "dataloader_drop_last":
        return _bool(name, value)
    if name == "limit_train_batches":
        if value is None:
            return None
        number = _float(name, value, 0, MAX_SAMPLES)
        return int(number) if number == int(number) and number > 1 else number
    if name == "trainer":
        return _choice(name, value, PROFILE_IDS)
    raise KeyError(name)


def setup_from_mapping(values: Mapping[str, Any]) -> tuple[TrainingSetup, list[str]]:
    """Build a validated setup from a mapping; return it and the keys it did not know (never silently dropped).

    Raises `SetupError` naming the first invalid field.
    """
    known: dict[str, Any] = {}
    unknown: list[str] = []
    for key, value in values.items():
        name = ALIASES.get(key, key)
        if name in FIELD_NAMES:
            known[name] = _check(name, value)
        else:
            unknown.append(str(key))
    setup = replace(DEFAULTS, **known)
    return setup, unknown


def setup_to_dict(setup: TrainingSetup) -> dict[str, Any]:
    """Plain values of every field."""
    return setup.to_dict()


