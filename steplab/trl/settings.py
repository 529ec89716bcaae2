"""The trainer class and TRL's own count fields, read from a mapping by the rules of `TRL_FIELDS`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from steplab.trainer.fields import TRL_FIELDS
from steplab.trainer.setup import check_field


@dataclass(frozen=True)
class TrlSettings:
    """Which trainer runs the setup, and the TRL config fields that change its count (defaults: TRL 1.16.0's)."""

    trainer_class: str = TRL_FIELDS["trainer_class"].default
    num_generations: int = TRL_FIELDS["num_generations"].default
    steps_per_generation: int | None = TRL_FIELDS["steps_per_generation"].default
    generation_batch_size: int | None = TRL_FIELDS["generation_batch_size"].default
    num_iterations: int = TRL_FIELDS["num_iterations"].default
    packing: bool = TRL_FIELDS["packing"].default
    packing_strategy: str = TRL_FIELDS["packing_strategy"].default
    max_length: int = TRL_FIELDS["max_length"].default


def split_trl_values(values: Mapping[str, Any]) -> tuple[TrlSettings, dict[str, Any]]:
    """The TRL settings in `values` (checked; raises `SetupError` on the first bad one) and the other values."""
    known = {f.name for f in fields(TrlSettings)}
    chosen = {name: check_field(TRL_FIELDS[name], value) for name, value in values.items() if name in known}
    rest = {name: value for name, value in values.items() if name not in known}
    return TrlSettings(**chosen), rest


CONFIG_DEFAULTS: dict[str, dict[str, Any]] = {
    "Trainer": {},
    "SFTTrainer": {"learning_rate": 2e-5, "logging_steps": 10},  # sft_config.py:140, base_config.py:55
    "DPOTrainer": {"learning_rate": 1e-6, "logging_steps": 10},  # dpo_config.py:156, base_config.py:55
    "GRPOTrainer": {"learning_rate": 1e-6, "logging_steps": 10},  # grpo_config.py:423, base_config.py:55
}
"""Where a TRL config's default differs from `TrainingArguments`' (TRL 1.16.0's `*Config` classes): what a run
that leaves the field out gets."""


def with_config_defaults(values: Mapping[str, Any], trainer_class: str) -> dict[str, Any]:
    """`values` with the trainer class's own defaults for the setup fields they leave out."""
    return {**CONFIG_DEFAULTS[trainer_class], **values}
