"""Counting big datasets: 10^6 alpaca rows and 10^6 sharegpt conversations of JSON Lines through the whole funnel,
side by side, and packing 20,000 rows by token length with the tiny model's tokenizer.json.

Each figure comes from a fresh process (so its peak memory is its own): the median time of the reading and of the
whole funnel over several runs (wall and CPU: process time, all threads), rows per second, and the process's peak resident memory above what it held
after its imports, with Arrow's own peak allocation. The machine is shared and noisy: quote medians.
Run: python benchmarks/bench_dataset.py [--runs 5] [--rows 1000000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
ASSETS = ROOT / "tests" / "data" / "llamafactory-runs" / "assets"

MEASURE = r"""
import json, statistics, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import pyarrow as pa
from steplab.dataset.files import read_dataset
from steplab.dataset.load import funnel_from_files
values, folder, runs = json.loads(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4])
def status_mib(key):  # VmRSS: resident now; VmHWM: its peak in this process image (ru_maxrss is kept across
    # exec on Linux, so a child's would be the parent's when the parent was larger)
    line = next(line for line in Path("/proc/self/status").read_text().splitlines() if line.startswith(key))
    return int(line.split()[1]) / 1024
before = status_mib("VmRSS")
name = values["dataset"]
reads, wholes, cpus = [], [], []
for _ in range(runs):
    start = time.perf_counter()
    table = read_dataset([folder / f"{name}.jsonl"], name)
    reads.append(time.perf_counter() - start)
    rows = table.num_rows
    del table
    start, cpu = time.perf_counter(), time.process_time()
    funnel = funnel_from_files(values, Path("."))
    wholes.append(time.perf_counter() - start)
    cpus.append(time.process_time() - cpu)
peak = status_mib("VmHWM")
print(json.dumps({"read": statistics.median(reads), "whole": statistics.median(wholes),
                  "cpu": statistics.median(cpus), "rows": rows,
                  "train": funnel.train_examples, "peak_mib": peak - before, "base_mib": before,
                  "arrow_peak_mib": pa.default_memory_pool().max_memory() / 2**20}))
"""


def write_alpaca(path: Path, rows: int) -> None:
    lines = (orjson.dumps({"instruction": f"w{i % 200} w{(i * 7) % 200}", "input": "",
                           "output": None if i % 50 == 0 else f"w{(i * 3) % 200}"}) for i in range(rows))
    path.write_bytes(b"\n".join(lines) + b"\n")


def write_sharegpt(path: Path, rows: int) -> None:
    """Conversations of one to three exchanges, a system message in one of five, a broken one in fifty."""
    def conversation(i: int) -> bytes:
        turns = [{"from": "system", "value": "s"}] if i % 5 == 0 else []
        for k in range(1 + i % 3):
            turns += [{"from": "human", "value": f"w{(i + k) % 200}"}, {"from": "gpt", "value": f"w{(i * 3) % 200}"}]
        if i % 50 == 0:
            turns = turns[:-1]
        return orjson.dumps({"conversations": turns})
    path.write_bytes(b"\n".join(conversation(i) for i in range(rows)) + b"\n")


def measure(values: dict, folder: Path, runs: int) -> dict:
    done = subprocess.run([sys.executable, "-c", MEASURE, str(ROOT), json.dumps(values), str(folder), str(runs)],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--rows", type=int, default=10**6)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        write_alpaca(folder / "alpaca.jsonl", args.rows)
        write_sharegpt(folder / "sharegpt.jsonl", args.rows)
        write_alpaca(folder / "small.jsonl", 20_000)
        info = {"alpaca": {"file_name": "alpaca.jsonl"}, "small": {"file_name": "small.jsonl"},
                "sharegpt": {"file_name": "sharegpt.jsonl", "formatting": "sharegpt",
                             "columns": {"messages": "conversations"}}}
        (folder / "dataset_info.json").write_bytes(orjson.dumps(info))
        print(f"{args.rows:,} rows of JSON Lines, median of {args.runs} runs, each kind in a process of its own:")
        print(f"load average when started: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; 'funnel' is the whole "
              "count (wall), 'CPU' its process time (all threads)")
        print(f"{'kind':<10} {'MiB':>6} {'read':>7} {'funnel':>7} {'CPU':>7} {'rows/s':>11} {'train':>9} "
              f"{'peak RSS':>9} {'Arrow peak':>10}")
        for kind in ("alpaca", "sharegpt"):
            size = (folder / f"{kind}.jsonl").stat().st_size / 2**20
            result = measure({"dataset": kind, "dataset_dir": str(folder)}, folder, args.runs)
            print(f"{kind:<10} {size:>6.1f} {result['read']:>6.2f}s {result['whole']:>6.2f}s {result['cpu']:>6.2f}s "
                  f"{result['rows'] / result['whole']:>11,.0f} {result['train']:>9,} {result['peak_mib']:>5.0f} MiB "
                  f"{result['arrow_peak_mib']:>6.0f} MiB")
        packing = {"dataset": "small", "dataset_dir": str(folder), "packing": True, "cutoff_len": 64,
                   "template": "qwen", "model_name_or_path": str(ASSETS / "tiny-qwen2")}
        packed = measure(packing, folder, args.runs)
        print(f"packing 20,000 rows with tokenizer.json: {packed['whole']:.2f} s "
              f"({20_000 / packed['whole']:,.0f} rows/s) -> {packed['train']:,} packs; median of {args.runs}")


if __name__ == "__main__":
    main()
