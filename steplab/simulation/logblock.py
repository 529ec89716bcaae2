"""The `***** Running training *****` block the selected Trainer release prints for a plan.

`Counts` are the block's dataset and batch figures: a plan's own (`counts`), or a run over another unit, such as
GRPO's prompts and completions (`steplab.simulation.grpo_run.counts`), whose Trainer plan counts micro-batches.
"""

from __future__ import annotations

from dataclasses import dataclass

from steplab.i18n import msg
from steplab.trainer.plan import Plan

PARAMETERS_NOTE = msg("logblock.parameters")  # a count StepLab cannot know


@dataclass(frozen=True)
class Counts:
    """"Num examples", "Instantaneous batch size per device" and "Total train batch size" as the block prints them."""

    examples: int
    per_device: int
    total: int


def counts(plan: Plan) -> Counts:
    """A Trainer plan's own figures: the dataset (with an empty dataloader and `max_steps`, the Trainer's stand-in,
    total train batch size × max_steps), B and B·GA·P."""
    s = plan.setup
    examples = s.num_samples if plan.micro_batches_per_epoch else plan.total_train_batch_size * plan.max_steps
    return Counts(examples, s.per_device_train_batch_size, plan.total_train_batch_size)


def running_training_block(plan: Plan, lang: str = "en", counted: Counts | None = None) -> str:
    """The log lines as the release writes them (`Num examples` is the whole dataset, not per process);
    `counted`: the figures of a run whose plan counts another unit (default: the plan's own)."""
    s = plan.setup
    if plan.profile.framework == "lightning":
        return "\n".join([
            msg("logblock.lightning").get(lang),
            f"trainer.estimated_stepping_batches  # {plan.max_steps:,}",
            f"trainer.num_training_batches        # {plan.micro_batches_per_epoch:,}",
            f"trainer.accumulate_grad_batches     # {s.gradient_accumulation_steps}",
            f"trainer.max_epochs                  # {plan.epochs_loop:,}",
        ])
    figures = counted or counts(plan)
    lines = [
        "***** Running training *****",
        f"  Num examples = {figures.examples:,}",
        f"  Num Epochs = {plan.epochs_loop:,}",
    ]
    if plan.profile.log_block == "5":
        lines.append(f"  Num update steps per epoch = {plan.num_update_steps_per_epoch:,}")
    lines += [
        f"  Instantaneous batch size per device = {figures.per_device:,}",
        f"  Total train batch size (w. parallel, distributed & accumulation) = {figures.total:,}",
        f"  Gradient Accumulation steps = {s.gradient_accumulation_steps}",
        f"  Total optimization steps = {plan.max_steps:,}",
        f"  Number of trainable parameters = {PARAMETERS_NOTE.get(lang)}",
    ]
    return "\n".join(lines)
