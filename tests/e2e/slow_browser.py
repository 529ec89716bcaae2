"""A browser that hears the server late, and the console errors a page made: for tests of what ticks (Play).

`hear_late(page, ms)` makes every message of Streamlit's websocket reach the page `ms` later, in order: a phone on
a slow network, or a loaded machine, as the server meets it. The browser then sends its next tick before it has
drawn the last one, with its controls' values of a tick or two ago, and its list of the large elements it holds is
out of date by the time the answer comes: both broke Play (issue 27). Deterministic, where throttling the CPU only
makes it likely, and it costs the machine nothing.
"""

from __future__ import annotations

from urllib.parse import urlparse

from playwright.sync_api import BrowserContext, ConsoleMessage, Page

# Streamlit's frontend listens with addEventListener("message", …); each event is handed on after the delay the
# page holds at that moment (0 until a test sets it: the page loads at full speed); what the page sends is counted
LATE_MESSAGES = """(() => {
    window.__steplab_sent = 0;  // messages the page sent (a rerun request each: a tick, a click)
    const send = WebSocket.prototype.send;
    WebSocket.prototype.send = function (data) { window.__steplab_sent += 1; return send.call(this, data); };
    const listen = WebSocket.prototype.addEventListener;
    WebSocket.prototype.addEventListener = function (type, listener, options) {
        if (type !== "message") return listen.call(this, type, listener, options);
        const late = (event) => setTimeout(() => listener.call(this, event), window.__steplab_late_ms || 0);
        return listen.call(this, type, late, options);
    };
})();"""
PROBES = ("/_stcore/health", "/_stcore/host-config")  # Streamlit's frontend tries the page's path as a base first


def can_hear_late(context: BrowserContext) -> None:
    """Every page of `context` opened from now on can be made to hear its server late (`hear_late`)."""
    context.add_init_script(LATE_MESSAGES)


def hear_late(page: Page, ms: int) -> None:
    """From now on, each websocket message reaches the page `ms` later (only ever raise it: order is kept)."""
    page.evaluate("(ms) => { window.__steplab_late_ms = ms; }", ms)


def console_errors(page: Page) -> list[str]:
    """Every console error and uncaught page error from now on, except the 404s of Streamlit's base-path probe
    (a page opened at /playground first asks /playground/_stcore/health, then /_stcore/health)."""
    errors: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        url = message.location.get("url", "") if message.location else ""
        probe = "404" in message.text and urlparse(url).path.endswith(PROBES)
        if message.type == "error" and not probe:
            errors.append(f"{message.text} ({url})")

    page.on("console", on_console)
    page.on("pageerror", lambda error: errors.append(f"page error: {error}"))
    return errors


def sent(page: Page) -> int:
    """How many messages the page has sent its server so far (each a request for a run: a tick, a click)."""
    return int(page.evaluate("() => window.__steplab_sent"))
