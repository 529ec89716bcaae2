"""The whole CLI process for a 10^6-step plan with every learning rate, against a whole process that steps
a torch LambdaLR 10^6 times (the scheduler alone, reading each update's LR), run in turn, A B A B ...

Prints the median wall time of each, and the median of the pairwise ratios (the machine is shared and
noisy: quote ratios and medians). Targets: the CLI ≤ 0.3 s and ≥ 10× faster than LambdaLR.
Run: python benchmarks/bench_cli.py [--runs 7]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STEPS = 10**6
CLI_ARGS = ["-m", "steplab", "plan", "--set", "num_samples=1600", "--set", "per_device_train_batch_size=4",
       "--set", "gradient_accumulation_steps=8", "--set", f"max_steps={STEPS}", "--set", "lr_scheduler_type=cosine",
       "--set", "warmup_steps=0.05", "--set", "save_strategy=no", "--set", "logging_strategy=no", "--lr-per-step"]
LAMBDA_LR = f"""
import math, torch
steps, warmup = {STEPS}, math.ceil({STEPS} * 0.05)
optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1e-4)
def cosine(step):
    if step < warmup:
        return step / max(1, warmup)
    return max(0.0, 0.5 * (1.0 + math.cos(math.pi * (step - warmup) / max(1, steps - warmup))))
scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, cosine)
rates = []
for _ in range(steps):
    rates.append(optimizer.param_groups[0]["lr"])
    scheduler.step()
"""


def wall(command: list[str]) -> tuple[float, bytes]:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, check=True)
    return time.perf_counter() - start, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--cli-python", default=sys.executable,
                        help="the interpreter for the CLI side, e.g. a venv with only StepLab's dependencies "
                             "(an interpreter with many packages starts slower: `python -c pass` is printed too)")
    options = parser.parse_args()
    runs = options.runs
    CLI = [options.cli_python, *CLI_ARGS]
    floor = statistics.median(wall([options.cli_python, "-c", "pass"])[0] for _ in range(5))
    _, out = wall(CLI)  # warm-up, and a check that it answers what it should
    assert len(json.loads(out)["learning_rates"]) == STEPS
    wall([sys.executable, "-c", LAMBDA_LR])
    cli, torch_times = [], []
    for _ in range(runs):
        cli.append(wall(CLI)[0])
        torch_times.append(wall([sys.executable, "-c", LAMBDA_LR])[0])
    ratios = [b / a for a, b in zip(cli, torch_times, strict=True)]
    print(f"CLI, {STEPS:,} steps with every learning rate ({len(out) / 1e6:.1f} MB of JSON): median "
          f"{statistics.median(cli):.3f} s (min {min(cli):.3f}, max {max(cli):.3f})")
    print(f"  (that interpreter's own start, `python -c pass`: median {floor:.3f} s)")
    print(f"torch LambdaLR stepped {STEPS:,} times, scheduler only: median {statistics.median(torch_times):.3f} s "
          f"(min {min(torch_times):.3f}, max {max(torch_times):.3f})")
    print(f"ratio LambdaLR / CLI, pair by pair: median {statistics.median(ratios):.1f}x "
          f"(min {min(ratios):.1f}, max {max(ratios):.1f}, {runs} pairs)")


if __name__ == "__main__":
    main()
