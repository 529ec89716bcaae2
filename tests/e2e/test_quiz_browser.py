"""The self-check page in a real browser: one question answered right, one wrong, and the feedback each gets.

Runs on the shared app server and Debian's Chromium from tests/e2e/conftest.py. The questions are drawn at random, so the test narrows the draw to
lesson 11 (choice questions without parameters), reads the prompt on screen, finds it in the bank and
clicks the option the bank marks right (or wrong). Screenshots go to artifacts/screenshots/.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from steplab.i18n import t
from steplab.teaching import quiz
from steplab.teaching.lessons import lesson_numbers
from steplab.teaching.progress import PREFIX, VERSION

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM = shutil.which("chromium")
TIMEOUT = 30_000
LESSON = max(n for n in lesson_numbers() if {s.kind for s in quiz.load_bank() if s.lesson == n} == {"choice"})
"""The last lesson whose questions are all choice questions (their texts do not depend on the seed): the page's
question is then found by its text, whatever seed the page drew."""

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not on PATH (apt-get install chromium)")]


@pytest.fixture(scope="module")
def selfcheck_url(app_server) -> str:
    """The self-check page on the shared app server (tests/e2e/conftest.py)."""
    return app_server.url + "/selfcheck"


def idle(page: Page) -> None:
    page.wait_for_timeout(150)
    page.wait_for_selector("[data-testid='stApp'][data-test-script-state='notRunning']", timeout=TIMEOUT)
    page.wait_for_timeout(100)


def open_page(browser: Browser, url: str, lang: str, width: int) -> Page:
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.goto(f"{url}?lang={lang}", wait_until="domcontentloaded")
    page.wait_for_selector("[data-testid='stAppViewContainer']", timeout=TIMEOUT)
    idle(page)
    expect(page.locator("h1").first).to_have_text(t(lang, "page.selfcheck.title"), timeout=TIMEOUT)
    return page


def only_lesson(page: Page, lang: str, lesson: int) -> None:
    """Unpick every other lesson in the pills (each click reruns the page)."""
    pills = page.get_by_test_id("stButtonGroup")
    for number in lesson_numbers():
        if number != lesson:
            pills.get_by_role("button", name=t(lang, f"quiz.lesson_short.{number}", number=number), exact=True).click()
            idle(page)


def plain(text: str) -> str:
    """Text as the browser shows it: markdown code marks gone, runs of white space as one space."""
    return " ".join(text.replace("`", "").split())


def question_on_screen(page: Page, lang: str) -> quiz.Question:
    box = page.locator(".st-key-selfcheck__box")
    expect(box).to_be_visible(timeout=TIMEOUT)
    text = plain(box.inner_text())
    for spec in quiz.load_bank():
        if spec.lesson == LESSON:
            question = quiz.generate(spec, 0)
            if plain(question.prompt.get(lang)) in text:
                return question
    raise AssertionError(f"prompt not in the bank: {text!r}")


def answer(page: Page, lang: str, right: bool) -> quiz.Question:
    question = question_on_screen(page, lang)
    options = [o for o in question.spec.options if o.correct == right]
    radio = page.locator(".st-key-selfcheck__box").get_by_test_id("stRadio")
    radio.get_by_text(plain(options[0].text.get(lang)), exact=True).click()
    idle(page)
    page.locator(".st-key-selfcheck__box").get_by_role("button", name=t(lang, "quiz.check")).click()
    idle(page)
    return question


def shoot(page: Page, name: str) -> None:
    """The whole page: Streamlit scrolls inside its own container, so grow the viewport to its height first."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    height = page.evaluate("""() => Math.max(...['stMain', 'stAppViewContainer', 'stMainBlockContainer']
        .map(id => document.querySelector(`[data-testid='${id}']`)).filter(Boolean).map(e => e.scrollHeight))""")
    page.set_viewport_size({"width": page.viewport_size["width"], "height": min(int(height) + 40, 8000)})
    idle(page)
    page.screenshot(path=str(SCREENSHOTS / name), full_page=True)


@pytest.mark.parametrize("lang", ["zh"])  # English: test_narrow_screen, and the AppTest of the same steps
def test_right_then_wrong_in_the_browser(browser: Browser, selfcheck_url: str, lang: str):
    page = open_page(browser, selfcheck_url, lang, 1280)
    only_lesson(page, lang, LESSON)
    score = page.get_by_test_id("stMetricValue").first

    first = answer(page, lang, right=True)
    success = page.get_by_test_id("stAlertContentSuccess")
    expect(success).to_contain_text(t(lang, "quiz.correct_mark"), timeout=TIMEOUT)
    expect(page.get_by_test_id("stAlertContentError")).to_have_count(0)
    expect(page.get_by_test_id("stMain")).to_contain_text(first.explanation.get(lang).split("`")[0][:20])
    expect(score).to_have_text("1 / 1")

    page.get_by_role("button", name=t(lang, "quiz.new_question")).click()
    idle(page)
    second = answer(page, lang, right=False)
    assert second.id != first.id
    expect(page.get_by_test_id("stAlertContentError")).to_contain_text(t(lang, "quiz.wrong_mark"), timeout=TIMEOUT)
    hint = page.get_by_test_id("stAlertContentInfo")
    expect(hint).to_contain_text(plain(second.hint.get(lang))[:12])
    expect(score).to_have_text("1 / 2")
    expect(page.get_by_test_id("stException")).to_have_count(0)
    shoot(page, f"selfcheck-{lang}-1280.png")

    code = page.get_by_test_id("stCode").first.inner_text().strip()
    assert code.startswith(f"{PREFIX}{VERSION}-")
    page.close()


@pytest.mark.parametrize("lang", ["en"])  # Chinese at 1280: test_right_then_wrong_in_the_browser
def test_narrow_screen(browser: Browser, selfcheck_url: str, lang: str):
    page = open_page(browser, selfcheck_url, lang, 420)
    only_lesson(page, lang, LESSON)
    answer(page, lang, right=False)
    expect(page.get_by_test_id("stAlertContentError")).to_be_visible(timeout=TIMEOUT)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 420, f"the page scrolls sideways ({width}px)"
    shoot(page, f"selfcheck-{lang}-420.png")
    page.close()
