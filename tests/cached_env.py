"""A virtual environment of its own for a test oracle, built once; and a worker process that answers in it.

An oracle whose pins differ from the suite's (LLaMA-Factory 0.9.5's transformers 5.6, TRL 1.x) gets a venv
built once into `.cache/<name>` from a constraints file in `tests/data/`. The venv sees the packages of the
interpreter running the suite (torch 2.13.0 above all), whatever kind of environment that is (the base Python, a
venv, conda, uv): a `.pth` file in the new venv adds the running interpreter's site directories after the venv's
own, so its pins win and only what the constraints list is installed, by the suite's own pip (no bootstrap
download; the machine's pip settings apply). (`--system-site-packages` would give it the *base* interpreter's
packages instead, which in a venv are not the suite's.) Parallel pytest workers wait on a file lock while one
builds it; a rebuilt constraints file, or another interpreter or environment, rebuilds it. No index reachable: the
tests skip, saying so, unless `STEPLAB_REQUIRE_ORACLES=1` (`.ci/run` sets it), which makes them fail instead.

`Worker` keeps one process of a worker script running in such an environment (imports once) and exchanges one
JSON line per request with it.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import tempfile
import venv
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
REQUIRE_ENV = "STEPLAB_REQUIRE_ORACLES"


def oracle_unavailable(reason: str) -> None:
    """Skip the test saying `reason`, or fail it where oracles are required (`STEPLAB_REQUIRE_ORACLES=1`)."""
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{reason} ({REQUIRE_ENV}=1: an oracle that cannot run fails the test)", pytrace=False)
    pytest.skip(reason)


def suite_site_dirs() -> list[str]:
    """The site directories of the interpreter running the suite, in its own order (venv, conda, uv or base)."""
    found = list(site.getsitepackages())
    if site.ENABLE_USER_SITE:
        found.append(site.getusersitepackages())
    return [d for d in dict.fromkeys(found) if Path(d).is_dir()]


def _see_suite_packages(venv_dir: Path) -> None:
    """Add the running interpreter's site directories to the venv at `venv_dir`, after its own packages."""
    own = Path(sysconfig.get_path("purelib", vars={"base": str(venv_dir), "platbase": str(venv_dir)}))
    lines = [f"import site; site.addsitedir({d!r})" for d in suite_site_dirs()]
    (own / "_steplab_suite_packages.pth").write_text("\n".join(lines) + "\n", encoding="utf-8")


@dataclass(frozen=True)
class CachedEnv:
    """A venv named `title` (for skip reasons) at `directory`, holding the pins of `constraints`."""

    title: str
    constraints: Path
    directory: Path
    already_here: Callable[[], bool] = lambda: False  # the suite's own Python has the pins: no venv is needed

    def requirements(self) -> list[str]:
        lines = self.constraints.read_text(encoding="utf-8").splitlines()
        return [line.strip() for line in lines if line.strip() and not line.startswith("#")]

    def fingerprint(self) -> str:
        running = "\n".join([sys.version, sys.prefix, *suite_site_dirs()])
        return hashlib.sha256(self.constraints.read_bytes() + running.encode()).hexdigest()[:16]

    def python(self) -> Path:
        """The environment's Python, built on first use (the whole test run builds it once); skip if pip cannot."""
        if self.already_here():
            return Path(sys.executable)
        interpreter = self.directory / "venv" / "bin" / "python"
        marker = self.directory / "ready"
        if marker.is_file() and marker.read_text() == self.fingerprint():
            return interpreter
        self.directory.mkdir(parents=True, exist_ok=True)
        with open(self.directory.parent / f"{self.directory.name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if marker.is_file() and marker.read_text() == self.fingerprint():
                return interpreter
            marker.unlink(missing_ok=True)
            shutil.rmtree(self.directory / "venv", ignore_errors=True)
            venv.EnvBuilder(system_site_packages=False, with_pip=False, symlinks=True).create(self.directory / "venv")
            _see_suite_packages(self.directory / "venv")
            command = [sys.executable, "-m", "pip", "--python", str(interpreter), "install", "--quiet",
                       "--disable-pip-version-check", "-c", str(self.constraints), "--no-deps", *self.requirements()]
            done = subprocess.run(command, capture_output=True, text=True, timeout=1200)
            if done.returncode != 0:
                reason = (done.stderr.strip().splitlines() or ["no message"])[-1]
                oracle_unavailable(f"{self.title}'s environment could not be built from the package index: {reason}")
            marker.write_text(self.fingerprint())
        return interpreter


class Worker:
    """One process of `script` run by `python` (argv `prefix` before it, e.g. torchrun); `ask` sends a request."""

    def __init__(self, python: Path, script: Path, prefix: Sequence[str] = (), name: str = "worker",
                 extra_env: dict[str, str] | None = None) -> None:
        self.name = name
        self.scratch = Path(tempfile.mkdtemp(prefix=f"{name}-"))
        env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTHON", "HF_", "STEPLAB"))}
        env.update(HF_DATASETS_CACHE=str(self.scratch / "hf-cache"), HF_HOME=str(self.scratch / "hf-home"))
        env.update(extra_env or {})
        self.log = open(self.scratch / "worker.log", "w+")  # noqa: SIM115 - closed in close()
        self.process = subprocess.Popen([str(python), *prefix, str(script)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=self.log, env=env, cwd=self.scratch, text=True)

    def ask(self, request: Any) -> Any:
        """The worker's answer to one request."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            self.log.seek(0)
            raise RuntimeError(f"the {self.name} worker stopped:\n" + self.log.read()[-4000:])
        return json.loads(line)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.close()  # type: ignore[union-attr]
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.log.close()
        shutil.rmtree(self.scratch, ignore_errors=True)
