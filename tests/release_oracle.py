"""The real Trainer of any release StepLab has a row for, on the same generated setups as `oracle.run_trainer`.

5.24.0 is the suite's own transformers; 5.6.0 is LLaMA-Factory's environment (`tests/llamafactory_env.py`); every
other release is its wheel (`tests/wheels.py`) put in front of the suite's packages (5.x: of LLaMA-Factory's), with the release's import-time
dependency pin check switched off (it pins tokenizers; the Trainer never calls it), as `tests/release_runs.py` does.
One subprocess per call runs all the configs given.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
INSTALLED = "5.24.0"
RUN_ALL = """
import json, sys, types
if sys.argv[2] == "unpin":
    check = types.ModuleType("transformers.dependency_versions_check")
    check.dep_version_check = lambda pkg, hint=None: None
    sys.modules["transformers.dependency_versions_check"] = check
if sys.argv[3]:
    sys.path.insert(0, sys.argv[3])
sys.path.insert(0, sys.argv[1])
import transformers
from oracle import run_trainer
requests = json.loads(sys.stdin.read())
print(json.dumps({"version": transformers.__version__,
                  "results": [run_trainer(config, **request) for config, request in requests]}))
"""


def interpreter_for(release: str) -> tuple[str, str, str]:
    """(Python, wheel folder or "", "unpin" or "") that runs `release`'s Trainer."""
    if release == INSTALLED:
        return sys.executable, "", ""
    from llamafactory_env import python
    from wheels import unpacked

    if release == "5.6.0":
        return str(python()), "", ""
    if release.startswith("5."):  # 5.x imports httpx, which LLaMA-Factory's environment has and the suite's not
        return str(python()), str(unpacked(f"transformers=={release}")), "unpin"
    return sys.executable, str(unpacked(f"transformers=={release}")), "unpin"


def run_release(release: str, configs: list[dict[str, Any]], **options: Any) -> list[dict[str, Any]]:
    """What the real Trainer of `release` did with each config (`oracle.run_trainer`'s record, or its error).

    `options` go to `run_trainer` for every config (`eval_dataset=False`: no evaluation set)."""
    python, wheel, unpin = interpreter_for(release)
    requests = [[config, options] for config in configs]
    done = subprocess.run([python, "-c", RUN_ALL, str(HERE), unpin or "-", wheel], input=json.dumps(requests),
                          capture_output=True, text=True, timeout=1800, cwd=HERE.parent,
                          env={"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_VERBOSITY": "error",
                               "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1", "TOKENIZERS_PARALLELISM": "false"})
    assert done.returncode == 0, done.stderr[-3000:]
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert answer["version"] == release, answer["version"]
    return answer["results"]
