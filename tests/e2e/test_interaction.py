"""Keyboard, language switch and shareable URLs on the calculator, in a real browser."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from steplab.i18n import t

from .conftest import CHROMIUM, SKIP_REASON, StreamlitServer
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

SLOW = 60_000



@pytest.fixture
def calculator(context: BrowserContext, app_server: StreamlitServer) -> Page:
    """/calculator in Chinese with the course setup, fully drawn."""
    page = context.new_page()
    open_app(page, app_server.url + "/calculator")
    expect(title(page)).to_have_text(t("zh", "page.calculator.title"), timeout=SLOW)
    expect(metric_value(page, t("zh", "card.total_steps"))).to_have_text(f"{expected_total_steps():,}", timeout=SLOW)
    return page


def test_accumulation_slider_moves_with_arrow_key(calculator: Page) -> None:
    page = calculator
    label = t("zh", "field.gradient_accumulation_steps")
    assert label == "梯度累积"  # the chapter's word (lessons/glossary.yaml)
    # The accessible name is "<label> <label>" (aria-labelledby lists the thumb and the group), so no exact=True.
    slider = sidebar(page).get_by_role("slider", name=label)
    expect(slider).to_have_count(1)
    expect(slider).to_have_attribute("aria-valuetext", "8")
    total = metric_value(page, t("zh", "card.total_steps"))
    expect(total).to_have_text("150")

    slider.focus()
    expect(slider).to_be_focused()
    page.keyboard.press("ArrowRight")
    wait_for_app_run(page)

    expect(slider).to_have_attribute("aria-valuetext", "12", timeout=SLOW)  # the stop after 8
    expected = expected_total_steps(gradient_accumulation_steps=12)
    assert expected == hand_total_steps(1600, 4, 12, 3) == 102
    expect(total).not_to_have_text("150", timeout=SLOW)
    expect(total).to_have_text(f"{expected:,}")
    # The slider copies its stop into the exact input, which is the one bound to the URL.
    expect(exact_input(page, t("zh", "field.exact", name=label))).to_have_value("12")
    expect(page).to_have_url(re.compile(r"[?&]gradient_accumulation_steps=12(&|$)"), timeout=SLOW)
    expect_no_exception(page)


def test_language_switch_to_english_and_back(calculator: Page) -> None:
    page = calculator
    switch = sidebar(page).get_by_role("radiogroup", name="语言 / Language")
    switch.get_by_role("radio", name="English", exact=True).click()
    wait_for_app_run(page)

    expect(title(page)).to_have_text("Step calculator", timeout=SLOW)
    expect(page).to_have_url(re.compile(r"[?&]lang=en(&|$)"), timeout=SLOW)
    expect(switch.get_by_role("radio", name="English", exact=True)).to_have_attribute("aria-checked", "true")
    # The sidebar follows the language too, and the numbers stay.
    expect(sidebar(page).get_by_role("slider", name="Gradient accumulation steps")).to_have_count(1)
    expect(metric_value(page, "Total steps")).to_have_text("150", timeout=SLOW)

    switch.get_by_role("radio", name="中文", exact=True).click()
    wait_for_app_run(page)
    expect(title(page)).to_have_text("步数计算器", timeout=SLOW)
    expect(page).not_to_have_url(re.compile(r"lang="), timeout=SLOW)
    expect_no_exception(page)


def test_changed_value_survives_in_shared_url(calculator: Page, browser: Browser) -> None:
    page = calculator
    label = t("zh", "field.exact", name=t("zh", "field.num_samples"))
    samples = exact_input(page, label)
    samples.fill("1001")
    samples.press("Enter")
    wait_for_app_run(page)

    expected = expected_total_steps(num_samples=1001)
    assert expected == hand_total_steps(1001, 4, 8, 3)
    expect(metric_value(page, t("zh", "card.total_steps"))).to_have_text(f"{expected:,}", timeout=SLOW)
    expect(page).to_have_url(re.compile(r"[?&]num_samples=1001(&|$)"), timeout=SLOW)
    shared = page.url

    other = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        fresh = other.new_page()
        open_app(fresh, shared)
        expect(title(fresh)).to_have_text(t("zh", "page.calculator.title"), timeout=SLOW)
        expect(exact_input(fresh, label)).to_have_value("1001", timeout=SLOW)
        expect(metric_value(fresh, t("zh", "card.total_steps"))).to_have_text(f"{expected:,}", timeout=SLOW)
        # The micro-batch card proves 1001 (not 1000) reached the engine: ceil(1001 / 4) = 251.
        expect(metric_value(fresh, t("zh", "card.micro_batches"))).to_have_text("251")
        expect_no_exception(fresh)
    finally:
        other.close()


def test_sidebar_menu_leads_from_calculator_to_compare(calculator: Page) -> None:
    page = calculator
    link = sidebar(page).get_by_role("link", name=t("zh", "page.compare.title"))
    expect(link).to_be_visible(timeout=SLOW)
    link.click()
    wait_for_app_run(page)
    expect(title(page)).to_have_text(t("zh", "page.compare.title"), timeout=SLOW)
    expect(page).to_have_url(re.compile(r"/compare(\?|$)"))
    expect_no_exception(page)


def test_the_advanced_section_draws_on_opening_and_its_values_outlive_it(calculator: Page) -> None:
    """The advanced section's controls are drawn only while it is open (a sixth of a rerun's CPU otherwise): a
    warmup typed there reaches the plan and the URL, stays when the section closes and after a reload."""
    page = calculator
    label = t("zh", "field.warmup_steps")
    section = sidebar(page).get_by_text(t("zh", "sidebar.advanced"), exact=True)
    expect(sidebar(page).get_by_label(label, exact=True)).to_have_count(0)
    section.click()
    field = sidebar(page).get_by_label(label, exact=True)
    expect(field).to_be_visible(timeout=SLOW)
    field.fill("10")
    field.press("Enter")
    wait_for_app_run(page)
    expect(page).to_have_url(re.compile(r"[?&]warmup_steps=10(&|$)"), timeout=SLOW)
    main = page.locator("[data-testid='stMain']")
    expect(main.get_by_text("warmup_steps = 10")).to_have_count(1, timeout=SLOW)
    section.click()  # closed: the control goes, the value stays
    expect(field).to_have_count(0, timeout=SLOW)
    wait_for_app_run(page)
    expect(page).to_have_url(re.compile(r"[?&]warmup_steps=10(&|$)"))
    page.reload()
    expect(main.get_by_text("warmup_steps = 10")).to_have_count(1, timeout=SLOW)
    expect(page).to_have_url(re.compile(r"[?&]warmup_steps=10(&|$)"))
    expect_no_exception(page)
