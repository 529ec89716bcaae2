"""Generated TRL configurations (hypothesis) for `tests/test_trl_vs_steplab.py`, as both sides take them.

A case is the worker's request (`trl_worker.py`: trainer, N, the config's arguments, or token lengths) and the
values StepLab reads (`TrainingSetup` fields, TRL's among them). Everything is tiny: at most a few dozen
micro-batches a run, one-token completions.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from steplab.trl.settings import with_config_defaults

try:
    from tests.census_cases import census_keys
except ImportError:  # imported as a top-level module, with tests/ on the path
    from census_cases import census_keys  # type: ignore[no-redef]

SCHEDULES = ("linear", "cosine", "constant", "constant_with_warmup", "cosine_with_restarts", "polynomial")
TRAINER_KEYS = ("per_device_train_batch_size", "gradient_accumulation_steps", "num_train_epochs", "max_steps",
                "learning_rate", "lr_scheduler_type", "warmup_steps", "dataloader_drop_last")
GRPO_KEYS = ("num_generations", "steps_per_generation", "generation_batch_size", "num_iterations")
OTHER_KEYS = ("eval_strategy", "eval_steps", "per_device_eval_batch_size", "num_generations_eval",
              "auto_find_batch_size", "padding_free", "packing", "packing_strategy", "max_length")
"""Fields a case may set besides (`tests/test_trl_misses.py`): evaluation, GRPO's and SFT's refusals."""


def _trainer_args(draw, trainer_class: str) -> dict[str, Any]:
    """The Trainer's arguments of a case, with a few the census calls irrelevant (TRL gets them, StepLab not)."""
    epochs = draw(st.sampled_from([1, 2, 0.5, 1.5, 1.25, 0.75]))
    return {
        **draw(census_keys(trainer_class, most=3)),
        "gradient_accumulation_steps": draw(st.integers(1, 3)),
        "num_train_epochs": epochs,
        "max_steps": draw(st.sampled_from([-1, -1, -1, 1, 2, 3, 5, 8])),
        "learning_rate": 1e-3,
        "lr_scheduler_type": draw(st.sampled_from(SCHEDULES)),
        "warmup_steps": draw(st.sampled_from([0, 0, 1, 2, 0.25])),
        "dataloader_drop_last": draw(st.booleans()),
    }


@st.composite
def grpo_cases(draw, refusals: bool = False, processes: int = 1) -> dict[str, Any]:
    """A GRPO configuration; with `refusals`, mostly ones `GRPOConfig` refuses (cheap: no training)."""
    args = _trainer_args(draw, "GRPOTrainer")
    batch = draw(st.integers(1, 4))
    args["per_device_train_batch_size"] = batch
    if refusals:
        generations = draw(st.integers(0, 5))
        steps = draw(st.none() | st.integers(1, 4))
        size = draw(st.none() | st.integers(1, 16))
    else:
        generations = draw(st.sampled_from([2, 2, 3, 4]))
        # a generation batch that holds whole prompt groups: a multiple of G and of B·P
        unit = generations * batch * processes // _gcd(generations, batch * processes)
        how = draw(st.sampled_from(["default", "steps", "size"]))
        steps = size = None
        if how == "steps":
            steps = draw(st.integers(1, 3)) * (unit // (batch * processes))
        elif how == "size":
            size = unit * draw(st.integers(1, 2))
        elif (batch * processes * args["gradient_accumulation_steps"]) % generations:
            steps = unit // (batch * processes)
    args.update(num_generations=generations, num_iterations=draw(st.sampled_from([1, 1, 2, 3])))
    if steps is not None:
        args["steps_per_generation"] = steps
    if size is not None:
        args["generation_batch_size"] = size
    return {"trainer": "grpo", "num_samples": draw(st.integers(0, 14)), "args": args}


@st.composite
def dpo_cases(draw) -> dict[str, Any]:
    args = _trainer_args(draw, "DPOTrainer")
    args["per_device_train_batch_size"] = draw(st.integers(1, 4))
    return {"trainer": "dpo", "num_samples": draw(st.integers(1, 20)), "args": args}


@st.composite
def packing_cases(draw) -> dict[str, Any]:
    """SFT packing on examples of known token lengths (the dataset is only built, never trained)."""
    strategy = draw(st.sampled_from(["bfd", "bfd_split", "wrapped"]))
    lengths = draw(st.lists(st.integers(1, 40), min_size=1, max_size=60))
    return {"trainer": "sft", "lengths": lengths, "build_only": True,
            "args": {"packing": True, "packing_strategy": strategy, "max_length": draw(st.integers(1, 24))}}


def _gcd(a: int, b: int) -> int:
    while b:
        a, b = b, a % b
    return a


def steplab_values(case: dict[str, Any], processes: int = 1) -> dict[str, Any]:
    """What StepLab is given for a case: the setup and TRL fields, under the installed release's profile."""
    args = case["args"]
    trainer_class = {"grpo": "GRPOTrainer", "dpo": "DPOTrainer", "sft": "SFTTrainer"}[case["trainer"]]
    values = {key: args[key] for key in (*TRAINER_KEYS, *GRPO_KEYS, *OTHER_KEYS) if key in args}
    values.update(trainer_class=trainer_class, num_samples=case.get("num_samples", len(case.get("lengths", ()))),
                  world_size=processes, save_strategy="no")
    if case.get("config_defaults"):
        return with_config_defaults(values)
    values["logging_steps"] = 10**6
    return values


def examples(strategy: st.SearchStrategy, count: int) -> list[dict[str, Any]]:
    """`count` examples hypothesis draws from `strategy` (derandomised unless `STEPLAB_TRL_RANDOM`), to be sent to
    the worker in batches: one real run per case, no shrinking (a failure prints its case whole)."""
    import os

    from hypothesis import HealthCheck, Phase, given, settings

    drawn: list[dict[str, Any]] = []

    @settings(max_examples=count, deadline=None, derandomize=not os.environ.get("STEPLAB_TRL_RANDOM"),
              database=None, suppress_health_check=list(HealthCheck), phases=[Phase.generate])
    @given(case=strategy)
    def collect(case):
        drawn.append(case)

    collect()
    return drawn
