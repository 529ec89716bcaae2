"""The real LLaMA-Factory 0.9.5 data pipeline, in an environment of its own, as a test oracle.

LLaMA-Factory pins transformers ≤ 5.6 and datasets ≤ 4.0, older than the suite's, so it gets a virtual
environment of its own, built once into `.cache/llamafactory-0.9.5` (or `STEPLAB_LLAMAFACTORY_ENV`) from
`tests/data/llamafactory-env/constraints.txt`: the versions of the real runs in `tests/data/llamafactory-runs`.
The venv sees the suite's torch 2.13.0 through `cached_env` (no second torch is installed);
torchvision and torchaudio are not installed (their wheels are built for other torch releases) and
`llamafactory_worker.py` stubs torchaudio, which `llamafactory.data.mm_plugin` imports but text rows never use.
`tests/cached_env.py` builds it (parallel pytest workers wait on a file lock while one builds it; no index
reachable: the tests skip, saying so).

`Oracle` keeps one worker process per test process (LLaMA-Factory's imports take seconds) and asks it for the
train and eval datasets `llamafactory.data.get_dataset` builds from a YAML mapping and a folder of files
(`run`), or for any other request the worker answers (`ask`: a template's encodings, the template registry).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

try:
    from tests.cached_env import ROOT, CachedEnv, Worker
except ImportError:  # imported as a top-level module, with tests/ on the path (scripts/, some tests)
    from cached_env import ROOT, CachedEnv, Worker  # type: ignore[no-redef]

CONSTRAINTS = ROOT / "tests" / "data" / "llamafactory-env" / "constraints.txt"
WORKER = Path(__file__).with_name("llamafactory_worker.py")
ENV_DIR = Path(os.environ.get("STEPLAB_LLAMAFACTORY_ENV", ROOT / ".cache" / "llamafactory-0.9.5"))
ENV = CachedEnv("LLaMA-Factory 0.9.5", CONSTRAINTS, ENV_DIR)


def python() -> Path:
    """The environment's Python, built on first use (the whole test run builds it once); skip if pip cannot."""
    return ENV.python()


class Oracle(Worker):
    """One worker process running LLaMA-Factory's own `get_dataset`; `run` asks it about one case."""

    def __init__(self) -> None:
        super().__init__(python(), WORKER, name="lf-oracle")

    def run(self, config: dict[str, Any], folder: Path) -> dict[str, Any]:
        """What LLaMA-Factory made of `config` run from `folder`: counts and lengths, or its exception."""
        return self.ask({"config": config, "dir": str(folder)})

    def load(self, kind: str, path: Path) -> dict[str, Any]:
        """The rows (and column types) `datasets.load_dataset(kind, data_files=[path])` reads, or its exception."""
        return self.ask({"load": {"kind": kind, "path": str(path)}})
