"""The lines a Hugging Face Trainer prints while it runs a plan: the tqdm bar, the logging-step dicts, evaluations,
checkpoints and the end-of-training summary, as the selected release writes them.

Learning rates, epochs and event steps come from the engine (`plan.learning_rates`, `geometry`, `events`);
the loss, grad_norm and eval_loss values are made up (a smooth decaying curve with seeded noise): a page must
say they are illustrative. Nothing here walks the run: the lines up to step k are built from the event steps
near k only, so a run of 10^6 steps costs what its last few logged lines cost.

Release differences, read from the releases' own code (transformers `trainer.py`, `trainer_callback.py`):

* `ProgressCallback.on_log` in 4.x prints `str(logs)` with `epoch` rounded to 2 decimals; 5.x prints every
  float as the string `f"{v:.4g}"` (so `'loss': '1.234'`). 4.x rounds the logged loss to 4 decimals, 5.x not.
* 4.46 logs the learning rate after `lr_scheduler.step()`, i.e. the rate of the *next* update
  (`logs["learning_rate"] = self._get_learning_rate()` in `_maybe_log_save_evaluate`); 4.47+ reads it before
  the scheduler steps ("get leaning rate before update"), i.e. the rate the logged update used.
* The summary: `speed_metrics("train", ...)` rounds runtime to 4 and the rates to 3 decimals; 4.x counts
  `state.max_steps` steps, 5.x the steps trained, and the samples are `max_steps × total batch` when
  `max_steps` is given, else `num_examples × num_train_epochs`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from steplab.simulation.logblock import Counts, counts, running_training_block
from steplab.trainer import geometry
from steplab.trainer.events import Events, events
from steplab.trainer.plan import Plan

EVAL_BATCH = 8  # per_device_eval_batch_size's default, for the illustrative eval_steps_per_second
DEFAULT_OUTPUT_DIR = "saves/qwen3-0.6b/lora/sft"


def bar_text(n: int, total: int, elapsed: float) -> str:
    """tqdm's own meter for step n of total after `elapsed` seconds, as the Trainer's progress bar prints it:
    ` 25%|██▍       | 37/150 [00:12<00:36,  3.08it/s]`, and `s/it` when a step takes longer than a second."""
    from tqdm import tqdm  # imported on first use: the pages that never draw a bar do not pay for it

    return tqdm.format_meter(n, total, elapsed)


# --- the values of the lines --------------------------------------------------------------------------------


def logged_epochs(plan: Plan, steps: np.ndarray) -> np.ndarray:
    """`state.epoch` after each update in `steps` (what `Trainer.log` adds as `epoch`)."""
    steps = np.asarray(steps, dtype=np.int64)
    if not len(steps):
        return np.zeros(0)
    return np.asarray(geometry.epochs_and_samples(plan, steps)[0], dtype=float)


def logged_learning_rates(plan: Plan, steps: np.ndarray) -> np.ndarray:
    """The `learning_rate` the release logs at each update in `steps` (4.46: the next update's rate)."""
    steps = np.asarray(steps, dtype=np.int64)
    if not len(steps):
        return np.zeros(0)
    shift = 1 if plan.profile.logs_next_rate else 0
    first, last = int(steps.min()) + shift, int(steps.max()) + shift
    if last - first > 4 * len(steps) + 64:  # far apart: one value each, no array over the whole span
        return np.array([plan.learning_rates(int(s) + shift, int(s) + shift)[0] for s in steps])
    rates = plan.learning_rates(first, last)
    return rates[steps + shift - first]


@dataclass(frozen=True)
class Curve:
    """The illustrative loss: `floor + rise · r^s` per step (r = exp(−1/τ)), plus seeded noise on what is shown."""

    floor: float
    rise: float
    tau: float
    seed: int

    @property
    def ratio(self) -> float:
        return math.exp(-1.0 / self.tau)

    def window_mean(self, start: np.ndarray, end: np.ndarray) -> np.ndarray:
        """The mean per-step loss over updates start+1..end (the Trainer logs the mean since the last log)."""
        start, end = np.asarray(start, dtype=float), np.asarray(end, dtype=float)
        n = np.maximum(end - start, 1)
        r = self.ratio
        geometric = r ** (start + 1) * (1 - r**n) / ((1 - r) * n)
        return self.floor + self.rise * geometric

    def noise(self, steps: np.ndarray, salt: float) -> np.ndarray:
        """A repeatable value in [−1, 1) per step (a hash of the seed and the step, no random state)."""
        x = np.sin(np.asarray(steps, dtype=float) * 12.9898 + (self.seed + salt) * 78.233) * 43758.5453
        return (x - np.floor(x)) * 2 - 1


def illustrative_curve(plan: Plan, seed: int = 0) -> Curve:
    """A made-up loss curve that settles within the run; the seed moves its start and its noise."""
    wobble = ((seed * 2654435761) % 1000) / 1000
    return Curve(floor=0.8 + 0.3 * wobble, rise=1.5 + 0.6 * wobble, tau=max(plan.max_steps / 5, 1.0), seed=seed)


# --- formatting as the release prints ---------------------------------------------------------------------


def _dict_line(plan: Plan, items: list[tuple[str, object]]) -> str:
    """`str(logs)` as the release's `ProgressCallback.on_log` prints it."""
    if plan.profile.floats_4g:
        shown = {k: (f"{v:.4g}" if isinstance(v, float) else v) for k, v in items}
    else:
        shown = {k: (round(v, 2) if k == "epoch" else v) for k, v in items}
    return str(shown)


def _loss_value(plan: Plan, value: float) -> float:
    return value if plan.profile.floats_4g else round(value, 4)


# --- the lines -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Line:
    """One printed line: the update it follows (0: before training), its kind and its text."""

    step: int
    kind: str  # "start", "log", "eval", "save", "summary"
    text: str


KIND_ORDER = {"log": 0, "eval": 1, "save": 2}  # `_maybe_log_save_evaluate`: log, then evaluate, then save


def event_steps_between(plan: Plan, kind: str, low: int, high: int) -> np.ndarray:
    """The steps s with low < s <= high at which `kind` happens (repeats kept), without listing the whole run."""
    ev: Events = events(plan, kind)
    parts: list[np.ndarray] = [np.array([s for s in (*ev.first, *ev.final) if low < s <= high], dtype=np.int64)]
    periodic = ev.periodic(low, high)
    parts.append(np.arange(periodic.start, periodic.stop, periodic.step, dtype=np.int64))
    if ev.by_epoch is not None:
        ends = ev.epoch_end_steps()
        parts.append(ends[(ends > low) & (ends <= high)])
    return np.sort(np.concatenate(parts))


def event_count_upto(plan: Plan, kind: str, high: int) -> int:
    """How many times `kind` happens at steps up to `high` (step 0 included), counted without listing them."""
    ev: Events = events(plan, kind)
    count = sum(1 for s in (*ev.first, *ev.final) if 0 <= s <= high)
    count += len(ev.periodic(0, high))
    if ev.by_epoch is not None:
        count += int(np.count_nonzero(ev.epoch_end_steps() <= high))
    return count


def last_logged_before(plan: Plan, step: int) -> int:
    """The last logging step before `step` (0 when none): where the mean loss of a log line starts."""
    low = max(step - 1, 0)
    span = 64
    while low > 0:
        found = event_steps_between(plan, "log", max(low - span, 0), low)
        if len(found):
            return int(found[-1])
        low, span = max(low - span, 0), span * 4
    return 0


@dataclass(frozen=True)
class RunLog:
    """The simulated console of one run: `seconds_per_step` drives the bar's clock and the summary."""

    plan: Plan
    seconds_per_step: float
    seed: int = 0
    output_dir: str = DEFAULT_OUTPUT_DIR
    eval_seconds: float | None = None  # one evaluation's runtime (default: two training steps)
    eval_samples: int = 64
    counted: Counts | None = None  # the block's and the summary's figures when the plan counts another unit (GRPO)

    @property
    def figures(self) -> Counts:
        return self.counted or counts(self.plan)

    @property
    def total(self) -> int:
        """What the bar counts to: `state.max_steps`."""
        return self.plan.max_steps

    @property
    def steps(self) -> int:
        """The updates really run (the bar stops here)."""
        return self.plan.optimizer_steps

    @property
    def eval_runtime(self) -> float:
        """One evaluation's seconds (default: two training steps)."""
        return max(self.eval_seconds if self.eval_seconds is not None else 2 * self.seconds_per_step, 1e-4)

    def elapsed(self, step: int) -> float:
        """The wall clock after update `step`: its training steps and every evaluation run so far (the Trainer's
        bar and its `train_runtime` count the evaluations' time too)."""
        return step * self.seconds_per_step + event_count_upto(self.plan, "eval", step) * self.eval_runtime

    def bar(self, step: int) -> str:
        return bar_text(step, self.total, self.elapsed(step))

    def start_lines(self) -> list[Line]:
        return [Line(0, "start", text) for text in running_training_block(self.plan, counted=self.counted).splitlines()]

    def _log_lines(self, steps: np.ndarray) -> list[Line]:
        if not len(steps):
            return []
        curve = illustrative_curve(self.plan, self.seed)
        starts = np.array([last_logged_before(self.plan, int(steps[0]))] + steps[:-1].tolist())
        losses = curve.window_mean(starts, steps) * (1 + 0.03 * curve.noise(steps, 1.0))
        grads = 0.35 + 2.0 * curve.ratio ** steps.astype(float) + 0.08 * curve.noise(steps, 2.0)
        rates = logged_learning_rates(self.plan, steps)
        epochs = logged_epochs(self.plan, steps)
        return [Line(int(s), "log", _dict_line(self.plan, [
            ("loss", _loss_value(self.plan, float(loss))), ("grad_norm", float(grad)),
            ("learning_rate", float(rate)), ("epoch", float(epoch))]))
            for s, loss, grad, rate, epoch in zip(steps, losses, grads, rates, epochs, strict=True)]

    def _eval_lines(self, steps: np.ndarray) -> list[Line]:
        if not len(steps):
            return []
        curve = illustrative_curve(self.plan, self.seed)
        runtime = self.eval_runtime
        losses = curve.window_mean(steps - 1, steps) + 0.08 + 0.01 * curve.noise(steps, 3.0)
        epochs = logged_epochs(self.plan, np.maximum(steps, 1)) if steps.max() > 0 else np.zeros(len(steps))
        epochs = np.where(steps > 0, epochs, 0.0)
        batches = math.ceil(self.eval_samples / EVAL_BATCH)
        return [Line(int(s), "eval", _dict_line(self.plan, [
            ("eval_loss", float(loss)), ("eval_runtime", round(runtime, 4)),
            ("eval_samples_per_second", round(self.eval_samples / runtime, 3)),
            ("eval_steps_per_second", round(batches / runtime, 3)), ("epoch", float(epoch))]))
            for s, loss, epoch in zip(steps, losses, epochs, strict=True)]

    def _save_lines(self, steps: np.ndarray) -> list[Line]:
        return [Line(int(s), "save", f"Saving model checkpoint to {self.output_dir}/checkpoint-{int(s)}") for s in steps]

    def lines_between(self, low: int, high: int) -> list[Line]:
        """The lines printed after update `low` up to and including update `high`, in print order (low = −1 takes
        in `eval_on_start`'s evaluation at step 0)."""
        high = min(high, self.steps)
        found = []
        for kind, build in (("log", self._log_lines), ("eval", self._eval_lines), ("save", self._save_lines)):
            found += build(event_steps_between(self.plan, kind, low, high))
        found.sort(key=lambda line: (line.step, KIND_ORDER[line.kind]))
        if high >= self.steps and low < self.steps:
            found.append(self.summary())
        return found

    def lines_upto(self, step: int, tail: int = 30) -> list[Line]:
        """The last `tail` lines printed by the end of update `step` (the start block included when it fits)."""
        step = max(0, min(step, self.steps))
        found: list[Line] = []
        span = max(tail, 16)
        low = step
        while low > -1 and len(found) < tail:
            new_low = max(step - span, -1)
            found = self.lines_between(new_low, low) + found
            low, span = new_low, span * 4
        if low <= -1 and len(found) < tail:
            found = self.start_lines() + found
        return found[-tail:]

    def summary_values(self) -> list[tuple[str, float]]:
        """The end-of-training metrics in the order the release logs them (`total_flos` is not printed)."""
        plan, s, figures = self.plan, self.plan.setup, self.figures
        runtime = max(self.elapsed(self.steps), 1e-4)
        samples = plan.max_steps * figures.total if s.uses_max_steps else figures.examples * s.num_train_epochs
        counted = plan.max_steps
        if plan.profile.floats_4g:
            samples = samples * self.steps / max(plan.max_steps, 1)
            counted = self.steps
        curve = illustrative_curve(plan, self.seed)
        train_loss = float(curve.window_mean(np.array([0]), np.array([max(self.steps, 1)]))[0]) if self.steps else 0.0
        return [("train_runtime", round(runtime, 4)), ("train_samples_per_second", round(samples / runtime, 3)),
                ("train_steps_per_second", round(counted / runtime, 3)), ("train_loss", train_loss),
                ("epoch", float(plan.final_epoch))]

    def summary(self) -> Line:
        return Line(self.steps, "summary", _dict_line(self.plan, self.summary_values()))

    def screen(self, step: int, tail: int = 30) -> str:
        """What the terminal shows after update `step`: the last lines, then the bar."""
        lines = [line.text for line in self.lines_upto(step, tail)]
        return "\n".join([*lines, self.bar(min(max(step, 0), self.steps))])


def next_event(plan: Plan, kind: str, step: int) -> int | None:
    """The first step at or after `step` at which `kind` happens (None when none is left in the run)."""
    low, span = max(step, 0) - 1, 64
    while low < plan.optimizer_steps:
        found = event_steps_between(plan, kind, low, low + span)
        if len(found):
            return int(found[0])
        low, span = low + span, span * 4
    return None


def measured_seconds_per_step(batch_size: int, accumulation: int, figures: dict[str, dict]) -> tuple[str, float]:
    """(name, seconds per optimizer step) of the course measurement with this batch and accumulation, else
    the first one (the course setup's)."""
    chosen = next((name for name, f in figures.items() if f["per_device_train_batch_size"] == batch_size
                   and f["gradient_accumulation_steps"] == accumulation), next(iter(figures)))
    figure = figures[chosen]
    return chosen, figure["seconds"] / figure["steps"]
