"""A cold deep link: the very first request of a freshly started server lands on /calculator with a setup in the URL."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect

from steplab.i18n import t

from .conftest import CHROMIUM, SKIP_REASON, StreamlitServer, start_server
from .streamlit_page import (
    exact_input,
    expect_no_exception,
    expected_total_steps,
    hand_total_steps,
    metric_value,
    open_app,
    sidebar,
    title,
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
