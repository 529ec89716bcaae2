"""The playground in a real browser: the linked views at 1280 and 420 px, and scrubbing to update k shows k's
learning rate; editing an operand where it stands changes the setup. Screenshots: artifacts/screenshots/playground-*.png.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from steplab.i18n import fmt_lr
from steplab.teaching.presets import presets
from steplab.trainer.plan import make_plan
from steplab.trainer.setup import setup_from_mapping

from .conftest import CHROMIUM, SKIP_REASON, StreamlitServer
from .streamlit_page import (
    expect_no_exception,
    grow_to_full_height,
    lowest_figure_contrast,
    open_app,
    set_size,
    wait_for_app_run,
)

pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason=SKIP_REASON)]
SLOW = 60_000


def course_plan():
    return make_plan(setup_from_mapping(presets()["course_default"].values)[0])


def charts_drawn(page: Page, count: int = 3) -> None:
    charts = page.get_by_test_id("stPlotlyChart")
    expect(charts).to_have_count(count, timeout=SLOW)
    for index in range(count):
        expect(charts.nth(index).locator(".main-svg").first).to_be_visible(timeout=SLOW)


@pytest.mark.parametrize("width", [1280, 420])
def test_the_linked_views_and_scrubbing_to_k(context: BrowserContext, app_server: StreamlitServer, width: int,
                                             screenshot_dir: Path) -> None:
    page = context.new_page()
    set_size(page, width)
    open_app(page, f"{app_server.url}/playground?lang=en")
    charts_drawn(page)
    main = page.get_by_test_id("stMain")
    expect(main.get_by_text("Update 1 in the accumulation bucket")).to_be_visible()
    exact = main.get_by_role("spinbutton", name="Update k (exact)")
    exact.fill("37")
    exact.press("Enter")
    wait_for_app_run(page)
    rate = fmt_lr(float(course_plan().learning_rates(37, 37)[0]))
    sentence = main.get_by_test_id("stMarkdownContainer").filter(has_text="takes").first
    expect(sentence).to_contain_text("Update 37", timeout=SLOW)
    expect(sentence).to_contain_text(rate)
    expect(main.get_by_text("Update 37 in the accumulation bucket")).to_be_visible()
    expect(page.locator("[data-testid='stPlotlyChart'] text", has_text="k = 37")).to_have_count(2, timeout=SLOW)
    assert "step=37" in page.url
    grow_to_full_height(page, width)
    charts_drawn(page)
    page.screenshot(path=screenshot_dir / f"playground-en-{width}-step37.png", full_page=True, animations="disabled")
    expect_no_exception(page)


def test_click_the_accumulation_in_the_arithmetic_and_change_it(context: BrowserContext,
                                                                app_server: StreamlitServer) -> None:
    page = context.new_page()
    set_size(page, 1280)
    open_app(page, f"{app_server.url}/playground?lang=en")
    charts_drawn(page)
    row = page.locator(".st-key-pg_line_num_update_steps_per_epoch")
    field = page.get_by_role("spinbutton", name="gradient_accumulation_steps").last
    for _ in range(3):  # on a loaded machine the first click can land before the popover is wired up
        row.get_by_role("button", name="8").click()
        try:
            expect(field).to_be_visible(timeout=5_000)
            break
        except AssertionError:
            continue
    field.fill("4")
    field.press("Enter")
    wait_for_app_run(page)
    expect(page.locator(".st-key-pg_line_num_update_steps_per_epoch")).to_contain_text("= 100", timeout=SLOW)
    assert "gradient_accumulation_steps=4" in page.url
    expect_no_exception(page)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_word_in_the_figures_reads_in_both_themes(context: BrowserContext, app_server: StreamlitServer,
                                                        lang: str, screenshot_dir: Path) -> None:
    page = context.new_page()
    open_app(page, f"{app_server.url}/playground?lang={lang}&step=60")
    charts_drawn(page)
    for width in (1280, 420):
        for theme in ("light", "dark"):
            page.emulate_media(color_scheme=theme)
            set_size(page, width)
            page.wait_for_timeout(800)
            ratio, text = lowest_figure_contrast(page)
            assert ratio >= 4.5, f"{text!r} at {ratio:.2f}:1 ({theme}, {width} px)"
            grow_to_full_height(page, width)
            charts_drawn(page)
            page.screenshot(path=screenshot_dir / f"playground-{lang}-{width}-{theme}.png", full_page=True,
                            animations="disabled")
    expect_no_exception(page)
