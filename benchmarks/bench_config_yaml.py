"""Reading the largest config StepLab accepts (1 MiB of YAML) with `steplab.io.safe_yaml.load`, and what each
part costs: the limit scan (libyaml's event parser), building the document with PyYAML's pure-Python loader
(`yaml.safe_load`) and building it with libyaml's (`yaml.CSafeLoader`, the same safe constructor).

Three texts of about 1 MiB, each within the node limit: a flat mapping of about 20,000 keys (a config with a huge
pasted dict), a long list of numbers (`lr_scheduler_kwargs` pasted with a table in it) and a deep but legal
nesting of short mappings. Each is
measured in turn, A B C A B C ..., and the medians are printed with the ratio pure-Python / libyaml.
Run: python benchmarks/bench_config_yaml.py [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import yaml

from steplab.io import safe_yaml

MIB = safe_yaml.MAX_BYTES


def flat_mapping() -> str:
    lines, size, i = [], 0, 0
    while size < MIB - 64:
        line = f"key_{i:06d}: value number {i} of a pasted dictionary\n"
        lines.append(line)
        size += len(line)
        i += 1
    return "".join(lines)


def number_list() -> str:
    lines, size, i = ["lr_scheduler_kwargs:\n  table:\n"], 0, 0
    while size < MIB - 64:
        line = f"    - {i * 1.234567e-7:.18f}\n"  # long numbers: 1 MiB within MAX_NODES items
        lines.append(line)
        size += len(line)
        i += 1
    return "".join(lines)


def nested_blocks() -> str:
    block = "".join(f"{'  ' * depth}level_{depth}:\n" for depth in range(safe_yaml.MAX_DEPTH - 2))
    leaf = "  " * (safe_yaml.MAX_DEPTH - 2) + "leaf: 1\n"
    parts, size, i = [], 0, 0
    nodes = 2 * safe_yaml.MAX_DEPTH  # a group's keys and mappings, a little over
    while size < MIB - len(block) - 64 and (i + 1) * nodes < safe_yaml.MAX_NODES:
        part = f"group_{i}:\n" + "".join("  " + line for line in (block + leaf).splitlines(True))
        parts.append(part)
        size += len(part)
        i += 1
    return "".join(parts)


def seconds(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    texts = {"flat mapping": flat_mapping(), "number list": number_list(), "nested blocks": nested_blocks()}
    ways: dict[str, Callable[[str], object]] = {
        "scan (limits)": safe_yaml._scan,
        "build, pure Python": yaml.safe_load,
        "build, libyaml": lambda text: yaml.load(text, Loader=yaml.CSafeLoader),  # noqa: S506 - the safe loader
        "safe_yaml.load": safe_yaml.load,
    }
    print(f"{'text':<14} {'bytes':>9} " + " ".join(f"{name:>20}" for name in ways) + "   pure/libyaml")
    for name, text in texts.items():
        assert yaml.safe_load(text) == yaml.load(text, Loader=yaml.CSafeLoader)  # noqa: S506 - the same data
        times: dict[str, list[float]] = {way: [] for way in ways}
        for _ in range(runs):
            for way, call in ways.items():
                times[way].append(seconds(lambda call=call, text=text: call(text)))
        medians = {way: statistics.median(values) for way, values in times.items()}
        ratios = [p / c for p, c in zip(times["build, pure Python"], times["build, libyaml"], strict=True)]
        print(f"{name:<14} {len(text.encode()):>9,} " + " ".join(f"{medians[way] * 1000:>17,.0f} ms" for way in ways)
              + f"   {statistics.median(ratios):>6.1f}×")


if __name__ == "__main__":
    main()
