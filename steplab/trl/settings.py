"""The TRL configs' own defaults for setup fields a run leaves out, and which of a mapping's keys are TRL's.

The trainer class and TRL's count fields are rows of the one setup table (`steplab.trainer.fields.FIELDS`, those
with `trainer_classes`): a `TrainingSetup` carries them, and the URL, the CLI and the pages read them from it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from steplab.trainer.fields import FIELDS, TRL_FIELD_NAMES
from steplab.trainer.setup import check_field

CONFIG_DEFAULTS: dict[str, dict[str, Any]] = {
    "Trainer": {},
    "SFTTrainer": {"learning_rate": 2e-5, "logging_steps": 10},  # sft_config.py:140, base_config.py:55
    "DPOTrainer": {"learning_rate": 1e-6, "logging_steps": 10},  # dpo_config.py:156, base_config.py:55
    "GRPOTrainer": {"learning_rate": 1e-6, "logging_steps": 10},  # grpo_config.py:423, base_config.py:55
}
"""Where a TRL config's default differs from `TrainingArguments`' (TRL 1.16.0's `*Config` classes): what a run
that leaves the field out gets."""


def names_trl(values: Mapping[str, Any]) -> bool:
    """Whether `values` set the trainer class or any TRL count field (then TRL plans the run)."""
    return any(name in TRL_FIELD_NAMES for name in values)


def with_config_defaults(values: Mapping[str, Any]) -> dict[str, Any]:
    """`values` with their trainer class's own defaults for the setup fields they leave out (the class checked
    by its row: raises `SetupError`)."""
    trainer_class = check_field(FIELDS["trainer_class"], values.get("trainer_class", FIELDS["trainer_class"].default))
    return {**CONFIG_DEFAULTS[trainer_class], **values}
