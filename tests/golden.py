"""Read `tests/data/golden/`: results recorded from real Trainer runs, one file per profile."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data"
GOLDEN = DATA / "golden"
EXAMPLES = DATA / "llamafactory-examples"

HF_FIELDS = (
    "num_samples", "per_device_train_batch_size", "gradient_accumulation_steps", "num_train_epochs", "max_steps",
    "learning_rate", "lr_scheduler_type", "lr_scheduler_kwargs", "warmup_steps", "warmup_ratio", "eval_strategy",
    "eval_steps", "save_strategy", "save_steps", "logging_steps", "dataloader_drop_last", "world_size",
)
"""A golden case's fields that are StepLab setup fields (`world_size` only in multi-process cases: 1 when absent)."""


def golden_cases(profile: str) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(id, case, result) for every recorded run of a profile."""
    data = json.loads((GOLDEN / f"{profile}.json").read_text())
    assert data["profile"] == profile
    return [(c["case"]["id"], c["case"], c["result"]) for c in data["cases"]]


def hf_setup_values(case: dict[str, Any], profile: str) -> dict[str, Any]:
    """The golden case as StepLab setup values (a recorded warmup_ratio of 0.0 means "not given")."""
    values = {k: case[k] for k in HF_FIELDS if k in case}
    if not values.get("warmup_ratio"):
        values["warmup_ratio"] = None
    values["trainer"] = profile
    return values


def lightning_setup_values(case: dict[str, Any]) -> dict[str, Any]:
    """Lightning's names mapped to StepLab's (max_epochs unset means Lightning's default of 1000 epochs)."""
    return {
        "num_samples": case["num_samples"],
        "per_device_train_batch_size": case["batch_size"],
        "gradient_accumulation_steps": case["accumulate_grad_batches"],
        "num_train_epochs": 1000 if case["max_epochs"] is None else case["max_epochs"],
        "max_steps": case.get("max_steps", -1),
        "limit_train_batches": case.get("limit_train_batches"),
        "dataloader_drop_last": case["drop_last"],
        "learning_rate": case["learning_rate"],
        "lr_scheduler_type": "constant_with_warmup" if case["schedule"] == "linear_warmup" else "linear",
        "warmup_steps": case.get("warmup_steps") or case.get("warmup_ratio") or 0,
        "trainer": "lightning-2",
    }
