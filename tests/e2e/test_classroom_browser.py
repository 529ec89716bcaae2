"""A live class in real browsers: an instructor and three students in separate browser contexts (one a 420 px
phone in the dark scheme, one reading Chinese), joining by code, answering, the projector's count and spread
updating by themselves, the reveal, the class table's CSV, a student's link that cannot reach the instructor's
controls, and a second class at the same time that does not mix with the first.

Every expected number comes from the engine (the plan, the poll's reveal and traps)."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, Page, expect

from steplab.classroom import polls
from steplab.classroom.store import ANSWER_INTERVAL, Store
from steplab.i18n import fmt_int, t
from steplab.teaching.presets import presets
from steplab.trainer.plan import make_plan

from . import classroom_steps as steps
from .classroom_steps import LIVE, answer, metric_value, shown
from .conftest import CHROMIUM, SKIP_REASON, StreamlitServer
from .streamlit_page import expect_no_exception, open_app, wait_for_app_run

pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason=SKIP_REASON)]

SETUP = presets()["course_default"].setup()
PLAN = make_plan(SETUP)
POLL = polls.poll_from_setup(SETUP)


def open_class(browser: Browser, server: StreamlitServer, lang: str) -> tuple[Page, str]:
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    return page, steps.open_class(page, server.url, lang)


def join(browser: Browser, server: StreamlitServer, code: str, nickname: str, lang: str, width: int = 1280,
         scheme: str = "light", typed: bool = False) -> Page:
    page = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme).new_page()
    steps.join(page, server.url, code, nickname, lang, typed=typed)
    return page


def test_a_live_class_with_three_students(browser: Browser, app_server: StreamlitServer) -> None:
    instructor, code = open_class(browser, app_server, "en")
    trap = polls.reveal(POLL).traps[0]
    students = [join(browser, app_server, code, "Ana", "en"),
                join(browser, app_server, code, "Bo", "en", width=420, scheme="dark", typed=True),
                join(browser, app_server, code, "Cy", "zh")]
    expect(students[0].get_by_text(t("en", "join.waiting"))).to_be_visible()
    instructor.get_by_role("button", name=t("en", "room.ask.button")).click()
    wait_for_app_run(instructor)
    for page, lang, value in zip(students, ("en", "en", "zh"), (fmt_int(PLAN.max_steps), fmt_int(int(trap.value)), "7"),
                                 strict=True):
        answer(page, lang, value)
    # the projector counts and draws the answers without a reload
    expect(metric_value(instructor, t("en", "room.students"))).to_have_text("3", timeout=LIVE)
    expect(metric_value(instructor, t("en", "room.poll.answered"))).to_have_text(
        t("en", "room.poll.answered_value", answered=3, joined=3), timeout=LIVE)
    expect(instructor.get_by_test_id("stPlotlyChart")).to_have_count(1, timeout=LIVE)
    # a student sees no other student's answer or name before the reveal
    for page, others in ((students[0], ("Bo", "Cy")), (students[1], ("Ana", "Cy"))):
        main = page.get_by_test_id("stMain").inner_text()
        assert not [name for name in others if name in main], main
        expect(page.get_by_test_id("stPlotlyChart")).to_have_count(0)

    instructor.get_by_role("button", name=t("en", "room.poll.reveal")).click()
    wait_for_app_run(instructor)
    expect(metric_value(instructor, t("en", "room.reveal.answer"))).to_have_text(fmt_int(PLAN.max_steps))
    expect(metric_value(instructor, t("en", "room.reveal.right"))).to_have_text(
        t("en", "room.reveal.right_value", right=1, answered=3))
    expect(instructor.get_by_test_id("stMain").get_by_text(shown(trap.why.get("en")), exact=False).first).to_be_visible()
    # each student's own feedback arrives by itself
    expect(students[0].get_by_text(t("en", "join.right", answer=fmt_int(PLAN.max_steps)).replace("**", ""))
           ).to_be_visible(timeout=LIVE)
    expect(students[1].get_by_text(shown(trap.why.get("en")), exact=False).first).to_be_visible(timeout=LIVE)
    expect(students[2].get_by_text(t("zh", "join.wrong", answer=fmt_int(PLAN.max_steps), value="7")
                                   .replace("**", ""))).to_be_visible(timeout=LIVE)
    expect(students[1].get_by_test_id("stPlotlyChart")).to_have_count(1)  # the room's spread, after the reveal
    for page in (instructor, *students):
        expect_no_exception(page)

    # the class table as CSV (the table is folded: it names students), one row per student, by join order
    instructor.get_by_test_id("stExpander").filter(has_text=t("en", "room.table.title")).locator("summary").click()
    wait_for_app_run(instructor)
    with instructor.expect_download() as caught:  # one click (a click during the table's redraw: the test below)
        instructor.get_by_role("button", name=t("en", "room.table.download")).click()
    rows = list(csv.reader(io.StringIO(caught.value.path().read_text(encoding="utf-8-sig"))))
    assert rows[0][0] == t("en", "class.csv.nickname")
    assert [row[0] for row in rows[1:]] == ["Ana", "Bo", "Cy"]
    assert [row[6] for row in rows[1:]] == ["1", "1", "1"]  # polls answered

    # the phone's page and the projector pass axe
    for page in (students[1], instructor):
        found = [v["id"] for v in Axe().run(page).response["violations"] if v["impact"] in ("serious", "critical")]
        assert not found, found


def test_a_students_link_cannot_control_and_two_classes_do_not_mix(browser: Browser,
                                                                    app_server: StreamlitServer) -> None:
    first, first_code = open_class(browser, app_server, "en")
    second, second_code = open_class(browser, app_server, "zh")
    assert first_code != second_code
    student = join(browser, app_server, second_code, "Dee", "zh")
    seat = re.search(r"seat=([^&]+)", student.url).group(1)
    # the student's seat token on the instructor's page: refused, no controls
    intruder = student.context.new_page()
    open_app(intruder, f"{app_server.url}/class?host={seat}")
    expect(intruder.get_by_text(t("zh", "class.not_host"))).to_be_visible()
    expect(intruder.get_by_role("button", name=t("zh", "room.ask.button"))).to_have_count(0)
    expect(intruder.get_by_role("button", name=t("zh", "room.poll.reveal"))).to_have_count(0)
    # a question in the first class does not reach the second class's student
    first.get_by_role("button", name=t("en", "room.ask.button")).click()
    wait_for_app_run(first)
    student.wait_for_timeout(3000)  # longer than one refresh
    expect(student.get_by_text(t("zh", "join.waiting"))).to_be_visible()
    expect(metric_value(second, t("zh", "room.students"))).to_have_text("1", timeout=LIVE)
    expect(metric_value(first, t("en", "room.students"))).to_have_text("0", timeout=LIVE)
    second.get_by_role("button", name=t("zh", "room.ask.button")).click()
    wait_for_app_run(second)
    answer(student, "zh", fmt_int(PLAN.max_steps))
    expect(metric_value(second, t("zh", "room.poll.answered"))).to_have_text(
        t("zh", "room.poll.answered_value", answered=1, joined=1), timeout=LIVE)
    expect(metric_value(first, t("en", "room.poll.answered"))).to_have_text(
        t("en", "room.poll.answered_value", answered=0, joined=0), timeout=LIVE)


# Clicks the class table's CSV button at the moment a redraw of the table reaches the browser: the first frame of the
# table's websocket messages that carries `window.__steplabMarker` (a student's nickname: the table's data) makes this
# listener, registered before Streamlit's own, click the button before Streamlit has drawn what the frame holds, at
# most once per `window.__steplabGap` ms. The server has drawn the table again by then: a button the redraw replaced
# has a revoked file behind it.
CLICK_ON_REDRAW = """(() => {
    window.__steplabClicks = 0;
    const Native = window.WebSocket;
    window.WebSocket = function (url, protocols) {
        const socket = new Native(url, protocols);
        let last = 0;
        socket.addEventListener("message", (event) => {
            const marker = window.__steplabMarker;
            if (!marker || !(event.data instanceof ArrayBuffer) || Date.now() - last < window.__steplabGap) return;
            const text = new TextDecoder("utf-8", {fatal: false}).decode(event.data);
            const button = document.querySelector("[data-testid='stDownloadButton'] button");
            if (text.includes(marker) && button) {
                last = Date.now();
                window.__steplabClicks += 1;
                button.click();
            }
        });
        return socket;
    };
    window.WebSocket.prototype = Native.prototype;
    Object.assign(window.WebSocket, {CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3});
})();"""


def test_a_click_on_the_csv_button_as_the_class_table_redraws_starts_a_download(browser: Browser,
                                                                               app_server: StreamlitServer) -> None:
    """The table's fragment redraws every few seconds; a person's click can land as a redraw arrives. Three clicks,
    each made as a redraw reaches the browser, no second try: three downloads, each the class's CSV."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    context.add_init_script(CLICK_ON_REDRAW)
    instructor = context.new_page()
    code = steps.open_class(instructor, app_server.url, "en")
    Store().join(code, "Quokka")  # a student, straight into the database the server uses
    instructor.get_by_test_id("stExpander").filter(has_text=t("en", "room.table.title")).locator("summary").click()
    wait_for_app_run(instructor)
    expect(instructor.get_by_test_id("stDataFrame")).to_be_visible(timeout=LIVE)
    downloads = []
    instructor.on("download", lambda download: downloads.append(download))
    instructor.evaluate("window.__steplabGap = 3000; window.__steplabMarker = 'Quokka'")
    instructor.wait_for_function("window.__steplabClicks >= 2", timeout=60_000)
    instructor.evaluate("window.__steplabMarker = null")
    clicks = instructor.evaluate("window.__steplabClicks")
    instructor.wait_for_timeout(5000)  # a download that starts, starts within a moment of its click
    assert len(downloads) == clicks, f"{clicks} clicks as the table redrew, {len(downloads)} downloads"
    for download in downloads:
        rows = list(csv.reader(io.StringIO(Path(download.path()).read_text(encoding="utf-8-sig"))))
        assert [row[0] for row in rows[1:]] == ["Quokka"]
    expect_no_exception(instructor)


def test_a_students_page_says_what_the_store_holds_while_it_refreshes(browser: Browser,
                                                                    app_server: StreamlitServer) -> None:
    """/join refreshes every couple of seconds. An answer the store holds reaches the page by itself (a Send whose
    page update Streamlit dropped left the store and the page apart until the reveal), and Sends made at every moment
    of the refresh each end with the page saying the answer the store holds."""
    store = Store()
    opened = store.open_class()
    student = join(browser, app_server, opened.join_code, "Ren", "en")
    seat = re.search(r"seat=([^&]+)", student.url).group(1)
    poll_id = store.ask(opened.host_token, POLL)
    expect(student.get_by_text(t("en", "join.not_answered"))).to_be_visible(timeout=LIVE)
    store.answer(seat, poll_id, "7")  # stored, and no run of this page drew it
    expect(student.get_by_text(t("en", "join.sent", value="7").replace("**", ""))).to_be_visible(timeout=LIVE)
    box = student.get_by_role("textbox", name=t("en", "join.answer"))
    gap = ANSWER_INTERVAL.total_seconds() * 1000
    for number, value in enumerate(("8", "9", "10", "11", "12")):
        student.wait_for_timeout(gap + 350 * number)  # each Send at another moment of the two-second refresh
        box.fill(value)
        student.get_by_role("button", name=t("en", "join.send"), exact=True).click()
        expect(student.get_by_text(t("en", "join.sent", value=value).replace("**", ""))).to_be_visible(timeout=LIVE)
        assert store.question(seat).mine == float(value)
    expect_no_exception(student)
