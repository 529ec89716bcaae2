"""The app server's event loop is uvloop, pinned like every other package, and its HTTP parser is uvicorn's h11.

Streamlit picks uvloop when it can import it (`streamlit.web.bootstrap`); without it every element a script
thread hands to the loop costs asyncio's self-pipe write, the largest single item of a rerun under a class's
load (README, speed). httptools, the rest of Streamlit's `performance` extra, would make uvicorn answer a URL
over 64 KB with a bare HTTP 400 instead of the page and its notice."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from streamlit.web import bootstrap

ROOT = Path(__file__).resolve().parents[1]


def test_streamlit_would_start_its_server_on_uvloop():
    factory = bootstrap._get_uvloop_loop_factory()
    assert factory is not None, "uvloop is not importable: pip install -c constraints.txt -e . (pyproject.toml)"
    loop = factory()
    try:
        assert type(loop).__module__.startswith("uvloop")
    finally:
        loop.close()


def test_uvloop_is_pinned_and_httptools_is_not_installed():
    pinned = {line.split("==")[0].lower() for line in (ROOT / "constraints.txt").read_text().splitlines()
              if "==" in line and not line.startswith("#")}
    assert "uvloop" in pinned and "httptools" not in pinned
    assert importlib.util.find_spec("httptools") is None, "uvicorn would parse HTTP with httptools (64 KB URLs)"
