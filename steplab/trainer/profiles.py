"""Trainer profiles: how each framework release turns micro-batches into optimizer steps.

Each profile is named after the release whose real runs it matches; `releases` is the range it stands
for (read from the code of those releases, see `reference/trainer-math.md` §1.4). The two 5.x profiles differ in
one thing only, `warmup_ratio`: 5.0 – 5.14 still take it (a deprecated alias), 5.15 removed it; LLaMA-Factory
0.9.5 pins transformers 4.55 – 5.6, so its runs are `hf-5.6`'s (tests/test_warmup_ratio_releases.py checks
5.6.0, 5.14.1, 5.15.0 and 5.24.0 themselves, and the LLaMA-Factory pin).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TrainerProfile:
    """The behaviours that differ between Trainer releases."""

    id: str
    framework: str  # "transformers" or "lightning"
    matched: str  # the release whose real runs this profile reproduces
    releases: str  # the range of releases it stands for
    round_updates_up: bool  # updates per epoch: ceil(L / GA) (True) or floor(L / GA) (False)
    running_count: bool  # GA groups follow one running micro-batch count that never resets (≤ 4.46)
    last_chunk_from_samples: bool  # the epoch's last chunk asks for num_samples % GA micro-batches (4.46–4.51)
    final_eval: bool  # eval_strategy "steps" also evaluates at the last step (5.x)
    final_save_any_strategy: bool  # the last-step checkpoint is written for any save strategy (4.46)
    warmup_steps_ratio: bool  # warmup_steps < 1 is a ratio (5.x)
    warmup_ratio: str  # what TrainingArguments does with `warmup_ratio`: "field" (4.x: a field of its own),
    # "alias" (5.0 – 5.14: deprecated, copied into warmup_steps, so it wins over it), "refused" (5.15 on: TypeError)
    empty_loader_error: tuple[str, str] | None  # a refusal for an empty dataloader in every mode (4.46)
    log_block: str  # which "***** Running training *****" block it prints: "5", "4" or "lightning"
    loss_scaling: str = "group_tokens"  # how a micro-batch's loss is scaled before backward (catalogue `loss_scaling.*`):
    # "group_tokens": summed token loss / label tokens of the whole accumulation group (4.46+, causal LMs);
    # "mean_then_tokens": mean / GA up to 4.45, group tokens from 4.46 (the range 4.28 – 4.46);
    # "mean_over_accumulation": mean / accumulate_grad_batches (Lightning)


PROFILES: dict[str, TrainerProfile] = {
    p.id: p
    for p in (
        TrainerProfile(
            id="hf-5", framework="transformers", matched="transformers 5.24.0", releases="5.15 – 5.x",
            round_updates_up=True, running_count=False, last_chunk_from_samples=False,
            final_eval=True, final_save_any_strategy=False, warmup_steps_ratio=True, warmup_ratio="refused",
            empty_loader_error=None, log_block="5",
        ),
        TrainerProfile(
            id="hf-5.6", framework="transformers", matched="transformers 5.6.0", releases="5.0 – 5.14",
            round_updates_up=True, running_count=False, last_chunk_from_samples=False,
            final_eval=True, final_save_any_strategy=False, warmup_steps_ratio=True, warmup_ratio="alias",
            empty_loader_error=None, log_block="5",
        ),
        TrainerProfile(
            id="hf-4.57", framework="transformers", matched="transformers 4.57.6", releases="4.52 – 4.57",
            round_updates_up=True, running_count=False, last_chunk_from_samples=False,
            final_eval=False, final_save_any_strategy=False, warmup_steps_ratio=False, warmup_ratio="field",
            empty_loader_error=None, log_block="4",
        ),
        TrainerProfile(
            id="hf-4.51", framework="transformers", matched="transformers 4.51.3", releases="4.47 – 4.51",
            round_updates_up=False, running_count=False, last_chunk_from_samples=True,
            final_eval=False, final_save_any_strategy=False, warmup_steps_ratio=False, warmup_ratio="field",
            empty_loader_error=None, log_block="4",
        ),
        TrainerProfile(
            id="hf-4.46", framework="transformers", matched="transformers 4.46.3", releases="4.28 – 4.46",
            round_updates_up=False, running_count=True, last_chunk_from_samples=True,
            final_eval=False, final_save_any_strategy=True, warmup_steps_ratio=False, warmup_ratio="field",
            empty_loader_error=("TypeError", "object of type 'NoneType' has no len()"), log_block="4",
            loss_scaling="mean_then_tokens",
        ),
        TrainerProfile(
            id="lightning-2", framework="lightning", matched="lightning 2.6.6", releases="PyTorch Lightning 2.x",
            round_updates_up=True, running_count=False, last_chunk_from_samples=False,
            final_eval=False, final_save_any_strategy=False, warmup_steps_ratio=True, warmup_ratio="alias",
            empty_loader_error=None, log_block="lightning", loss_scaling="mean_over_accumulation",
        ),
    )
}


LLAMA_FACTORY_VERSION = "0.9.5"
LLAMA_FACTORY_TRANSFORMERS = ("4.55", "5.6")
"""The transformers releases LLaMA-Factory 0.9.5 accepts (`transformers>=4.55.0,<=5.6.0`, neither 4.52.0 nor 4.57.0)."""
LLAMA_FACTORY_PROFILE = "hf-5.6"
"""The profile of the newest release LLaMA-Factory 0.9.5 accepts: what a fresh `pip install llamafactory==0.9.5`
brings, and what its real runs in tests/data/llamafactory-runs used."""


def release_key(release: str) -> tuple[int, ...]:
    """`"5.14"` or `"5.14.1"` as a tuple that sorts like releases do; `x` (any minor) sorts after every number."""
    return tuple(10**6 if part == "x" else int(part) for part in release.split("."))


def release_range(profile: TrainerProfile) -> tuple[str, str]:
    """The first and the last release a transformers profile stands for: ("5.0", "5.14") for hf-5.6."""
    first, _, last = profile.releases.partition(" – ")
    return first, last


def covers(profile: TrainerProfile, release: str) -> bool:
    """Whether a transformers release (`"5.14.1"`) falls in the range this profile stands for."""
    if profile.framework != "transformers":
        return False
    first, last = (release_key(end) for end in release_range(profile))
    key = release_key(release)[:2]
    return first <= key <= last


def get_profile(profile_id: str) -> TrainerProfile:
    """The profile with this id (KeyError for an unknown one)."""
    return PROFILES[profile_id]
