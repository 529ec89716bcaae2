"""Streamlit's message cache is off (`.streamlit/config.toml`, `[global] minCachedMessageSize`): no element is ever
sent as a reference to one the browser is said to hold.

Why: the browser lists the large elements it holds when it asks for a run, then drops what it has not been sent
for two runs as each earlier run finishes. While a fragment ticks (Play on /playground and /animation), runs are
still on their way when the user asks for another; an element that comes back then (Reset to update 1 soon after
Play) is sent as a reference to one the browser has just dropped, and the session dies ("Cached ForwardMsg MISS",
issue 27). The browser side of it is `tests/e2e/test_playground_play.py`.

Checked in a fresh interpreter each (Streamlit's config is process-wide): Streamlit's own `populate_hash_if_needed`
on a large element, with the config Streamlit reads from the app's folder, and without it (the default caches it,
so the difference is the app's setting).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROBE = """
import json
from streamlit import config
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.runtime.forward_msg_cache import populate_hash_if_needed

config.get_config_options(force_reparse=True)  # ./.streamlit/config.toml of the working folder, if any
message = ForwardMsg()
message.delta.new_element.markdown.body = "x" * 200_000  # a large element: a figure's spec is of this kind
populate_hash_if_needed(message)
print(json.dumps({"cacheable": message.metadata.cacheable, "hash": bool(message.hash)}))
"""


def cacheable_in(folder: Path) -> dict[str, bool]:
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=folder, capture_output=True, text=True, timeout=120,
                          check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_app_sends_no_element_as_a_cached_reference(tmp_path: Path) -> None:
    assert cacheable_in(ROOT) == {"cacheable": False, "hash": True}
    assert cacheable_in(tmp_path) == {"cacheable": True, "hash": True}  # Streamlit's default would cache it
