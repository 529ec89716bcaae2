"""The run's setup put back together from its files, each value with its source, every disagreement kept.

StepLab plans with the config's values where the YAML states them (what the user meant), the dataset stage's count
when the YAML's datasets can be counted, the processes the log implies (never assumed when the log says), and
the run's own values where there is no YAML. A resumed run keeps its checkpoint's logging, evaluation and save
intervals whatever the new YAML says (every release: `TrainerState.load_from_json` replaces the state that
`DefaultFlowCallback` reads), so those come from the saved state.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from steplab.dataset.funnel import Funnel
from steplab.errors import InputError
from steplab.i18n import Message, msg, whole
from steplab.io.config_read import ConfigImport, read_config
from steplab.io.safe_yaml import decode, load
from steplab.runfiles.console import Console
from steplab.runfiles.read import RunFiles
from steplab.runfiles.rows import number
from steplab.runfiles.sources import Found, Source
from steplab.runfiles.trainer_class import trainer_class
from steplab.trainer.fields import FIELDS, TRL_FIELD_NAMES
from steplab.trainer.setup import DEFAULTS, check_field
from steplab.trl.settings import CONFIG_DEFAULTS

STEPLAB = "StepLab"
INTERVALS = ("logging_steps", "eval_steps", "save_steps")
SCHEDULE = ("learning_rate", "lr_scheduler_type", "lr_scheduler_kwargs", "warmup_steps", "warmup_ratio")


@dataclass
class Reconstructed:
    """What StepLab plans with (`values`, each with its source), every value any file states (`seen`), and what
    came with it: the config read, the dataset stage's funnel, streaming, the schedule being known."""

    values: dict[str, Found] = field(default_factory=dict)
    seen: dict[str, list[Found]] = field(default_factory=dict)
    config: ConfigImport | None = None
    config_path: str | None = None
    funnel: Funnel | None = None
    streaming: bool = False
    schedule_known: bool = False
    notes: list[Message] = field(default_factory=list)

    def see(self, name: str, found: Found | None) -> None:
        if found is not None and found.value is not None:
            self.seen.setdefault(name, []).append(found)

    def use(self, name: str, found: Found | None) -> None:
        if found is not None and found.value is not None:
            self.values[name] = found

    def value(self, name: str, default: Any = None) -> Any:
        found = self.values.get(name)
        return default if found is None else found.value

    def conflicts(self) -> dict[str, list[Found]]:
        """Fields for which the files state more than one value: every value with its source."""
        return {name: found for name, found in self.seen.items()
                if len({_comparable(f.value) for f in found if not _ratio(name, f.value)}) > 1}

    def setup_values(self) -> dict[str, Any]:
        """The values `setup_from_mapping` takes (the plan's setup)."""
        return {name: found.value for name, found in self.values.items() if name in FIELDS}


def _ratio(name: str, value: Any) -> bool:
    """An interval below 1: a share of `max_steps` that the Trainer turns into steps (rounded up) before it saves
    it, so the saved state's whole number is the same setting (`patterns` says what it became)."""
    return name in INTERVALS and isinstance(value, int | float) and 0 < value < 1


def _comparable(value: Any) -> Any:
    """A value as a set holds it: floats to 12 places, a mapping or list (`lr_scheduler_kwargs`) as its text."""
    if isinstance(value, float):
        return round(value, 12)
    if isinstance(value, Mapping | list):
        return repr(sorted(value.items()) if isinstance(value, Mapping) else value)
    return value


def _config(files: RunFiles, rec: Reconstructed) -> dict[str, int]:
    """Read the YAML (its values, sources by key line); returns the key lines."""
    if files.config is None:
        return {}
    path, text = files.config
    try:
        imported = read_config(text)
        _, key_lines = load(decode(text))
    except InputError as error:
        rec.notes.append(msg("runfiles.config_unreadable", path=path, problem=error.text))
        return {}
    rec.config, rec.config_path = imported, path
    return {str(key): line for key, line in key_lines.items()}


def _from_config(rec: Reconstructed, key_lines: Mapping[str, int]) -> None:
    """Every setup field the YAML states (with its line); silent fields keep the Trainer's default."""
    imported = rec.config
    assert imported is not None and rec.config_path is not None
    for name, value in imported.values.items():
        if name not in FIELDS or name == "num_samples":
            continue
        key = name if name in key_lines else ("evaluation_strategy" if name == "eval_strategy" else name)
        if key in key_lines or f"# {name}" in imported.used:
            found = Found(value, Source(rec.config_path, key_lines.get(key), None if key in key_lines else f"# {name}"))
            rec.use(name, found)
            rec.see(name, found)
        else:
            rec.use(name, Found(value, Source(STEPLAB, key="default")))
    rec.schedule_known = True
    document = imported.document
    rec.streaming = bool(document.get("streaming"))
    if "num_samples" in imported.values:
        line = key_lines.get("num_samples")
        rec.use("num_samples", Found(imported.values["num_samples"], Source(rec.config_path, line)))


def count_datasets(document: Mapping[str, Any], base: Path | None, uploads: Mapping[str, bytes]) -> Funnel:
    """The dataset stage on the YAML's datasets: uploaded files (by name), else the files under `base` as
    `llamafactory-cli` finds them, else LLaMA-Factory's own demo datasets by their known sizes."""
    from steplab.dataset.errors import DatasetError
    from steplab.dataset.load import funnel_from_files, funnel_from_rows, funnel_from_uploads, known_rows

    if uploads:
        return funnel_from_uploads(document, uploads)
    if base is None:
        raise DatasetError("dataset.no_info", path="dataset_info.json")
    try:
        return funnel_from_files(document, base)
    except DatasetError as error:
        builtin = known_rows(document)
        if error.code != "dataset.no_info" or not builtin:
            raise
        return funnel_from_rows(document, builtin)


def _dataset_stage(rec: Reconstructed, files: RunFiles, base: Path | None) -> None:
    """N from the YAML's datasets, when it names some, is not streaming and gives no `num_samples`."""
    imported = rec.config
    if imported is None or rec.streaming or "num_samples" in rec.values:
        return
    if imported.funnel is not None:
        rec.funnel = imported.funnel
    elif imported.document.get("dataset"):
        if base is None and not files.dataset_files:  # nothing to count from: no folder, no dataset files given
            rec.notes.append(msg("runfiles.dataset_not_given"))
            return
        try:
            rec.funnel = count_datasets(imported.document, base, files.dataset_files)
        except InputError as error:
            rec.notes.append(msg("runfiles.dataset_not_counted", problem=error.text))
            return
    if rec.funnel is not None:
        found = Found(rec.funnel.train_examples, Source(rec.config_path or STEPLAB, key="dataset stage"))
        rec.use("num_samples", found)
        rec.see("num_samples", found)


def _from_run(rec: Reconstructed, files: RunFiles) -> None:
    """What the run's files state, and the run's values where the YAML is silent."""
    console, state = files.console, files.state
    block = console.block if console else {}
    batch = block.get("per_device_train_batch_size") or (state.fields.get("train_batch_size") if state else None)
    accumulation = block.get("gradient_accumulation_steps")
    epochs = block.get("num_epochs") or (state.fields.get("num_train_epochs") if state else None)
    if epochs is not None and epochs.value == sys.maxsize:
        rec.streaming = True
    for name, found in (("per_device_train_batch_size", batch), ("gradient_accumulation_steps", accumulation)):
        rec.see(name, found)
        if name not in rec.values or rec.values[name].source.key == "default":
            rec.use(name, found)
    if not rec.streaming:
        rec.see("num_samples", block.get("num_examples"))
        if "num_samples" not in rec.values:
            rec.use("num_samples", block.get("num_examples"))
        if epochs is not None and ("num_train_epochs" not in rec.values
                                   or rec.values["num_train_epochs"].source.key == "default"):
            rec.use("num_train_epochs", epochs)
    _processes(rec, files)
    _intervals(rec, files)


def _processes(rec: Reconstructed, files: RunFiles) -> None:
    """Data-parallel processes: the YAML's `world_size` (StepLab's own key), else what the log says (LLaMA-Factory's
    "world size" line, or the total train batch ÷ (per-device batch × accumulation)), else one, assumed."""
    console = files.console
    if console is not None:
        rec.see("world_size", console.world_size)
        total = console.block.get("total_train_batch_size")
        batch = console.block.get("per_device_train_batch_size")
        accumulation = console.block.get("gradient_accumulation_steps")
        if total and batch and accumulation and total.value % (batch.value * accumulation.value) == 0:
            rec.see("world_size", Found(total.value // (batch.value * accumulation.value), total.source))
    if "world_size" in rec.values:
        return
    implied = rec.seen.get("world_size")
    rec.use("world_size", implied[0] if implied else Found(1, Source(STEPLAB, key="assumed")))


def _intervals(rec: Reconstructed, files: RunFiles) -> None:
    """Logging, evaluation and save intervals: a resumed run's come from its checkpoint (the saved state)."""
    state = files.state
    resumed = files.console is not None and files.console.resumed
    for name in INTERVALS:
        saved = state.fields.get(name) if state else None
        rec.see(name, saved)
        if saved is None:
            continue
        if resumed or name not in rec.values or rec.values[name].source.key == "default":
            rec.use(name, saved)
    if files.console is not None:
        for name, _new, old, source in files.console.mismatches:
            if name in INTERVALS and name not in (state.fields if state else {}):
                rec.use(name, Found(_number(old), source))
        if state is None:
            _console_intervals(rec, files.console)


def _console_intervals(rec: Reconstructed, console: Console) -> None:
    """A console alone still shows its rhythm: the checkpoints' common step (the greatest common divisor of every
    checkpoint but the last, which may be the run's end), and the steps of the first logged loss and evaluation,
    read back from their epoch (in the first epoch an update takes `accumulation` of the epoch's micro-batches:
    step = epoch × micro-batches per epoch ÷ accumulation). Used where the YAML is silent."""
    block = {name: found.value for name, found in console.block.items()}
    saves = [found.value for found in console.saves]
    if len(saves) >= 2 and (common := math.gcd(*saves[:-1])) >= 1:
        _use_quiet(rec, "save_steps", Found(common, Source(console.path, console.saves[0].source.line, "inferred")))
    needed = ("num_examples", "per_device_train_batch_size", "total_train_batch_size", "gradient_accumulation_steps")
    if not all(block.get(name) for name in needed):
        return
    processes = block["total_train_batch_size"] // (block["per_device_train_batch_size"]
                                                   * block["gradient_accumulation_steps"]) or 1
    micro_batches = math.ceil(block["num_examples"] / (block["per_device_train_batch_size"] * processes))
    firsts = (("logging_steps", console.train.first), ("eval_steps", console.eval_dicts[0] if console.eval_dicts
                                                           else None))
    for name, logged in firsts:
        if logged is None:
            continue
        first, line = logged
        epoch = number(first.get("epoch"))
        if 0 < epoch < 1:
            step = round(epoch * micro_batches / block["gradient_accumulation_steps"])
            if step >= 1:
                _use_quiet(rec, name, Found(step, Source(console.path, line, "inferred")))
    if console.eval_dicts and rec.config is None:
        rec.use("eval_strategy", Found("steps", Source(console.path, console.eval_dicts[0][1], "inferred")))


def _use_quiet(rec: Reconstructed, name: str, found: Found) -> None:
    """Use an inferred value only where nothing better said one (the YAML, or a saved state)."""
    if name not in rec.values or rec.values[name].source.key == "default":
        rec.use(name, found)


def _number(text: str) -> int | float | str:
    try:
        value = float(text)
    except ValueError:
        return text
    return whole(value)


def _evaluation(rec: Reconstructed, files: RunFiles) -> None:
    """Without a YAML, a run that logged evaluations evaluated by steps."""
    if rec.config is not None:
        return
    rows = files.state.rows if files.state else files.trainer_log.rows if files.trainer_log else None
    if rows is not None and rows.has("eval_loss").any():
        rec.use("eval_strategy", Found("steps", Source(rows.file, key="eval_loss")))


def _streaming(rec: Reconstructed, files: RunFiles) -> None:
    """An unsized dataset (streaming): the Trainer sees `max_steps` × the total batch examples, one epoch of
    `max_steps` × accumulation micro-batches; StepLab plans that many samples."""
    if not rec.streaming:
        return
    steps = rec.value("max_steps", -1)
    total = files.console.block.get("total_optimization_steps") if files.console else None
    if (steps is None or steps <= 0) and total is not None:  # streaming needs max_steps: the run's total is it
        rec.use("max_steps", Found(total.value, total.source))
        steps = total.value
    if steps and steps > 0:
        total = (rec.value("per_device_train_batch_size", DEFAULTS.per_device_train_batch_size)
                 * rec.value("gradient_accumulation_steps", DEFAULTS.gradient_accumulation_steps)
                 * rec.value("world_size", 1))
        rec.use("num_samples", Found(total * steps, Source(STEPLAB, key="streaming")))


def _trainer_class(rec: Reconstructed, files: RunFiles, key_lines: Mapping[str, int]) -> None:
    """The trainer class (`trainer_class.trainer_class`), TRL's count fields the YAML states, and the class's own
    defaults (`trl.settings.CONFIG_DEFAULTS`: `learning_rate`, `logging_steps`) where the YAML is silent."""
    document = rec.config.document if rec.config is not None else None
    found = trainer_class(files, document, rec.config_path, key_lines)
    if found is None or found.value == "Trainer":
        return
    rec.use("trainer_class", found)
    for name in TRL_FIELD_NAMES:
        if name == "trainer_class" or document is None or name not in document:
            continue
        if found.value not in FIELDS[name].trainer_classes:
            continue
        try:
            value = check_field(FIELDS[name], document[name])
        except InputError as error:
            rec.notes.append(msg("runfiles.config_unreadable", path=rec.config_path, problem=error.text))
            continue
        rec.use(name, Found(value, Source(rec.config_path or STEPLAB, key_lines.get(name))))
    for name, value in CONFIG_DEFAULTS[found.value].items():
        current = rec.values.get(name)
        if current is None or current.source.key == "default":
            rec.use(name, Found(value, Source(found.value.replace("Trainer", "Config"), key="default")))


def reconstruct(files: RunFiles, base: Path | None = None, trainer: str | None = None) -> Reconstructed:
    """The setup of a run from its files (`base`: where the YAML's relative dataset paths start)."""
    rec = Reconstructed()
    key_lines = _config(files, rec)
    if rec.config is not None:
        _from_config(rec, key_lines)
        _dataset_stage(rec, files, base)
    _trainer_class(rec, files, key_lines)
    _from_run(rec, files)
    _evaluation(rec, files)
    _streaming(rec, files)
    if trainer:
        rec.use("trainer", Found(trainer, Source(STEPLAB, key="--trainer")))
    if rec.value("num_train_epochs") is not None and not math.isfinite(float(rec.value("num_train_epochs"))):
        rec.values.pop("num_train_epochs")
    return rec
