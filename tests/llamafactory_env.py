"""The real LLaMA-Factory 0.9.5 data pipeline, in an environment of its own, as a test oracle.

LLaMA-Factory pins transformers ≤ 5.6 and datasets ≤ 4.0, older than the suite's, so it gets a virtual
environment of its own, built once into `.cache/llamafactory-0.9.5` (or `STEPLAB_LLAMAFACTORY_ENV`) from
`tests/data/llamafactory-env/constraints.txt`: the versions of the real runs in `tests/data/llamafactory-runs`.
The venv sees the suite's torch 2.13.0 through `--system-site-packages` (no second torch is installed);
torchvision and torchaudio are not installed (their wheels are built for other torch releases) and
`llamafactory_worker.py` stubs torchaudio, which `llamafactory.data.mm_plugin` imports but text rows never use.
Parallel pytest workers wait on a file lock while one builds it. No index reachable: the tests skip, saying so.

`Oracle` keeps one worker process per test process (LLaMA-Factory's imports take seconds) and asks it for the
train and eval datasets `llamafactory.data.get_dataset` builds from a YAML mapping and a folder of files
(`run`), or for any other request the worker answers (`ask`: a template's encodings, the template registry).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import venv
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONSTRAINTS = ROOT / "tests" / "data" / "llamafactory-env" / "constraints.txt"
WORKER = Path(__file__).with_name("llamafactory_worker.py")
ENV_DIR = Path(os.environ.get("STEPLAB_LLAMAFACTORY_ENV", ROOT / ".cache" / "llamafactory-0.9.5"))


def _requirements() -> list[str]:
    lines = CONSTRAINTS.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def _fingerprint() -> str:
    return hashlib.sha256(CONSTRAINTS.read_bytes() + sys.version.encode()).hexdigest()[:16]


def python() -> Path:
    """The environment's Python, built on first use (the whole test run builds it once); skip if pip cannot."""
    interpreter = ENV_DIR / "venv" / "bin" / "python"
    marker = ENV_DIR / "ready"
    if marker.is_file() and marker.read_text() == _fingerprint():
        return interpreter
    ENV_DIR.mkdir(parents=True, exist_ok=True)
    with open(ENV_DIR.parent / f"{ENV_DIR.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if marker.is_file() and marker.read_text() == _fingerprint():
            return interpreter
        marker.unlink(missing_ok=True)
        shutil.rmtree(ENV_DIR / "venv", ignore_errors=True)
        venv.EnvBuilder(system_site_packages=True, with_pip=False, symlinks=True).create(ENV_DIR / "venv")
        # the suite's own pip installs into the venv: no bootstrap download, and the machine's pip settings apply
        command = [sys.executable, "-m", "pip", "--python", str(interpreter), "install", "--quiet",
                   "--disable-pip-version-check", "-c", str(CONSTRAINTS), "--no-deps", *_requirements()]
        done = subprocess.run(command, capture_output=True, text=True, timeout=1200)
        if done.returncode != 0:
            reason = (done.stderr.strip().splitlines() or ["no message"])[-1]
            pytest.skip(f"LLaMA-Factory 0.9.5's environment could not be built from the package index: {reason}")
        marker.write_text(_fingerprint())
    return interpreter


class Oracle:
    """One worker process running LLaMA-Factory's own `get_dataset`; `run` asks it about one case."""

    def __init__(self) -> None:
        self.scratch = Path(tempfile.mkdtemp(prefix="lf-oracle-"))
        env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTHON", "HF_", "STEPLAB"))}
        env.update(HF_DATASETS_CACHE=str(self.scratch / "hf-cache"), HF_HOME=str(self.scratch / "hf-home"))
        self.log = open(self.scratch / "worker.log", "w+")  # noqa: SIM115 - closed in close()
        self.process = subprocess.Popen([str(python()), str(WORKER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=self.log, env=env, cwd=self.scratch, text=True)

    def run(self, config: dict[str, Any], folder: Path) -> dict[str, Any]:
        """What LLaMA-Factory made of `config` run from `folder`: counts and lengths, or its exception."""
        return self.ask({"config": config, "dir": str(folder)})

    def load(self, kind: str, path: Path) -> dict[str, Any]:
        """The rows (and column types) `datasets.load_dataset(kind, data_files=[path])` reads, or its exception."""
        return self.ask({"load": {"kind": kind, "path": str(path)}})

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        """The worker's answer to one request (`llamafactory_worker.py` lists the kinds)."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            self.log.seek(0)
            raise RuntimeError("the LLaMA-Factory worker stopped:\n" + self.log.read()[-4000:])
        return json.loads(line)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.close()  # type: ignore[union-attr]
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.log.close()
        shutil.rmtree(self.scratch, ignore_errors=True)
