"""CPU of one page run in the script thread, as the server's script runner spends it (AppTest, one bytecode cache).

For each page: the median and tenth percentile of `--runs` reruns of the course default, after a warm-up, timed
with `time.thread_time()` around Streamlit's `ScriptRunner._run_script` (the script's own thread: AppTest's
harness and other threads are not counted). `--root` runs another checkout's app (a `git worktree` of an older
commit). `--baseline DIR` compares this checkout with that one in one run: rounds alternate between the two (each in
a fresh process, importing its own checkout), and the table gives both medians side by side with their ratio.

Run: python benchmarks/bench_rerun_cpu.py [--pages calculator,playground,schedule] [--runs 60] [--root DIR]
     python benchmarks/bench_rerun_cpu.py --baseline /path/to/older/worktree [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
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


def side_by_side(this: Path, baseline: Path, pages: str, runs: int, rounds: int) -> None:
    """Alternate rounds of this checkout and `baseline`, each in its own process; print the medians and ratios."""
    medians: dict[Path, dict[str, list[float]]] = {this: {}, baseline: {}}
    for _ in range(rounds):
        for root in (this, baseline):
            command = [sys.executable, __file__, "--root", str(root), "--pages", pages, "--runs", str(runs), "--json"]
            done = subprocess.run(command, capture_output=True, text=True, check=True,
                                  env={**os.environ, "PYTHONPATH": str(root)})
            for page, median in json.loads(done.stdout.splitlines()[-1]).items():
                medians[root].setdefault(page, []).append(median)
    print(f"script CPU per rerun, median of {rounds} rounds of {runs} reruns; this {this}, baseline {baseline}")
    print(f"  {'page':<12} {'this':>9} {'baseline':>9} {'ratio':>6}")
    for page in pages.split(","):
        now, before = statistics.median(medians[this][page]), statistics.median(medians[baseline][page])
        print(f"  {page:<12} {now * 1000:7.2f}ms {before * 1000:7.2f}ms {now / before:6.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", default="calculator,playground,schedule")
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--root", type=Path, default=HERE.parent, help="the checkout whose app runs")
    parser.add_argument("--baseline", type=Path, help="another checkout to compare with, side by side")
    parser.add_argument("--rounds", type=int, default=3, help="with --baseline: rounds of each, alternating")
    parser.add_argument("--json", action="store_true", help="print the medians as one JSON line (seconds)")
    args = parser.parse_args()
    root = args.root.resolve()
    if args.baseline is not None:
        side_by_side(root, args.baseline.resolve(), args.pages, args.runs, args.rounds)
        return
    sys.path.insert(0, str(root))  # that checkout's steplab and steplab_ui, not the installed ones
    medians = {}
    if not args.json:
        print(f"{root}: script CPU per rerun, {args.runs} reruns each")
    for page in args.pages.split(","):
        spent = sorted(measure(root, page, args.runs))
        medians[page] = statistics.median(spent)
        if not args.json:
            print(f"  {page:<12} median {medians[page] * 1000:6.2f} ms   p10 {spent[len(spent) // 10] * 1000:6.2f} ms")
    if args.json:
        print(json.dumps(medians))


if __name__ == "__main__":
    main()
