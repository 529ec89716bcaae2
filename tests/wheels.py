"""Wheels of other releases of a package, fetched once from the package index for tests that compare them.

`pip download` brings the one wheel (no dependencies, nothing installed) into `.cache/test-wheels` (or
`STEPLAB_WHEEL_CACHE`); a test skips, saying why, when the index cannot be reached
(fails instead with `STEPLAB_REQUIRE_ORACLES=1`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

try:
    from tests.cached_env import oracle_unavailable
except ImportError:  # imported as a top-level module, with tests/ on the path
    from cached_env import oracle_unavailable  # type: ignore[no-redef]

CACHE = Path(os.environ.get("STEPLAB_WHEEL_CACHE", Path(__file__).resolve().parents[1] / ".cache" / "test-wheels"))


def wheel(requirement: str) -> Path:
    """The wheel file for `requirement` (`name==version`) that pip picks for this Python and machine."""
    name, version = requirement.split("==")
    folder = CACHE / f"{name.lower()}-{version}"
    found = sorted(folder.glob("*.whl")) if folder.is_dir() else []
    if found:
        return found[0]
    CACHE.mkdir(parents=True, exist_ok=True)
    download = tempfile.mkdtemp(dir=CACHE)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
             requirement, "--dest", download], capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            reason = (done.stderr.strip().splitlines() or ["no message"])[-1]
            oracle_unavailable(f"{requirement} could not be downloaded from the package index: {reason}")
        _publish(download, folder)
    finally:
        shutil.rmtree(download, ignore_errors=True)
    return sorted(folder.glob("*.whl"))[0]


def unpacked(requirement: str) -> Path:
    """The wheel unpacked into a folder that can go on `sys.path` (compiled extensions included)."""
    path = wheel(requirement)
    target = path.parent / "unpacked"
    if not target.is_dir():
        scratch = tempfile.mkdtemp(dir=path.parent)
        try:
            with zipfile.ZipFile(path) as archive:
                archive.extractall(scratch)
            _publish(scratch, target)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return target


def _publish(scratch: str, target: Path) -> None:
    """Move a finished folder into place in one step (parallel workers see a whole folder or none)."""
    try:
        os.rename(scratch, target)
    except OSError:  # another worker was first
        pass
