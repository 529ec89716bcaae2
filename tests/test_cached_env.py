"""The oracles' own environments see the packages of the interpreter running the suite, in any kind of environment.

`--system-site-packages` gave an oracle's venv the *base* interpreter's packages: in a venv (as people install,
and as `.ci/run` runs) the LLaMA-Factory worker then stopped on "No module named 'pandas'".
"""

from __future__ import annotations

import subprocess
import venv
from pathlib import Path

import pytest

from tests.cached_env import REQUIRE_ENV, _see_suite_packages, oracle_unavailable, suite_site_dirs


def test_an_oracle_venv_imports_the_running_suites_packages(tmp_path: Path) -> None:
    target = tmp_path / "venv"
    venv.EnvBuilder(system_site_packages=False, with_pip=False, symlinks=True).create(target)
    _see_suite_packages(target)
    probe = "import sys, yaml, pandas; print(yaml.__file__); print(pandas.__file__); print(sys.prefix)"
    done = subprocess.run([str(target / "bin" / "python"), "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    yaml_file, pandas_file, prefix = done.stdout.splitlines()
    assert Path(prefix) == target  # it runs in its own venv ...
    for found in (yaml_file, pandas_file):  # ... and finds the suite's packages where the suite finds them
        assert any(Path(found).is_relative_to(site_dir) for site_dir in suite_site_dirs()), found


def test_a_missing_oracle_skips_or_fails_as_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(REQUIRE_ENV, raising=False)
    with pytest.raises(pytest.skip.Exception, match="no index"):
        oracle_unavailable("no index")
    monkeypatch.setenv(REQUIRE_ENV, "1")
    with pytest.raises(pytest.fail.Exception, match="no index"):
        oracle_unavailable("no index")
