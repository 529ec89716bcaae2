"""Lab A: one batch of B×GA samples against GA micro-batches of B with each loss divided by GA.

The two give the same gradient up to float rounding, hence the same parameters after one update. The
classic mistakes are run for real next to them, each with its measured effect:

- `no_divide`: the micro-batch losses are not divided by GA, so the accumulated gradient is GA× too large;
- `zero_each`: `zero_grad()` is called for every micro-batch, so only the last micro-batch's gradient
  (divided by GA) is left when the optimizer steps;
- `step_each`: the optimizer steps after every micro-batch: GA updates instead of one.

Both optimizers are measured: plain SGD (update ∝ gradient) and AdamW as the HF Trainer sets it up
(betas 0.9/0.999, eps 1e-8, weight decay 0), whose first update hardly depends on the gradient's scale.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from steplab.labs.readings import effective_batch
from steplab.labs.torchkit import SGD, AdamW, seeded

FEATURES, HIDDEN, CLASSES = 10, 32, 4
SGD_LR = 0.1
ADAMW_LR = 1e-3
MISTAKES = ("no_divide", "zero_each", "step_each")
LIMIT = 64  # largest micro-batch size and accumulation the lab accepts


@dataclass(frozen=True)
class Variant:
    """One way of running GA micro-batches, compared with the one big batch."""

    key: str  # "correct" or one of MISTAKES
    optimizer_steps: int
    grad_max_abs_diff: float | None  # None when the optimizer stepped in between (no single gradient)
    grad_norm_ratio: float | None  # ‖g‖ / ‖g_big‖
    grad_cosine: float | None  # direction against the big batch's gradient
    sgd_param_max_abs_diff: float
    sgd_update_ratio: float  # ‖Δθ‖ / ‖Δθ_big‖ after the round of micro-batches
    adamw_param_max_abs_diff: float
    adamw_update_ratio: float


@dataclass(frozen=True)
class AccumulationResult:
    batch_size: int
    accumulation: int
    seed: int
    parameters: int
    grad_max_abs: float  # the largest gradient entry of the big batch, for scale
    sgd_update_norm: float
    adamw_update_norm: float
    correct_float32_grad_max_abs_diff: float  # the same comparison in float32, as training usually runs
    variants: tuple[Variant, ...]

    @property
    def samples_per_update(self) -> int:
        """Samples one optimizer step sees: the micro-batch size times the accumulation."""
        return effective_batch(self.batch_size, self.accumulation)

    def variant(self, key: str) -> Variant:
        return next(v for v in self.variants if v.key == key)


def _model(dtype: torch.dtype) -> nn.Module:
    return nn.Sequential(nn.Linear(FEATURES, HIDDEN), nn.Tanh(), nn.Linear(HIDDEN, CLASSES)).to(dtype)


def _flat(tensors: list[torch.Tensor]) -> torch.Tensor:
    return torch.cat([t.reshape(-1) for t in tensors])


def _optimizer(kind: str, model: nn.Module) -> SGD | AdamW:
    if kind == "sgd":
        return SGD(model.parameters(), lr=SGD_LR)
    return AdamW(model.parameters(), lr=ADAMW_LR, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)


def _round(state: dict, x: torch.Tensor, y: torch.Tensor, batch: int, accumulation: int, key: str,
           optimizer: str, dtype: torch.dtype) -> tuple[torch.Tensor | None, torch.Tensor, int]:
    """Run one round (GA micro-batches, or the big batch for key "big"); the gradient the optimizer saw
    last (None when it stepped more than once), the parameters after, and the number of optimizer steps."""
    model = _model(dtype)
    model.load_state_dict(state)
    opt = _optimizer(optimizer, model)
    loss_fn = nn.CrossEntropyLoss()
    opt.zero_grad()
    if key == "big":
        loss_fn(model(x), y).backward()
        grad = _flat([p.grad for p in model.parameters()]).clone()
        opt.step()
        return grad, _flat([p.detach() for p in model.parameters()]), 1
    steps = 0
    for j in range(accumulation):
        if key == "zero_each":
            opt.zero_grad()
        part = slice(j * batch, (j + 1) * batch)
        loss = loss_fn(model(x[part]), y[part])
        if key != "no_divide":
            loss = loss / accumulation
        loss.backward()
        if key == "step_each":
            opt.step()
            opt.zero_grad()
            steps += 1
    grad = None
    if key != "step_each":
        grad = _flat([p.grad for p in model.parameters()]).clone()
        opt.step()
        steps += 1
    return grad, _flat([p.detach() for p in model.parameters()]), steps


def _data(n: int, generator: torch.Generator, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    x = torch.randn(n, FEATURES, generator=generator, dtype=torch.float64)
    y = torch.randint(0, CLASSES, (n,), generator=generator)
    return x.to(dtype), y


def run(batch_size: int = 4, accumulation: int = 8, seed: int = 0) -> AccumulationResult:
    """Lab A for micro-batches of `batch_size` and `accumulation` of them (B×GA samples in all), in float64."""
    if not (1 <= batch_size <= LIMIT and 1 <= accumulation <= LIMIT):
        raise ValueError(f"batch_size and accumulation must be between 1 and {LIMIT}")
    n = batch_size * accumulation
    with seeded(seed) as generator:
        x, y = _data(n, generator, torch.float64)
        start = {k: v.clone() for k, v in _model(torch.float64).state_dict().items()}
        theta0 = _flat(list(start.values()))
        # state_dict order is the parameters' order for this model (weights and biases only)

        def round_(key: str, optimizer: str, dtype: torch.dtype = torch.float64):
            state = {k: v.to(dtype) for k, v in start.items()}
            return _round(state, x.to(dtype), y, batch_size, accumulation, key, optimizer, dtype)

        big_grad, big_sgd, _ = round_("big", "sgd")
        _, big_adamw, _ = round_("big", "adamw")
        big_update = {"sgd": big_sgd - theta0, "adamw": big_adamw - theta0}
        variants = []
        for key in ("correct", *MISTAKES):
            grad, after_sgd, steps = round_(key, "sgd")
            _, after_adamw, _ = round_(key, "adamw")
            grad_diff = ratio = cosine = None
            if grad is not None:
                grad_diff = float((grad - big_grad).abs().max())
                ratio = float(grad.norm() / big_grad.norm())
                cosine = float(torch.dot(grad, big_grad) / (grad.norm() * big_grad.norm()))
            variants.append(Variant(
                key=key, optimizer_steps=steps, grad_max_abs_diff=grad_diff, grad_norm_ratio=ratio,
                grad_cosine=cosine,
                sgd_param_max_abs_diff=float((after_sgd - big_sgd).abs().max()),
                sgd_update_ratio=float((after_sgd - theta0).norm() / big_update["sgd"].norm()),
                adamw_param_max_abs_diff=float((after_adamw - big_adamw).abs().max()),
                adamw_update_ratio=float((after_adamw - theta0).norm() / big_update["adamw"].norm()),
            ))
        grad32, _, _ = round_("correct", "sgd", torch.float32)
        big32, _, _ = round_("big", "sgd", torch.float32)
    return AccumulationResult(
        batch_size=batch_size, accumulation=accumulation, seed=seed, parameters=theta0.numel(),
        grad_max_abs=float(big_grad.abs().max()), sgd_update_norm=float(big_update["sgd"].norm()),
        adamw_update_norm=float(big_update["adamw"].norm()),
        correct_float32_grad_max_abs_diff=float((grad32 - big32).abs().max()), variants=tuple(variants),
    )


def last_micro_batch_gradient(batch_size: int = 4, accumulation: int = 8, seed: int = 0) -> tuple[float, float]:
    """The `zero_each` check: (max |g_zero_each − g_last/GA|, max |g_last/GA|), g_last = the last micro-batch's
    mean-loss gradient on its own."""
    with seeded(seed) as generator:
        x, y = _data(batch_size * accumulation, generator, torch.float64)
        start = {k: v.clone() for k, v in _model(torch.float64).state_dict().items()}
        zero_each, _, _ = _round(start, x, y, batch_size, accumulation, "zero_each", "sgd", torch.float64)
        last, _, _ = _round(start, x[-batch_size:], y[-batch_size:], batch_size, 1, "big", "sgd", torch.float64)
    expected = last / accumulation
    return float((zero_each - expected).abs().max()), float(expected.abs().max())
