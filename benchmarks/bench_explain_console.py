"""`python -m steplab explain` on one console log of about 63 MB, within the caps (`runfiles.limits`: 64 MB a file,
10^6 lines): a 5.x Trainer run of `STEPS` updates printing its tqdm bar (carriage-return redraws inside a line)
and a logged dict at every step, as `llamafactory-cli train` or a script's console holds it.

Each run is a fresh process; wall time, CPU time and peak memory (the child's VmHWM) are printed as medians.
Target (issue 38): ≤ 5 s and ≤ 300 MB (the issue saw 145 s and 885 MB on its file). Measured on the 2-core shared
machine, load average about 8 (so wall time ≈ 2 × CPU time): main at ec9d9cc, CPU 13.2 s, 628 MB; issue 38's
code, CPU 4.7 s (median of 3), 190 MB.

    python benchmarks/bench_explain_console.py [--runs 3]
    # the code of another commit, beside it: git worktree add /tmp/base <commit>;
    PYTHONPATH=/tmp/base python benchmarks/bench_explain_console.py --code /tmp/base
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_explain import PEAK_ON_EXIT, run_once  # noqa: E402

STEPS = 480_000
TARGET_MB = 63


def write_console(path: Path, steps: int = STEPS) -> None:
    """A console of `steps` updates, a logged dict at each (5.x strings of four significant digits)."""
    batch, accumulation, per_epoch = 4, 1, steps
    header = ("[INFO|trainer.py:2500] >> ***** Running training *****\n"
              f"[INFO|trainer.py:2501] >>   Num examples = {steps * batch:,}\n"
              "[INFO|trainer.py:2502] >>   Num Epochs = 1\n"
              f"[INFO|trainer.py:2502] >>   Num update steps per epoch = {per_epoch:,}\n"
              f"[INFO|trainer.py:2503] >>   Instantaneous batch size per device = {batch}\n"
              f"[INFO|trainer.py:2506] >>   Total train batch size (w. parallel, distributed & accumulation) = "
              f"{batch * accumulation}\n"
              f"[INFO|trainer.py:2507] >>   Gradient Accumulation steps = {accumulation}\n"
              f"[INFO|trainer.py:2508] >>   Total optimization steps = {steps:,}\n")
    with path.open("w", encoding="utf-8") as out:
        out.write(header)
        for step in range(1, steps + 1):
            rate = 5e-5 * (1 - (step - 1) / steps)
            out.write(f"\r{100 * step // steps:3d}%|#####     | {step}/{steps} [00:{step % 60:02d}<00:00, 9.9it/s]")
            out.write(f"\n{{'loss': '{2 + 1 / step:.4g}', 'grad_norm': '0.5', 'learning_rate': '{rate:.4g}', "
                      f"'epoch': '{step / per_epoch:.4g}'}}\n")
        out.write("{'train_runtime': '100', 'train_loss': '2.01', 'epoch': '1'}\n")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--code", default=str(ROOT), help="the checkout whose steplab runs (PYTHONPATH)")
    options = parser.parse_args()
    env_path = options.code
    with tempfile.TemporaryDirectory() as scratch:
        console = Path(scratch) / "console.log"
        write_console(console)
        size = console.stat().st_size / 2**20
        lines = console.read_bytes().count(b"\n") + 1
        print(f"console of {STEPS:,} steps: {size:.1f} MB, {lines:,} lines; code: {env_path}")
        print(f"load average when started: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        command = [sys.executable, "-c", f"import sys; sys.path.insert(0, {env_path!r})\n" + PEAK_ON_EXIT,
                   "explain", str(console)]
        walls, cpus, peaks = [], [], []
        result = None
        for _ in range(options.runs):
            wall, cpu, peak, out = run_once(command)
            walls.append(wall)
            cpus.append(cpu)
            peaks.append(peak)
            result = json.loads(out)
        agree = sum(1 for f in result["fields"] if f["agree"]) if result else 0
        print(f"explain: wall median {statistics.median(walls):.2f} s (max {max(walls):.2f}), CPU median "
              f"{statistics.median(cpus):.2f} s, peak memory {statistics.median(peaks):.0f} MB ({options.runs} runs); "
              f"{agree} of {len(result['fields']) if result else 0} fields agree")


if __name__ == "__main__":
    main()
