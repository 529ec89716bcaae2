"""A plan's learning rates taken away: the CSV of every update, the setup as a LLaMA-Factory YAML, and Python that
rebuilds the same scheduler with `transformers.get_scheduler` and with plain torch (the engine's own per-step λ)."""

from __future__ import annotations

import inspect
import textwrap
from functools import lru_cache, partial
from typing import Any

import numpy as np

from steplab.i18n import msg
from steplab.io.config_write import write_config
from steplab.simulation.lr_curve import drawable
from steplab.trainer import schedules
from steplab.trainer.geometry import epochs_and_samples
from steplab.trainer.plan import Plan
from steplab.trainer.setup import TrainingSetup

CSV_LIMIT = 1_000_000  # rows the CSV export writes at most


def csv_text(plan: Plan) -> str:
    """`step,epoch,learning_rate` of every update that runs, with the engine's exact floats (≤ `CSV_LIMIT` rows)."""
    count = plan.optimizer_steps
    if count > CSV_LIMIT:
        raise ValueError(f"{count:,} updates: the CSV holds at most {CSV_LIMIT:,} rows")
    steps = np.arange(1, count + 1, dtype=np.int64)
    epochs, _ = epochs_and_samples(plan, steps) if count else (np.zeros(0), None)
    rates = plan.learning_rates(1, count) if count else np.zeros(0)
    rows = [f"{k},{e!r},{r!r}\n" for k, e, r in zip(steps.tolist(), epochs.tolist(), rates.tolist(), strict=True)]
    return "step,epoch,learning_rate\n" + "".join(rows)


@lru_cache(maxsize=64)
def setup_yaml(setup: TrainingSetup, lang: str = "en") -> str:
    """The setup as a LLaMA-Factory training YAML (`steplab.io.config_write.write_config`), comments in `lang`."""
    return write_config(setup.to_dict(), lang=lang)


_COMMENTS = {
    "model": msg("curve.comment.model"),
    "loop": msg("curve.comment.loop"),
    "lr": msg("curve.comment.lr", previous="k - 1"),
    "plateau": msg("curve.comment.plateau"),
    "plain": msg("curve.comment.plain"),
}
"""The comments of the code snippets, in the reader's language."""


def _loop(count: int, lang: str) -> list[str]:
    return [
        "",
        "learning_rates = []",
        f"# {_COMMENTS['loop'].get(lang)}",
        f"for update in range({count}):",
        f"    # {_COMMENTS['lr'].get(lang)}",
        "    learning_rates.append(scheduler.get_last_lr()[0])",
        "    optimizer.step()",
        "    scheduler.step()",
    ]


def _plateau_loop(lang: str) -> list[str]:
    return ["", f"# scheduler.step(eval_loss)  # {_COMMENTS['plateau'].get(lang)}"]


def _optimizer_lines(plan: Plan, lang: str) -> list[str]:
    return [
        f"model = torch.nn.Linear(1, 1)  # {_COMMENTS['model'].get(lang)}",
        f"optimizer = torch.optim.AdamW(model.parameters(), lr={plan.setup.learning_rate!r})",
    ]


@lru_cache(maxsize=64)
def get_scheduler_snippet(plan: Plan, lang: str = "en") -> str:
    """Python that builds the same scheduler the Trainer builds, with `transformers.get_scheduler`."""
    setup = plan.setup
    kwargs = setup.scheduler_kwargs
    lines = ["import torch", "from transformers import get_scheduler", "", *_optimizer_lines(plan, lang),
             "scheduler = get_scheduler(", f"    {setup.lr_scheduler_type!r},", "    optimizer,",
             f"    num_warmup_steps={plan.warmup_steps},", f"    num_training_steps={plan.max_steps},"]
    if kwargs:
        lines.append(f"    scheduler_specific_kwargs={kwargs!r},")
    lines.append(")")
    lines += _plateau_loop(lang) if not drawable(plan) else _loop(plan.optimizer_steps, lang)
    return "\n".join(lines) + "\n"


def _step_function(plan: Plan) -> Any:
    """The per-step λ (a function or a `functools.partial`) that `schedules.torch_scheduler` hands to LambdaLR."""
    setup = plan.setup
    return schedules.step_function(setup.lr_scheduler_type, warmup_steps=plan.warmup_steps,
                                   total_steps=plan.max_steps, kwargs=setup.scheduler_kwargs,
                                   learning_rate=setup.learning_rate, profile=plan.profile.id)


@lru_cache(maxsize=64)
def torch_snippet(plan: Plan, lang: str = "en") -> str:
    """Python that builds the same schedule with plain torch (`LambdaLR`), from the engine's own per-step function."""
    setup = plan.setup
    header = ["import torch"]
    if not drawable(plan):
        kwargs = setup.scheduler_kwargs
        arguments = "".join(f", {key}={value!r}" for key, value in kwargs.items())
        lines = [*header, "from torch.optim.lr_scheduler import ReduceLROnPlateau", "",
                 *_optimizer_lines(plan, lang), f"scheduler = ReduceLROnPlateau(optimizer{arguments})"]
        return "\n".join(lines + _plateau_loop(lang)) + "\n"
    step = _step_function(plan)
    function = step.func if isinstance(step, partial) else step
    bound = step.keywords if isinstance(step, partial) else {}
    try:
        source = textwrap.dedent(inspect.getsource(function))
    except (OSError, TypeError):  # no source (a frozen build): use the engine itself
        lines = [*header, "from steplab.trainer.schedules import torch_scheduler", "", *_optimizer_lines(plan, lang),
                 f"scheduler = torch_scheduler(optimizer, {setup.lr_scheduler_type!r}, "
                 f"warmup_steps={plan.warmup_steps}, total_steps={plan.max_steps}, "
                 f"kwargs={setup.scheduler_kwargs!r}, profile={plan.profile.id!r})"]
        return "\n".join(lines + _loop(plan.optimizer_steps, lang)) + "\n"
    name = function.__name__.lstrip("_")
    source = source.replace(f"def {function.__name__}(", f"def {name}(", 1)
    imports = ["import math"] if "math." in source else []
    if bound:
        imports.append("from functools import partial")
        arguments = ", ".join(f"{key}={value!r}" for key, value in bound.items())
        factor = f"partial({name}, {arguments})"
    else:
        factor = name
    lines = [*imports, *([""] if imports else []), *header, "from torch.optim.lr_scheduler import LambdaLR", "", "",
             f"# {_COMMENTS['plain'].get(lang)}", source.rstrip(), "", "", *_optimizer_lines(plan, lang),
             f"scheduler = LambdaLR(optimizer, {factor})"]
    return "\n".join(lines + _loop(plan.optimizer_steps, lang)) + "\n"
