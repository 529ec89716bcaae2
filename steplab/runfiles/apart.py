"""A run's files explained apart from the server: what /run was given, explained in a child Python at the lowest
CPU priority (`os.nice(19)`), so that a large upload leaves the server's cores to the other visitors' reruns.

`explain_given` is the explanation of the page's inputs (uploads, a pasted log or YAML, a release); `explain_apart`
runs it in `python -m steplab.runfiles.apart` (a pickle of the inputs on stdin, of the `Explanation` on stdout) when
the inputs are large (`APART_BYTES`), else here; if the child cannot run or answer, here too.
"""

from __future__ import annotations

import copyreg
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

from steplab.errors import TrainerRefusal
from steplab.runfiles import kinds
from steplab.runfiles.explanation import Explanation
from steplab.runfiles.gather import text_entry, upload_entries

APART_BYTES = 1024 * 1024
"""Inputs smaller than this are explained in the server's own process (a child's start costs more than they do)."""
CHILD_TIMEOUT = 600.0
PACKAGE_ROOT = Path(__file__).resolve().parents[2]

copyreg.pickle(TrainerRefusal, lambda error: (TrainerRefusal, (error.error_type, error.message, error.field,
                                                               error.fix)))


def explain_given(given: dict[str, Any]) -> Explanation:
    """The explanation of what /run was given: `uploads` [(name, bytes)], `paste` (a console, a state, a log or a
    YAML, told by what it holds), `yaml` (the run's config), `trainer` (a release, or None)."""
    from steplab.runfiles.explain import explain_entries

    problems: list = []
    entries = upload_entries(given["uploads"], problems)
    pasted = given["paste"]
    config = ("pasted.yaml", given["yaml"]) if given["yaml"].strip() else None
    if pasted.strip():
        kind = kinds.sniff(pasted)
        if kind == kinds.CONFIG and config is None:
            config = ("pasted.yaml", pasted)
        else:
            name = {kinds.STATE: "pasted/trainer_state.json", kinds.TRAINER_LOG: "pasted/trainer_log.jsonl"}.get(
                kind, "pasted/console.log")
            entries.append(text_entry(name, pasted))
    return explain_entries(entries, problems, config=config, trainer=given["trainer"])


def size_of(given: dict[str, Any]) -> int:
    return sum(len(data) for _, data in given["uploads"]) + len(given["paste"]) + len(given["yaml"])


def explain_apart(given: dict[str, Any]) -> Explanation:
    """`explain_given`, in a child at the lowest priority when the inputs are large."""
    if size_of(given) < APART_BYTES:
        return explain_given(given)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(PACKAGE_ROOT),
                                                                     os.environ.get("PYTHONPATH")]))}
    try:
        done = subprocess.run([sys.executable, "-m", "steplab.runfiles.apart"], input=pickle.dumps(given),
                              capture_output=True, timeout=CHILD_TIMEOUT, env=env, check=True)
        found = pickle.loads(done.stdout)  # noqa: S301 - our own child's answer
    except (OSError, subprocess.SubprocessError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
        return explain_given(given)
    return found if isinstance(found, Explanation) else explain_given(given)


if __name__ == "__main__":
    os.nice(19)
    inputs = pickle.loads(sys.stdin.buffer.read())  # noqa: S301 - the server's own inputs
    sys.stdout.buffer.write(pickle.dumps(explain_given(inputs)))
