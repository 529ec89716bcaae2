"""The app server's event loop is uvloop (Streamlit's `performance` extra), pinned like every other package.

Streamlit picks uvloop when it can import it (`streamlit.web.bootstrap`); without it every element a script
thread hands to the loop costs asyncio's self-pipe write, the largest single cost of a rerun under a class's
load (README, speed)."""

from __future__ import annotations

import re
from importlib.metadata import requires
from pathlib import Path

from streamlit.web import bootstrap

ROOT = Path(__file__).resolve().parents[1]


def test_streamlit_would_start_its_server_on_uvloop():
    factory = bootstrap._get_uvloop_loop_factory()
    assert factory is not None, "uvloop is not importable: install streamlit[performance] (pyproject.toml)"
    loop = factory()
    try:
        assert type(loop).__module__.startswith("uvloop")
    finally:
        loop.close()


def test_the_performance_extra_is_pinned_in_the_constraints():
    extra = [re.split(r"[<>=;\[ ]", line, maxsplit=1)[0].lower() for line in requires("streamlit") or []
             if 'extra == "performance"' in line]
    pinned = {line.split("==")[0].lower() for line in (ROOT / "constraints.txt").read_text().splitlines()
              if "==" in line and not line.startswith("#")}
    assert extra and set(extra) <= pinned, sorted(set(extra) - pinned)
