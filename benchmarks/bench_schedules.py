"""learning_rates(...) for 10^6 updates (cosine with warmup) against stepping a torch LambdaLR 10^6 times.

Prints figures only. Run: python benchmarks/bench_schedules.py
"""

from __future__ import annotations

import statistics
import time
import warnings

import numpy as np

from steplab.trainer.schedules import learning_rates, torch_scheduler

UPDATES = 10**6
WARMUP = 50_000
LEARNING_RATE = 1e-4
REPEAT = 21


def vectorised() -> np.ndarray:
    return learning_rates("cosine", UPDATES, warmup_steps=WARMUP, total_steps=UPDATES, kwargs={},
                          learning_rate=LEARNING_RATE)


def stepped_lambda_lr() -> tuple[float, np.ndarray]:
    """Seconds to step the equivalent LambdaLR UPDATES times (reading the LR each step, as the Trainer does)."""
    import torch

    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=LEARNING_RATE)
    scheduler = torch_scheduler(optimizer, "cosine", warmup_steps=WARMUP, total_steps=UPDATES, kwargs={})
    group = optimizer.param_groups[0]
    lrs = np.empty(UPDATES)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "lr_scheduler.step() before optimizer.step()": only the scheduler is timed
        start = time.perf_counter()
        for k in range(UPDATES):
            lrs[k] = group["lr"]
            scheduler.step()
        return time.perf_counter() - start, lrs


def cos_alone() -> float:
    """Median seconds of np.cos over UPDATES arguments in [0, π]: the floor of an exact cosine curve."""
    x = np.linspace(0.0, np.pi, UPDATES)
    times = []
    for _ in range(REPEAT):
        start = time.perf_counter()
        np.cos(x)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    vectorised()  # warm up imports and allocator
    times = []
    for _ in range(REPEAT):
        start = time.perf_counter()
        curve = vectorised()
        times.append(time.perf_counter() - start)
    median = statistics.median(times)
    print(f"learning_rates(cosine, {UPDATES:,} updates, warmup {WARMUP:,}): median {median * 1e3:.2f} ms, "
          f"min {min(times) * 1e3:.2f} ms over {REPEAT} runs")
    print(f"  of which np.cos on {UPDATES:,} values alone (libm, same bits as math.cos): median "
          f"{cos_alone() * 1e3:.2f} ms")
    stepped, lrs = stepped_lambda_lr()
    print(f"torch LambdaLR stepped {UPDATES:,} times: {stepped:.2f} s (once)")
    print(f"speed-up: {stepped / median:,.0f}x")
    print(f"same curve: max relative difference {float(np.max(np.abs(curve - lrs) / np.maximum(lrs, 1e-300))):.1e}")


if __name__ == "__main__":
    main()
