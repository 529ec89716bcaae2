"""Plan + per-step learning rates for 10^6 optimizer steps, against stepping a torch LambdaLR; and 10^9 samples.

Prints figures only (targets: median ≤ 50 ms, ≥ 50× faster than stepping the scheduler alone). Both torch
figures are printed: the scheduler alone is the fair comparison; with `optimizer.step()` most of the time is
the optimizer's. Run: python benchmarks/bench_engine.py
"""

from __future__ import annotations

import statistics
import time
import tracemalloc
import warnings

from steplab.trainer import plan as plan_module
from steplab.trainer.setup import setup_from_mapping

STEPS = 10**6
SETUP = {"num_samples": 1600, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 8,
         "max_steps": STEPS, "lr_scheduler_type": "cosine", "warmup_steps": 0.05, "learning_rate": 1e-4,
         "eval_strategy": "steps", "eval_steps": 1000}


def plan_and_rates() -> int:
    plan_module.make_plan.cache_clear()  # measure the work, not the cache
    setup = setup_from_mapping(SETUP)[0]
    p = plan_module.make_plan(setup)
    rates = p.learning_rates()
    return len(rates) + p.optimizer_steps


def time_it(fn, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def torch_lambda_lr(with_optimizer: bool) -> float:
    """Seconds to step a torch LambdaLR (the same cosine) STEPS times, reading the LR of each update: the
    scheduler alone, or with `optimizer.step()` on one parameter as in a training loop."""
    import math

    import torch

    warmup = math.ceil(STEPS * 0.05)
    param = torch.nn.Parameter(torch.zeros(1))
    optimizer = torch.optim.SGD([param], lr=1e-4)

    def cosine(step: int) -> float:
        if step < warmup:
            return step / max(1, warmup)
        progress = (step - warmup) / max(1, STEPS - warmup)
        return max(0.0, 0.5 * (1.0 + math.cos(math.pi * 0.5 * 2.0 * progress)))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, cosine)
    warnings.filterwarnings("ignore", message="Detected call of `lr_scheduler.step()` before")  # on purpose
    rates = []
    start = time.perf_counter()
    for _ in range(STEPS):
        rates.append(optimizer.param_groups[0]["lr"])
        if with_optimizer:
            optimizer.step()
        scheduler.step()
    return time.perf_counter() - start


def main() -> None:
    assert plan_and_rates() == 2 * STEPS
    times = time_it(plan_and_rates, 21)
    median = statistics.median(times)
    print(f"plan + learning rates of {STEPS:,} steps: median {median * 1000:.1f} ms "
          f"(min {min(times) * 1000:.1f}, max {max(times) * 1000:.1f}, 21 runs)")
    for with_optimizer, what in ((False, "the scheduler alone"), (True, "with optimizer.step() each time")):
        torch_time = torch_lambda_lr(with_optimizer)
        print(f"stepping torch LambdaLR {STEPS:,} times, {what}: {torch_time * 1000:.0f} ms; "
              f"the engine is {torch_time / median:.0f}x faster")

    big = {"num_samples": 10**9, "per_device_train_batch_size": 1, "gradient_accumulation_steps": 1,
           "num_train_epochs": 100, "trainer": "hf-4.46"}
    tracemalloc.start()
    start = time.perf_counter()
    plan_module.make_plan.cache_clear()
    p = plan_module.make_plan(setup_from_mapping(big)[0])
    summary = (p.max_steps, p.optimizer_steps, p.final_epoch, len(p.micro_batches_per_step_rle()))
    elapsed = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    print(f"10^9 samples, batch 1, 100 epochs ({summary[0]:,} steps): planned in {elapsed * 1000:.2f} ms, "
          f"peak {peak / 1024:.0f} KiB allocated")


if __name__ == "__main__":
    main()
