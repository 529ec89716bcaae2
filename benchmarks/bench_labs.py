"""Run time of each torch lab (issue 7: each under 3 s on a 2-core CPU), default and largest inputs.

Prints figures only. The one-time cost of importing torch is printed apart (a page pays it once per
server process). Each case runs `--repeat` times in this process; the wall-clock median and worst are
shown, and the median CPU time of this process (what the lab costs when it has a core to itself: on a
busy machine wall time is longer by the time spent waiting for a core).
Run: python benchmarks/bench_labs.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

TARGET_S = 3.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    start = time.perf_counter()
    import torch

    from steplab.labs import accumulation, memory, overfitting, token_weighting

    imported = time.perf_counter() - start
    print(f"torch {torch.__version__}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    print(f"import torch and the lab modules (once per process): {imported:.2f} s")

    many = ",".join(str(token_weighting.MAX_LENGTH) for _ in range(token_weighting.MAX_SEQUENCES))
    cases = [
        ("A accumulation, B=4 GA=8", lambda: accumulation.run(4, 8)),
        ("A accumulation, B=32 GA=32 (largest on the page)", lambda: accumulation.run(32, 32)),
        ("B token weighting, the unequal example", lambda: token_weighting.run(
            token_weighting.parse_lengths(token_weighting.EXAMPLES["unequal"], 1), 1)),
        ("B token weighting, 32 sequences of 256 (largest)", lambda: token_weighting.run(
            token_weighting.parse_lengths(many, 1), 1)),
        ("C overfitting, 12 epochs", lambda: overfitting.run(12, 0)),
        (f"C overfitting, {overfitting.MAX_EPOCHS} epochs (largest)", lambda: overfitting.run(overfitting.MAX_EPOCHS, 0)),
        ("D activation memory, all sweeps", memory.measure_activations),
    ]
    width = max(len(name) for name, _ in cases)
    print(f"{'lab':<{width}}  {'first':>7}  {'median':>7}  {'worst':>7}  {'cpu':>7}  wall under {TARGET_S:g} s")
    for name, run in cases:
        times, cpu = [], []
        for _ in range(args.repeat):
            begin, begin_cpu = time.perf_counter(), time.process_time()
            run()
            times.append(time.perf_counter() - begin)
            cpu.append(time.process_time() - begin_cpu)
        worst = max(times)
        print(f"{name:<{width}}  {times[0]:>6.3f}s  {statistics.median(times):>6.3f}s  {worst:>6.3f}s  "
              f"{statistics.median(cpu):>6.3f}s  {'yes' if worst < TARGET_S else 'NO'}")


if __name__ == "__main__":
    main()
