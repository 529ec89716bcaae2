"""Steps in a ROLL RLVR pipeline: one pipeline step is one rollout-and-train cycle (reference §4.4).

`num_train_epochs` plays no part in this loop: `max_steps` counts pipeline steps, and each one may hold
several optimizer updates of the actor.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RlvrSetup:
    rollout_batch_size: int = 64  # prompts per pipeline step
    num_return_sequences_in_group: int = 8  # responses generated per prompt
    ppo_epochs: int = 1  # passes over one rollout's samples
    per_device_train_batch_size: int = 1
    gradient_accumulation_steps: int = 32
    dp: int = 16  # data-parallel ranks of the actor
    max_steps: int = 500  # pipeline steps


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
        "updates_per_pipeline_step": updates_per_step,
        "pipeline_steps": s.max_steps,
        "actor_updates": s.max_steps * updates_per_step,
        "actor_schedule_horizon": horizon,
        **{name: getattr(s, name) for name in s.__dataclass_fields__},
    }
