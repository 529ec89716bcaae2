"""A StepLab setup written as a training YAML that LLaMA-Factory (or `HfArgumentParser`) loads.

StepLab-only values (`num_samples`, `world_size`, `trainer`, `limit_train_batches`) become comment lines at
the top, which `steplab.io.config_read` reads back.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from steplab.i18n import t
from steplab.trainer.fields import STEPLAB_ONLY, TRAINING_ARGUMENT_FIELDS
from steplab.trainer.profiles import PROFILES
from steplab.trainer.setup import DEFAULTS, setup_from_mapping

CORE_FIELDS = (
    "per_device_train_batch_size",
    "gradient_accumulation_steps",
    "num_train_epochs",
    "learning_rate",
    "lr_scheduler_type",
)
"""Written even when they equal the Trainer's default: the numbers a reader of the YAML looks for first."""


ALWAYS_SAID = ("num_samples", "world_size", "trainer")
"""StepLab's own fields written as a comment line even at their default; the others only when set otherwise."""


def _dump(name: str, value: Any) -> str:
    return yaml.safe_dump({name: value}, default_flow_style=False, sort_keys=False, allow_unicode=True)


def write_config(setup_values: Mapping[str, Any], *, flavour: str = "llamafactory", lang: str = "en") -> str:
    """YAML text of a setup that LLaMA-Factory (`flavour="llamafactory"`) or `HfArgumentParser` (`"hf"`) loads.

    The values are validated with `setup_from_mapping` first (so `SetupError` for bad input; keys it
    does not know are left out). Only TrainingArguments keys are written as YAML; StepLab's own
    `num_samples`, `world_size`, `trainer` (and `limit_train_batches` when set) become comment lines
    at the top, which `read_config` reads back. Keys equal to the Trainer's default are left out,
    except the core ones (batch size, accumulation, epochs, learning rate, scheduler, warmup);
    `max_steps` only when positive; `lr_scheduler_kwargs` only when not empty. Comments are in `lang`
    (the keys and values are the same in every language).
    """
    if flavour not in ("llamafactory", "hf"):
        raise ValueError(f"flavour must be 'llamafactory' or 'hf', got {flavour!r}")
    setup, _unknown = setup_from_mapping(setup_values)
    values = setup.to_dict()
    defaults = DEFAULTS.to_dict()

    def wanted(name: str) -> bool:
        value = values[name]
        if name in CORE_FIELDS:
            return True
        if name == "max_steps":
            return value > 0
        if name == "lr_scheduler_kwargs":
            return bool(value)
        if name == "warmup_steps":
            return values["warmup_ratio"] is None or value != defaults[name]
        if name == "warmup_ratio":
            return value is not None
        return value != defaults[name]

    if flavour == "llamafactory":
        sections = (
            ("### output", ("logging_strategy", "logging_steps", "save_strategy", "save_steps")),
            ("### train", ("per_device_train_batch_size", "gradient_accumulation_steps", "learning_rate",
                           "num_train_epochs", "max_steps", "lr_scheduler_type", "lr_scheduler_kwargs",
                           "warmup_ratio", "warmup_steps", "dataloader_drop_last")),
            ("### eval", ("eval_strategy", "eval_steps")),
        )
    else:
        sections = (("", TRAINING_ARGUMENT_FIELDS),)
    lines = [f"# {t(lang, f'export.{flavour}.title')}", f"# {t(lang, f'export.{flavour}.hint')}"]
    for name in STEPLAB_ONLY:
        value = values[name]
        if value is None or (name not in ALWAYS_SAID and value == defaults[name]):
            continue
        shown = repr(value) if isinstance(value, float) else str(value)
        note = t(lang, f"export.comment.{name}", release=PROFILES[value].matched if name == "trainer" else "")
        lines.append(f"# {name}: {shown}  (StepLab{t(lang, 'export.colon')}{note})")
    written = set()
    for title, names in sections:
        body = []
        for name in names:
            if not wanted(name):
                continue
            if name == "warmup_ratio":
                body.append(f"# warmup_ratio: {t(lang, 'export.warmup_ratio')}")
            body.append(_dump(name, values[name]).rstrip("\n"))
        written.update(names)
        if not body:
            continue
        lines.append("")
        if title:
            lines.append(title)
        lines.extend(body)
    missing = [name for name in TRAINING_ARGUMENT_FIELDS if name not in written and wanted(name)]
    if missing:  # a field added to the setup later still gets written
        lines.append("")
        lines.extend(_dump(name, values[name]).rstrip("\n") for name in missing)
    return "\n".join(lines) + "\n"
