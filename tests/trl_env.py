"""Real TRL on CPU as a test oracle: TRL 1.x beside the suite's transformers, and LLaMA-Factory's TRL 0.24.

TRL 1.16.0 runs on the suite's own transformers 5.24.0 and accelerate 1.16.0, so its venv
(`tests/cached_env.py`, pinned by `tests/data/trl-env/constraints.txt`, `.cache/trl-1.16.0` or
`STEPLAB_TRL_ENV`) holds trl alone and sees everything else through `cached_env`; when the suite's
own Python already has that trl (the `test` extra), it is used as it is. TRL 0.24.0 is the one LLaMA-Factory
0.9.5 pins: its environment (`tests/llamafactory_env.py`, transformers 5.6.0) has it.

`TrlOracle` keeps one `tests/trl_worker.py` process per test process (TRL's imports take seconds) and sends it
lists of configurations; `two_processes` runs the same worker under `torchrun --nproc-per-node 2` (gloo).
"""

from __future__ import annotations

import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

try:
    from tests.cached_env import ROOT, CachedEnv, Worker
    from tests.llamafactory_env import python as llamafactory_python
except ImportError:  # imported as a top-level module, with tests/ on the path
    from cached_env import ROOT, CachedEnv, Worker  # type: ignore[no-redef]
    from llamafactory_env import python as llamafactory_python  # type: ignore[no-redef]

CONSTRAINTS = ROOT / "tests" / "data" / "trl-env" / "constraints.txt"
WORKER = Path(__file__).with_name("trl_worker.py")
PINNED = CONSTRAINTS.read_text(encoding="utf-8").split("trl==")[1].split()[0]


def _suite_has_trl() -> bool:
    try:
        return metadata.version("trl") == PINNED
    except metadata.PackageNotFoundError:
        return False


ENV = CachedEnv(f"TRL {PINNED}", CONSTRAINTS,
                Path(os.environ.get("STEPLAB_TRL_ENV", ROOT / ".cache" / f"trl-{PINNED}")), _suite_has_trl)
RELEASES = ("1", "0.24")
"""The TRL releases the oracle runs: "1" is `PINNED` (TRL 1.x), "0.24" LLaMA-Factory 0.9.5's."""


def python(release: str = "1") -> Path:
    """The Python that imports TRL `release` (its environment built on first use; skip if it cannot be)."""
    return ENV.python() if release == "1" else llamafactory_python()


class TrlOracle(Worker):
    """One TRL worker; `run(cases)` trains every case for real and returns what each run did (or raised)."""

    def __init__(self, release: str = "1") -> None:
        super().__init__(python(release), WORKER, name=f"trl-{release}-oracle")

    def run(self, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return self.ask({"cases": cases})


def two_processes(cases: list[dict[str, Any]], release: str = "1", timeout: float = 600) -> list[dict[str, Any]]:
    """The same cases run by two processes (torchrun, gloo on CPU): rank 0's answers."""
    import json
    import tempfile

    interpreter = python(release)
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTHON", "HF_", "STEPLAB"))}
    env.update(OMP_NUM_THREADS="1")
    with tempfile.TemporaryDirectory(prefix="trl-torchrun-") as scratch:
        request = Path(scratch) / "request.json"
        request.write_text(json.dumps({"cases": cases}), encoding="utf-8")
        done = subprocess.run([str(interpreter), "-m", "torch.distributed.run", "--nproc-per-node", "2",
                               "--master-port", str(_free_port()), str(WORKER), str(request)],
                              capture_output=True, text=True, timeout=timeout, env=env, cwd=scratch)
    lines = [line for line in done.stdout.splitlines() if line.startswith("[")]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"torchrun failed ({done.returncode}):\n{done.stderr[-4000:]}")
    return json.loads(lines[0])


def kept_run(case: dict[str, Any], target: Path, release: str = "1") -> dict[str, Any]:
    """Train one case for real into a scratch folder and keep what a run leaves that StepLab reads, small, in
    `target`: the console (the worker's stderr, the scratch path written `/tmp/run`) and each checkpoint's
    `trainer_state.json`. Returns the worker's answer (the steps and GRPO's generation rounds, or the error)."""
    import json
    import shutil
    import tempfile

    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="trl-kept-") as scratch:
        out = Path(scratch) / "out"
        request = json.dumps({"cases": [{**case, "output_dir": str(out)}]})
        with (target / "console.log").open("w", encoding="utf-8") as console:
            done = subprocess.run([str(python(release)), str(WORKER)], input=request + "\n", stdout=subprocess.PIPE,
                                  stderr=console, text=True, timeout=900, cwd=scratch)
        for state in sorted(out.glob("checkpoint-*/trainer_state.json")):
            kept = target / state.parent.name / "trainer_state.json"
            kept.parent.mkdir(exist_ok=True)
            shutil.copy(state, kept)
        text = (target / "console.log").read_text(encoding="utf-8").replace(scratch, "/tmp/run")
    mark = "=== the run again, resumed from its last checkpoint ===\n"  # trl_worker.RESUMED_MARK: a stopped run's
    if mark in text:  # first console, then the resumed run's
        first, text = text.split(mark, 1)
        (target / "console-part1.log").write_text(first, encoding="utf-8")
    (target / "console.log").write_text(text, encoding="utf-8")
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"the TRL worker failed ({done.returncode}):\n{text[-3000:]}")
    return json.loads(lines[-1])[0]


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


if __name__ == "__main__":  # build the environment and print its Python
    print(python(sys.argv[1] if len(sys.argv) > 1 else "1"))
