"""CPU of one page run in the script thread, as the server's script runner spends it (AppTest, one bytecode cache).

For each page: the median and tenth percentile of `--runs` reruns of the course default, after a warm-up, timed
with `time.thread_time()` around Streamlit's `ScriptRunner._run_script` (the script's own thread: AppTest's
harness and other threads are not counted). `--root` runs another checkout's app (a `git worktree` of an older
commit) for a side-by-side comparison in one sitting.

Run: python benchmarks/bench_rerun_cpu.py [--pages calculator,playground,schedule] [--runs 60] [--root DIR]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from streamlit.runtime.scriptrunner import script_runner
from streamlit.testing.v1 import AppTest

HERE = Path(__file__).resolve().parent


def measure(root: Path, page: str, runs: int) -> list[float]:
    """Script-thread CPU seconds of `runs` reruns of `page` (English, course default) from the app in `root`."""
    spent: list[float] = []
    original = script_runner.ScriptRunner._run_script

    def timed(self, *args, **kwargs):  # noqa: ANN001, ANN202 - Streamlit's private signature
        started = time.thread_time()
        try:
            return original(self, *args, **kwargs)
        finally:
            spent.append(time.thread_time() - started)

    sys.path.insert(0, str(HERE))
    from apptest_timing import one_script_cache

    script_runner.ScriptRunner._run_script = timed
    try:
        with one_script_cache():
            at = AppTest.from_file(str(root / "app.py"), default_timeout=60)
            at.query_params["lang"] = "en"
            at.switch_page(f"app_pages/{page}.py")
            for _ in range(6):
                at.run()
            if at.exception:
                raise SystemExit(f"{page}: {at.exception[0].value}")
            spent.clear()
            for _ in range(runs):
                at.run()
    finally:
        script_runner.ScriptRunner._run_script = original
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", default="calculator,playground,schedule")
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--root", type=Path, default=HERE.parent, help="the checkout whose app runs")
    args = parser.parse_args()
    root = args.root.resolve()
    sys.path.insert(0, str(root))  # that checkout's steplab and steplab_ui, not the installed ones
    print(f"{root}: script CPU per rerun, {args.runs} reruns each")
    for page in args.pages.split(","):
        spent = sorted(measure(root, page, args.runs))
        print(f"  {page:<12} median {statistics.median(spent) * 1000:6.2f} ms   "
              f"p10 {spent[len(spent) // 10] * 1000:6.2f} ms")


if __name__ == "__main__":
    main()
