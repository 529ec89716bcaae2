"""Server-side time of one calculator rerun (the whole script: shell, sidebar, plan, figures), via AppTest.

Prints median times for the course default and for 10^9 samples / 10^6 steps (target ≤ 150 ms).
Run: python benchmarks/bench_calculator.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from apptest_timing import one_script_cache  # this folder (the script's own)
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = {
    "course default (1,600 samples, 150 steps)": {},
    "10^9 samples, 10^6 steps (max_steps)": {"num_samples": "1000000000", "per_device_train_batch_size": "1",
                                             "gradient_accumulation_steps": "1", "max_steps": "1000000",
                                             "eval_steps": "1000"},
    "10^9 samples by epochs (3·10^9 steps)": {"num_samples": "1000000000", "per_device_train_batch_size": "1",
                                              "gradient_accumulation_steps": "1"},
}


def main(runs: int = 15) -> None:
    sys.path.insert(0, str(ROOT))
    for name, params in SCENARIOS.items():
        at = AppTest.from_file(str(ROOT / "app_pages" / "calculator.py"), default_timeout=60)
        for key, value in params.items():
            at.query_params[key] = value
        at.run()  # first run imports and warms caches
        assert not at.exception, at.exception
        times = []
        for i in range(runs):
            # a student moving a slider: the accumulation alternates between two values
            at.number_input(key="gradient_accumulation_steps").set_value(2 if i % 2 else 1)
            start = time.perf_counter()
            at.run()
            times.append(time.perf_counter() - start)
        print(f"{name}: median {statistics.median(times) * 1000:.0f} ms per rerun "
              f"(min {min(times) * 1000:.0f}, max {max(times) * 1000:.0f}, {runs} reruns)")


if __name__ == "__main__":
    with one_script_cache():  # the server compiles a page once; AppTest would compile it every run
        main()
