"""What `TrainingArguments` checks and derives: its refusals, warmup steps and the step intervals.

Messages are the real Trainer's, word for word (Python 3.11 prints enum members as `IntervalStrategy.STEPS`).
"""

from __future__ import annotations

import math

from steplab.errors import SetupError, TrainerRefusal
from steplab.i18n import fmt_float, msg
from steplab.trainer.fields import FIELDS
from steplab.trainer.profiles import LLAMA_FACTORY_PROFILE, WARMUP_RATIO_ALIAS, TrainerProfile, release_range
from steplab.trainer.setup import TrainingSetup

WARMUP_RATIO_REMOVED = "TrainingArguments.__init__() got an unexpected keyword argument 'warmup_ratio'"
ENUM_NAMES = {"no": "IntervalStrategy.NO", "steps": "IntervalStrategy.STEPS", "epoch": "IntervalStrategy.EPOCH"}


def check_arguments(setup: TrainingSetup, profile: TrainerProfile) -> None:
    """Raise `TrainerRefusal` where `TrainingArguments(...)` itself would raise for this setup."""
    if profile.framework != "transformers":
        if setup.warmup_steps < 0:  # Lightning has no TrainingArguments: StepLab's own range applies
            raise SetupError("setup.number_range", field="warmup_steps", value=setup.warmup_steps, lo=0,
                             hi=FIELDS["warmup_steps"].high)
        return
    if profile.warmup_ratio == "refused" and setup.warmup_ratio is not None:  # 5.15 removed the field
        first, last = WARMUP_RATIO_ALIAS
        raise TrainerRefusal("TypeError", WARMUP_RATIO_REMOVED, "warmup_ratio", fix=msg(
            "refusal_fix.warmup_ratio", ratio=fmt_float(setup.warmup_ratio), one=1, removed=release_range(profile)[0],
            profile=LLAMA_FACTORY_PROFILE, first=first, last=last))
    if setup.save_strategy == "best" and not profile.save_strategy_best:
        raise TrainerRefusal("ValueError", "best is not a valid IntervalStrategy, please select one of ['no', 'steps', "
                             "'epoch']", "save_strategy")
    if profile.warmup_steps_ratio is False and setup.warmup_ratio is not None and not 0 <= setup.warmup_ratio <= 1:
        raise TrainerRefusal("ValueError", "warmup_ratio must lie in range [0,1]", "warmup_ratio")
    if not profile.warmup_steps_ratio and (not isinstance(setup.warmup_steps, int) or setup.warmup_steps < 0):
        raise TrainerRefusal(
            "ValueError", "warmup_steps must be of type int and must be 0 or a positive integer.", "warmup_steps"
        )
    if setup.eval_strategy == "steps" and not setup.eval_steps and not setup.logging_steps:
        raise TrainerRefusal(
            "ValueError",
            f"evaluation strategy {ENUM_NAMES['steps']} requires either non-zero --eval_steps or --logging_steps",
            "eval_steps",
        )
    if setup.logging_strategy == "steps" and setup.logging_steps == 0:
        raise TrainerRefusal(
            "ValueError", f"logging strategy {ENUM_NAMES['steps']} requires non-zero --logging_steps", "logging_steps"
        )
    for kind in ("logging", "eval", "save"):
        value = effective_interval_setting(setup, kind)
        if getattr(setup, f"{kind}_strategy") == "steps" and value is not None and value > 1 and value != int(value):
            raise TrainerRefusal("ValueError", f"--{kind}_steps must be an integer if bigger than 1: {value}", f"{kind}_steps")
    _check_load_best(setup, profile)
    from steplab.trainer.schedules import (  # lazily: schedules imports the setup
        METRIC_DRIVEN,
        known_schedulers,
    )

    name = setup.lr_scheduler_type
    if name in METRIC_DRIVEN and name in known_schedulers(profile.id) and setup.eval_strategy == "no":
        raise TrainerRefusal("ValueError", f"lr_scheduler_type {name} requires an eval strategy", "lr_scheduler_type")
    if profile.warmup_steps_ratio and setup.warmup_steps < 0:
        raise TrainerRefusal(
            "ValueError", f"Got warmup_steps = {setup.warmup_steps}, Expected value warmup_steps >= 0", "warmup_steps"
        )


LOAD_BEST = "--load_best_model_at_end requires the saving steps to be a"


def _check_load_best(setup: TrainingSetup, profile: TrainerProfile) -> None:
    """`load_best_model_at_end` needs checkpoints where evaluations are: the strategies match (`save_strategy="best"`
    aside) and by steps `save_steps` is a round multiple of `eval_steps` (`TrainingArguments.__post_init__`, in each
    release's words)."""
    if not setup.load_best_model_at_end or setup.save_strategy == "best":
        return
    if setup.eval_strategy != setup.save_strategy:
        save_enum = "SaveStrategy" if profile.save_strategy_best else "IntervalStrategy"
        best = ' except when --save_strategy="best",' if profile.load_best_names_best else ""
        raise TrainerRefusal("ValueError", f"--load_best_model_at_end requires the save and eval strategy to match,{best} "
                             f"but found\n- Evaluation strategy: {ENUM_NAMES[setup.eval_strategy]}\n- Save strategy: "
                             f"{save_enum}.{setup.save_strategy.upper()}", "save_strategy")
    evals, saves = effective_interval_setting(setup, "eval"), setup.save_steps
    if setup.eval_strategy != "steps" or saves % evals == 0:
        return
    if evals < 1 or saves < 1:
        if not (evals < 1 and saves < 1):
            raise TrainerRefusal("ValueError", f"{LOAD_BEST} multiple of the evaluation steps, which cannot get "
                                 "guaranteed when mixing ratio and absolute steps for save_steps "
                                 f"{saves} and eval_steps {evals}.", "save_steps")
        large = 1_000_000  # the Trainer's own way round float remainders
        if (saves * large) % (evals * large) != 0:
            raise TrainerRefusal("ValueError", f"{LOAD_BEST} multiple of the evaluation steps, but found {saves}, "
                                 f"which is not a multiple of {evals}.", "save_steps")
        if profile.load_best_ratio_multiple:
            return
    raise TrainerRefusal("ValueError", f"{LOAD_BEST} round multiple of the evaluation steps, but found {saves}, which "
                         f"is not a round multiple of {evals}.", "save_steps")


NO_EVAL_DATASET = ("You have set `args.eval_strategy` to {strategy} but you didn't pass an `eval_dataset` to `Trainer`. "
                   "Either set `args.eval_strategy` to `no` or pass an `eval_dataset`. ")
NO_METRIC = ("`args.metric_for_best_model` must be provided when using 'best' save_strategy or if "
             "`args.load_best_model_at_end` is set to `True`.")


def check_trainer(setup: TrainingSetup, profile: TrainerProfile) -> None:
    """Raise `TrainerRefusal` where `Trainer(...)` refuses its arguments: evaluation asked for with no evaluation set
    (`has_eval_dataset`), a best checkpoint with no metric to judge it by, a stream (`streaming`) with no `max_steps`."""
    if profile.framework != "transformers":
        return
    if setup.eval_strategy != "no" and not setup.has_eval_dataset:
        raise TrainerRefusal("ValueError", NO_EVAL_DATASET.format(strategy=ENUM_NAMES[setup.eval_strategy]),
                             "has_eval_dataset")
    from steplab.trainer.schedules import METRIC_DRIVEN  # lazily: schedules imports the setup

    metric = setup.metric_for_best_model
    if metric is None and (setup.load_best_model_at_end or setup.lr_scheduler_type in METRIC_DRIVEN):
        metric = "loss"  # `TrainingArguments.__post_init__` fills it in
    if profile.save_strategy_best and (setup.save_strategy == "best" or setup.load_best_model_at_end) and metric is None:
        raise TrainerRefusal("ValueError", NO_METRIC, "metric_for_best_model")
    if setup.streaming and setup.max_steps <= 0:
        raise TrainerRefusal("ValueError", NO_LENGTH[profile.no_length_words], "max_steps")


NO_LENGTH = {
    "old": "The train_dataset does not implement __len__, max_steps has to be specified. The number of steps needs to "
           "be known in advance for the learning rate scheduler.",
    "new": "The train_dataset does not implement __len__, so the number of training steps cannot be inferred; "
           "max_steps has to be specified. The total number of steps must be known in advance to bound the training "
           "loop and to configure the learning rate scheduler.",
}
"""`Trainer.__init__` given a dataset with no length (a stream) and no positive `max_steps`, in each release's words."""


EVAL_NEEDS_DATASET = "Trainer: evaluation requires an eval_dataset."
"""`Trainer.get_eval_dataloader` with no evaluation set: what `eval_on_start` raises before the first update."""


def effective_interval_setting(setup: TrainingSetup, kind: str) -> float | None:
    """`eval_steps` falls back to `logging_steps` when evaluation is by steps and no interval is given."""
    value = getattr(setup, f"{kind}_steps")
    if kind == "eval" and setup.eval_strategy == "steps" and not value:
        return setup.logging_steps
    return value


def interval_steps(value: float | None, max_steps: int) -> int | None:
    """`TrainerState.compute_steps`: a value below 1 is a fraction of `max_steps`, rounded up."""
    if value is None:
        return None
    return math.ceil(max_steps * value) if value < 1 else int(value)


def warmup_ratio_in_use(setup: TrainingSetup, profile: TrainerProfile) -> float | None:
    """The ratio that decides warmup, if any: 5.x reads `warmup_steps < 1` as one (5.0 – 5.14 copy `warmup_ratio` in)."""
    if profile.warmup_steps_ratio:
        if setup.warmup_ratio is not None:
            return setup.warmup_ratio if setup.warmup_ratio < 1 else None
        return setup.warmup_steps if setup.warmup_steps < 1 else None
    if setup.warmup_steps > 0:
        return None
    return setup.warmup_ratio or 0.0


def warmup_steps(setup: TrainingSetup, profile: TrainerProfile, max_steps: int) -> int:
    """`TrainingArguments.get_warmup_steps(max_steps)` of the profile's release, in its own float arithmetic.

    5.x: `int(warmup_steps)` if it is at least 1, else `ceil(max_steps * warmup_steps)`; 5.0 – 5.14 first copy a
    given `warmup_ratio` into `warmup_steps` (5.15 on refuse it: `check_arguments`). 4.x: `warmup_steps` if positive, else `ceil(max_steps * warmup_ratio)`.
    """
    if profile.warmup_steps_ratio:
        value = setup.warmup_ratio if setup.warmup_ratio is not None else setup.warmup_steps
        return int(value) if value >= 1 else math.ceil(max_steps * value)
    if setup.warmup_steps > 0:
        return int(setup.warmup_steps)
    return math.ceil(max_steps * (setup.warmup_ratio or 0.0))
