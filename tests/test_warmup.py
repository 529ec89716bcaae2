"""The start-up hook `serve.py` runs (steplab_ui/shell/warmup.py) imports every view and lab module, and torch with them;
tests/e2e/test_serve.py checks the served process itself."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _module(path: Path) -> str:
    """The dotted name a file imports as: steplab_ui/views/labs/parts.py is steplab_ui.views.labs.parts, its __init__.py
    steplab_ui.views.labs."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_the_warmup_imports_every_view_and_lab_module_and_torch() -> None:
    probe = ("import sys; from steplab_ui.shell import warmup; names = warmup.import_everything(); "
             "print('torch' in sys.modules, len(names), *names)")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    torch_loaded, count, *names = done.stdout.split()
    assert torch_loaded == "True" and int(count) == len(names)
    expected = {_module(path) for folder in ("steplab_ui", "steplab/labs") for path in (ROOT / folder).rglob("*.py")
                if path.parent != ROOT / folder or path.stem != "__init__"}  # a subpackage's __init__ is its name
    assert set(names) == expected
