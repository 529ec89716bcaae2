"""Test-only oracle: run the real `transformers.Trainer` on CPU with a tiny model and record what it did.

`run_trainer(config)` trains once and returns exactly the fields a golden file (`tests/data/golden/`) holds for
a run (`RESULT_FIELDS`, in that order), or the error the Trainer raised (`ERROR_FIELDS`). Five of them are the
Trainer's own sizing of the run, read from the locals of its training loop as it returns (`LOOP_FIELDS`:
`len_dataloader`, `num_update_steps_per_epoch`, `total_train_batch_size`, `num_train_epochs`, of
`set_initial_training_values` where the release has it, else of `_inner_training_loop`) and from the arguments'
own `get_warmup_steps`. It runs in the suite's Python (transformers 5.24.0) or, as a script, in any release's
environment (`tests/golden_recorder.py`), under `torchrun` too:

    python tests/oracle.py REQUEST.json OUT_DIR [lightning]   # results in OUT_DIR/rank-<RANK>.json

`run_lightning(config)` does the same with PyTorch Lightning's Trainer (`LIGHTNING_FIELDS`).
"""

from __future__ import annotations

import json
import logging
import os
import sys
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch
from torch import nn


class TinyRegressor(nn.Module):
    """One linear layer; counts training forward passes (= micro-batches)."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(2, 1)
        self.micro_batches = 0

    def forward(self, x: torch.Tensor, labels: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
        if self.training:
            self.micro_batches += 1
        prediction = self.linear(x).squeeze(-1)
        loss = ((prediction - labels) ** 2).mean() if labels is not None else prediction.sum()
        return {"loss": loss, "logits": prediction}


class RowStream(torch.utils.data.IterableDataset):
    """The rows of a `RowDataset` as a stream: no length, as LLaMA-Factory's `streaming: true` gives the Trainer."""

    def __init__(self, rows: int) -> None:
        self.rows = RowDataset(rows)

    def __iter__(self):
        return (self.rows[i] for i in range(len(self.rows)))


class RowDataset(torch.utils.data.Dataset):
    def __init__(self, rows: int, seed: int = 0) -> None:
        generator = torch.Generator().manual_seed(seed)
        self.x = torch.randn(rows, 2, generator=generator)
        self.y = torch.randn(rows, generator=generator)

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        return {"x": self.x[i], "labels": self.y[i]}


TRAINER_FIELDS = (
    "per_device_train_batch_size", "gradient_accumulation_steps", "num_train_epochs", "max_steps", "learning_rate",
    "lr_scheduler_type", "lr_scheduler_kwargs", "warmup_steps", "warmup_ratio", "eval_strategy", "eval_steps",
    "save_strategy", "save_steps", "logging_strategy", "logging_steps", "dataloader_drop_last", "logging_first_step",
    "eval_on_start", "eval_delay", "load_best_model_at_end", "metric_for_best_model",
)
"""The config keys passed to `TrainingArguments` (None, and a `warmup_ratio` of 0.0, mean "not given": 5.x has no
`warmup_ratio` and refuses it by name). Besides them a config has `num_samples` (training rows), optionally
`num_eval_samples` (evaluation rows, 4 by default), and the golden files' `id`, `note` and `world_size`."""

RESULT_FIELDS = (
    "status", "state_max_steps", "optimizer_steps", "num_update_steps_per_epoch", "micro_batches_per_epoch",
    "total_train_batch_size", "final_epoch", "warmup_steps_computed", "micro_batches_per_step_rle", "eval_at_steps",
    "save_at_steps", "log_at_steps", "lr_per_step", "num_train_epochs_loop",
)
"""A run that trained, as the golden files hold it, in their order."""
ERROR_FIELDS = ("status", "error_type", "error")
"""A run the Trainer refused (or failed in): the exception's class name and message."""
LOOP_FIELDS = {
    "num_update_steps_per_epoch": "num_update_steps_per_epoch", "micro_batches_per_epoch": "len_dataloader",
    "total_train_batch_size": "total_train_batch_size", "num_train_epochs_loop": "num_train_epochs",
}
"""Golden field: the Trainer's local variable it is (the micro-batches of one process's dataloader per epoch, the
updates per epoch it sized `max_steps` with, the batch of one update over all processes, the epochs it loops)."""
LOOP_FUNCTIONS = ("set_initial_training_values", "_inner_training_loop")
"""Where those locals live: 4.51 and later size the run in the first (5.x keeps no `len_dataloader` in the
loop), 4.46 in the second."""


@contextmanager
def loop_locals() -> Iterator[dict[str, dict[str, Any]]]:
    """The locals of `LOOP_FUNCTIONS` (of `transformers.trainer`) as each first returns, by function name."""
    seen: dict[str, dict[str, Any]] = {}
    wanted = set(LOOP_FIELDS.values())

    def on_call(frame, event, arg):
        name = frame.f_code.co_name
        if name not in LOOP_FUNCTIONS or frame.f_globals.get("__name__") != "transformers.trainer":
            return None
        frame.f_trace_lines = False

        def on_event(frame, event, arg):
            if event == "return" and name not in seen:
                seen[name] = {key: value for key, value in frame.f_locals.items() if key in wanted}
            return on_event

        return on_event

    before = sys.gettrace()
    sys.settrace(on_call)
    try:
        yield seen
    finally:
        sys.settrace(before)


def trainer_arguments(config: dict[str, Any]) -> dict[str, Any]:
    """The `TrainingArguments` keywords of a config (see `TRAINER_FIELDS`)."""
    given = {k: config[k] for k in TRAINER_FIELDS if config.get(k) is not None}
    if not given.get("warmup_ratio", 1):
        del given["warmup_ratio"]
    return given


def _rle(sizes: list[int]) -> list[list[int]]:
    runs: list[list[int]] = []
    for size in sizes:
        if runs and runs[-1][0] == size:
            runs[-1][1] += 1
        else:
            runs.append([size, 1])
    return runs


def run_trainer(config: dict[str, Any], extra: dict[str, Any] | None = None, eval_dataset: bool = True,
                stream: bool = False) -> dict[str, Any]:
    """Train for real and return the fields the golden files record (`RESULT_FIELDS`, or `ERROR_FIELDS`).

    `extra`: other `TrainingArguments` fields, set as given over the oracle's own (the census's irrelevant keys; a
    relative `output_dir` is taken under the run's scratch folder); `eval_dataset`: False trains with no evaluation
    set (what the Trainer refuses when it is asked to evaluate); `stream`: the training rows come as a stream with no
    length (`RowStream`)."""
    from transformers import PrinterCallback, Trainer, TrainerCallback, TrainingArguments

    logging.getLogger("transformers").setLevel(logging.ERROR)
    model = TinyRegressor()
    record: dict[str, list] = {"sizes": [], "lrs": [], "eval": [], "save": [], "log": []}

    class Recorder(TrainerCallback):
        def on_optimizer_step(self, args, state, control, optimizer=None, **kwargs):
            record["sizes"].append(model.micro_batches)
            model.micro_batches = 0
            record["lrs"].append(optimizer.param_groups[0]["lr"] if optimizer else None)

        def on_evaluate(self, args, state, control, **kwargs):
            record["eval"].append(state.global_step)

        def on_save(self, args, state, control, **kwargs):
            record["save"].append(state.global_step)

        def on_log(self, args, state, control, logs=None, **kwargs):
            if logs and "loss" in logs:
                record["log"].append(state.global_step)

    class NoDiskTrainer(Trainer):
        def _save_checkpoint(self, model, trial, *more, **named):  # the event is what matters, not the files
            return None

    try:
        with tempfile.TemporaryDirectory() as out, warnings.catch_warnings(), loop_locals() as sizing:
            warnings.simplefilter("ignore")
            own = {"output_dir": out, "report_to": "none", "use_cpu": True, "disable_tqdm": True, "seed": 0,
                   "per_device_eval_batch_size": 64, "dataloader_num_workers": 0}
            for key, value in (extra or {}).items():
                own[key] = os.path.join(out, value) if key == "output_dir" else value
            args = TrainingArguments(**own, **trainer_arguments(config))
            trainer = NoDiskTrainer(
                model=model, args=args,
                train_dataset=(RowStream if stream else RowDataset)(config["num_samples"]),
                eval_dataset=RowDataset(config.get("num_eval_samples", 4), seed=1) if eval_dataset else None,
                callbacks=[Recorder()],
            )
            trainer.remove_callback(PrinterCallback)
            trainer.train()
    except Exception as error:  # noqa: BLE001 - the oracle reports whatever the Trainer raised
        return {"status": "error", "error_type": type(error).__name__, "error": str(error)}
    state = trainer.state
    loop = {**sizing.get("_inner_training_loop", {}), **sizing.get("set_initial_training_values", {})}
    result = {
        "status": "ok",
        "state_max_steps": state.max_steps,
        "optimizer_steps": state.global_step,
        "final_epoch": state.epoch or 0,
        "warmup_steps_computed": args.get_warmup_steps(state.max_steps),
        "micro_batches_per_step_rle": _rle(record["sizes"]),
        "eval_at_steps": record["eval"],
        "save_at_steps": record["save"],
        "log_at_steps": record["log"],
        "lr_per_step": record["lrs"],
        **{field: loop.get(local) for field, local in LOOP_FIELDS.items()},
    }
    return {field: result[field] for field in RESULT_FIELDS}


LIGHTNING_FIELDS = (
    "status", "estimated_stepping_batches", "optimizer_steps", "num_training_batches", "micro_batches_per_step_rle",
    "final_current_epoch", "schedule_total_steps", "schedule_warmup_steps", "lr_per_step",
)
"""A Lightning run, as `tests/data/golden/lightning-2.json` holds it, in its order."""


def _lightning_lambda(schedule: str, warmup: int, total: int):
    """The recorded cases' two schedules, written as transformers writes its own: linear warmup over `warmup`
    steps, then linear decay to 0 at `total` (`linear_warmup_decay`) or constant (`linear_warmup`)."""

    def factor(step: int) -> float:
        if step < warmup:
            return float(step) / float(max(1, warmup))
        if schedule == "linear_warmup":
            return 1.0
        return max(0.0, float(total - step) / float(max(1, total - warmup)))

    return factor


def run_lightning(config: dict[str, Any]) -> dict[str, Any]:
    """Train with the real `lightning.pytorch.Trainer` and return the fields the Lightning golden file records.

    `max_epochs` None is Lightning's own default; the schedule's length is the Trainer's
    `estimated_stepping_batches`, its warmup `warmup_steps`, or `ceil(warmup_ratio × that)` when 0; a scheduler
    `frequency` > 1 steps as Lightning counts it."""
    import math

    import lightning.pytorch as pl

    logging.getLogger("lightning").setLevel(logging.ERROR)
    logging.getLogger("lightning.pytorch").setLevel(logging.ERROR)
    record: dict[str, Any] = {"sizes": [], "lrs": [], "count": 0}

    class Module(pl.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.linear = nn.Linear(2, 1)

        def training_step(self, batch, batch_idx):
            record["count"] += 1
            return ((self.linear(batch["x"]).squeeze(-1) - batch["labels"]) ** 2).mean()

        def on_before_optimizer_step(self, optimizer):
            record["sizes"].append(record["count"])
            record["count"] = 0
            record["lrs"].append(optimizer.param_groups[0]["lr"])

        def configure_optimizers(self):
            total = self.trainer.estimated_stepping_batches
            warmup = config["warmup_steps"] or math.ceil(total * (config["warmup_ratio"] or 0))
            record.update(estimated=total, total=total, warmup=warmup)
            optimizer = torch.optim.SGD(self.parameters(), lr=config["learning_rate"])
            scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer,
                                                          _lightning_lambda(config["schedule"], warmup, total))
            return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler,
                    "interval": config["scheduler_interval"], "frequency": config["scheduler_frequency"]}}

    loader = torch.utils.data.DataLoader(RowDataset(config["num_samples"]), batch_size=config["batch_size"],
                                         shuffle=config["shuffle"], drop_last=config["drop_last"],
                                         generator=torch.Generator().manual_seed(0))
    limits = {} if config.get("limit_train_batches") is None else {"limit_train_batches": config["limit_train_batches"]}
    try:
        with tempfile.TemporaryDirectory() as out, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            trainer = pl.Trainer(
                accelerator="cpu", devices=1, max_epochs=config["max_epochs"], max_steps=config.get("max_steps", -1),
                accumulate_grad_batches=config["accumulate_grad_batches"], logger=False, enable_checkpointing=False,
                enable_progress_bar=False, enable_model_summary=False, default_root_dir=out, **limits,
            )
            trainer.fit(Module(), train_dataloaders=loader)
    except Exception as error:  # noqa: BLE001 - the oracle reports whatever the Trainer raised
        return {"status": "error", "error_type": type(error).__name__, "error": str(error)}
    result = {
        "status": "ok", "estimated_stepping_batches": record["estimated"], "optimizer_steps": trainer.global_step,
        "num_training_batches": trainer.num_training_batches, "micro_batches_per_step_rle": _rle(record["sizes"]),
        "final_current_epoch": trainer.current_epoch, "schedule_total_steps": record["total"],
        "schedule_warmup_steps": record["warmup"], "lr_per_step": record["lrs"],
    }
    return {field: result[field] for field in LIGHTNING_FIELDS}


def main(request: Path, out_dir: Path, trainer: str = "transformers") -> None:
    """Run every config of `request` (a JSON list) with the `trainer` ("transformers" or "lightning") and write
    the results as `out_dir/rank-<RANK>.json`.

    The suite's `datasets` (5.x) needs a newer huggingface_hub than 4.x releases allow; the Trainer only uses it
    for `datasets.Dataset` inputs, which the oracle never gives, so it is hidden from the import."""
    sys.modules.setdefault("datasets", None)  # type: ignore[arg-type]
    configs = json.loads(request.read_text(encoding="utf-8"))
    train = run_lightning if trainer == "lightning" else run_trainer
    results = [train(config) for config in configs]
    rank = os.environ.get("RANK", "0")
    (out_dir / f"rank-{rank}.json").write_text(json.dumps(results), encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), *sys.argv[3:])


def plan_or_same_refusal(setup: Any, real: dict[str, Any], context: Any = None) -> Any:
    """StepLab's plan of `setup`, or None once it is refused exactly as the real run `real` was (the same exception
    type and words; `context` goes into the assertion's message)."""
    import pytest

    from steplab.errors import TrainerRefusal
    from steplab.trainer.plan import make_plan

    if real["status"] != "error":
        return make_plan(setup)
    with pytest.raises(TrainerRefusal) as refusal:
        make_plan(setup)
    assert (refusal.value.error_type, refusal.value.message) == (real["error_type"], real["error"]), context
    return None


def assert_plan_is_the_real_run(config: dict[str, Any], real: dict[str, Any], trainer: str = "hf-5") -> None:
    """StepLab's plan of `config` under `trainer` (hf-5: the installed release) is what `run_trainer` saw the real
    Trainer do: the same steps, epoch, micro-batches, events and learning rates, or the same refusal."""
    import numpy as np
    import pytest

    from steplab.trainer.events import events
    from steplab.trainer.setup import setup_from_mapping

    setup, unknown = setup_from_mapping({**config, "trainer": trainer})
    assert unknown == []
    plan = plan_or_same_refusal(setup, real)
    if plan is None:
        return
    assert plan.max_steps == real["state_max_steps"]
    assert plan.optimizer_steps == real["optimizer_steps"]
    assert plan.final_epoch == pytest.approx(real["final_epoch"], rel=1e-12, abs=0)
    assert plan.micro_batches_per_step_rle() == real["micro_batches_per_step_rle"]
    assert events(plan, "eval").steps() == real["eval_at_steps"]
    assert events(plan, "save").steps() == real["save_at_steps"]
    assert events(plan, "log").steps() == real["log_at_steps"]
    np.testing.assert_allclose(plan.learning_rates(), real["lr_per_step"], rtol=1e-12, atol=1e-300)
