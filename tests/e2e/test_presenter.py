"""Presenter view at 1920 × 1080 in Debian's Chromium, on lessons, calculator, schedule, compare and animation.

For each page: the one switch is visible, nothing covers it (`document.elementFromPoint` at its centre is the
switch) and it turns presenter view on and off by mouse, by its shortcut and by Tab + Enter, the URL in step;
in presenter view the key numbers are at least 48 px high and all above the fold, and the figures' words (the
compare page: its table) at least 24 px. Screenshots go to artifacts/screenshots/presenter-*.png.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from steplab.i18n import t
from steplab.teaching.lessons import load_lessons
from steplab_ui.shell import presenter
from steplab_ui.views import lesson as lesson_view

from .conftest import CHROMIUM, SKIP_REASON, StreamlitServer
from .streamlit_page import expect_no_exception, open_app, wait_for_app_run

pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason=SKIP_REASON)]

SLOW = 90_000
WIDTH, HEIGHT = 1920, 1080
ACCUMULATION = next(lesson for lesson in load_lessons() if lesson.id == "accumulation")
ANIMATION_PART = next(i for i, block in enumerate(ACCUMULATION.blocks) if block.data.get("widget") == "animation")
# page -> (its URL, how many key numbers it shows in presenter view, whether it draws a figure)
PAGES = {
    "lessons": (f"/lessons?lesson={ACCUMULATION.id}", 6, True),  # the part with the animation: six counters
    "calculator": ("/calculator", 6, True),
    "schedule": ("/schedule", 5, True),
    "compare": ("/compare", 3, False),
    "animation": ("/animation?frame=8", 6, True),
}
# each page once, Chinese in the light scheme and English in the dark taking turns
PROJECTIONS = [(name, *(("zh", "light"), ("en", "dark"))[i % 2]) for i, name in enumerate(PAGES)
               if name in ("lessons", "calculator", "animation")]  # the presenter style is one; /schedule and
# /compare at 1920 x 1080 were 25 s of the suite: the AppTest checks the style and figure fonts on every page
DEEPEST = "e => { let n = e; while (n.firstElementChild) n = n.firstElementChild; return n; }"
ON_TOP = """(e) => {
    const box = e.getBoundingClientRect();
    const hit = document.elementFromPoint(box.x + box.width / 2, box.y + box.height / 2);
    return hit !== null && e.contains(hit);
}"""
FIGURE_WORDS = """() => [...document.querySelectorAll("[data-testid='stMain'] [data-testid='stPlotlyChart'] text")]
    .filter((text) => text.textContent.trim() && text.getBoundingClientRect().width > 0)
    .map((text) => [parseFloat(getComputedStyle(text).fontSize), text.textContent])"""
TABLE_WORDS = """() => [...document.querySelectorAll("[data-testid='stMain'] [data-testid='stTable'] :is(td, th)")]
    .filter((cell) => cell.textContent.trim())
    .map((cell) => [parseFloat(getComputedStyle(cell).fontSize), cell.textContent])"""


@pytest.fixture(scope="module")
def server_url(app_server: StreamlitServer) -> str:
    return app_server.url


def switch(page: Page) -> Locator:
    return page.locator(f".st-key-{presenter.SWITCH} button:visible")


def presenter_in_url(page: Page) -> bool:
    return re.search(r"[?&]presenter=1(&|$)", page.url) is not None


def expect_reachable(page: Page, label: str) -> None:
    """The switch says `label`, is on screen and is the element a click at its centre reaches."""
    button = switch(page)
    expect(button).to_have_count(1, timeout=SLOW)
    expect(button).to_contain_text(label, timeout=SLOW)
    expect(button).to_be_visible()
    box = button.bounding_box()
    assert box and box["x"] >= 0 and box["y"] >= 0 and box["x"] + box["width"] <= WIDTH
    assert box["y"] + box["height"] <= HEIGHT
    assert button.evaluate(ON_TOP), "something covers the presenter switch"


def expect_state(page: Page, lang: str, on: bool) -> None:
    wait_for_app_run(page, timeout=SLOW)
    expect_reachable(page, t(lang, "presenter.leave" if on else "presenter.enter"))
    sidebar = page.get_by_test_id("stSidebar")
    if on:
        expect(sidebar).to_be_hidden(timeout=SLOW)
        expect(page.get_by_test_id("stHeader")).to_be_hidden(timeout=SLOW)
    else:
        expect(sidebar).to_be_visible(timeout=SLOW)
    page.wait_for_function("(on) => /[?&]presenter=1(&|$)/.test(location.search) === on", arg=on, timeout=SLOW)
    assert presenter_in_url(page) is on


def tab_to_switch(page: Page) -> None:
    """Focus the switch the way a keyboard does: Tab from the top of the page until it has the focus."""
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    for _ in range(120):
        page.keyboard.press("Tab")
        if switch(page).evaluate("e => e === document.activeElement"):
            return
    raise AssertionError("Tab never reached the presenter switch")


def key_numbers(page: Page, count: int) -> list[tuple[float, float]]:
    """(font size of the number itself, bottom edge) of each key number on the page."""
    values = page.get_by_test_id("stMain").get_by_test_id("stMetricValue")
    expect(values).to_have_count(count, timeout=SLOW)
    return [(float(value.evaluate(f"e => parseFloat(getComputedStyle(({DEEPEST})(e)).fontSize)")),
             value.bounding_box()["y"] + value.bounding_box()["height"]) for value in values.all()]


@pytest.mark.parametrize("name, lang, scheme", PROJECTIONS, ids=["-".join(p) for p in PROJECTIONS])
def test_one_switch_and_a_projector_view(browser: Browser, server_url: str, screenshot_dir: Path, name: str,
                                         lang: str, scheme: str):
    path, count, has_figure = PAGES[name]
    context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT}, color_scheme=scheme)
    page = context.new_page()
    try:
        open_app(page, server_url + path + (("&" if "?" in path else "?") + "lang=en" if lang == "en" else ""))
        expect_state(page, lang, on=False)

        switch(page).click()  # the mouse: on, then off
        expect_state(page, lang, on=True)
        switch(page).click()
        expect_state(page, lang, on=False)

        page.keyboard.press(presenter.SHORTCUT)  # the keyboard: the shortcut turns it on anywhere on the page
        expect_state(page, lang, on=True)
        if name == "lessons":  # the lesson's parts move by keyboard too; the animation is one PageDown away
            for _ in range(ANIMATION_PART):
                page.keyboard.press("PageDown")
                wait_for_app_run(page, timeout=SLOW)
            expect(page.get_by_test_id("stProgress")).to_contain_text(
                t(lang, "lesson.position", n=ANIMATION_PART + 1, total=len(ACCUMULATION.blocks)), timeout=SLOW)
        if has_figure:
            expect(page.get_by_test_id("stMain").get_by_test_id("stPlotlyChart").first.locator(".main-svg").first
                   ).to_be_visible(timeout=SLOW)
        wait_for_app_run(page, timeout=SLOW)
        page.wait_for_timeout(800)
        page.screenshot(path=str(screenshot_dir / f"presenter-{name}-{lang}-1920-{scheme}.png"), timeout=SLOW)

        numbers = key_numbers(page, count)
        assert all(size >= 48 for size, _ in numbers), numbers
        assert all(bottom <= HEIGHT for _, bottom in numbers), f"a key number below the fold: {numbers}"
        words = page.evaluate(FIGURE_WORDS if has_figure else TABLE_WORDS)
        assert words, "no words measured"
        smallest = min(words)
        assert smallest[0] >= 24, f"{smallest[1]!r} is {smallest[0]} px"
        expect_no_exception(page)

        tab_to_switch(page)  # the keyboard again: Tab to the switch, Enter turns presenter view off
        page.keyboard.press("Enter")
        expect_state(page, lang, on=False)
        expect_no_exception(page)
    finally:
        context.close()


def test_a_deep_link_opens_presenter_view_and_the_session_keeps_it(browser: Browser, server_url: str):
    context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
    page = context.new_page()
    try:
        open_app(page, server_url + "/?presenter=1&lang=en")
        expect_state(page, "en", on=True)
        page.get_by_test_id("stMain").get_by_role("link", name=t("en", "page.calculator.title")).click()
        expect(page.get_by_test_id("stMain").locator("h1").first).to_have_text(
            t("en", "page.calculator.title"), timeout=SLOW)
        expect_state(page, "en", on=True)  # a page change keeps presenter view, and the URL says so again
    finally:
        context.close()



RL = next(lesson for lesson in load_lessons() if lesson.number == 11)
CHOICE_MARKS = """() => [...document.querySelectorAll("[data-testid='stMain'] [data-testid='stRadioOption']")]
    .map((option) => [option.querySelector(':scope > div > div:first-child').getBoundingClientRect().width,
                      parseFloat(getComputedStyle(option.querySelector('p')).fontSize)])"""
CUT_LABELS = """() => [...document.querySelectorAll("[data-testid='stMain'] [data-testid='stMetricLabel'] *")]
    .filter((e) => e.scrollWidth > e.clientWidth + 1 || getComputedStyle(e).textOverflow === 'ellipsis'
                   && e.scrollWidth > e.clientWidth).map((e) => e.textContent)"""


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_lesson_11s_self_check_fits_the_projector_with_choices_a_hand_can_hit(browser: Browser, server_url: str,
                                                                               screenshot_dir: Path, lang: str):
    """Issue 39: the last part of lesson 11 (its self-check) was 1,585 px high at 1920 x 1080 and its radio circles
    were a 16 px dot beside 30 px words. Every question's check button is above the fold, each circle at least
    as wide as three quarters of its words' size."""
    context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
    page = context.new_page()
    try:  # by its number: `?lesson=11` opens it (issue 39 too)
        open_app(page, f"{server_url}/lessons?lesson={RL.number}&presenter=1" + ("&lang=en" if lang == "en" else ""))
        following = page.locator(f".st-key-{lesson_view.PARTS}_next button").first
        for part in range(2, len(RL.blocks) + 1):  # each press waits for the part it opens (a press sent while
            # the last one's run was still on its way was taken into it: two presses, one part), and is sent once
            # the button it stands for is drawn and enabled (on a busy machine the first came before it, and was lost)
            expect(following).to_be_enabled(timeout=SLOW)
            page.keyboard.press("PageDown")
            wait_for_app_run(page, timeout=SLOW)
            expect(page.get_by_test_id("stProgress")).to_contain_text(
                t(lang, "lesson.position", n=part, total=len(RL.blocks)), timeout=SLOW)
        checks = page.get_by_test_id("stMain").get_by_role("button", name=t(lang, "quiz.check"))
        expect(checks.first).to_be_visible(timeout=SLOW)
        page.screenshot(path=str(screenshot_dir / f"presenter-lesson11-check-{lang}-1920.png"))
        bottoms = [box["y"] + box["height"] for box in (button.bounding_box() for button in checks.all())]
        assert len(bottoms) >= 2 and max(bottoms) <= HEIGHT, bottoms
        marks = page.evaluate(CHOICE_MARKS)
        assert marks and all(width >= 0.75 * size for width, size in marks), marks
    finally:
        context.close()


def test_the_animations_cards_say_their_whole_label(browser: Browser, server_url: str):
    """Issue 39: /animation's card label was cut on the projector ("训练轮（state.ep…"): it wraps now."""
    context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
    page = context.new_page()
    try:
        open_app(page, f"{server_url}/animation?frame=8&presenter=1")
        expect(page.get_by_test_id("stMain").get_by_test_id("stMetricLabel").first).to_be_visible(timeout=SLOW)
        assert page.evaluate(CUT_LABELS) == []
        assert t("zh", "anim.metric.epoch") in page.get_by_test_id("stMain").inner_text()
    finally:
        context.close()
