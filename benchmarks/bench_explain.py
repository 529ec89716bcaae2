"""`python -m steplab explain` on a run of 10^5 logged steps: its `trainer_log.jsonl` (10^5 lines) and its
`trainer_state.json` (10^5 rows of `log_history`), with and without the run's YAML.

The files are written as a real run writes them (the learning rate and epoch of every step from the engine, a
made-up loss), so every field agrees and the whole reconciliation runs. Each CLI run is a fresh process; its wall
time, CPU time and peak memory (the child's own VmHWM) are printed as medians. Target: within 1 s.
Run: python benchmarks/bench_explain.py [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from steplab.simulation.run_log import logged_epochs, logged_learning_rates  # noqa: E402
from steplab.trainer.plan import make_plan  # noqa: E402
from steplab.trainer.setup import setup_from_mapping  # noqa: E402

STEPS = 10**5
SETUP = {"num_samples": 32 * STEPS, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 8,
         "num_train_epochs": 1, "learning_rate": 1e-4, "lr_scheduler_type": "cosine", "warmup_steps": 0.1,
         "logging_steps": 1, "save_steps": 10**4}


def write_run(folder: Path) -> Path:
    """A finished run's `trainer_log.jsonl`, `trainer_state.json` and YAML; returns the YAML's path."""
    plan = make_plan(setup_from_mapping(SETUP)[0])
    steps = np.arange(1, plan.optimizer_steps + 1)
    rates, epochs = logged_learning_rates(plan, steps), logged_epochs(plan, steps)
    losses = 2.0 + np.exp(-steps / 2e4) + 0.01 * np.sin(steps)
    history = [{"epoch": float(e), "grad_norm": 0.5, "learning_rate": float(r), "loss": float(v), "step": int(s)}
               for s, r, e, v in zip(steps, rates, epochs, losses, strict=True)]
    train_loss = float(losses.mean())
    history.append({"epoch": 1.0, "step": int(steps[-1]), "train_loss": train_loss, "train_runtime": 1.0})
    state = {"global_step": int(steps[-1]), "max_steps": plan.max_steps, "epoch": 1.0, "num_train_epochs": 1,
             "logging_steps": 1, "save_steps": SETUP["save_steps"], "eval_steps": 1, "train_batch_size": 4,
             "log_history": history}
    (folder / "trainer_state.json").write_text(json.dumps(state, indent=2))
    with (folder / "trainer_log.jsonl").open("w") as out:
        for row in history[:-1]:
            out.write(json.dumps({"current_steps": row["step"], "total_steps": plan.max_steps, "loss": row["loss"],
                                  "lr": row["learning_rate"], "epoch": row["epoch"], "percentage": 0.0}) + "\n")
    config = folder / "config.yaml"
    config.write_text("".join(f"{key}: {value}\n" for key, value in SETUP.items()))
    return config


# `python -m steplab ARGS`, and on exit its own peak resident memory (VmHWM, in kB) on stderr: the child's
# `ru_maxrss` will not do, Linux keeps it across exec, so it would be this (larger) process's
PEAK_ON_EXIT = """import atexit, runpy, sys
def peak():
    with open("/proc/self/status") as status:
        sys.stderr.write(next(line for line in status if line.startswith("VmHWM")).split()[1] + "\\n")
atexit.register(peak)
sys.argv = ["steplab", *sys.argv[1:]]
runpy.run_module("steplab", run_name="__main__")
"""


def run_once(command: list[str]) -> tuple[float, float, float, bytes]:
    """Wall seconds, CPU seconds (user + system), peak memory in MB and output of one fresh CLI process."""
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=err)
        out = process.stdout.read()
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - start
        err.seek(0)
        reported = err.read().split()
    if process.returncode:
        raise RuntimeError(f"{command} exited with {process.returncode}")
    peak = int(reported[-1]) / 1024 if reported else 0.0
    return wall, usage.ru_utime + usage.ru_stime, peak, out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / "run"
        folder.mkdir()
        config = write_run(folder)
        sizes = {p.name: p.stat().st_size / 2**20 for p in folder.iterdir()}
        print(f"run of {STEPS:,} logged steps: " + ", ".join(f"{n} {s:.1f} MB" for n, s in sorted(sizes.items())))
        floor = statistics.median(run_once([sys.executable, "-c", "pass"])[0] for _ in range(3))
        print(f"load average when started: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        for label, extra in (("with its YAML", ["--config", str(config)]), ("files alone", [])):
            command = [sys.executable, "-c", PEAK_ON_EXIT, "explain", str(folder / "trainer_log.jsonl"),
                       str(folder / "trainer_state.json"), *extra]
            result = json.loads(run_once(command)[3])
            wrong = [f["name"] for f in result["fields"] if f["agree"] is False]
            assert not wrong, wrong
            walls, cpus, peaks = [], [], []
            for _ in range(options.runs):
                wall, cpu, peak, _ = run_once(command)
                walls.append(wall)
                cpus.append(cpu)
                peaks.append(peak)
            print(f"explain, {label}: wall median {statistics.median(walls):.3f} s (min {min(walls):.3f}, max "
                  f"{max(walls):.3f}), CPU median {statistics.median(cpus):.3f} s, peak memory "
                  f"{statistics.median(peaks):.0f} MB ({options.runs} runs); "
                  f"{sum(1 for f in result['fields'] if f['agree'])} of {len(result['fields'])} fields agree")
        print(f"  (the interpreter's own start, `python -c pass`: median {floor:.3f} s)")


if __name__ == "__main__":
    main()
