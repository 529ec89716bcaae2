"""Your run against StepLab's plan, field by field: the training block's counts, the steps run, the final epoch,
warmup, the steps that logged, evaluated and saved, and the epoch and learning rate of every logged row.

A resumed run is compared in two parts: rows up to its checkpoint were logged by the run that wrote the checkpoint
(`earlier`, the plan it had), rows after it by this run's plan. Values printed with fewer digits (a console) are
compared at the precision they were printed with; values from `trainer_state.json` or `trainer_log.jsonl` exactly
(to float precision).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from steplab.i18n import Message, msg
from steplab.runfiles.observed import Observed
from steplab.runfiles.planned import Planned, last_earlier_step
from steplab.runfiles.precision import close
from steplab.runfiles.reconstruct import Reconstructed
from steplab.runfiles.rows import Rows
from steplab.runfiles.sources import Found, Source
from steplab.runfiles.warmup import read_warmup
from steplab.simulation.run_log import logged_epochs, logged_learning_rates
from steplab.trainer.events import events
from steplab.trainer.plan import Plan

COUNT_FIELDS = ("num_examples", "num_epochs", "update_steps_per_epoch", "per_device_train_batch_size",
                "total_train_batch_size", "gradient_accumulation_steps", "total_optimization_steps", "steps_run",
                "final_epoch")
ECHOED = {"num_examples": "num_samples", "per_device_train_batch_size": "per_device_train_batch_size",
          "gradient_accumulation_steps": "gradient_accumulation_steps", "num_epochs": "num_train_epochs"}
"""Run fields StepLab echoes from a setup value: no check when that value was read from the run itself."""


@dataclass(frozen=True)
class Check:
    """One row of the table: the run's value (and where it was read), StepLab's, whether they agree (None: not
    compared), and a sentence on how StepLab got its value or where they part."""

    name: str
    run: Any
    steplab: Any
    agree: bool | None
    source: Source | None = None
    note: Message | None = None
    why: tuple[Any, ...] = ()  # causes (`causes.Cause`), filled in for a check that disagrees


def steplab_counts(planned: Planned) -> dict[str, Any]:
    """StepLab's value of every count field."""
    plan = planned.plan
    setup = plan.setup
    total = plan.total_train_batch_size
    final = planned.after.final_epoch if planned.after is not None else plan.final_epoch
    if planned.resumed_step is not None and planned.steps_run <= planned.resumed_step:
        # nothing left to train: the state keeps the epoch the checkpoint saved
        final = float(logged_epochs(planned.earlier or plan, [planned.resumed_step])[0])
    grpo = planned.grpo
    if grpo is not None:  # the Trainer's plan runs over GRPO's micro-batches: the run's own sizes are GRPO's
        setup = grpo.setup
        total = grpo.completions_per_update
    return {
        "num_examples": grpo.num_examples if grpo is not None else setup.num_samples
        if plan.micro_batches_per_epoch and not planned.streaming else total * plan.max_steps,
        "num_epochs": sys.maxsize if planned.streaming else plan.epochs_loop,
        "update_steps_per_epoch": plan.num_update_steps_per_epoch,
        "per_device_train_batch_size": setup.per_device_train_batch_size,
        "total_train_batch_size": total,
        "gradient_accumulation_steps": setup.gradient_accumulation_steps,
        "total_optimization_steps": plan.max_steps,
        "steps_run": planned.steps_run,
        "final_epoch": final,
    }


def _from_run(rec: Reconstructed, name: str, observed: Observed) -> bool:
    """StepLab's value of an echoed field was itself read from the run."""
    setup_name = ECHOED.get(name)
    if setup_name is None or setup_name not in rec.values:
        return False
    source = rec.values[setup_name].source
    return source.file not in (rec.config_path, "StepLab")


def count_checks(observed: Observed, planned: Planned, rec: Reconstructed) -> list[Check]:
    """The training block's counts, the steps run and the final epoch."""
    ours = steplab_counts(planned)
    checks = []
    for name in COUNT_FIELDS:
        run = observed.counts.get(name)
        if run is None:
            if name in ("num_examples", "total_optimization_steps", "steps_run", "final_epoch"):
                checks.append(Check(name, None, _plain(ours[name]), None))
            continue
        if _from_run(rec, name, observed):
            agree = None
        elif name == "final_epoch":  # a console prints it rounded: 4 significant digits (5.x) or 2 decimals (4.x)
            printed = run.source.line is not None
            agree = bool(close(run.value, ours[name], decimals=2 if printed else None, digits=None))
        else:
            agree = run.value == ours[name]
        checks.append(Check(name, _plain(run.value), _plain(ours[name]), agree, run.source))
    return checks


def _plain(value: Any) -> Any:
    """numpy scalars as Python numbers (the JSON and the page take plain values)."""
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return value


# --------------------------------------------------------------------------- logged rows


def placed_rows(observed: Observed, planned: Planned) -> Rows | None:
    """The run's rows with their steps: a console's dicts are placed, in order, on the steps StepLab's plan logs and
    evaluates at (after the checkpoint for a resumed run); None when their number does not fit."""
    rows = observed.rows
    if rows is None or observed.rows_have_steps:
        return rows
    after = planned.resumed_step or 0
    steps = np.full(len(rows), -1, dtype=np.int64)
    for column, kind in (("loss", "log"), ("eval_loss", "eval")):
        mask = rows.has(column) if column == "eval_loss" else rows.has(column) & ~rows.has("eval_loss")
        planned_steps = [s for s in events(planned.plan, kind).steps() if s > after]
        sets = _evaluation_sets(rows) if kind == "eval" else 1  # each evaluation logs one row per set
        if mask.sum() != sets * len(planned_steps):
            return None
        steps[mask] = np.repeat(np.asarray(planned_steps, dtype=np.int64), sets)
    if (steps < 0).any():
        return None
    return rows.with_steps(steps)


def _evaluation_sets(rows: Rows) -> int:
    """How many evaluation sets a run's rows name (`eval_<name>_loss`; one when they log `eval_loss`)."""
    return max(1, sum(1 for key in rows.keys if key.startswith("eval_") and key.endswith("_loss")
                      and key != "eval_loss"))


def _plan_of(step_mask_earlier: np.ndarray, planned: Planned) -> list[tuple[np.ndarray, Plan]]:
    parts = [(~step_mask_earlier, planned.plan)]
    if planned.earlier is not None and step_mask_earlier.any():
        parts.append((step_mask_earlier, planned.earlier))
    return parts


def _earlier_mask(steps: np.ndarray, planned: Planned, column: str) -> np.ndarray:
    last = last_earlier_step(planned, column)
    return np.zeros(len(steps), dtype=bool) if last is None else steps <= last


@dataclass(frozen=True)
class RowComparison:
    """One logged quantity at every row: how many rows were compared, how many agree, the first that does not."""

    compared: int
    agreed: int
    first: tuple[int, float, float] | None  # (step, run, StepLab)
    skipped: int = 0  # rows before a checkpoint whose earlier plan StepLab could not reconstruct


def compare_rows(rows: Rows, planned: Planned, column: str) -> RowComparison:
    """The logged `column` ("epoch" or "learning_rate") against the plan's value at each row's step."""
    mask = np.ones(len(rows), dtype=bool) if column == "epoch" else rows.has(column)
    mask &= rows.steps >= 1
    steps = rows.steps[mask]
    run = (rows.epochs if column == "epoch" else rows.column(column))[mask]
    earlier = _earlier_mask(steps, planned, column)
    ours = np.full(len(steps), np.nan)
    for part, plan in _plan_of(earlier, planned):
        if part.any():
            values = logged_epochs if column == "epoch" else logged_learning_rates
            ours[part] = values(plan, steps[part])
    if column == "epoch" and planned.after is not None:
        later = steps > planned.after.start
        ours[later] = planned.after.epochs(steps[later])
    digits = rows.digits
    decimals = rows.epoch_decimals if column == "epoch" else None
    compared = ~np.isnan(ours)
    ok = close(run[compared], ours[compared], digits, decimals)
    first = None
    if not ok.all():
        index = int(np.flatnonzero(~ok)[0])
        first = (int(steps[compared][index]), float(run[compared][index]), float(ours[compared][index]))
    return RowComparison(int(compared.sum()), int(ok.sum()), first, int((~compared).sum()))


def _steps_check(name: str, run: list[int], ours: list[int], source: Source | None) -> Check:
    return Check(name, run, ours, run == ours, source)


def event_checks(observed: Observed, planned: Planned, rows: Rows | None, rec: Reconstructed) -> list[Check]:
    """The steps that logged a loss, evaluated and saved a checkpoint, against the plan's events."""
    after = planned.resumed_step
    checks = []

    def ours(kind: str, earlier_too: bool) -> list[int]:
        last = planned.steps_run
        new = [s for s in events(planned.plan, kind).steps() if (after is None or s > after) and s <= last]
        if after is None or not earlier_too:
            return new
        base = planned.earlier or planned.plan
        return [s for s in events(base, kind).steps() if s <= after] + new

    if rows is not None:
        source = Source(rows.file)
        train = [int(s) for s in rows.steps[rows.has("loss") & (rows.steps >= 0)]]
        checks.append(_steps_check("logging_steps", train, ours("log", bool(train) and train[0] <= (after or 0)),
                                   source))
        # several evaluation sets log a row each at the same step: the steps that evaluated, once each
        evals = list(dict.fromkeys(int(s) for s in rows.steps[rows.has("eval_loss") & (rows.steps >= 0)]))
        if evals or planned.plan.setup.eval_strategy != "no":
            checks.append(_steps_check("eval_steps", evals, ours("eval", bool(evals) and evals[0] <= (after or 0)),
                                       source))
    if observed.saves:
        saved = [int(f.value) for f in observed.saves if after is None or f.value > after]
        planned_saves = ours("save", False)
        limit = rec.config.document.get("save_total_limit") if rec.config else None
        if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0 and not _console_saves(observed):
            agree = set(saved) <= set(planned_saves) and saved[-limit:] == planned_saves[-limit:]
            checks.append(Check("save_steps", saved, planned_saves, agree, observed.saves[0].source,
                                msg("runfiles.note.save_total_limit", limit=limit)))
        else:
            checks.append(_steps_check("save_steps", saved, planned_saves, observed.saves[0].source))
    return checks


def _console_saves(observed: Observed) -> bool:
    return bool(observed.saves) and observed.saves[0].source.line is not None


def row_checks(rows: Rows | None, planned: Planned, rec: Reconstructed) -> list[Check]:
    """The epoch at every logged row, and the learning rate (when the YAML says the schedule)."""
    if rows is None or not len(rows):
        return []
    checks = []
    for column, name in (("epoch", "epochs_logged"), ("learning_rate", "learning_rates")):
        if column == "learning_rate" and not rec.schedule_known:
            count = int(rows.has("learning_rate").sum())
            checks.append(Check(name, count, None, None, Source(rows.file), msg("runfiles.note.schedule_unknown")))
            continue
        found = compare_rows(rows, planned, column)
        if not found.compared:
            continue
        note = None
        if found.first is not None:
            step, run, ours = found.first
            note = msg("runfiles.note.first_difference", step=step, run=run, steplab=ours)
        elif found.skipped:
            note = msg("runfiles.note.earlier_rows_skipped", rows=found.skipped, count=found.skipped)
        checks.append(Check(name, found.compared, found.agreed, found.first is None, Source(rows.file), note))
    return checks


def warmup_check(rows: Rows | None, planned: Planned, rec: Reconstructed, rates_agree: bool | None) -> Check | None:
    """Warmup steps: StepLab's, and the run's as its logged learning rates show (see `warmup.read_warmup`)."""
    if rows is None or not rec.schedule_known or not rows.has("learning_rate").any():
        return None
    plan = planned.plan
    if rates_agree:
        return Check("warmup_steps", plan.warmup_steps, plan.warmup_steps, True, Source(rows.file),
                     msg("runfiles.note.warmup_from_rates"))
    run = read_warmup(rows, planned)
    return Check("warmup_steps", run, plan.warmup_steps, None if run is None else run == plan.warmup_steps,
                 Source(rows.file), msg("runfiles.note.warmup_from_rates" if run is not None
                                        else "runfiles.note.warmup_unread"))


def resume_checks(observed: Observed, planned: Planned) -> list[Check]:
    """Where a resumed run started again: the epochs and micro-batches it skipped, against the Trainer's rule
    (`global_step // U` epochs, then `(global_step % U) × accumulation` micro-batches)."""
    step = planned.resumed_step
    if step is None:
        return []
    plan = planned.plan
    per_epoch = plan.num_update_steps_per_epoch
    ours = {"epochs_skipped": step // per_epoch if per_epoch else 0,
            "batches_skipped": (step % per_epoch) * plan.setup.gradient_accumulation_steps if per_epoch else 0}
    checks = []
    for name, value in ours.items():
        run: Found | None = observed.resume.get(name)
        if run is not None:
            checks.append(Check(name, run.value, value, run.value == value, run.source))
    return checks


def grpo_checks(planned: Planned) -> list[Check]:
    """A GRPO run's generation rounds: StepLab's count (one every S·μ micro-batches of the run); no file of a run
    logs them, so they stand on the counts above (the updates and their micro-batches), which are compared."""
    grpo = planned.grpo
    if grpo is None:
        return []
    return [Check("generation_rounds", None, grpo.generation_rounds, None, None,
                  msg("runfiles.note.generation_rounds", rounds=grpo.generation_rounds,
                      micro_batches=grpo.micro_batches_run, per_round=grpo.micro_batches_per_round))]


@dataclass
class Reconciliation:
    """Every check, in the table's order."""

    checks: list[Check] = field(default_factory=list)
    rows: Rows | None = None  # the rows compared, with their steps

    def by_name(self) -> dict[str, Check]:
        return {check.name: check for check in self.checks}

    @property
    def disagreements(self) -> list[Check]:
        return [check for check in self.checks if check.agree is False]


def reconcile(observed: Observed, planned: Planned, rec: Reconstructed) -> Reconciliation:
    """The whole table."""
    rows = placed_rows(observed, planned)
    checks = count_checks(observed, planned, rec)
    eval_examples = observed.counts.get("eval_examples")
    if rec.funnel is not None and rec.funnel.eval_examples is not None:  # StepLab counts it only from datasets
        ours = rec.funnel.eval_examples
        run = eval_examples.value if eval_examples else None
        checks.append(Check("eval_examples", run, ours, None if run is None else run == ours,
                            eval_examples.source if eval_examples else None))
    checks += resume_checks(observed, planned)
    checks += grpo_checks(planned)
    checks += event_checks(observed, planned, rows, rec)
    rate_rows = row_checks(rows, planned, rec)
    rates = next((c for c in rate_rows if c.name == "learning_rates"), None)
    warmup = warmup_check(rows, planned, rec, rates.agree if rates else None)
    checks += ([warmup] if warmup else []) + rate_rows
    return Reconciliation(checks, rows)


def run_only(observed: Observed) -> Reconciliation:
    """The run's own values, when StepLab has no plan to hold them against (nothing compared)."""
    checks = [Check(name, _plain(found.value), None, None, found.source) for name, found in observed.counts.items()]
    rows = observed.rows if observed.rows_have_steps else None
    if rows is not None:
        for column, name in (("loss", "logging_steps"), ("eval_loss", "eval_steps")):
            steps = [int(s) for s in rows.steps[rows.has(column)]]
            if steps:
                checks.append(Check(name, steps, None, None, Source(rows.file)))
    if observed.saves:
        checks.append(Check("save_steps", [int(f.value) for f in observed.saves], None, None, observed.saves[0].source))
    return Reconciliation(checks, rows)
