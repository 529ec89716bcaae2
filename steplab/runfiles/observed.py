"""What the run itself reports, each value with the file and line it was read from: the counts of its training
block, the steps it ran, its final epoch, its logged rows, its checkpoints and where it resumed."""

from __future__ import annotations

from dataclasses import dataclass, field

from steplab.runfiles.read import RunFiles
from steplab.runfiles.rows import Rows, number
from steplab.runfiles.sources import Found, Source

BLOCK_FIELDS = ("num_examples", "num_epochs", "update_steps_per_epoch", "per_device_train_batch_size",
                "total_train_batch_size", "gradient_accumulation_steps", "total_optimization_steps")


@dataclass
class Observed:
    """The run's side of the reconciliation."""

    counts: dict[str, Found] = field(default_factory=dict)
    rows: Rows | None = None  # the most complete logged rows: trainer_state.json > trainer_log.jsonl > console
    saves: list[Found] = field(default_factory=list)
    resume: dict[str, Found] = field(default_factory=dict)  # resumed_step, epochs_skipped, batches_skipped, checkpoint
    train_loss: Found | None = None

    @property
    def resumed_step(self) -> int | None:
        found = self.resume.get("resumed_step")
        return None if found is None else found.value

    @property
    def rows_have_steps(self) -> bool:
        return self.rows is not None and bool(len(self.rows)) and bool((self.rows.steps >= 0).all())


def _first(*found: Found | None) -> Found | None:
    return next((f for f in found if f is not None and f.value is not None), None)


def _rows(files: RunFiles) -> Rows | None:
    if files.state is not None and len(files.state.rows):
        return files.state.rows
    if files.trainer_log is not None and len(files.trainer_log.rows):
        return files.trainer_log.rows
    if files.console is not None and (files.console.train or files.console.eval_dicts):
        return files.console.rows
    return None


def _saves(files: RunFiles) -> list[Found]:
    """Checkpoint steps: those the console says it saved, else the `checkpoint-N` folders given."""
    if files.console is not None and files.console.saves:
        return list(files.console.saves)
    return [Found(step, Source(path)) for step, path in sorted(files.checkpoint_folders.items())]


def _resume(files: RunFiles) -> dict[str, Found]:
    """Where the run resumed: the console's resume lines; without a console, LLaMA-Factory's log starting later
    than the state's history (its first row follows the checkpoint)."""
    if files.console is not None and files.console.resumed:
        return dict(files.console.resume)
    log, state = files.trainer_log, files.state
    if log is None or state is None or not len(log.rows) or not len(state.rows):
        return {}
    first_new = int(log.rows.steps[0])
    earlier = state.rows.steps[(state.rows.steps < first_new) & (state.rows.steps >= 0)]
    if len(earlier) and first_new > int(state.rows.steps.min()):
        return {"resumed_step": Found(int(earlier.max()), Source(log.path, int(log.rows.lines[0]), "inferred"))}
    return {}


def observe(files: RunFiles) -> Observed:
    """The run's values, from the most direct file that states each."""
    console, state, log = files.console, files.state, files.trainer_log
    block = console.block if console else {}
    found = Observed()
    for name in BLOCK_FIELDS:
        if name in block:
            found.counts[name] = block[name]
    state_field = state.fields.get if state else (lambda _name: None)
    if "per_device_train_batch_size" not in found.counts and state_field("train_batch_size") is not None:
        found.counts["per_device_train_batch_size"] = state_field("train_batch_size")
    total = _first(block.get("total_optimization_steps"), state_field("max_steps"),
                   Found(log.total_steps[-1][0], Source(log.path, log.total_steps[-1][1])) if log and log.total_steps
                   else None)
    if total is not None:
        found.counts["total_optimization_steps"] = total
    if "num_epochs" not in found.counts and state_field("num_train_epochs") is not None:
        found.counts["num_epochs"] = state_field("num_train_epochs")
    last_log = None
    if log is not None and len(log.rows):
        last_log = Found(int(log.rows.steps[-1]), Source(log.path, int(log.rows.lines[-1])))
    bar = console.bar if console else None
    if bar is not None and console.resumed and bar.value < console.resume["resumed_step"].value:
        bar = console.resume["resumed_step"]  # nothing trained after the checkpoint: the bar never moved
    steps_run = _first(state_field("global_step"), bar, last_log)
    if steps_run is not None:
        found.counts["steps_run"] = steps_run
    results = files.results.get("all_results.json") or files.results.get("train_results.json")
    result_epoch = Found(results.values["epoch"], Source(results.path, key="epoch")) \
        if results and "epoch" in results.values else None
    summary = console.summary if console is not None else None
    summary_epoch = Found(number(summary[0].get("epoch")), Source(console.path, summary[1])) \
        if summary is not None and number(summary[0].get("epoch")) == number(summary[0].get("epoch")) else None
    epoch = _first(state_field("epoch"), result_epoch, summary_epoch)
    if epoch is not None:
        found.counts["final_epoch"] = epoch
    if console is not None and console.eval_examples is not None:
        found.counts["eval_examples"] = console.eval_examples
    found.counts = {k: v for k, v in found.counts.items() if v is not None}
    found.rows = _rows(files)
    found.saves = _saves(files)
    found.resume = _resume(files)
    found.train_loss = _train_loss(files)
    return found


def _train_loss(files: RunFiles) -> Found | None:
    for name in ("all_results.json", "train_results.json"):
        results = files.results.get(name)
        if results and "train_loss" in results.values:
            return Found(results.values["train_loss"], Source(results.path, key="train_loss"))
    if files.state is not None and "train_loss" in files.state.summary:
        return Found(files.state.summary["train_loss"], Source(files.state.path, key="train_loss"))
    summary = files.console.summary if files.console is not None else None
    if summary is not None and number(summary[0].get("train_loss")) == number(summary[0].get("train_loss")):
        return Found(number(summary[0]["train_loss"]), Source(files.console.path, summary[1]))
    return None
