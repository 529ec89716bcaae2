"""Named quantities of a setup and its plan, for lesson text, predictions and quiz answers.

Lessons and questions refer to numbers by these names (`{{course_default.max_steps}}`), so every number a
learner reads is computed by the engine, never typed into text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from steplab.events import events, interval
from steplab.i18n import Text, fmt_float, fmt_int
from steplab.plan import Plan

PLAN_QUANTITIES: dict[str, tuple[Text, Callable[[Plan], Any]]] = {
    "micro_batches_per_epoch": (Text("每轮小批次数", "micro-batches per epoch"), lambda p: p.micro_batches_per_epoch),
    "num_update_steps_per_epoch": (Text("每轮更新步数", "updates per epoch"), lambda p: p.num_update_steps_per_epoch),
    "max_steps": (Text("总步数", "total steps"), lambda p: p.max_steps),
    "optimizer_steps": (Text("实际更新次数", "updates that run"), lambda p: p.optimizer_steps),
    "total_train_batch_size": (Text("有效批次", "effective batch"), lambda p: p.total_train_batch_size),
    "warmup_steps": (Text("预热步数", "warmup steps"), lambda p: p.warmup_steps),
    "final_epoch": (Text("结束时的轮数", "epoch at the end"), lambda p: p.final_epoch),
    "epochs_loop": (Text("轮次循环次数", "epoch loop iterations"), lambda p: p.epochs_loop),
    "last_group_micro_batches": (Text("每轮最后一次更新的小批次数", "micro-batches in an epoch's last update"),
                                 lambda p: p.micro_batches_per_epoch % p.setup.gradient_accumulation_steps
                                 or p.setup.gradient_accumulation_steps),
    "samples_duplicated_per_epoch": (Text("每轮重复的样本数", "samples duplicated per epoch"), lambda p: p.epoch.duplicated),
    "samples_dropped_per_epoch": (Text("每轮丢弃的样本数", "samples dropped per epoch"), lambda p: p.epoch.dropped),
    "last_batch_samples": (Text("最后一个小批次的样本数", "samples in the last micro-batch"), lambda p: p.epoch.last_batch),
    "samples_used_per_epoch": (Text("每轮实际使用的样本数", "samples used per epoch"), lambda p: p.epoch.samples_used),
    "fetched_micro_batches_per_epoch": (Text("每轮实际取出的小批次数", "micro-batches drawn per epoch"),
                                        lambda p: p.fetched_per_epoch),
    "eval_interval": (Text("评估间隔(步)", "evaluation interval (steps)"), lambda p: interval(p, "eval")),
    "eval_count": (Text("评估次数", "evaluations"), lambda p: events(p, "eval").count()),
    "save_count": (Text("检查点个数", "checkpoints"), lambda p: events(p, "save").count()),
    "eval_every_epochs": (Text("评估间隔(轮)", "evaluation interval (epochs)"),
                          lambda p: interval(p, "eval") / p.num_update_steps_per_epoch),
    "first_lr": (Text("第一步的学习率", "learning rate of the first update"), lambda p: float(p.learning_rates(1, 1)[0])),
    "last_lr": (Text("最后一步的学习率", "learning rate of the last update"),
                lambda p: float(p.learning_rates(p.optimizer_steps, p.optimizer_steps)[0])),
}


SETUP_LABELS: dict[str, Text] = {
    "num_samples": Text("训练样本数", "number of training samples"),
    "per_device_train_batch_size": Text("每卡批大小", "batch size per device"),
    "gradient_accumulation_steps": Text("梯度累积步数", "gradient accumulation steps"),
    "world_size": Text("GPU 数", "number of GPUs"),
    "num_train_epochs": Text("训练轮数", "number of epochs"),
}


def label(name: str) -> Text:
    """How a quantity is called in a sentence."""
    if name in PLAN_QUANTITIES:
        return PLAN_QUANTITIES[name][0]
    return SETUP_LABELS.get(name, Text(name, name))


def quantity(plan: Plan, name: str) -> Any:
    """A named quantity of a plan, or a setup field (`num_samples`, `per_device_train_batch_size`, ...)."""
    if name in PLAN_QUANTITIES:
        return PLAN_QUANTITIES[name][1](plan)
    if hasattr(plan.setup, name) and not name.startswith("_"):
        return getattr(plan.setup, name)
    raise KeyError(name)


def is_quantity(name: str) -> bool:
    from steplab.setup import FIELD_NAMES

    return name in PLAN_QUANTITIES or name in FIELD_NAMES


def format_quantity(value: Any) -> str:
    """Numbers as a learner reads them: 1,600; 2.4; 5.00e-05."""
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int):
        return fmt_int(value)
    if isinstance(value, float):
        if value == int(value) and abs(value) < 1e15:
            return fmt_int(int(value))
        return f"{value:.2e}" if abs(value) < 1e-3 else fmt_float(value, 3)
    return str(value)
