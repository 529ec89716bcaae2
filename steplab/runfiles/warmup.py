"""The warmup a run really had, read from its logged learning rates.

Every warmup StepLab's schedules know rises linearly: the update after k finished updates uses
`learning_rate × k / W` while k < W. A row logged inside the warmup therefore gives W directly; otherwise each
warmup up to the first logged step is tried. A value counts only when StepLab's schedule with that warmup
reproduces every logged rate after the checkpoint (at the precision they were logged with).
"""

from __future__ import annotations

import numpy as np

from steplab.errors import InputError, TrainerRefusal
from steplab.runfiles.planned import Planned, last_earlier_step
from steplab.runfiles.precision import close
from steplab.runfiles.rows import Rows
from steplab.simulation.run_log import logged_learning_rates
from steplab.trainer.plan import Plan, make_plan

MAX_TRIED = 2_000  # warmups tried one by one when no row falls inside the warmup
PROBE_ROWS = 64  # rows a candidate must reproduce before all rows are checked


def _with_warmup(plan: Plan, warmup: int) -> Plan | None:
    try:
        return make_plan(plan.setup.replace(warmup_steps=warmup, warmup_ratio=None))
    except (InputError, TrainerRefusal):
        return None


def _reproduces(plan: Plan | None, steps: np.ndarray, rates: np.ndarray, digits: int | None) -> bool:
    if plan is None:
        return False
    ours = logged_learning_rates(plan, steps)
    return bool(close(rates, ours, digits).all())


def _estimates(steps: np.ndarray, rates: np.ndarray, peak: float, shift: int) -> list[int]:
    """W from the rows before the highest logged rate (inside the warmup): W = k × peak / rate."""
    if peak <= 0:
        return []
    top = int(np.argmax(rates))
    found = []
    for step, rate in zip(steps[:top], rates[:top], strict=True):
        done = int(step) - 1 + shift
        if rate > 0 and done > 0:
            found.append(round(done * peak / rate))
    return list(dict.fromkeys(found))


def read_warmup(rows: Rows, planned: Planned) -> int | None:
    """The run's warmup steps, or None when no warmup of StepLab's schedule reproduces its logged rates."""
    plan = planned.plan
    mask = rows.has("learning_rate") & (rows.steps >= 1)
    earlier = last_earlier_step(planned, "learning_rate")
    if earlier is not None:
        mask &= rows.steps > earlier
    steps, rates = rows.steps[mask], rows.column("learning_rate")[mask]
    if not len(steps):
        return None
    shift = 1 if plan.profile.logs_next_rate else 0
    probe = slice(0, PROBE_ROWS)
    candidates = _estimates(steps, rates, plan.setup.learning_rate, shift)
    candidates += [w for w in range(0, min(int(steps[0]) + 1, MAX_TRIED)) if w not in candidates]
    for warmup in candidates:
        candidate = _with_warmup(plan, warmup)
        if _reproduces(candidate, steps[probe], rates[probe], rows.digits) and _reproduces(
                candidate, steps, rates, rows.digits):
            return warmup
    return None
