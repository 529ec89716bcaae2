"""Why a field differs: the likely causes in order, each with its rule and the lesson that teaches it.

Each cause is a change to the setup StepLab planned (more processes, the accumulation the log printed, the sample
count the log printed, another release, `max_steps`, a resume with more epochs, another warmup). StepLab plans
the changed setup and reconciles again: a cause *reproduces* a difference when that field then agrees and no
field that agreed stops agreeing. Causes that reproduce every difference come first, then those that reproduce
some, each group in the order below; a field nothing reproduces lists the causes that could move it, unverified.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from steplab.errors import InputError, TrainerRefusal
from steplab.i18n import Message, msg
from steplab.runfiles.explanation import Cause, Explanation
from steplab.runfiles.planning import plan_setup, planned_for
from steplab.runfiles.reconcile import reconcile
from steplab.runfiles.resume import earlier_plan
from steplab.runfiles.warmup import read_warmup
from steplab.trainer.profiles import PROFILES

ORDER = ("resume", "rows_dropped", "packing", "val_size", "max_samples", "processes", "accumulation", "batch",
         "grpo", "epochs", "release", "max_steps", "warmup")
"""The order causes are named in when several reproduce a difference alike."""

MAX_PROCESSES = 64
MAX_EPOCHS = 200
MOVES = {  # the causes that can move each field, for a field nothing reproduces
    "num_examples": ("rows_dropped", "packing", "val_size", "max_samples"),
    "eval_examples": ("val_size", "rows_dropped"),
    "epochs_skipped": ("accumulation", "release"),
    "batches_skipped": ("accumulation", "release"),
    "num_epochs": ("epochs", "max_steps", "resume"),
    "update_steps_per_epoch": ("rows_dropped", "processes", "accumulation", "batch", "grpo", "release"),
    "total_train_batch_size": ("processes", "accumulation", "batch"),
    "gradient_accumulation_steps": ("accumulation",),
    "per_device_train_batch_size": ("batch",),
    "total_optimization_steps": ("rows_dropped", "packing", "val_size", "processes", "grpo", "release", "max_steps",
                                 "resume"),
    "steps_run": ("max_steps", "resume", "release"),
    "final_epoch": ("max_steps", "release", "resume"),
    "learning_rates": ("resume", "release", "warmup", "max_steps"),
    "warmup_steps": ("release", "warmup"),
    "epochs_logged": ("resume", "processes", "accumulation", "release"),
    "logging_steps": ("resume", "release"),
    "eval_steps": ("resume", "release"),
    "save_steps": ("resume", "release"),
}


Hypothesis = tuple[str, dict[str, Any], Message]


def _run(ex: Explanation, name: str) -> Any:
    found = ex.observed.counts.get(name)
    return None if found is None else found.value


def _first_plan(ex: Explanation, field: str, values: range, target: str, wanted: Any) -> Any:
    """The first value of `field` whose plan has `target` (a plan attribute) equal to `wanted`."""
    for value in values:
        try:
            plan = plan_setup(ex.setup, ex.planning.profile.value, **{field: value})
        except (InputError, TrainerRefusal):
            continue
        if getattr(plan, target) == wanted:
            return value
    return None


def _hypotheses(ex: Explanation) -> Iterator[Hypothesis]:
    """Every change worth trying, with the sentence that names it."""
    plan = ex.planning.planned.plan
    setup = plan.setup
    total_run = _run(ex, "total_optimization_steps")
    steps_differ = total_run is not None and total_run != plan.max_steps
    if ex.observed.resumed_step is not None and steps_differ:
        epochs = _first_plan(ex, "num_train_epochs", range(1, MAX_EPOCHS + 1), "max_steps", total_run)
        if epochs is not None:
            yield "resume", {"num_train_epochs": epochs}, msg(
                "runfiles.cause.resume", epochs=epochs, steps=total_run, ours=setup.num_train_epochs,
                step=ex.observed.resumed_step)
    examples = _run(ex, "num_examples")
    if examples is not None and examples != setup.num_samples and not ex.setup.streaming:
        yield _rows_cause(ex), {"num_samples": examples}, msg(
            f"runfiles.cause.{_rows_cause(ex)}", run=examples, ours=setup.num_samples,
            difference=abs(setup.num_samples - examples))
    yield from _processes(ex, total_run, steps_differ)
    for name, code in (("gradient_accumulation_steps", "accumulation"), ("per_device_train_batch_size", "batch")):
        run = _run(ex, name)
        if run is not None and run != getattr(setup, name):
            yield code, {name: run}, msg(f"runfiles.cause.{code}", run=run, ours=getattr(setup, name))
    yield from _grpo(ex, total_run, steps_differ)
    epochs_run = _run(ex, "num_epochs")
    if ex.observed.resumed_step is None and epochs_run is not None and epochs_run != plan.epochs_loop \
            and not ex.setup.streaming and epochs_run < 10**6:
        yield "epochs", {"num_train_epochs": epochs_run}, msg("runfiles.cause.epochs", run=epochs_run,
                                                              ours=setup.num_train_epochs)
    for profile in PROFILES:
        if profile != setup.trainer and PROFILES[profile].framework == "transformers":
            yield "release", {"trainer": profile}, msg("runfiles.cause.release", profile=profile,
                                                       releases=PROFILES[profile].releases, ours=setup.trainer)
    if steps_differ:
        yield "max_steps", {"max_steps": total_run}, msg("runfiles.cause.max_steps", run=total_run,
                                                         ours=plan.max_steps)
    rows = ex.reconciliation.rows
    if rows is not None and ex.setup.schedule_known:
        warmup = read_warmup(rows, ex.planning.planned)
        if warmup is not None and warmup != plan.warmup_steps:
            yield "warmup", {"warmup_steps": warmup, "warmup_ratio": None}, msg(
                "runfiles.cause.warmup", run=warmup, ours=plan.warmup_steps)


GRPO_TRIALS = (("num_iterations", range(1, 9)), ("steps_per_generation", range(1, 33)),
               ("num_generations", range(2, 65)))


def _grpo(ex: Explanation, total_run: int | None, steps_differ: bool) -> Iterator[Hypothesis]:
    """A GRPO run's own sizes: the first μ, S (then Gb follows) or G that gives the run's total."""
    grpo = ex.planning.planned.grpo
    if grpo is None or not steps_differ or total_run is None:
        return
    for name, values in GRPO_TRIALS:
        ours = getattr(grpo.setup, name) if name != "steps_per_generation" else grpo.steps_per_generation
        changes: dict[str, Any] = {"generation_batch_size": None} if name == "steps_per_generation" else {}
        for value in values:
            if value == ours:
                continue
            try:
                plan = plan_setup(ex.setup, ex.planning.profile.value, **changes, **{name: value})
            except (InputError, TrainerRefusal):
                continue
            if plan.max_steps == total_run:
                yield "grpo", {**changes, name: value}, msg("runfiles.cause.grpo", field=name, run=value, ours=ours,
                                                             steps=total_run)
                break


def _rows_cause(ex: Explanation) -> str:
    """What most likely changed the sample count, by the YAML: packing, a validation split, `max_samples`, else
    rows the data pipeline dropped."""
    document = ex.setup.config.document if ex.setup.config else {}
    if document.get("packing") or document.get("neat_packing") or document.get("stage") == "pt":
        return "packing"
    if document.get("val_size"):
        return "val_size"
    if document.get("max_samples"):
        return "max_samples"
    return "rows_dropped"


def _processes(ex: Explanation, total_run: int | None, steps_differ: bool) -> Iterator[Hypothesis]:
    plan = ex.planning.planned.plan
    setup = plan.setup
    batch_run = _run(ex, "total_train_batch_size")
    per_step = setup.per_device_train_batch_size * setup.gradient_accumulation_steps
    processes = None
    if batch_run is not None and batch_run % per_step == 0 and batch_run // per_step != setup.world_size:
        processes = batch_run // per_step
    elif steps_differ and total_run is not None:
        processes = _first_plan(ex, "world_size", range(2, MAX_PROCESSES + 1), "max_steps", total_run)
    if processes:
        yield "processes", {"world_size": processes}, msg(
            "runfiles.cause.processes", processes=processes, ours=setup.world_size,
            batch=setup.per_device_train_batch_size, accumulation=setup.gradient_accumulation_steps,
            total=per_step * processes)


def _replanned(ex: Explanation, changes: dict[str, Any]) -> dict[str, bool | None] | None:
    """Each check's agreement with the setup changed (None when it cannot be planned)."""
    profile = changes.pop("trainer", ex.planning.profile.value)
    planned = ex.planning.planned
    try:
        trial = planned_for(ex.setup, profile, planned.resumed_step, **changes)
    except (InputError, TrainerRefusal):
        return None
    earlier = earlier_plan(trial.plan, ex.observed.rows, planned.resumed_step,
                           ex.files.checkpoint_states.get(planned.resumed_step or -1), ex.setup.schedule_known)
    trial = replace(trial, streaming=planned.streaming, earlier=earlier.plan if earlier else None)
    return {check.name: check.agree for check in reconcile(ex.observed, trial, ex.setup).checks}


def attach_causes(ex: Explanation) -> None:
    """Give every disagreeing check its likely causes (`Check.why`) and keep them on the explanation."""
    checks = ex.reconciliation.checks
    wrong = {check.name for check in checks if check.agree is False}
    if not wrong:
        return
    before = {check.name: check.agree for check in checks}
    found: list[Cause] = []
    for code, changes, message in _hypotheses(ex):
        after = _replanned(ex, dict(changes))
        if after is None:
            continue
        fixes = frozenset(name for name in wrong if after.get(name) is True)
        broken = any(before[name] is True and after.get(name) is False for name in before)
        if fixes and not broken:
            found.append(Cause(code, message, True, fixes))
    found.sort(key=lambda cause: (-(cause.fixes == wrong), -len(cause.fixes), ORDER.index(cause.code)))
    ex.causes = found
    grpo = ex.planning.planned.grpo is not None
    ex.reconciliation.checks = [_with_causes(check, found, grpo) for check in checks]


def _with_causes(check: Any, found: list[Cause], grpo: bool) -> Any:
    if check.agree is not False:
        return check
    causes = [cause for cause in found if check.name in cause.fixes]
    if not causes:
        causes = [Cause(code, msg(f"runfiles.cause.{code}.unverified"), False) for code in MOVES.get(check.name, ())
                  if code != "grpo" or grpo]
    return replace(check, why=tuple(causes))

