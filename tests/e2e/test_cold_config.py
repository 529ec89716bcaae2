"""A cold deep link to /config: the first thing a new server serves is the import page, and a pasted YAML is
applied, kept and applied again; an accumulation of 2000 (beyond the slider's stops) reaches the sidebar, the
URL, the exported YAML and the calculator."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
import yaml
from playwright.sync_api import Browser, expect

from steplab.i18n import fmt_int, t

from .conftest import CHROMIUM, SKIP_REASON, StreamlitServer, start_server
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

PASTED = "gradient_accumulation_steps: 2000\nnum_samples: 1600\nper_device_train_batch_size: 4\n"


@pytest.fixture
def cold_server() -> Iterator[StreamlitServer]:
    """A server of its own for each test: its very first request is the deep link."""
    yield from start_server()


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_paste_on_a_cold_config_link_is_applied_and_kept(browser: Browser, cold_server: StreamlitServer,
                                                           lang: str) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    try:
        open_app(page, f"{cold_server.url}/config" + ("?lang=en" if lang == "en" else ""))
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
