"""Lab C: more epochs can hurt. A real training run of a tiny model on a small seeded dataset whose labels
are partly random: training loss keeps falling as the model memorises the noise, while validation loss
bottoms out after about two epochs and then climbs.

The run logs what a Trainer with `logging_steps=1` and evaluation after every step would: the training
micro-batch's loss and the loss on the whole validation set. `setup_checkpoints` places the checkpoints
the shared setup would save on this run, at the same point of training counted in epochs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from steplab.labs.torchkit import AdamW, seeded

FEATURES, HIDDEN, CLASSES = 12, 128, 3
BATCH_SIZE = 8
LEARNING_RATE = 3e-3
LABEL_NOISE = 0.25  # share of training and validation labels replaced by a random class
TRAIN_SAMPLES = 96
VALIDATION_SAMPLES = 256
MAX_EPOCHS = 20


@dataclass(frozen=True)
class OverfitRun:
    train_samples: int
    epochs: int
    seed: int
    steps_per_epoch: int
    parameters: int
    initial_val_loss: float  # before the first update
    train_loss: tuple[float, ...]  # per step: the loss of that step's micro-batch (before the update)
    val_loss: tuple[float, ...]  # per step: the validation loss after the update

    @property
    def steps(self) -> int:
        return len(self.train_loss)

    @property
    def epoch_ends(self) -> list[int]:
        return [self.steps_per_epoch * (e + 1) for e in range(self.epochs)]

    @property
    def best_step(self) -> int:
        """The step (1-based) with the lowest validation loss."""
        return min(range(self.steps), key=self.val_loss.__getitem__) + 1

    def epoch_of(self, step: int) -> float:
        return step / self.steps_per_epoch

    def epoch_number(self, step: int) -> int:
        """The epoch (1-based) that step `step` belongs to."""
        return math.ceil(step / self.steps_per_epoch)

    def epoch_train_means(self) -> list[float]:
        """The mean training loss of each epoch (the per-step values are noisy)."""
        k = self.steps_per_epoch
        return [sum(self.train_loss[e * k:(e + 1) * k]) / k for e in range(self.epochs)]

    def val_at_epoch_ends(self) -> list[float]:
        return [self.val_loss[end - 1] for end in self.epoch_ends]


def _dataset(n: int, teacher: torch.Tensor, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Points labelled by the teacher's arg-max, a quarter of the labels replaced by a random class."""
    x = torch.randn(n, FEATURES, generator=generator)
    y = (x @ teacher).argmax(dim=1)
    noisy = torch.rand(n, generator=generator) < LABEL_NOISE
    return x, torch.where(noisy, torch.randint(0, CLASSES, (n,), generator=generator), y)


def run(epochs: int = 12, seed: int = 0) -> OverfitRun:
    """Train the tiny model for `epochs` epochs on the seed's dataset; the losses after every step."""
    if not 1 <= epochs <= MAX_EPOCHS:
        raise ValueError(f"epochs must be between 1 and {MAX_EPOCHS}")
    train_samples = TRAIN_SAMPLES
    with seeded(seed) as generator:
        teacher = torch.randn(FEATURES, CLASSES, generator=generator)
        x_train, y_train = _dataset(train_samples, teacher, generator)
        x_val, y_val = _dataset(VALIDATION_SAMPLES, teacher, generator)
        model = nn.Sequential(nn.Linear(FEATURES, HIDDEN), nn.GELU(), nn.Linear(HIDDEN, HIDDEN), nn.GELU(),
                              nn.Linear(HIDDEN, CLASSES))
        optimizer = AdamW(model.parameters(), lr=LEARNING_RATE)
        loss_fn = nn.CrossEntropyLoss()
        with torch.no_grad():
            initial = float(loss_fn(model(x_val), y_val))
        train, val = [], []
        for _ in range(epochs):
            order = torch.randperm(train_samples, generator=generator)
            for start in range(0, train_samples, BATCH_SIZE):
                rows = order[start:start + BATCH_SIZE]
                loss = loss_fn(model(x_train[rows]), y_train[rows])
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                train.append(float(loss.detach()))
                with torch.no_grad():
                    val.append(float(loss_fn(model(x_val), y_val)))
    return OverfitRun(
        train_samples=train_samples, epochs=epochs, seed=seed,
        steps_per_epoch=math.ceil(train_samples / BATCH_SIZE),
        parameters=sum(p.numel() for p in model.parameters()), initial_val_loss=initial,
        train_loss=tuple(train), val_loss=tuple(val),
    )


@dataclass(frozen=True)
class Checkpoint:
    step: int  # the lab run's step
    epoch: float  # where it sits, in epochs
    setup_step: int | None  # the shared setup's step it stands for (None: an epoch-end checkpoint of the lab)


def setup_checkpoints(plan, steps_per_epoch: int, total_steps: int, limit: int = 10_000) -> list[Checkpoint]:
    """The checkpoints the shared setup's plan saves (`steplab.trainer.events.events(plan, "save")`), moved onto a
    run with `steps_per_epoch` steps per epoch: setup step s sits at epoch s / (updates per epoch of the
    plan), which is lab step round(epoch × steps_per_epoch). Steps past the lab run are left out; two
    setup checkpoints that land on the same lab step are shown once (the first)."""
    from steplab.trainer.events import events

    per_epoch = plan.num_update_steps_per_epoch
    if per_epoch <= 0:
        return []
    found: dict[int, Checkpoint] = {}
    for setup_step in events(plan, "save").steps(limit=limit):
        epoch = setup_step / per_epoch
        step = round(epoch * steps_per_epoch)
        if step > total_steps:
            break
        if step >= 1 and step not in found:
            found[step] = Checkpoint(step, epoch, setup_step)
    return list(found.values())


def epoch_checkpoints(result: OverfitRun) -> list[Checkpoint]:
    """One checkpoint at the end of every epoch of the lab run (`save_strategy: epoch`)."""
    return [Checkpoint(end, result.epoch_of(end), None) for end in result.epoch_ends]


def setup_stop_step(plan, steps_per_epoch: int) -> tuple[float, int]:
    """Where the shared setup stops training, in epochs, and the lab step at the same point."""
    epoch = plan.final_epoch
    return epoch, round(epoch * steps_per_epoch)
