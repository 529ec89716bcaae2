"""Counting a big dataset: 10^6 alpaca rows of JSON Lines (1 in 50 with a null output) through the row rules,
and packing 20,000 rows by token length with the tiny model's tokenizer.json, several runs each.

Prints the median time of each stage of the work (reading, the whole funnel) and rows per second. The
machine is shared and noisy: quote medians. Run: python benchmarks/bench_dataset.py [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from steplab.dataset.files import read_rows  # noqa: E402
from steplab.dataset.load import funnel_from_files  # noqa: E402

ASSETS = ROOT / "tests" / "data" / "llamafactory-runs" / "assets"


def write(folder: Path, rows: int, name: str) -> None:
    lines = (orjson.dumps({"instruction": f"w{i % 200} w{(i * 7) % 200}", "input": "",
                           "output": None if i % 50 == 0 else f"w{(i * 3) % 200}"}) for i in range(rows))
    (folder / f"{name}.jsonl").write_bytes(b"\n".join(lines) + b"\n")


def median_time(work, runs: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(runs):
        start = time.perf_counter()
        result = work()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        write(folder, 10**6, "big")
        write(folder, 20_000, "small")
        (folder / "dataset_info.json").write_bytes(orjson.dumps({"big": {"file_name": "big.jsonl"},
                                                                 "small": {"file_name": "small.jsonl"}}))
        size = (folder / "big.jsonl").stat().st_size
        read, rows = median_time(lambda: read_rows(folder / "big.jsonl", "big"), runs)
        whole, funnel = median_time(lambda: funnel_from_files({"dataset": "big", "dataset_dir": str(folder)},
                                                              Path(".")), runs)
        packing = {"dataset": "small", "dataset_dir": str(folder), "packing": True, "cutoff_len": 64,
                   "template": "qwen", "model_name_or_path": str(ASSETS / "tiny-qwen2")}
        packed_time, packed = median_time(lambda: funnel_from_files(packing, Path(".")), runs)
    print(f"10^6-row JSONL ({size / 2**20:.1f} MiB): read {read:.2f} s, whole funnel {whole:.2f} s "
          f"({len(rows) / whole:,.0f} rows/s) -> {funnel.train_examples:,} train examples; median of {runs}")
    print(f"packing 20,000 rows with tokenizer.json: {packed_time:.2f} s ({20_000 / packed_time:,.0f} rows/s) -> "
          f"{packed.train_examples:,} packs; median of {runs}")


if __name__ == "__main__":
    main()
