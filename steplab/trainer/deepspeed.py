"""A DeepSpeed JSON beside the Trainer (`deepspeed: ds.json`): its `auto` values filled from the arguments and its
explicit values checked against them, as `HfTrainerDeepSpeedConfig` does (transformers `integrations/deepspeed.py`:
`trainer_config_process` when `TrainingArguments` is made, `trainer_config_finalize` at the start of training, which
raises every mismatch at once in its own words).

Only the keys the Trainer fills are read here. An `optimizer` or `scheduler` block replaces the Trainer's own: the
learning rates are then DeepSpeed's (`WarmupLR`, `WarmupDecayLR`, `WarmupCosineLR`, ...), which StepLab does not
draw; `scheduler_block` says whether there is one, so that a page or the CLI can name it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from steplab.errors import TrainerRefusal
from steplab.trainer.plan import Plan

ARGUMENT_DEFAULTS: dict[str, Any] = {"max_grad_norm": 1.0, "adam_beta1": 0.9, "adam_beta2": 0.999,
                                     "adam_epsilon": 1e-8, "weight_decay": 0.0, "fp16": False, "fp16_full_eval": False,
                                     "bf16": False, "bf16_full_eval": False, "auto_find_batch_size": False}
"""`TrainingArguments`' own defaults for the arguments the DeepSpeed config is checked against (no setup fields)."""

MISMATCH = ("Please correct the following DeepSpeed config values that mismatch TrainingArguments values:\n{lines}\n"
            "The easiest method is to set these DeepSpeed config values to 'auto'.")


def _node(config: Mapping[str, Any], key: str) -> tuple[Mapping[str, Any] | None, str]:
    """`find_config_node`: the mapping that holds the last part of a dotted key (None when a part is missing)."""
    *path, last = key.split(".")
    node: Any = config
    for part in path:
        node = node.get(part) if isinstance(node, Mapping) else None
        if node is None:
            return None, last
    return node, last


def _checks(plan: Plan, args: Mapping[str, Any]) -> list[tuple[str, Any, str, bool]]:
    """(DeepSpeed key, the Trainer's value, its name in the message, must match) in the Trainer's order."""
    setup = plan.setup
    sized = not args["auto_find_batch_size"]
    batch = setup.world_size * setup.per_device_train_batch_size * setup.gradient_accumulation_steps
    return [
        ("train_micro_batch_size_per_gpu", setup.per_device_train_batch_size, "per_device_train_batch_size", sized),
        ("gradient_accumulation_steps", setup.gradient_accumulation_steps, "gradient_accumulation_steps", True),
        ("train_batch_size", batch, "train_batch_size (calculated)", sized),
        ("gradient_clipping", args["max_grad_norm"], "max_grad_norm", True),
        ("optimizer.params.lr", setup.learning_rate, "learning_rate", True),
        ("optimizer.params.betas", [args["adam_beta1"], args["adam_beta2"]], "adam_beta1+adam_beta2", True),
        ("optimizer.params.eps", args["adam_epsilon"], "adam_epsilon", True),
        ("optimizer.params.weight_decay", args["weight_decay"], "weight_decay", True),
        ("scheduler.params.warmup_min_lr", 0, "", False),
        ("scheduler.params.warmup_max_lr", setup.learning_rate, "learning_rate", True),
        ("fp16.enabled", bool(args["fp16"] or args["fp16_full_eval"]), "fp16|fp16_full_eval", True),
        ("bf16.enabled", bool(args["bf16"] or args["bf16_full_eval"]), "bf16|bf16_full_eval", True),
        # trainer_config_finalize, once the steps are known
        ("scheduler.params.total_num_steps", plan.max_steps, "num_training_steps (calculated)", True),
        ("scheduler.params.warmup_num_steps", max(plan.profile.deepspeed_warmup_floor, plan.warmup_steps),
         "warmup_steps", True),
    ]


def fill(config: Mapping[str, Any], plan: Plan, arguments: Mapping[str, Any] | None = None) -> tuple[dict[str, Any],
                                                                                                       list[str]]:
    """The DeepSpeed values the Trainer fills in (`auto` → its value), and the mismatch lines it collects."""
    args = {**ARGUMENT_DEFAULTS, **(arguments or {})}
    filled: dict[str, Any] = {}
    mismatches: list[str] = []
    for key, value, name, must_match in _checks(plan, args):
        node, last = _node(config, key)
        if node is None:
            continue
        given = node.get(last)
        if given == "auto":
            filled[key] = value
        elif must_match and given is not None and given != value:
            mismatches.append(f"- ds {key}={given} vs hf {name}={value}")
    return filled, mismatches


def check_deepspeed(config: Mapping[str, Any], plan: Plan, arguments: Mapping[str, Any] | None = None) -> None:
    """Raise the Trainer's refusal when explicit DeepSpeed values disagree with the arguments."""
    _, mismatches = fill(config, plan, arguments)
    if mismatches:
        raise TrainerRefusal("ValueError", MISMATCH.format(lines="\n".join(mismatches)), "deepspeed")


def scheduler_block(config: Mapping[str, Any]) -> bool:
    """Whether DeepSpeed brings its own optimizer or scheduler, whose learning rates replace the Trainer's."""
    return any(isinstance(config.get(key), Mapping) for key in ("optimizer", "scheduler"))
