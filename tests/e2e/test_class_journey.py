"""Journey (issue 27): an instructor with three students through a poll, a reveal and a server restart, under
`serve.py` (the server a class meets), with the class database in a folder of its own (SQLite, as by default).

The projector is the instructor's normal view at 1920 × 1080 in Beijing's time zone; Ana reads English on a dark
420 px phone, Bo Chinese on a light phone with a nickname full of Markdown and `<`, Cy Chinese on a laptop. They
join, answer (Cy first types a fraction of a step, then a wrong answer no rule explains; Bo gives the micro-batches
of one epoch), the instructor reveals; Cy goes to the self-check through the menu and checks a question; the server
restarts; everyone carries on: Cy's score is still there and her next check reaches the class table, her join page
is still her seat, the instructor visits the calculator and comes back to the same class, the next question
reaches the phones, the CSV counts it all. A Streamlit error dialog, an
exception element or a console error on any page at any time fails it (`classroom_steps.Watch`).

Every expected number and sentence comes from the engine and the catalogue."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from steplab.classroom import polls
from steplab.classroom.store import ClassError
from steplab.i18n import fmt_int, t
from steplab.teaching.presets import presets
from steplab.trainer.plan import make_plan

from .classroom_steps import LIVE, Watch, answer, join, metric_value, open_class, plain, send
from .conftest import CHROMIUM, SCREENSHOTS, SKIP_REASON, StreamlitServer
from .streamlit_page import open_sidebar, wait_for_app_run

pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason=SKIP_REASON)]

SETUP = presets()["course_default"].setup()
PLAN = make_plan(SETUP)
POLL = polls.poll_from_setup(SETUP)
MICRO = PLAN.micro_batches_per_epoch  # Bo's answer: the micro-batches of one epoch
NO_RULE = "7"  # Cy's answer: no wrong rule gives it
ZONE = "Asia/Shanghai"
BO = "<Bo> *x*_y_ $1$"  # Markdown, HTML and LaTeX characters: shown as typed


@pytest.fixture
def class_server(tmp_path) -> Iterator[StreamlitServer]:
    """A `serve.py` server of this test's own, with the class database in a fresh folder (restarted by the test)."""
    server = StreamlitServer(env={"STEPLAB_DATA_DIR": str(tmp_path / "data"), "STEPLAB_DATABASE_URL": ""}).start()
    try:
        yield server
    finally:
        server.stop()


def main_text(page: Page) -> str:
    return page.get_by_test_id("stMain").inner_text()


def go_through_menu(page: Page, title: str) -> None:
    """Change page with the sidebar's menu (a page change in the same session: the address starts bare)."""
    if page.viewport_size["width"] < 700:
        open_sidebar(page)
    page.get_by_test_id("stSidebar").get_by_role("link", name=title).click()
    wait_for_app_run(page)


def answer_the_question_on_screen(box: Locator) -> None:
    """Give the question in `box` a valid answer, whatever its kind, until the answer holds."""
    number, radio, checkbox = box.get_by_role("spinbutton"), box.get_by_role("radio"), box.get_by_role("checkbox")
    control = number.or_(radio).or_(checkbox).or_(box.get_by_role("slider"))
    for _ in range(3):  # a run still on its way (a new question drawn after a restart) can redraw the input under
        # the answer just typed: at load 18 the check then found no answer ("cannot grade"); answer until it holds
        expect(control.first).to_be_visible()  # the browser loads a kind of input's code when it first shows one:
        # the run can be over before the input is on screen
        if number.count():
            number.first.fill("1")
            number.first.press("Enter")
            held = lambda: number.count() > 0 and number.first.input_value() != ""  # noqa: E731
        elif radio.count():
            box.get_by_test_id("stRadioOption").first.click()
            held = lambda: radio.count() > 0 and radio.first.is_checked()  # noqa: E731
        elif checkbox.count():
            box.get_by_test_id("stCheckbox").first.locator("label").first.click()
            held = lambda: checkbox.count() > 0 and checkbox.first.is_checked()  # noqa: E731
        else:
            held = lambda: True  # noqa: E731 - a slider question is checked as it stands
        wait_for_app_run(box.page)
        if held():
            return


def check_a_selfcheck_question(page: Page, lang: str) -> None:
    """Answer the question on /selfcheck with something valid, whatever its kind, and check it: graded, ✓ or ✗.

    Once, in a whole-suite run, the first check after the restart was not graded: the answer and the click reached
    the server as one run, whose callbacks ran check first and then the answer's, which wiped the grade
    (`views.quiz._clear`, fixed; `tests/test_selfcheck_page.py` holds that order). No second try here."""
    box = page.get_by_test_id("stMain").locator(".st-key-selfcheck__box")
    expect(box).to_be_visible()
    graded = box.get_by_test_id("stAlertContentSuccess").or_(box.get_by_test_id("stAlertContentError"))
    answer_the_question_on_screen(box)
    box.get_by_role("button", name=t(lang, "quiz.check")).click()
    wait_for_app_run(page)
    expect(graded).to_have_count(1)
    expect(box.get_by_test_id("stAlertContentWarning")).to_have_count(0)  # never "cannot grade"


def reconnected(page: Page) -> None:
    """The page is connected again (to the new server) and its new session has drawn the page."""
    page.wait_for_selector("[data-testid='stApp'][data-test-connection-state='CONNECTED']", timeout=120_000)
    wait_for_app_run(page, timeout=120_000)


def shot(page: Page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"class_journey_{name}.png"))


def test_an_instructor_with_three_students_through_a_poll_a_reveal_and_a_server_restart(
        browser: Browser, class_server: StreamlitServer) -> None:
    watch = Watch()
    url = class_server.url
    projector = watch.page(browser, "projector", 1920, 1080, zone=ZONE)
    code = open_class(projector, url, "zh")
    # the class's times in the projector's own zone, named
    expect(projector.get_by_test_id("stMain")).to_contain_text(f"（{ZONE}）")

    ana = watch.page(browser, "Ana", 420, scheme="dark", zone=ZONE)
    join(ana, url, code, "Ana", "en", typed=True)
    bo = watch.page(browser, "Bo", 420, zone=ZONE)
    join(bo, url, code, BO, "zh")
    cy = watch.page(browser, "Cy", 1280, zone=ZONE)
    join(cy, url, code, "Cy", "zh")
    assert f"{BO}。" in bo.get_by_test_id("stAlertContentSuccess").inner_text()  # as typed, not as Markdown

    # ---- a poll: the room answers (one right, one a known trap, one a fraction first, then no known rule)
    projector.get_by_role("button", name=t("zh", "room.ask.button")).click()
    wait_for_app_run(projector)
    answer(ana, "en", fmt_int(PLAN.max_steps))
    answer(bo, "zh", fmt_int(MICRO))
    send(cy, "zh", "150.5")
    refusal = ClassError("class.answer", problem=polls.PollAnswerError("poll.whole_steps", value=150.5).text)
    expect(cy.get_by_test_id("stAlertContentError")).to_contain_text(refusal.message("zh"))
    answer(cy, "zh", NO_RULE)
    expect(metric_value(projector, t("zh", "room.poll.answered"))).to_have_text(
        t("zh", "room.poll.answered_value", answered=3, joined=3), timeout=LIVE)

    # ---- the reveal explains the answers the room gave, most frequent first; no name on the projector
    projector.get_by_role("button", name=t("zh", "room.poll.reveal")).click()
    wait_for_app_run(projector)
    expect(metric_value(projector, t("zh", "room.reveal.answer"))).to_have_text(fmt_int(PLAN.max_steps))
    trap = polls.trap_for(POLL, MICRO)
    assert trap is not None and trap.why.key == "poll.trap.micro_batches"
    reveal_list = projector.get_by_test_id("stMain").get_by_role("listitem")
    expect(reveal_list).to_have_text([
        plain(t("zh", "room.reveal.trap", value=fmt_int(MICRO), count=1, why=trap.why.get("zh"))),
        plain(t("zh", "room.reveal.no_rule", value=NO_RULE, count=1))], use_inner_text=True)
    said = main_text(projector)
    assert not [other.value for other in polls.reveal(POLL).traps
                if other is not trap and plain(other.why.get("zh")) in said]  # nobody gave them: not listed
    assert not [name for name in ("Ana", "<Bo>", "Cy") if name in said], said  # the normal view is projected too
    shot(projector, "projector_revealed")
    # each student's own feedback, by itself; Bo's names his trap, Cy's says no common rule gives hers
    expect(ana.get_by_text(t("en", "join.right", answer=fmt_int(PLAN.max_steps)).replace("**", ""))
           ).to_be_visible(timeout=LIVE)
    expect(bo.get_by_test_id("stMain")).to_contain_text(plain(t("zh", "join.trap", why=trap.why.get("zh"))),
                                                       timeout=LIVE)
    expect(cy.get_by_test_id("stMain")).to_contain_text(plain(t("zh", "join.no_rule", value=NO_RULE)), timeout=LIVE)
    shot(bo, "phone_feedback")

    # ---- Cy goes on to the self-check through the menu: her seat goes with her
    go_through_menu(cy, t("zh", "page.selfcheck.title"))
    seat = re.search(r"[?&]seat=([^&]+)", cy.url)
    assert seat, cy.url
    check_a_selfcheck_question(cy, "zh")
    score = metric_value(cy, t("zh", "quiz.score"))
    expect(score).to_have_text(re.compile(r"^[01] / 1$"))
    before = score.inner_text()

    # ---- the server restarts (a deployment): every page reconnects to a new session on the same address
    watch.restart(class_server, reconnected)

    # Cy's self-check: the page on screen is the old session's until she acts (Streamlit reruns on the next
    # interaction); her first click, a new question, runs in the new session: same address, same score, and the
    # next check still reaches the class
    question = re.search(r"[?&]question=([^&]+)", cy.url).group(1)
    cy.get_by_role("button", name=t("zh", "quiz.new_question")).click()
    wait_for_app_run(cy)
    expect(cy).not_to_have_url(re.compile(f"question={re.escape(question)}"))  # the click was not lost
    assert f"seat={seat.group(1)}" in cy.url
    expect(metric_value(cy, t("zh", "quiz.score"))).to_have_text(before)  # not 0 / 0
    check_a_selfcheck_question(cy, "zh")
    expect(metric_value(cy, t("zh", "quiz.score"))).to_have_text(re.compile(r"^[012] / 2$"))
    # ... and her join page is still her seat, not an empty form
    go_through_menu(cy, t("zh", "page.join.title"))
    expect(cy.get_by_text(t("zh", "join.joined", nickname="Cy").replace("**", ""))).to_be_visible()
    expect(cy.get_by_role("textbox", name=t("zh", "join.code"))).to_have_count(0)

    # the instructor checks a setup on the calculator and comes back through the menu: the same class
    go_through_menu(projector, t("zh", "page.calculator.title"))
    go_through_menu(projector, t("zh", "page.class.title"))
    expect(metric_value(projector, t("zh", "room.code"))).to_have_text(code)
    # the next question reaches the phones by itself, and their answers the projector
    projector.get_by_role("button", name=t("zh", "room.ask.button")).click()
    wait_for_app_run(projector)
    answer(ana, "en", fmt_int(PLAN.max_steps))
    answer(bo, "zh", fmt_int(PLAN.max_steps))
    expect(metric_value(projector, t("zh", "room.poll.answered"))).to_have_text(
        t("zh", "room.poll.answered_value", answered=2, joined=3), timeout=LIVE)

    # ---- the class table opens on the instructor's click only; its CSV counts everything, in Beijing time
    table = projector.get_by_test_id("stExpander").filter(has_text=t("zh", "room.table.title"))
    expect(table.get_by_test_id("stDataFrame")).to_have_count(0)
    table.locator("summary").click()
    wait_for_app_run(projector)
    expect(table.get_by_test_id("stDataFrame")).to_have_count(1)
    with projector.expect_download() as caught:
        table.get_by_role("button", name=t("zh", "room.table.download")).click()
    rows = list(csv.reader(io.StringIO(caught.value.path().read_text(encoding="utf-8-sig"))))
    assert rows[0][1] == t("zh", "class.csv.joined_at", zone=ZONE)
    assert [row[0] for row in rows[1:]] == ["Ana", BO, "Cy"]
    assert [row[6] for row in rows[1:]] == ["2", "2", "1"]  # polls answered, before and after the restart
    assert [row[7] for row in rows[1:]] == ["1", "0", "0"]  # right among revealed polls
    assert rows[3][5] == "2"  # Cy's self-check attempts: one before the restart, one after
    now = datetime.now(UTC).astimezone(ZoneInfo(ZONE)).replace(tzinfo=None)
    for row in rows[1:]:
        joined = datetime.strptime(row[1], "%Y-%m-%d %H:%M:%S")
        assert abs(joined - now) < timedelta(minutes=30), (row[1], now)
    watch.check()
