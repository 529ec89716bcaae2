"""/grpo in Debian's Chromium: a cold deep link with GRPO's fields and an event in the URL draws the page, the
frame figure and the console, without an error (one width, one language: the page's rules are AppTest's,
`tests/test_grpo_page.py`)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, expect

from steplab.i18n import fmt_int, t
from steplab.simulation import grpo_run
from steplab.teaching.presets import presets
from steplab.trl.grpo import plan_grpo

from .conftest import CHROMIUM, SKIP_REASON, StreamlitServer
from .slow_browser import console_errors
from .streamlit_page import expect_no_exception, lowest_figure_contrast, metric_value, open_app

pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason=SKIP_REASON)]

LINK = "/grpo?lang=en&num_generations=4&num_iterations=2&grpo_frame=12"  # the second pass: its words in colour


def test_a_cold_deep_link_to_grpo(browser: Browser, app_server: StreamlitServer) -> None:
    plan = plan_grpo(presets()["course_default"].setup(eval_strategy="no", num_generations=4, num_iterations=2))
    frame = grpo_run.build_grpo_timeline(plan).frames[11]
    assert frame.reused  # S = 8 (GA 8), so event 12 is in the second of μ = 2 passes
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors = console_errors(page)
    try:
        open_app(page, app_server.url + LINK)
        expect(metric_value(page, t("en", "grpo.card.updates"))).to_have_text(fmt_int(plan.trainer.max_steps))
        expect(page.get_by_test_id("stPlotlyChart").first.locator(".main-svg").first).to_be_visible()
        slices = fmt_int(plan.steps_per_generation)
        expect(page.get_by_text(f"Micro-batch {fmt_int(frame.slice + 1)} of {slices}").first).to_be_visible()
        expect(page.get_by_text("***** Running training *****")).to_be_visible()
        ratio, text = lowest_figure_contrast(page)  # every word of the figures readable (WCAG AA)
        assert ratio >= 4.5, (ratio, text)
        expect_no_exception(page)
        assert not errors, errors
    finally:
        context.close()
