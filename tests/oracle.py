"""Test-only oracle: run the real `transformers.Trainer` on CPU with a tiny model and record what it did."""

from __future__ import annotations

import logging
import tempfile
import warnings
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


def run_trainer(config: dict[str, Any], eval_dataset: bool = True, stream: bool = False) -> dict[str, Any]:
    """Train for real and return the same fields the golden files record (or the error raised).

    `eval_dataset`: False trains with no evaluation set (what the Trainer refuses when it is asked to evaluate);
    `stream`: the training rows come as a stream with no length (`RowStream`)."""
    from transformers import Trainer, TrainerCallback, TrainingArguments

    logging.getLogger("transformers").setLevel(logging.ERROR)
    model = TinyRegressor()
    record: dict[str, Any] = {"sizes": [], "lrs": [], "eval": [], "save": [], "log": []}

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
        def _save_checkpoint(self, model, trial, *args, **kwargs):  # the event is what matters, not the files
            return None

    kwargs = {k: config[k] for k in TRAINER_FIELDS if k in config and config[k] is not None}
    try:
        with tempfile.TemporaryDirectory() as out, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            args = TrainingArguments(
                output_dir=out, report_to="none", use_cpu=True, disable_tqdm=True, seed=0,
                per_device_eval_batch_size=64, dataloader_num_workers=0, **kwargs,
            )
            trainer = NoDiskTrainer(
                model=model, args=args,
                train_dataset=(RowStream if stream else RowDataset)(config["num_samples"]),
                eval_dataset=RowDataset(4, seed=1) if eval_dataset else None, callbacks=[Recorder()],
            )
            from transformers import PrinterCallback

            trainer.remove_callback(PrinterCallback)
            trainer.train()
    except Exception as error:  # noqa: BLE001 - the oracle reports whatever the Trainer raised
        return {"status": "error", "error_type": type(error).__name__, "error": str(error)}
    state = trainer.state
    rle: list[list[int]] = []
    for size in record["sizes"]:
        if rle and rle[-1][0] == size:
            rle[-1][1] += 1
        else:
            rle.append([size, 1])
    return {
        "status": "ok",
        "state_max_steps": state.max_steps,
        "optimizer_steps": state.global_step,
        "final_epoch": state.epoch or 0,
        "micro_batches_per_step_rle": rle,
        "lr_per_step": record["lrs"],
        "eval_at_steps": record["eval"],
        "save_at_steps": record["save"],
        "log_at_steps": record["log"],
    }
