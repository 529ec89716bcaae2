"""What the live-class browser tests do over and over: open a class, join it, answer, read a metric card; and a
watch over every page of a journey that fails it on anything a person would see go wrong (a Streamlit error
dialog, an exception element, a console error)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from playwright.sync_api import Browser, ConsoleMessage, Locator, Page, expect

from steplab.i18n import t

from .streamlit_page import open_app, wait_for_app_run

LIVE = 20_000  # the projector and the phones refresh every couple of seconds by themselves: no reload
# Every dialog and exception element that ever appears on a page, with when it appeared (the page's clock), kept in
# the page: a short-lived one counts too.
OBSERVER = """(() => {
    window.__steplabSeen = [];
    const said = new Set();
    const look = () => {
        for (const node of document.querySelectorAll("[role='dialog'], [data-testid='stException']")) {
            const text = `${node.getAttribute("role") || node.dataset.testid}: ${node.innerText.slice(0, 300)}`;
            if (!said.has(text)) {
                said.add(text);
                window.__steplabSeen.push([Date.now(), text]);
            }
        }
    };
    new MutationObserver(look).observe(document, {subtree: true, childList: true});
})();"""
# While the server is down, the browser logs the connections it cannot make, and Streamlit each rerun it cannot
# ask for (a fragment's tick) and its pings that got no answer: expected then, and only then.
RESTART_NOISE = re.compile(r"ERR_CONNECTION_REFUSED|ERR_CONNECTION_RESET|WebSocket connection to .* failed|"
                           r"ERR_EMPTY_RESPONSE|Cannot send rerun backMessage when disconnected from server|"
                           r"DoInitPings timed out|^Connection timed out\.$|Client Error in reaching server endpoint|"
                           r"Streamlit server is not responding|Is Streamlit still running")
# Streamlit's own dialog while it cannot reach the server (after six pings, a few seconds): expected while the
# server restarts, and only then; it must close by itself once the page is connected again.
DOWN_DIALOG = re.compile(r"^dialog: Connection error\n+(Connection timed out\.|Streamlit server is not responding|"
                         r"Is Streamlit still running)")
# A page opened at its own path (`/join`) makes Streamlit's frontend look for the server under that path first
# (`/join/_stcore/health`, `/join/_stcore/host-config`) before the root: the 404s it logs then are its own probing.
BASE_PATH_PROBE = re.compile(r"/[A-Za-z0-9_-]+/_stcore/(health|host-config)$")


@dataclass
class Watch:
    """Collects what goes wrong on every page of a journey; `check` fails the test with all of it."""

    problems: list[str] = field(default_factory=list)
    pages: list[tuple[str, Page]] = field(default_factory=list)
    restarting: bool = False
    restarts: list[tuple[float, float]] = field(default_factory=list)  # (from, to) in the pages' clock, ms

    def restart(self, server: Any, connected: Callable[[Page], None]) -> None:
        """Restart `server`; the pages' reconnection noise is expected until `connected` returned for every page."""
        clock = "Date.now()"
        self.restarting, began = True, min(page.evaluate(clock) for _, page in self.pages)
        server.restart()
        for _, page in self.pages:
            connected(page)
            expect(page.get_by_role("dialog")).to_have_count(0)  # Streamlit's "Connection error" closed itself
        self.restarts.append((began, max(page.evaluate(clock) for _, page in self.pages)))
        self.restarting = False

    def page(self, browser: Browser, who: str, width: int, height: int = 900, scheme: str = "light",
             zone: str | None = None) -> Page:
        """A new browser context (its own cookies and session) and its page, watched."""
        context = browser.new_context(viewport={"width": width, "height": height}, color_scheme=scheme,
                                      timezone_id=zone)
        context.add_init_script(OBSERVER)
        page = context.new_page()
        page.on("console", lambda message: self._console(who, message))
        page.on("pageerror", lambda error: self.problems.append(f"{who}: page error: {error}"))
        self.pages.append((who, page))
        return page

    def _console(self, who: str, message: ConsoleMessage) -> None:
        if message.type != "error":
            return
        if self.restarting and RESTART_NOISE.search(message.text):
            return
        if "404" in message.text and BASE_PATH_PROBE.search(message.location.get("url", "")):
            return
        self.problems.append(f"{who}: console error{' (restart)' if self.restarting else ''}: {message.text}")

    def check(self) -> None:
        for who, page in self.pages:
            for when, text in page.evaluate("window.__steplabSeen || []"):
                if DOWN_DIALOG.match(text) and any(began <= when <= ended for began, ended in self.restarts):
                    continue
                self.problems.append(f"{who}: {text}")
            if "Traceback" in page.locator("body").inner_text():
                self.problems.append(f"{who}: a traceback on the page")
        assert not self.problems, "\n".join(self.problems)


def metric_value(page: Page, label: str) -> Locator:
    """The value of the metric card labelled exactly `label` ("Answer" is not "Answered")."""
    label_cell = page.get_by_test_id("stMetricLabel").filter(has_text=re.compile(f"^{re.escape(label)}$"))
    return page.get_by_test_id("stMetric").filter(has=label_cell).get_by_test_id("stMetricValue")


def shown(text: str) -> str:
    """The words of a Markdown sentence as the page shows them, up to its first code span or bold mark."""
    return re.split(r"`|\*\*", text)[0].strip()


def plain(text: str) -> str:
    """A Markdown sentence as the page shows it: without its bold marks and code-span backticks."""
    return text.replace("**", "").replace("`", "")


def lang_query(lang: str) -> str:
    return "lang=en" if lang == "en" else ""


def open_class(page: Page, url: str, lang: str) -> str:
    """Open a new class on `page`; its join code."""
    open_app(page, f"{url}/class?{lang_query(lang)}")
    page.get_by_role("button", name=t(lang, "room.open")).click()
    wait_for_app_run(page)
    expect(metric_value(page, t(lang, "room.code"))).to_have_text(re.compile(r"^[0-9A-Z]{6}$"))
    expect(page.get_by_test_id("stImage").get_by_role("img")).to_be_visible()  # the QR code
    return metric_value(page, t(lang, "room.code")).inner_text()


def join(page: Page, url: str, code: str, nickname: str, lang: str, typed: bool = False) -> None:
    """Join the class of `code` on `page` (the code from the QR code's link, or `typed` in lower case)."""
    open_app(page, f"{url}/join?{lang_query(lang)}" + ("" if typed else f"&code={code}"))
    if typed:
        page.get_by_role("textbox", name=t(lang, "join.code")).fill(code.lower())
    page.get_by_role("textbox", name=t(lang, "join.nickname")).fill(nickname)
    page.get_by_role("button", name=t(lang, "join.button"), exact=True).click()
    wait_for_app_run(page)
    expect(page.get_by_text(t(lang, "join.joined", nickname=nickname).replace("**", ""))).to_be_visible()


def send(page: Page, lang: str, value: str) -> None:
    """Type an answer to the question that arrived by itself and send it."""
    box = page.get_by_role("textbox", name=t(lang, "join.answer"))
    expect(box).to_be_visible(timeout=LIVE)
    box.fill(value)
    page.get_by_role("button", name=t(lang, "join.send"), exact=True).click()
    wait_for_app_run(page)


def answer(page: Page, lang: str, value: str) -> None:
    """Send an answer and see it taken."""
    send(page, lang, value)
    expect(page.get_by_text(t(lang, "join.sent", value=value).replace("**", ""))).to_be_visible()
