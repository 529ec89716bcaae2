"""The schedule page at 150, 10^4 and 10^6 updates: the figure's JSON size and the server-side rerun time (AppTest).

Two rerun timings per scenario, median of several reruns each (wall clock, and the CPU time of the process):
* "slider back and forth": the accumulation alternates between two values (the plan and curve caches are warm);
* "new setup every rerun": the learning rate changes every time, so every rerun computes a new curve.
Targets: ≤ 200 KB of figure JSON and ≤ 150 ms median rerun. Run: python benchmarks/bench_schedule.py
"""

from __future__ import annotations

import base64
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from apptest_timing import one_script_cache  # this folder (the script's own)
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
LONG = {"per_device_train_batch_size": "1", "gradient_accumulation_steps": "1", "lr_scheduler_type": "cosine",
        "eval_strategy": "steps"}
SCENARIOS = {
    "course default (1,600 samples, 150 steps)": {},
    "10^4 steps (max_steps, cosine, warmup 500)": {**LONG, "num_samples": "1000000", "max_steps": "10000",
                                                   "warmup_steps": "500", "eval_steps": "500"},
    "10^6 steps (max_steps, cosine, warmup 10,000)": {**LONG, "num_samples": "1000000000", "max_steps": "1000000",
                                                      "warmup_steps": "10000", "eval_steps": "1000"},
}
OVERLAYS = {"sched_cmp_0_kind": "scheduler", "sched_cmp_1_kind": "max_steps", "sched_cmp_2_kind": "epochs"}


def _length(values: object) -> int:
    """Points in a plotly array: a list, or a typed array {"dtype", "bdata"} as plotly.py writes numpy arrays."""
    if isinstance(values, dict):
        return len(base64.b64decode(values["bdata"])) // np.dtype(values["dtype"]).itemsize
    return len(values or [])


def figure_size(at: AppTest) -> tuple[int, int]:
    """(bytes of the figure's JSON, the most points any trace carries)."""
    spec = at.get("plotly_chart")[0].proto.spec
    return len(spec.encode()), max(_length(trace.get("x")) for trace in json.loads(spec)["data"])


def timed(at: AppTest, change, runs: int) -> tuple[list[float], list[float]]:
    """Wall-clock and CPU seconds (this process, all threads) of each rerun; CPU time is what a busy machine
    leaves least distorted."""
    wall, cpu = [], []
    for i in range(runs):
        change(at, i)
        start, start_cpu = time.perf_counter(), time.process_time()
        at.run()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
        assert not at.exception, at.exception
    return wall, cpu


def accumulation(at: AppTest, i: int) -> None:
    at.number_input(key="gradient_accumulation_steps").set_value(2 if i % 2 else 1)


def learning_rate(at: AppTest, i: int) -> None:
    at.number_input(key="learning_rate").set_value(5e-5 + (i + 1) * 1e-7)


def report(name: str, times: tuple[list[float], list[float]]) -> str:
    wall, cpu = times
    return (f"{name}: median {statistics.median(wall) * 1000:.0f} ms "
            f"(min {min(wall) * 1000:.0f}, max {max(wall) * 1000:.0f}, {len(wall)} reruns; "
            f"CPU median {statistics.median(cpu) * 1000:.0f} ms)")


def reference(runs: int) -> None:
    """The calculator page under the same conditions, for scale (the shared sidebar costs both pages the same)."""
    at = AppTest.from_file(str(ROOT / "app_pages" / "calculator.py"), default_timeout=120)
    at.run()
    print("reference: calculator page, course default")
    print("  " + report("slider back and forth", timed(at, accumulation, runs)))


def main(runs: int = 15) -> None:
    sys.path.insert(0, str(ROOT))
    reference(runs)
    for name, params in SCENARIOS.items():
        for overlays in (False, True):
            at = AppTest.from_file(str(ROOT / "app_pages" / "schedule.py"), default_timeout=120)
            for key, value in params.items():
                at.query_params[key] = value
            at.run()  # the first run imports and warms caches
            assert not at.exception, at.exception
            if overlays:
                for key, kind in OVERLAYS.items():
                    at.selectbox(key=key).set_value(kind).run()
            label = f"{name}{' + 3 overlays' if overlays else ''}"
            size, points = figure_size(at)
            print(f"{label}: figure JSON {size / 1000:.1f} KB, at most {points:,} points per trace")
            print("  " + report("slider back and forth", timed(at, accumulation, runs)))
            print("  " + report("new setup every rerun", timed(at, learning_rate, runs)))


if __name__ == "__main__":
    with one_script_cache():  # the server compiles a page once; AppTest would compile it every run
        main()
