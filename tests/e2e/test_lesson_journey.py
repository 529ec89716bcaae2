"""A student through lessons 1–3 and the self-check, in a real browser under `serve.py` (issue 27's journeys).

The path a student takes, not one page opened fresh: lesson 1 from a cold link, its prediction and its check
answered; "Next lesson" to lesson 2 (the page opens at its top); the self-check through the menu; back and
forward; a reload (a new session: the progress comes back from this browser's storage); a language switch;
lesson 3 through "Next lesson", its folded aside, a visit to another page and a return through the menu.
Any exception element, error dialog or console error fails it, except the two requests Streamlit's own
frontend makes to find its server under a page's path (`/<page>/_stcore/health`, `/<page>/_stcore/host-config`:
it answers 404 there and then uses the root).
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import ConsoleMessage, Page, expect

from steplab.i18n import t
from steplab.teaching import quiz
from steplab.teaching.lessons import Lesson, load_lessons
from steplab.teaching.progress import from_code
from tests.e2e.streamlit_page import (
    SIDEBAR_OPEN,
    open_app,
    open_sidebar,
    set_size,
    sidebar_open,
    wait_for_app_run,
)

pytestmark = pytest.mark.browser

LESSONS = load_lessons()
STREAMLIT_PROBE = re.compile(r"/[a-z]+/_stcore/(health|host-config)$")


class Trouble:
    """Console errors and uncaught page errors, with the URL each came from."""

    def __init__(self, page: Page) -> None:
        self.found: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.found.append(f"page error: {error}"))

    def _console(self, message: ConsoleMessage) -> None:
        if message.type != "error":
            return
        source = (message.location or {}).get("url", "")
        if STREAMLIT_PROBE.search(source):
            return
        self.found.append(f"console: {message.text} ({source})")

    def check(self, page: Page, where: str) -> None:
        expect(page.get_by_test_id("stException")).to_have_count(0)
        expect(page.get_by_role("dialog")).to_have_count(0)
        assert "Traceback" not in page.get_by_test_id("stMain").inner_text(), where
        assert not self.found, f"{where}: {self.found}"


def title(page: Page):
    return page.get_by_test_id("stMain").locator("h1").first


def plain(text: str) -> str:
    return " ".join(text.replace("`", "").replace("**", "").split())


def answer_predictions(page: Page, lesson: Lesson, lang: str, how_many: int | None = None, skip: int = 0) -> None:
    """Type the engine's answer into each prediction and press the button, as a learner who knew it (the first
    `skip` are answered already)."""
    done = 0
    for block in [block for block in lesson.blocks if block.kind == "predict"][skip:]:
        if how_many is not None and done == how_many:
            break
        box = page.get_by_label(t(lang, "lesson.your_guess")).last
        expect(box).to_be_enabled()
        box.fill(str(lesson.answer(block)))
        box.press("Enter")
        wait_for_app_run(page)
        page.get_by_role("button", name=t(lang, "lesson.check_guess")).last.click()
        wait_for_app_run(page)
        expect(page.get_by_test_id("stMain")).to_contain_text(plain(lesson.say(block.text("reveal"), lang))[:30])
        done += 1


def answer_check(page: Page, lesson: Lesson, lang: str) -> None:
    """The end-of-lesson check, answered right: the questions the lesson draws (seed = lesson number + index)."""
    specs = [spec for spec in quiz.load_bank() if spec.lesson == lesson.number][:3]
    for index, spec in enumerate(specs):
        question = quiz.generate(spec, lesson.number + index)
        box = page.locator(f".st-key-{lesson.id}_{len(lesson.blocks) - 1}_q{index}__box")
        expect(box).to_be_visible()
        assert question.kind == "choice", "the journey answers lessons whose checks are choice questions"
        right = question.options[next(iter(question.correct))]
        box.get_by_test_id("stRadio").get_by_text(plain(right.get(lang)), exact=True).click()
        wait_for_app_run(page)
        box.get_by_role("button", name=t(lang, "quiz.check")).click()
        wait_for_app_run(page)
        expect(box).to_contain_text(t(lang, "quiz.correct_mark"))
    expect(page.get_by_test_id("stMain")).to_contain_text(t(lang, "lesson.done"))


def next_lesson(page: Page, lesson: Lesson, lang: str) -> None:
    following = LESSONS[lesson.number]  # numbers start at 1
    page.get_by_role("button", name=t(lang, "lesson.next_lesson", title=f"{following.number}. {following.title.get(lang)}")).click()
    wait_for_app_run(page)
    expect(title(page)).to_have_text(f"{following.number}. {following.title.get(lang)}")
    page.wait_for_function("() => document.querySelector(\"[data-testid='stMain']\").scrollTop === 0")


def menu(page: Page, label: str, narrow: bool) -> None:
    """A page from the sidebar's menu; on a phone the sidebar is opened first and closed after, as a person
    would (it covers the page while open)."""
    if narrow:
        open_sidebar(page)
    page.get_by_test_id("stSidebar").get_by_role("link", name=label).click()
    wait_for_app_run(page)
    if narrow:
        close_sidebar(page)


def switch_language(page: Page, label: str, narrow: bool) -> None:
    if narrow:
        open_sidebar(page)
    page.get_by_test_id("stSidebar").get_by_text(label, exact=True).click()
    wait_for_app_run(page)
    if narrow:
        close_sidebar(page)


def close_sidebar(page: Page) -> None:
    if sidebar_open(page):
        page.get_by_test_id("stSidebarCollapseButton").locator("button").click()
    page.wait_for_function(f"() => !({SIDEBAR_OPEN})()")


def stored_progress(page: Page):
    code = page.evaluate("() => window.localStorage.getItem('steplab.progress')")
    return from_code(code) if code else None


@pytest.mark.parametrize("width", [420])  # a phone, the harder screen (menu over the page, narrow figures); the
# lessons at 1280 px are walked by test_tripped, the journey of test_journey_import and the presenter test
def test_a_student_through_lessons_1_to_3_and_the_self_check(page: Page, app_server, width: int) -> None:
    trouble = Trouble(page)
    set_size(page, width)
    one, two, three = LESSONS[:3]

    # lesson 1 from a cold deep link: the prediction first, nothing after it yet
    open_app(page, f"{app_server.url}/lessons?lesson={one.id}")
    expect(title(page)).to_have_text(f"1. {one.title.zh}")
    expect(page.get_by_test_id("stMain")).to_contain_text(t("zh", "lesson.answer_first"))
    answer_predictions(page, one, "zh")
    answer_check(page, one, "zh")
    assert stored_progress(page).lessons_done == {1}  # kept in this browser as soon as it changed
    trouble.check(page, "lesson 1")

    # "Next lesson": lesson 2 from its top; its first prediction answered
    next_lesson(page, one, "zh")
    answer_predictions(page, two, "zh", how_many=1)
    trouble.check(page, "lesson 2")

    # the self-check through the menu; one question answered
    narrow = width < 600
    menu(page, t("zh", "page.selfcheck.title"), narrow)
    expect(title(page)).to_have_text(t("zh", "page.selfcheck.title"))
    page.get_by_test_id("stMain").get_by_role("button", name=t("zh", "quiz.check")).click()
    wait_for_app_run(page)
    trouble.check(page, "self-check")

    # back to lesson 2 as it was left, forward to the self-check
    page.go_back()
    wait_for_app_run(page)
    expect(title(page)).to_have_text(f"2. {two.title.zh}")
    expect(page.get_by_test_id("stMain")).to_contain_text(plain(two.say(two.blocks[2].text("reveal"), "zh"))[:30])
    page.go_forward()
    wait_for_app_run(page)
    expect(title(page)).to_have_text(t("zh", "page.selfcheck.title"))
    page.go_back()
    wait_for_app_run(page)
    trouble.check(page, "back and forward")

    # a reload is a new session: the lesson comes from the URL, the progress (lessons done, checks) from this
    # browser; a prediction's reveal belongs to the session
    page.reload(wait_until="domcontentloaded")
    wait_for_app_run(page)
    expect(title(page)).to_have_text(f"2. {two.title.zh}")
    page.get_by_test_id("stMain").get_by_text(t("zh", "lesson.progress")).click()
    expect(page.get_by_test_id("stMain")).to_contain_text(f"{t('zh', 'quiz.progress.lessons_done')}：1")
    trouble.check(page, "reload")

    # the language switch: the same lesson in English, the progress still there
    switch_language(page, "English", narrow)
    expect(title(page)).to_have_text(f"2. {two.title.en}")
    answer_predictions(page, two, "en")  # a new session: the predictions wait for an answer again
    page.get_by_test_id("stMain").get_by_text(t("en", "lesson.progress")).click()
    expect(page.get_by_test_id("stMain")).to_contain_text(f"{t('en', 'quiz.progress.lessons_done')}: 1")
    trouble.check(page, "English")

    # lesson 3: its folded aside opens; a visit to the calculator and back through the menu keeps it
    next_lesson(page, two, "en")
    aside = page.get_by_test_id("stExpander").filter(has_text=three.blocks[1].data["title"]["en"])
    aside.get_by_text(three.blocks[1].data["title"]["en"]).click()
    expect(aside).to_contain_text("Lab B")
    answer_predictions(page, three, "en")
    menu(page, t("en", "page.calculator.title"), narrow)
    expect(title(page)).to_have_text(t("en", "page.calculator.title"))
    menu(page, t("en", "page.lessons.title"), narrow)
    expect(title(page)).to_have_text(f"3. {three.title.en}")
    expect(page.get_by_test_id("stMain")).to_contain_text(plain(three.say(three.blocks[-2].text("title"), "en")))
    trouble.check(page, "lesson 3 after a return visit")
