"""Make AppTest time a rerun the way the server runs it.

AppTest builds a new `ScriptCache` for every run, so it parses, rewrites ("magic") and compiles the page
script again each time; the server compiles a script once and reuses the bytecode. For a long page that
compile is a large share of an AppTest rerun (about 40 % of the schedule page's), a cost no student ever
waits for. Uses private names of Streamlit 1.67's AppTest: a measuring aid, not a test.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from streamlit.runtime.scriptrunner.script_cache import ScriptCache
from streamlit.testing.v1 import app_test, local_script_runner


@contextmanager
def one_script_cache() -> Iterator[None]:
    """Inside, every AppTest run shares one bytecode cache, as the server's runs do."""
    originals = app_test.ScriptCache, local_script_runner.ScriptCache
    shared = ScriptCache()
    app_test.ScriptCache = local_script_runner.ScriptCache = lambda: shared
    try:
        yield
    finally:
        app_test.ScriptCache, local_script_runner.ScriptCache = originals
