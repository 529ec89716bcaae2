"""Steps in a ROLL RLVR pipeline: one pipeline step is one rollout-and-train cycle (reference §4.4).

`for global_step in range(max_steps)` is the whole loop: `max_steps` counts pipeline steps, and each one may hold
several optimizer updates of the actor (alibaba/ROLL @ 8eb27cc2: `roll/pipeline/rlvr/rlvr_pipeline.py:483`,
`roll/pipeline/base_worker.py:84-111`, the actor's horizon `roll/configs/base_config.py:748-765` then ÷ dp in
`roll/distributed/strategy/megatron_strategy.py:1212-1214`). The deprecated `RLVRMathVLMPipeline` set `max_steps`
at start-up to `len(dataloader) × num_train_epochs` (@ afc4d301, `rlvr_math_vlm_pipeline.py:211-212`; removed in
ae69fd83). Read from ROLL's source: no run here checks it.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from steplab.errors import InputError
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


def rlvr_quantities(s: RlvrSetup) -> dict[str, int]:
    """Samples, updates and the actor's schedule horizon of an RLVR run, as ROLL computes them."""
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
    """The arithmetic from the config to each result, one (label, formula with the numbers) per line."""
    q = rlvr_quantities(s)
    samples, per_rank, micro = q["samples_per_pipeline_step"], q["samples_per_rank"], q["samples_per_update"]
    split = (f"{fmt_int(samples)} ÷ {fmt_int(s.dp)} = {fmt_int(per_rank)}" if samples % s.dp == 0
             else f"⌊{fmt_int(samples)} ÷ {fmt_int(s.dp)}⌋ = {fmt_int(per_rank)}")
    passes = per_rank * s.ppo_epochs
    updates = (f"{fmt_int(passes)} ÷ {fmt_int(micro)} = {fmt_int(q['updates_per_pipeline_step'])}" if passes % micro == 0
               else f"⌊{fmt_int(passes)} ÷ {fmt_int(micro)}⌋ = {fmt_int(q['updates_per_pipeline_step'])}")
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
    """What to know about these numbers: an uneven split over the ranks, a rank with too few samples to update."""
    q = rlvr_quantities(s)
    found = []
    if q["samples_per_pipeline_step"] % s.dp:
        found.append(msg("rlvr.note.uneven", samples=q["samples_per_pipeline_step"], dp=s.dp, per_rank=q["samples_per_rank"]))
    if q["updates_per_pipeline_step"] == 0:
        found.append(msg("rlvr.note.no_update", per_rank=q["samples_per_rank"], passes=s.ppo_epochs,
                         micro=q["samples_per_update"]))
    if q["actor_schedule_horizon"] != q["actor_updates"]:
        found.append(msg("rlvr.note.horizon", horizon=q["actor_schedule_horizon"], updates=q["actor_updates"]))
    return found
