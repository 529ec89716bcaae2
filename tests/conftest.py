import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "tests"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))


@pytest.fixture(autouse=True)
def _reset_streamlit_pages_mode():
    """A `pages/` folder puts Streamlit's process-wide page mode in legacy until st.navigation runs; reset it
    so each AppTest starts like a fresh server (Streamlit's own test suite does the same)."""
    try:
        from streamlit.runtime.pages_manager import PagesManager
    except ImportError:
        yield
        return
    if hasattr(PagesManager, "uses_pages_directory"):
        PagesManager.uses_pages_directory = None
    yield
