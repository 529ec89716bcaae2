"""The app sets its start-up heap aside from the garbage collector once per process (steplab_ui/shell/heap.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROBE = """
import gc
from streamlit.testing.v1 import AppTest
from steplab_ui.shell import heap
assert gc.get_freeze_count() == 0
app = AppTest.from_file("app.py", default_timeout=60)
app.run()
assert not app.exception, app.exception
first = gc.get_freeze_count()
app.run()
print(first, gc.get_freeze_count(), heap.freeze_once())
"""


def test_the_first_run_freezes_the_heap_and_later_runs_do_not():
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    first, after_second, again = done.stdout.split()
    assert int(first) > 10_000  # Streamlit, plotly and StepLab's modules and their objects
    assert int(after_second) <= int(first)  # a second run froze nothing more (frozen objects can still be freed)
    assert again == "False"
