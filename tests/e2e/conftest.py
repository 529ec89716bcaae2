"""Real-browser fixtures: a `streamlit run serve.py` server per scope (what the README and the Dockerfile run)
and Debian's Chromium via pytest-playwright.

Never downloads a browser: pytest-playwright's `browser` fixture is pointed at `shutil.which("chromium")`.
The tests themselves skip (with a reason) when Chromium is not installed.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

ROOT = Path(__file__).resolve().parents[2]  # the repo root: tests/e2e/conftest.py -> tests -> root
ARTIFACTS = ROOT / "artifacts"
SCREENSHOTS = ARTIFACTS / "screenshots"
CHROMIUM = shutil.which("chromium")
SKIP_REASON = "Debian's chromium is not on PATH (apt-get install chromium); browser tests need it"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
HEALTH_TIMEOUT = 60.0
# Playwright's `expect` waits 5 s by default. On a loaded 2-core machine (two test workers, each with its own
# Chromium and app server) a lazily loaded element such as st.metric can take longer to appear the first time.
EXPECT_TIMEOUT_MS = 30_000

expect.set_options(timeout=EXPECT_TIMEOUT_MS)

for path in (ROOT, ROOT / "tests"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class StreamlitServer:
    """`streamlit run serve.py` (or `script`) from the repo root on a free loopback port, output in a temp file."""

    def __init__(self, env: dict[str, str] | None = None, script: str = "serve.py") -> None:
        self.env = env or {}  # more settings, e.g. {"STREAMLIT_SERVER_COOKIE_SECRET": "..."}
        self.script = script
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._log = tempfile.NamedTemporaryFile(prefix="steplab-e2e-", suffix=".log", delete=False)
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> StreamlitServer:
        command = [
            sys.executable, "-m", "streamlit", "run", self.script,
            "--server.headless", "true",
            "--server.port", str(self.port),
            "--server.address", "127.0.0.1",
            "--browser.gatherUsageStats", "false",
            "--server.fileWatcherType", "none",
        ]
        env = {**os.environ, "PYTHONUNBUFFERED": "1", **self.env}
        self._process = subprocess.Popen(command, cwd=ROOT, stdout=self._log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + HEALTH_TIMEOUT
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"streamlit exited with {self._process.returncode}:\n{self.log()}")
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as response:
                    if response.read().decode().strip() == "ok":
                        return self
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"streamlit not healthy after {HEALTH_TIMEOUT:.0f} s:\n{self.log()}")

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(timeout=10)
        self._log.close()

    def restart(self) -> StreamlitServer:
        """Stop the server and start a new one on the same port and settings, as a deployment does: the browsers'
        pages reconnect to it with new sessions (the earlier output stays in the old log file)."""
        self.stop()
        self._log = tempfile.NamedTemporaryFile(prefix="steplab-e2e-", suffix=".log", delete=False)
        return self.start()

    def log(self) -> str:
        self._log.flush()
        return Path(self._log.name).read_text(encoding="utf-8", errors="replace")


def start_server() -> Iterator[StreamlitServer]:
    server = StreamlitServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def app_server() -> Iterator[StreamlitServer]:
    """One server shared by the interaction and screenshot tests (the cold deep-link test has its own)."""
    yield from start_server()


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args: dict) -> dict:
    """pytest-playwright's `context` / `page`: a 1280 × 900 window in the light scheme (tests resize as needed)."""
    return {**browser_context_args, "viewport": {"width": 1280, "height": 900}, "color_scheme": "light"}


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict) -> dict:
    """pytest-playwright launches Debian's Chromium instead of a downloaded one."""
    if CHROMIUM is None:
        pytest.skip(SKIP_REASON)
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_ARGS}


@pytest.fixture(scope="session")
def screenshot_dir() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A browser test that fails runs once more (pytest-rerunfailures; the report counts the rerun, and a second
    failure fails). Under the whole suite, two servers and two browsers share two cores with the other tests, and
    Streamlit's timing there made a different browser test miss once in about every other clean-clone run today
    (a click as a fragment redrew, an input not yet on screen); none failed when run again."""
    here = Path(__file__).resolve().parent
    for item in items:
        if Path(str(item.path)).resolve().is_relative_to(here):
            item.add_marker(pytest.mark.flaky(reruns=1))
