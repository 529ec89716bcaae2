"""A setup under a trainer class: the Trainer's plan, or GRPO's rounds over it; and the CLI's JSON fields for it.

- `Trainer`, `DPOTrainer`: the Trainer's plan as it is. A DPO example is one preference pair: B pairs per
  micro-batch, which the collator turns into 2·B sequences (chosen and rejected; TRL's `DataCollatorForPreference`,
  LLaMA-Factory's `PairwiseDataCollatorWithPadding`).
- `SFTTrainer`: the Trainer's plan over the examples packing leaves (`packing.packed_examples`, from token lengths).
- `GRPOTrainer`: `grpo.plan_grpo`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from steplab.errors import SetupError, TrainerRefusal
from steplab.i18n import msg
from steplab.trainer.plan import Plan, make_plan
from steplab.trainer.record import MAX_LISTED_EVENTS, plan_record
from steplab.trainer.setup import TrainingSetup
from steplab.trl.grpo import GrpoPlan, plan_grpo
from steplab.trl.packing import packed_examples

PADDING_FREE_WITHOUT_PACKING = (
    "When `padding_free=True` without packing, `max_length` is not enforced. Either enable packing (e.g., "
    "`packing=True, packing_strategy='bfd'`), provide already truncated inputs, or set `max_length=None`.")
"""`SFTTrainer.__init__` (`sft_trainer.py:999-1004`) when a text dataset is padding-free without packing and
`max_length` is set (StepLab's `max_length` always is)."""


def plan_trl(setup: TrainingSetup, lengths: Sequence[int] | None = None) -> Plan | GrpoPlan:
    """The plan of `setup` under its `trainer_class` (`lengths`: the examples' token lengths, for packing)."""
    kind = setup.trainer_class
    if kind == "GRPOTrainer":
        return plan_grpo(setup)
    if kind == "SFTTrainer" and setup.padding_free and not setup.packing:  # max_length is never None here
        raise TrainerRefusal("ValueError", PADDING_FREE_WITHOUT_PACKING, "padding_free", msg("trl.fix.padding_free"))
    if kind == "SFTTrainer" and setup.packing:
        if lengths is None:
            raise SetupError("trl.packing_lengths", field="packing")
        setup = setup.replace(num_samples=packed_examples(lengths, setup.max_length, setup.packing_strategy))
    return make_plan(setup)


def trl_record(plan: Plan) -> dict[str, Any]:
    """The TRL fields the CLI's JSON adds to the plan's record (which `grpo_record` adapts for GRPO)."""
    setup = plan.setup
    record: dict[str, Any] = {"trainer_class": setup.trainer_class}
    if setup.trainer_class == "DPOTrainer":
        record["sequences_per_micro_batch"] = 2 * setup.per_device_train_batch_size
    if setup.trainer_class == "SFTTrainer" and setup.packing:
        record.update(packing_strategy=setup.packing_strategy, max_length=setup.max_length)
    return record


def grpo_record(plan: GrpoPlan) -> dict[str, Any]:
    """The plan's record with GRPO's numbers: rounds, prompts, completions and what each update learns from."""
    record = plan_record(plan.trainer)
    if plan.trainer.optimizer_steps > MAX_LISTED_EVENTS:
        raise SetupError("trl.too_many_updates", field="max_steps", count=plan.trainer.optimizer_steps,
                         limit=MAX_LISTED_EVENTS)
    first, last, reused = plan.update_rounds()
    record.update(
        total_train_batch_size=plan.completions_per_update,
        trainer_class="GRPOTrainer",
        num_examples=plan.num_examples,
        num_generations=plan.setup.num_generations,
        steps_per_generation=plan.steps_per_generation,
        generation_batch_size=plan.generation_batch_size,
        num_iterations=plan.setup.num_iterations,
        unique_prompts_per_round=plan.unique_prompts_per_round,
        rounds_per_epoch=plan.rounds_per_epoch,
        prompts_dropped_per_epoch=plan.prompts_dropped_per_epoch,
        micro_batches_per_round=plan.micro_batches_per_round,
        generation_rounds=plan.generation_rounds,
        completions_per_update=plan.completions_per_update,
        update_rounds=[[int(a), int(b), bool(c)] for a, b, c in zip(first, last, reused, strict=True)],
    )
    return record
