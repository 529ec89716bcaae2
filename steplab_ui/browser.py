"""What only the browser can do for a page: keep the learner's progress code in this browser's local storage, and
scroll the page back to its top.

Both are `st.components.v2` components: a few lines of JavaScript run in the page itself (no frame, nothing
fetched), mounted with no visible content. Storage can be blocked (a private window, an embedding site's
policy): then the code stays in the session only, as before, and nothing breaks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

STORAGE_KEY = "steplab.progress"

_MEMORY_JS = """
export default function (component) {
  const { data, setTriggerValue } = component;
  try {
    const storage = window.localStorage;
    if (data.forget) { storage.removeItem(data.key); return; }
    if (data.code) { storage.setItem(data.key, data.code); return; }
    const stored = storage.getItem(data.key);
    if (stored) { setTriggerValue("stored", stored); }
  } catch (error) {
    /* storage blocked: the progress stays in this session only */
  }
}
"""

_SCROLL_JS = """
export default function (component) {
  const main = document.querySelector("[data-testid='stMain']");
  if (main) { main.scrollTo({ top: 0 }); }
  window.scrollTo({ top: 0 });
}
"""

_CSS = ":host { display: none; }"


@st.cache_resource(show_spinner=False)
def _components() -> dict[str, Callable[..., Any]]:
    """Registered once per server process (registering again would replace them for every session)."""
    return {"memory": st.components.v2.component("steplab_progress_memory", js=_MEMORY_JS, css=_CSS),
            "scroll": st.components.v2.component("steplab_scroll_top", js=_SCROLL_JS, css=_CSS)}


def remember(code: str, key: str, *, forget: bool = False, on_stored: Callable[[], None] | None = None) -> str | None:
    """Keep `code` in this browser; with no code, ask for one kept earlier. Returns the stored code the browser
    sent back in this run (once, right after the page loads), else None."""
    mount = _components()["memory"]
    result = mount(key=key, data={"key": STORAGE_KEY, "code": code, "forget": forget},
                   on_stored_change=on_stored or (lambda: None))
    return getattr(result, "stored", None)


def scroll_to_top(when: int | str, key: str) -> None:
    """Scroll the page to its top once for each new value of `when` (a lesson just opened from its end)."""
    _components()["scroll"](key=key, data={"when": when})
