"""What a journey must never meet, watched for the whole visit: Streamlit's error dialog (the "Connection error"
modal), an exception element, an uncaught script error or a console error in the browser.

One console error is Streamlit's own design and not a fault: a page opened by its own URL (`/config`, a reload, a
cold deep link) makes the frontend probe whether the app is served under that path, `GET /config/_stcore/health`
and `/config/_stcore/host-config`, which the server answers 404 before the frontend falls back to `/_stcore/...`.
Chromium logs each 404 as "Failed to load resource"; those two probes of a StepLab page path are left out, any
other failed request is not.
"""

from __future__ import annotations

import re

from playwright.sync_api import ConsoleMessage, Error, Page, expect

from steplab_ui.shell.navigation import PAGES

PATHS = "|".join(re.escape(url) for *_, url, _ in PAGES)
PROBE = re.compile(rf"^https?://[^/]+/({PATHS})/_stcore/(health|host-config)$")


class Watch:
    """Listens from the moment it is made; `check()` fails on anything met since, naming it and where."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.problems: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", self._page_error)

    def _console(self, message: ConsoleMessage) -> None:
        if message.type != "error":
            return
        source = (message.location or {}).get("url", "")
        if message.text.startswith("Failed to load resource") and PROBE.match(source):
            return
        self.problems.append(f"console error at {self.page.url}: {message.text} ({source})")

    def _page_error(self, error: Error) -> None:
        self.problems.append(f"uncaught error at {self.page.url}: {error}")

    def check(self, where: str = "") -> None:
        """No error dialog, no exception element, no console or script error so far (`where`: the step, for the
        message)."""
        expect(self.page.get_by_role("dialog"), f"an error dialog {where}").to_have_count(0)
        expect(self.page.get_by_test_id("stException"), f"an exception element {where}").to_have_count(0)
        assert not self.problems, f"{where}: " + "\n".join(self.problems)
