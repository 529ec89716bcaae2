"""The `***** Running training *****` block the selected Trainer release prints for a plan."""

from __future__ import annotations

from steplab.i18n import msg
from steplab.trainer.plan import Plan

PARAMETERS_NOTE = msg("logblock.parameters")  # a count StepLab cannot know


def running_training_block(plan: Plan, lang: str = "en") -> str:
    """The log lines as the release writes them (`Num examples` is the whole dataset, not per process)."""
    s = plan.setup
    if plan.profile.framework == "lightning":
        return "\n".join([
            msg("logblock.lightning").get(lang),
            f"trainer.estimated_stepping_batches  # {plan.max_steps:,}",
            f"trainer.num_training_batches        # {plan.micro_batches_per_epoch:,}",
            f"trainer.accumulate_grad_batches     # {s.gradient_accumulation_steps}",
            f"trainer.max_epochs                  # {plan.epochs_loop:,}",
        ])
    examples = s.num_samples if plan.micro_batches_per_epoch else plan.total_train_batch_size * plan.max_steps
    lines = [
        "***** Running training *****",
        f"  Num examples = {examples:,}",
        f"  Num Epochs = {plan.epochs_loop:,}",
    ]
    if plan.profile.log_block == "5":
        lines.append(f"  Num update steps per epoch = {plan.num_update_steps_per_epoch:,}")
    lines += [
        f"  Instantaneous batch size per device = {s.per_device_train_batch_size:,}",
        f"  Total train batch size (w. parallel, distributed & accumulation) = {plan.total_train_batch_size:,}",
        f"  Gradient Accumulation steps = {s.gradient_accumulation_steps}",
        f"  Total optimization steps = {plan.max_steps:,}",
        f"  Number of trainable parameters = {PARAMETERS_NOTE.get(lang)}",
    ]
    return "\n".join(lines)
