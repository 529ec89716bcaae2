"""Trainer profiles: how each framework release turns micro-batches into optimizer steps.

A release is one row of `TrainerProfile`: everything that differs between releases (the accumulation and rounding
rules, events, warmup, the console it prints, which `optimization.py` builds its scheduler, Lightning's batch
limit) is a field of the row; every other place reads the row and none branches on a profile's id.

Each profile is named after the release whose real runs it matches; `releases` is the range it stands
for (read from the code of those releases, see `reference/trainer-math.md` §1.4). The 5.x profiles differ in
`warmup_ratio` (5.0 – 5.14 still take it, a deprecated alias; 5.15 removed it) and in what 5.4 changed: the
evaluation at the last step (`DefaultFlowCallback.on_step_end`) and the words of `load_best_model_at_end`'s
refusal, so hf-5.3 stands for 5.0 – 5.3 and hf-5.6 for 5.4 – 5.14 (tests/test_load_best.py holds them to the real
5.3.0 and 5.4.0); LLaMA-Factory
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
    scheduler_release: str  # the transformers release whose `optimization.py` builds its scheduler ("5", "4.57", ...;
    # Lightning modules use 5.x's lambdas): which schedules exist (`SchedulerType`) and how each is called
    logged_rate: str  # the `learning_rate` a log line shows: "used" (the rate of the update just run, read before
    # `lr_scheduler.step()`, 4.52+), "next" (read after it: the next update's rate, ≤ 4.46) or "mixed" (the range
    # holds both: 4.47 – 4.50 "next", 4.51 "used"; modelled as 4.51)
    floats_4g: bool  # `ProgressCallback.on_log` prints floats as f"{v:.4g}" strings and the loss unrounded; the summary
    # counts the steps trained (5.x); else epoch rounded to 2, loss to 4, and the summary counts max_steps (4.x)
    resume_restarts_count: bool  # a resumed epoch counts its micro-batches again from the first one after the
    # skipped ones (4.28 – 4.51 `_inner_training_loop`: `step = -1` after `skip_first_batches`, and 4.46's running
    # `total_batched_samples` starts again at 0): its updates close every accumulation's worth of the rest, and the
    # epoch's last few micro-batches close none (`step + 1 == steps_in_epoch` is never reached), so they join the next
    # epoch's first update. 4.52 and later continue the count (`step = steps_trained_in_current_epoch - 1`).
    loss_scaling: str = "group_tokens"  # how a micro-batch's loss is scaled before backward (catalogue `loss_scaling.*`):
    # "group_tokens": summed token loss / label tokens of the whole accumulation group (4.46+, causal LMs);
    # "mean_then_tokens": mean / GA up to 4.45, group tokens from 4.46 (the range 4.28 – 4.46);
    # "mean_over_accumulation": mean / accumulate_grad_batches (Lightning)
    limit_train_batches: bool = False  # takes Lightning's `Trainer(limit_train_batches=...)`, the epoch's batch limit
    save_strategy_best: bool = True  # `save_strategy="best"` exists (`SaveStrategy.BEST`; 4.46 has IntervalStrategy only)
    load_best_ratio_multiple: bool = True  # `load_best_model_at_end` takes save_steps a ratio multiple of eval_steps
    # (0.3 of 0.1); ≤ 4.51 fall through to the "round multiple" refusal whenever `save_steps % eval_steps` is not 0
    load_best_names_best: bool = True  # its strategies-must-match refusal says "except when --save_strategy="best""
    empty_loader_many_error: tuple[str, str] | None = None  # an empty dataloader whose first update asks for two or
    # more micro-batches (num_samples % GA, or GA): 4.46.3's `get_batch_samples` calls `next` again on accelerate
    # 1.1.1's spent `DataLoaderShard`, which fails on its unset `current_batch` (recorded: tests/data/golden/hf-4.46.json)
    # (5.4 on)
    deepspeed_warmup_floor: int = 0  # `HfTrainerDeepSpeedConfig.trainer_config_finalize` fills `warmup_num_steps`
    # with max(floor, warmup steps): 1 in 5.24 (DeepSpeed 0.19.6 refuses 0), none before
    no_length_words: str = "old"  # `Trainer.__init__`'s refusal of a dataset with no length and no max_steps:
    # "old" (4.46 – 5.6: "... for the learning rate scheduler.") or "new" (5.24: "... to bound the training loop ...")

    @property
    def logs_next_rate(self) -> bool:
        """The log shows the learning rate of the next update (read after `lr_scheduler.step()`)."""
        return self.logged_rate == "next"


PROFILES: dict[str, TrainerProfile] = {
    p.id: p
    for p in (
        TrainerProfile(
            id="hf-5", framework="transformers", matched="transformers 5.24.0", releases="5.15 – 5.x",
            round_updates_up=True, running_count=False, last_chunk_from_samples=False,
            final_eval=True, final_save_any_strategy=False, warmup_steps_ratio=True, warmup_ratio="refused",
            empty_loader_error=None, log_block="5",
            scheduler_release="5", logged_rate="used", floats_4g=True, resume_restarts_count=False,
            no_length_words="new", deepspeed_warmup_floor=1,
        ),
        TrainerProfile(
            id="hf-5.6", framework="transformers", matched="transformers 5.6.0", releases="5.4 – 5.14",
            round_updates_up=True, running_count=False, last_chunk_from_samples=False,
            final_eval=True, final_save_any_strategy=False, warmup_steps_ratio=True, warmup_ratio="alias",
            empty_loader_error=None, log_block="5",
            scheduler_release="5", logged_rate="used", floats_4g=True, resume_restarts_count=False,
        ),
        TrainerProfile(
            id="hf-5.3", framework="transformers", matched="transformers 5.3.0", releases="5.0 – 5.3",
            round_updates_up=True, running_count=False, last_chunk_from_samples=False,
            final_eval=False, final_save_any_strategy=False, warmup_steps_ratio=True, warmup_ratio="alias",
            empty_loader_error=None, log_block="5",
            scheduler_release="5", logged_rate="used", floats_4g=True, resume_restarts_count=False,
            load_best_names_best=False,
        ),
        TrainerProfile(
            id="hf-4.57", framework="transformers", matched="transformers 4.57.6", releases="4.52 – 4.57",
            round_updates_up=True, running_count=False, last_chunk_from_samples=False,
            final_eval=False, final_save_any_strategy=False, warmup_steps_ratio=False, warmup_ratio="field",
            empty_loader_error=None, log_block="4",
            scheduler_release="4.57", logged_rate="used", floats_4g=False, resume_restarts_count=False,
            load_best_names_best=False,
        ),
        TrainerProfile(
            id="hf-4.51", framework="transformers", matched="transformers 4.51.3", releases="4.47 – 4.51",
            round_updates_up=False, running_count=False, last_chunk_from_samples=True,
            final_eval=False, final_save_any_strategy=False, warmup_steps_ratio=False, warmup_ratio="field",
            empty_loader_error=None, log_block="4",
            scheduler_release="4.51", logged_rate="mixed", floats_4g=False, resume_restarts_count=True,
            load_best_ratio_multiple=False, load_best_names_best=False,
        ),
        TrainerProfile(
            id="hf-4.46", framework="transformers", matched="transformers 4.46.3", releases="4.28 – 4.46",
            round_updates_up=False, running_count=True, last_chunk_from_samples=True,
            final_eval=False, final_save_any_strategy=True, warmup_steps_ratio=False, warmup_ratio="field",
            empty_loader_error=("TypeError", "object of type 'NoneType' has no len()"), log_block="4",
            scheduler_release="4.46", logged_rate="next", floats_4g=False, resume_restarts_count=True,
            loss_scaling="mean_then_tokens",
            save_strategy_best=False, load_best_ratio_multiple=False, load_best_names_best=False,
            empty_loader_many_error=("UnboundLocalError",
                                     "cannot access local variable 'current_batch' where it is not associated with a value"),
        ),
        TrainerProfile(
            id="lightning-2", framework="lightning", matched="lightning 2.6.6", releases="PyTorch Lightning 2.x",
            round_updates_up=True, running_count=False, last_chunk_from_samples=False,
            final_eval=False, final_save_any_strategy=False, warmup_steps_ratio=True, warmup_ratio="alias",
            empty_loader_error=None, log_block="lightning",
            scheduler_release="5", logged_rate="used", floats_4g=False, resume_restarts_count=False,
            loss_scaling="mean_over_accumulation", limit_train_batches=True,
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


def span(profiles: list[TrainerProfile]) -> tuple[str, str]:
    """The first and the last release of some transformers rows together: ("5.0", "5.14") for those that take
    `warmup_ratio` as an alias."""
    ranges = [release_range(profile) for profile in profiles]
    return min((r[0] for r in ranges), key=release_key), max((r[1] for r in ranges), key=release_key)


WARMUP_RATIO_ALIAS = span([p for p in PROFILES.values() if p.warmup_ratio == "alias" and p.framework == "transformers"])
"""The releases that still take `warmup_ratio`, a deprecated alias copied into `warmup_steps` (5.0 – 5.14)."""


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
