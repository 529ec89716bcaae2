"""`streamlit run serve.py` (README, Dockerfile) imports torch and the views while the server starts, before it
answers; `streamlit run app.py` alone imports them on first use. Read in the server's own memory map: the moment
it is healthy, before any visitor, libtorch is loaded under serve.py and not under app.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import StreamlitServer


def _maps(server: StreamlitServer) -> str:
    assert server._process is not None
    return Path(f"/proc/{server._process.pid}/maps").read_text()


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads the server's /proc/<pid>/maps (Linux)")
@pytest.mark.parametrize(("script", "loaded"), [("serve.py", True), ("app.py", False)])
def test_torch_is_loaded_before_the_first_visitor_only_under_serve_py(script: str, loaded: bool) -> None:
    server = StreamlitServer(script=script).start()
    try:
        assert ("libtorch_cpu" in _maps(server)) is loaded
    finally:
        server.stop()
