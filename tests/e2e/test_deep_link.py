"""Cold deep links: the very first request of a freshly started server lands on a page with a setup in the URL.

/calculator shows the URL's setup and StepLab's menu; on /config a pasted YAML is applied, kept and applied
again, and an accumulation of 2000 (beyond the slider's stops) reaches the sidebar, the URL, the exported
YAML and the calculator."""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator

import pytest
import yaml
from playwright.sync_api import Browser, expect

from steplab.i18n import fmt_int, t
from steplab_ui.shell import layout

from .conftest import CHROMIUM, ROOT, SKIP_REASON, StreamlitServer, start_server
from .streamlit_page import (
    exact_input,
    expect_no_exception,
    expected_total_steps,
    hand_total_steps,
    metric_value,
    open_app,
    sidebar,
    title,
    wait_for_app_run,
)

pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason=SKIP_REASON)]

DEEP_LINK = ("/calculator?num_samples=1000&per_device_train_batch_size=4&gradient_accumulation_steps=8"
             "&num_train_epochs=3&lang=en")


@pytest.fixture(scope="module")
def cold_server() -> Iterator[StreamlitServer]:
    """A server of its own: nothing has been requested from it before the first test below."""
    yield from start_server()


def test_cold_deep_link_shows_calculator_with_url_setup(browser: Browser, cold_server: StreamlitServer) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    try:
        open_app(page, cold_server.url + DEEP_LINK)
        expect(title(page)).to_have_text("Step calculator", timeout=60_000)
        total = expected_total_steps(num_samples=1000, per_device_train_batch_size=4, gradient_accumulation_steps=8,
                                     num_train_epochs=3)
        assert total == hand_total_steps(1000, 4, 8, 3) == 96
        expect(metric_value(page, "Total steps")).to_have_text(f"{total:,}", timeout=60_000)
        expect(exact_input(page, t("en", "field.exact", name=t("en", "field.num_samples")))).to_have_value("1000")
        # Bound widgets drop values equal to their defaults from the URL; the non-defaults stay.
        expect(page).to_have_url(re.compile(r"/calculator\?(?=.*\bnum_samples=1000\b)(?=.*\blang=en\b)"))
        expect_no_exception(page)
        # the tab: StepLab's title and its own icon (the asset's bytes as a data URL, nothing fetched)
        expect(page).to_have_title(re.compile("StepLab"))
        icon = page.locator("link[rel~='icon']").first
        expect(icon).to_have_attribute("href", layout.FAVICON)
        assert base64.b64decode(layout.FAVICON.split(",", 1)[1]) == (ROOT / "steplab_ui/assets/favicon.png").read_bytes()
    finally:
        context.close()


def test_cold_deep_link_sidebar_shows_app_menu(browser: Browser, cold_server: StreamlitServer) -> None:
    """Still on the cold server: the sidebar menu is StepLab's (sections, translated titles), not a legacy
    menu of file names ("app, calculator, compare, config, home") that a cold deep link once showed."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    try:
        open_app(page, cold_server.url + DEEP_LINK)
        expect(title(page)).to_have_text("Step calculator", timeout=60_000)
        bar = sidebar(page)
        for key in ("nav.learn", "nav.explore"):
            expect(bar.get_by_text(t("en", key), exact=True)).to_be_visible(timeout=60_000)
        for key in ("home", "calculator", "compare", "config"):
            expect(bar.get_by_role("link", name=t("en", f"page.{key}.title"))).to_be_visible(timeout=60_000)
        expect(bar.get_by_test_id("stSidebarNav")).to_have_count(0)  # no legacy file-name menu
        expect(bar.get_by_role("link", name="app", exact=True)).to_have_count(0)
    finally:
        context.close()


PASTED = "gradient_accumulation_steps: 2000\nnum_samples: 1600\nper_device_train_batch_size: 4\n"


@pytest.fixture
def fresh_server() -> Iterator[StreamlitServer]:
    """A server of its own for each test that uses it: its very first request is the deep link."""
    yield from start_server()


@pytest.mark.parametrize("lang", ["zh"])
def test_a_paste_on_a_cold_config_link_is_applied_and_kept(browser: Browser, fresh_server: StreamlitServer,
                                                           lang: str) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    try:
        open_app(page, f"{fresh_server.url}/config" + ("?lang=en" if lang == "en" else ""))
        expect(title(page)).to_have_text(t(lang, "page.config.title"), timeout=60_000)
        area = page.get_by_label(t(lang, "config.yaml"))
        area.fill(PASTED)
        apply = page.get_by_role("button", name=t(lang, "config.apply"))
        for _ in range(2):  # applied, and still there to apply again (a cold link used to drop it after one run)
            apply.click()
            wait_for_app_run(page)
            expect(page.get_by_text(t(lang, "config.applied"))).to_be_visible(timeout=60_000)
            expect(area).to_have_value(PASTED)
        accumulation = t(lang, "field.exact", name=t(lang, "field.gradient_accumulation_steps"))
        expect(exact_input(page, accumulation)).to_have_value("2000", timeout=60_000)
        expect(page).to_have_url(re.compile(r"[?&]gradient_accumulation_steps=2000\b"))
        exported = yaml.safe_load(page.get_by_test_id("stCode").inner_text())
        assert exported["gradient_accumulation_steps"] == 2000

        sidebar(page).get_by_role("link", name=t(lang, "page.calculator.title")).click()
        expect(title(page)).to_have_text(t(lang, "page.calculator.title"), timeout=60_000)
        total = expected_total_steps(num_samples=1600, per_device_train_batch_size=4, gradient_accumulation_steps=2000,
                                     num_train_epochs=3)
        expect(metric_value(page, t(lang, "card.total_steps"))).to_have_text(fmt_int(total), timeout=60_000)
        expect(exact_input(page, accumulation)).to_have_value("2000")
        expect_no_exception(page)
    finally:
        context.close()
