"""Accessibility in a real browser: an axe-core audit of every page in both languages, and the keyboard.

The audit runs axe-core (bundled by `axe-playwright-python`, nothing is downloaded) on each page of
`steplab_ui.shell.navigation.PAGES`, in Chinese and with `?lang=en`, and fails on any violation of impact
"serious" or "critical", naming rule, element and axe's explanation. The light theme in Chinese and the dark
theme (the app follows the reader's system setting) in English: each language once and each theme once,: a colour that fails, fails in either
language, and a third pass (light in English) cost about a minute of every CI run. The light theme's colours are set in
`.streamlit/config.toml` `[theme.light]` because Streamlit's defaults fail colour contrast (captions 3.88:1,
the selected segmented-control option 4.23:1).

The keyboard test tabs from the top of /calculator until focus reaches the sidebar's controls, moves a
slider with ArrowRight and types into an exact number input, and checks the total-steps card each time.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, Page, expect

from steplab.i18n import t
from steplab_ui.shell.navigation import PAGES

from .conftest import CHROMIUM, SKIP_REASON, StreamlitServer
from .streamlit_page import (
    exact_input,
    expect_no_exception,
    expected_total_steps,
    metric_value,
    open_app,
    sidebar,
    title,
    wait_for_app_run,
)

pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason=SKIP_REASON)]

SLOW = 60_000
BLOCKING = ("serious", "critical")
# Light in both languages; dark (same colours whatever the language) in Chinese only, to keep CI short.
AUDITS = (("light", "zh"), ("dark", "en"))
MAX_TABS = 120


@pytest.fixture(scope="module")
def audit_pages(browser: Browser) -> Iterator[dict[str, Page]]:
    """One browser context per colour scheme for the whole audit (pages load fast once the server is warm)."""
    contexts = {scheme: browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
                for scheme in ("light", "dark")}
    yield {scheme: context.new_page() for scheme, context in contexts.items()}
    for context in contexts.values():
        context.close()


def _url(server: StreamlitServer, path: str, lang: str, default: bool) -> str:
    url = f"{server.url}/{'' if default else path}"
    return url + ("?lang=en" if lang == "en" else "")


def _scheme(page: Page) -> str:
    return "dark" if page.evaluate("() => matchMedia('(prefers-color-scheme: dark)').matches") else "light"


def _describe(violation: dict, node: dict) -> str:
    summary = " ".join(node.get("failureSummary", "").split())
    return (f"[{violation['impact']}] {violation['id']} ({violation['help']}) at {node['target']}\n"
            f"    html: {node['html'][:200]}\n    axe: {summary[:400]}")


# each page audited once, the combinations alternating from page to page (both themes and both languages are
# audited on every other page; every page in both was 65 s of the suite's time for little more found)
AUDITED = [(i, page[2], *AUDITS[i % len(AUDITS)]) for i, page in enumerate(PAGES)]


@pytest.mark.parametrize(("index", "path", "scheme", "lang"), AUDITED, ids=[f"{a[1]}-{a[2]}-{a[3]}" for a in AUDITED])
def test_axe_no_serious_or_critical_violations(audit_pages: dict[str, Page], app_server: StreamlitServer,
                                               index: int, path: str, scheme: str, lang: str) -> None:
    page = audit_pages[scheme]
    open_app(page, _url(app_server, path, lang, default=index == 0))
    if path == "lessons":  # the page opens on the first lesson, whose heading is the h1
        expect(title(page)).to_be_visible(timeout=SLOW)
    else:
        expect(title(page)).to_have_text(t(lang, f"page.{path}.title"), timeout=SLOW)
    expect_no_exception(page)
    page.wait_for_timeout(500)  # lazy widgets (charts, metric cards) finish drawing
    results = Axe().run(page)
    found = [_describe(violation, node) for violation in results.response["violations"]
             if violation["impact"] in BLOCKING for node in violation["nodes"]]
    assert not found, f"/{path} ({lang}, {_scheme(page)}): {len(found)} serious/critical axe violation(s):\n" + "\n".join(found)


def _focused(page: Page) -> dict:
    """Role, accessible label, value and whether the focused element sits in the sidebar."""
    return page.evaluate(
        """() => {
            const el = document.activeElement;
            if (!el || el === document.body) return {role: null};
            const implicit = {range: 'slider', number: 'spinbutton'}[el.type] || el.tagName.toLowerCase();
            return {
                role: el.getAttribute('role') || implicit,
                label: el.getAttribute('aria-label') || '',
                value: el.getAttribute('aria-valuetext') || el.value || '',
                sidebar: !!el.closest("[data-testid='stSidebar']"),
            };
        }"""
    )


def _tab_until(page: Page, wanted, seen: list[dict]) -> dict:
    for _ in range(MAX_TABS):
        page.keyboard.press("Tab")
        focus = _focused(page)
        seen.append(focus)
        if wanted(focus):
            return focus
    raise AssertionError(f"focus never reached the control after {MAX_TABS} Tabs; visited: {seen}")


def test_keyboard_reaches_sidebar_controls_and_changes_total(browser: Browser, app_server: StreamlitServer) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        open_app(page, app_server.url + "/calculator?lang=en")
        expect(title(page)).to_have_text(t("en", "page.calculator.title"), timeout=SLOW)
        total = metric_value(page, t("en", "card.total_steps"))
        expect(total).to_have_text(f"{expected_total_steps():,}", timeout=SLOW)

        wait_for_app_run(page)  # a rerun still drawing would replace the focused slider under the keyboard
        # From the top of the document, Tab only: the first slider in the sidebar is the samples slider.
        page.locator("body").focus()
        page.evaluate("() => document.activeElement && document.activeElement.blur()")
        seen: list[dict] = []
        focus = _tab_until(page, lambda f: f.get("role") == "slider" and f.get("sidebar"), seen)
        samples_slider = sidebar(page).get_by_role("slider", name=t("en", "field.num_samples"))
        expect(samples_slider).to_be_focused()
        assert focus["value"] == "1,600", focus
        page.keyboard.press("ArrowRight")
        wait_for_app_run(page)
        expect(samples_slider).to_have_attribute("aria-valuetext", "2,000", timeout=SLOW)
        after_slider = expected_total_steps(num_samples=2000)
        assert after_slider != expected_total_steps()
        expect(total).to_have_text(f"{after_slider:,}", timeout=SLOW)

        # Keep tabbing: the accumulation exact input is reachable too; type a value and press Enter.
        accumulation = exact_input(page, t("en", "field.exact", name=t("en", "field.gradient_accumulation_steps")))
        _tab_until(page, lambda f: f.get("role") == "spinbutton" and f.get("sidebar")
                   and accumulation.evaluate("el => el === document.activeElement"), seen)
        expect(accumulation).to_be_focused()
        page.keyboard.press("ControlOrMeta+a")
        page.keyboard.type("16")
        page.keyboard.press("Enter")
        wait_for_app_run(page)
        after_input = expected_total_steps(num_samples=2000, gradient_accumulation_steps=16)
        assert after_input != after_slider
        expect(total).to_have_text(f"{after_input:,}", timeout=SLOW)
        expect(accumulation).to_have_value("16")
        roles = {f.get("role") for f in seen if f.get("sidebar")}
        assert {"slider", "spinbutton"} <= roles, roles
        expect_no_exception(page)
    finally:
        context.close()
