import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "tests"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

# The live class's database: every test process (and the app servers it starts, which inherit the environment)
# keeps its classes in a fresh folder of its own, never in the checkout's `data/`.
import os  # noqa: E402
import tempfile  # noqa: E402

if not os.environ.get("STEPLAB_DATABASE_URL"):
    os.environ["STEPLAB_DATA_DIR"] = tempfile.mkdtemp(prefix="steplab-test-data-")

import pytest  # noqa: E402


@pytest.fixture(scope="session")
def llamafactory_oracle():
    """One LLaMA-Factory 0.9.5 worker per test process, shared by every module that asks it (each start is about
    ten seconds of imports; the worker starts every request from LLaMA-Factory's registered templates)."""
    from tests.llamafactory_env import Oracle  # skips when LLaMA-Factory's environment cannot be built

    worker = Oracle()
    yield worker
    worker.close()
