"""What every lab shares: a seeded, deterministic torch context and the two optimizers, written out.

The optimizers are `torch.optim.SGD` and `torch.optim.AdamW` (single-tensor path, no amsgrad), line for
line; tests check them against torch's own. Written out because constructing any `torch.optim`
optimizer imports `torch._dynamo` once per process, seconds on a 2-core CPU, for nothing these labs need.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager

import torch


@contextmanager
def seeded(seed: int) -> Iterator[torch.Generator]:
    """Seed torch's global RNG (module initialisation uses it) inside a fork, on one thread.

    One thread makes every reduction run in the same order on every machine, so results repeat bit for bit
    (and tiny tensors run faster). `torch.use_deterministic_algorithms` is not needed for that on CPU, and
    turning it on imports torch's compiler stack (seconds), so it is left alone.

    Yields a generator seeded the same way, for data. Restores the caller's RNG and thread count afterwards.
    """
    threads = torch.get_num_threads()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        torch.set_num_threads(1)
        try:
            yield torch.Generator().manual_seed(seed)
        finally:
            torch.set_num_threads(threads)


class SGD:
    """`torch.optim.SGD(params, lr)`: θ ← θ − lr·g."""

    def __init__(self, params: Iterable[torch.Tensor], lr: float) -> None:
        self.params = list(params)
        self.lr = lr

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        for p in self.params:
            if p.grad is not None:
                p.add_(p.grad, alpha=-self.lr)


class AdamW:
    """`torch.optim.AdamW(params, lr, betas, eps, weight_decay)` (the HF Trainer's default optimizer).

    The same element-wise arithmetic as torch's single-tensor path, applied to all parameters at once with
    torch's `_foreach_*` kernels (what its multi-tensor path uses): fewer calls, the same numbers.
    """

    def __init__(self, params: Iterable[torch.Tensor], lr: float, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0) -> None:
        self.params = list(params)
        self.lr, self.betas, self.eps, self.weight_decay = lr, betas, eps, weight_decay
        self.state: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}
        self.steps: dict[int, int] = {}

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        beta1, beta2 = self.betas
        live = [i for i, p in enumerate(self.params) if p.grad is not None]
        if not live:
            return
        for i in live:
            if i not in self.state:
                p = self.params[i]
                self.state[i] = (torch.zeros_like(p), torch.zeros_like(p))
                self.steps[i] = 0
            self.steps[i] += 1
        params = [self.params[i] for i in live]
        grads = [p.grad for p in params]
        exp_avgs = [self.state[i][0] for i in live]
        exp_avg_sqs = [self.state[i][1] for i in live]
        steps = [self.steps[i] for i in live]
        torch._foreach_mul_(params, 1 - self.lr * self.weight_decay)
        torch._foreach_lerp_(exp_avgs, grads, 1 - beta1)
        torch._foreach_mul_(exp_avg_sqs, beta2)
        torch._foreach_addcmul_(exp_avg_sqs, grads, grads, 1 - beta2)
        denominators = torch._foreach_sqrt(exp_avg_sqs)
        torch._foreach_div_(denominators, [(1 - beta2**step) ** 0.5 for step in steps])
        torch._foreach_add_(denominators, self.eps)
        torch._foreach_addcdiv_(params, exp_avgs, denominators, [-self.lr / (1 - beta1**step) for step in steps])
