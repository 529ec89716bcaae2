"""Steps in a ROLL RLVR pipeline: one pipeline step is one rollout-and-train cycle (reference §4.4).

`for global_step in range(max_steps)` is the whole loop: `max_steps` counts pipeline steps, and each one may hold
several optimizer updates of the actor. Read from ROLL's source (alibaba/ROLL @ 8eb27cc2), line by line:

- a step generates `rollout_batch_size` × `num_return_sequences_in_group` samples (the domains' shares add up to
  `rollout_batch_size`, `roll/pipeline/rlvr/rlvr_pipeline.py:282-306`; each asks its scheduler for its share × the
  group, `roll/distributed/scheduler/generate_scheduler.py:648-661`);
- before the actor trains, `batch_balance` splits them over the dp ranks in equal parts and asserts that it can
  (`rlvr_pipeline.py:776`, `roll/utils/functionals.py:1565-1566` at least one sample a rank, `:1572-1574` as many
  on every rank);
- each rank cuts its share into backward batches of B × GA, asserting that they fit exactly
  (`roll/pipeline/base_worker.py:84-86`, `roll/distributed/scheduler/protocol.py:807`), and goes through them
  `ppo_epochs` times: share × `ppo_epochs` ÷ (B × GA) updates (`base_worker.py:102-104`, `:111`);
- the actor's learning-rate schedule is sized at start-up for
  max(1, `max_steps` × samples × `ppo_epochs` ÷ (B × GA)) updates (`roll/configs/base_config.py:748-765`), divided
  by dp once the ranks exist (`roll/distributed/strategy/megatron_strategy.py:1212-1214`,
  `fsdp2_strategy.py:1371-1373`).

What this does not model, named in `notes`: dynamic batching (`use_dynamic_batching_in_train` cuts batches by
tokens, `base_worker.py:87-93`) and a critic warm-up (with `adv_estimator: gae` the actor trains from step
`critic_warmup` on, `rlvr_pipeline.py:774`). The deprecated `RLVRMathVLMPipeline` set `max_steps` at start-up to
`len(dataloader) × num_train_epochs` (@ afc4d301, `rlvr_math_vlm_pipeline.py:211-212`; removed in ae69fd83).
StepLab has not run ROLL: `tests/test_rl_pipeline.py` holds each rule to worked cases from these lines.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from steplab.errors import InputError, TrainerRefusal
from steplab.i18n import Message, fmt_int, msg

LIMITS = {  # the widget's ranges: a ROLL run at any scale the course meets
    "rollout_batch_size": (1, 65_536), "num_return_sequences_in_group": (1, 1_024), "ppo_epochs": (1, 100),
    "per_device_train_batch_size": (1, 4_096), "gradient_accumulation_steps": (1, 4_096), "dp": (1, 65_536),
    "max_steps": (1, 10_000_000),
}


class RlvrError(InputError):
    """An RLVR setup value outside what ROLL takes (a whole number in the field's range)."""


@dataclass(frozen=True)
class RlvrSetup:
    rollout_batch_size: int = 64  # prompts per pipeline step
    num_return_sequences_in_group: int = 8  # responses generated per prompt
    ppo_epochs: int = 1  # passes over one rollout's samples
    per_device_train_batch_size: int = 1
    gradient_accumulation_steps: int = 32
    dp: int = 16  # data-parallel ranks of the actor
    max_steps: int = 500  # pipeline steps

    def __post_init__(self) -> None:
        for name, (low, high) in LIMITS.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise RlvrError("rlvr.bad_value", field=name, value=repr(value), low=low, high=high)

    def to_dict(self) -> dict[str, int]:
        return {item.name: getattr(self, item.name) for item in fields(self)}


def refusal(s: RlvrSetup) -> TrainerRefusal | None:
    """ROLL's own assertion that stops this run at its first training step, in ROLL's words, or None.

    `batch_balance` asserts at least one sample per rank and an equal split (`roll/utils/functionals.py:1565-1566`,
    `:1572-1574`); `DataProto.make_iterator` asserts that a rank's share is a whole number of backward batches
    (`roll/distributed/scheduler/protocol.py:807`)."""
    samples = s.rollout_batch_size * s.num_return_sequences_in_group
    micro = s.per_device_train_batch_size * s.gradient_accumulation_steps
    if samples < s.dp:
        return TrainerRefusal("AssertionError", f"number of items:[{samples}] < k_partitions:[{s.dp}]", field="dp",
                              fix=msg("rlvr.fix.too_few", samples=samples, dp=s.dp))
    if samples % s.dp:
        return TrainerRefusal("AssertionError", f"{samples} % {s.dp} != 0", field="dp",
                              fix=msg("rlvr.fix.uneven", samples=samples, dp=s.dp))
    if (samples // s.dp) % micro:
        return TrainerRefusal("AssertionError", f"{samples // s.dp} % {micro} != 0",
                              field="gradient_accumulation_steps",
                              fix=msg("rlvr.fix.backward_batch", per_rank=samples // s.dp, micro=micro))
    return None


def rlvr_quantities(s: RlvrSetup) -> dict[str, int]:
    """Samples, updates and the actor's schedule horizon of an RLVR run, as ROLL computes them; raises ROLL's
    `refusal` (a `TrainerRefusal`) for a run ROLL stops."""
    refused = refusal(s)
    if refused is not None:
        raise refused
    samples = s.rollout_batch_size * s.num_return_sequences_in_group
    per_rank = samples // s.dp
    micro = s.per_device_train_batch_size * s.gradient_accumulation_steps
    updates_per_step = per_rank * s.ppo_epochs // micro
    horizon = max(1, s.max_steps * samples * s.ppo_epochs // micro) // s.dp
    return {
        "samples_per_pipeline_step": samples,
        "samples_per_rank": per_rank,
        "samples_per_update": micro,
        "updates_per_pipeline_step": updates_per_step,
        "pipeline_steps": s.max_steps,
        "actor_updates": s.max_steps * updates_per_step,
        "actor_schedule_horizon": horizon,
        **s.to_dict(),
    }


RESULTS = ("samples_per_pipeline_step", "samples_per_rank", "updates_per_pipeline_step", "pipeline_steps",
           "actor_updates", "actor_schedule_horizon")
"""What the widget shows, in reading order; each one a quantity a lesson can ask for."""


def label(name: str) -> Message:
    """How an RLVR quantity or field is called in a sentence."""
    return msg(f"rlvr.quantity.{name}")


def worked(s: RlvrSetup) -> list[tuple[Message, str]]:
    """The arithmetic from the config to each result, one (label, formula with the numbers) per line (every
    division exact: ROLL refuses a run where one is not, `refusal`)."""
    q = rlvr_quantities(s)
    samples, per_rank, micro = q["samples_per_pipeline_step"], q["samples_per_rank"], q["samples_per_update"]
    split = f"{fmt_int(samples)} ÷ {fmt_int(s.dp)} = {fmt_int(per_rank)}"
    passes = per_rank * s.ppo_epochs
    updates = f"{fmt_int(passes)} ÷ {fmt_int(micro)} = {fmt_int(q['updates_per_pipeline_step'])}"
    total = s.max_steps * samples * s.ppo_epochs // micro
    return [
        (label("samples_per_pipeline_step"),
         f"{fmt_int(s.rollout_batch_size)} × {fmt_int(s.num_return_sequences_in_group)} = {fmt_int(samples)}"),
        (label("samples_per_rank"), split),
        (label("samples_per_update"),
         f"{fmt_int(s.per_device_train_batch_size)} × {fmt_int(s.gradient_accumulation_steps)} = {fmt_int(micro)}"),
        (label("updates_per_pipeline_step"),
         (f"{fmt_int(per_rank)} × {fmt_int(s.ppo_epochs)} = {fmt_int(passes)} ; " if s.ppo_epochs != 1 else "") + updates),
        (label("pipeline_steps"), f"max_steps = {fmt_int(s.max_steps)}"),
        (label("actor_updates"),
         f"{fmt_int(s.max_steps)} × {fmt_int(q['updates_per_pipeline_step'])} = {fmt_int(q['actor_updates'])}"),
        (label("actor_schedule_horizon"),
         f"⌊max(1, ⌊{fmt_int(s.max_steps)} × {fmt_int(samples)} × {fmt_int(s.ppo_epochs)} ÷ {fmt_int(micro)}⌋) "
         f"÷ {fmt_int(s.dp)}⌋ = ⌊{fmt_int(max(1, total))} ÷ {fmt_int(s.dp)}⌋ = {fmt_int(q['actor_schedule_horizon'])}"),
    ]


def notes(s: RlvrSetup) -> list[Message]:
    """What these numbers leave out where it could change them: dynamic batching and a critic warm-up."""
    return [msg("rlvr.note.not_modelled")]
