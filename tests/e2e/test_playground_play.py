"""Play on /playground for a minute under `serve.py` (the server a visitor meets), in a browser that hears the server
late (`slow_browser`): step k only moves forward, reaches the run's last update, and the session never dies
(issue 27, items 1 and 5); Reset soon after Play does not kill it either.

The run is set to last about a minute at the chosen speed (the seconds per update are typed in), so the expected
step is the run's last update, reached when Play turns back into Play: a condition a busy-but-working app meets,
however slowly its ticks come. A MutationObserver in the page records every value the step counter (the slider)
and the console's bar take, and any dialog that opens, between Playwright's looks. Any Streamlit error dialog
("Cached ForwardMsg MISS"), exception element or console error fails the test.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from steplab.i18n import fmt_float, fmt_int
from steplab.teaching.presets import presets
from steplab.trainer.plan import make_plan
from steplab_ui.shell.layout import CONSOLE_CLASS

from .conftest import CHROMIUM, SKIP_REASON, StreamlitServer
from .slow_browser import can_hear_late, console_errors, hear_late, sent
from .streamlit_page import expect_no_exception, open_app, set_size, wait_for_app_run

pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason=SKIP_REASON)]

RUN_SECONDS = 60  # the run lasts about this long at the chosen speed
LATE_MS = 1500  # each message from the server reaches the page this late once it has loaded: 3 ticks in flight
END_TIMEOUT_MS = 6 * RUN_SECONDS * 1000  # a loaded machine's slow ticks still end the run: the clock is the server's

WATCH = """(consoleClass) => {
    const seen = window.__steplab_seen = {steps: [], bars: [], dialogs: []};
    const read = () => {
        const slider = document.querySelector("[class*='st-key-pg_step_slider'] input[type='range']");
        const step = slider ? Number(slider.value) : null;
        if (step !== null && seen.steps[seen.steps.length - 1] !== step) seen.steps.push(step);
        const pre = document.querySelector(`pre.${consoleClass}`);
        const match = pre ? pre.innerText.trim().split("\\n").pop().match(/\\| (\\d+)\\/\\d+ /) : null;
        const bar = match ? Number(match[1]) : null;
        if (bar !== null && seen.bars[seen.bars.length - 1] !== bar) seen.bars.push(bar);
        for (const dialog of document.querySelectorAll("[role='dialog']")) {
            const text = dialog.innerText.slice(0, 300);
            if (!seen.dialogs.includes(text)) seen.dialogs.push(text);
        }
    };
    // a dialog, or step k or the bar going back: the test can stop waiting and say so
    const back = (values) => values.some((value, index) => index > 0 && value < values[index - 1]);
    window.__steplab_broken = () => seen.dialogs.length > 0 || back(seen.steps) || back(seen.bars);
    read();
    new MutationObserver(read).observe(document.body,
        {subtree: true, childList: true, characterData: true, attributes: true, attributeFilter: ["value"]});
}"""

ENDED = """([last, consoleClass]) => {
    if (window.__steplab_broken()) return true;  // the assertions below say what broke
    const pre = document.querySelector(`pre.${consoleClass}`);
    const bar = pre && pre.innerText.trim().split("\\n").pop();
    const play = [...document.querySelectorAll("[data-testid='stMain'] button")]
        .some((button) => button.innerText.trim().endsWith("Play"));
    return play && bar !== null && bar.includes(`| ${last}/${last} `);
}"""


def course_plan():
    return make_plan(presets()["course_default"].setup())


def seen(page: Page) -> dict[str, list]:
    return page.evaluate("() => window.__steplab_seen")


def play_until_the_end(page: Page, last: int) -> None:
    page.get_by_role("button", name="Play").click()
    page.wait_for_function(ENDED, arg=[last, CONSOLE_CLASS], timeout=END_TIMEOUT_MS, polling=500)


def open_playground(context: BrowserContext, url: str, times: int) -> tuple[Page, list[str]]:
    """/playground with a run that lasts about `RUN_SECONDS` at `times`× speed, the observer installed, the server
    heard late."""
    can_hear_late(context)
    page = context.new_page()
    errors = console_errors(page)
    set_size(page, 1280)
    open_app(page, f"{url}/playground?lang=en")
    expect(page.locator(".st-key-pg_bucket .main-svg").first).to_be_visible()
    seconds = page.get_by_role("spinbutton", name="Seconds per update")
    seconds.fill(fmt_float(RUN_SECONDS * times / course_plan().optimizer_steps, 3))
    seconds.press("Enter")
    wait_for_app_run(page)
    speed(page, times)
    page.evaluate(WATCH, CONSOLE_CLASS)
    hear_late(page, LATE_MS)
    return page, errors


def expect_forward_so_far(page: Page, errors: list[str]) -> dict[str, list]:
    """No dialog, no console error, and step k and the console's bar only moved forward; what was seen."""
    record = seen(page)
    assert not record["dialogs"], record["dialogs"]
    assert not errors, errors
    for name in ("steps", "bars"):
        values = record[name]
        backwards = [(a, b) for a, b in zip(values, values[1:], strict=False) if b < a]
        assert not backwards, f"the {name} went back: {backwards} in {values}"
    return record


def expect_forward_to(page: Page, errors: list[str], last: int) -> None:
    """The session lived, step k and the console's bar only moved forward, and every view stands at `last`."""
    record = expect_forward_so_far(page, errors)
    for name in ("steps", "bars"):
        values = record[name]
        assert values and values[-1] == last, f"the {name} ended at {values[-1:]} of {last}: {values}"
    assert len(record["steps"]) > 10, record["steps"]  # it moved on while playing, not in one jump at the end
    main = page.get_by_test_id("stMain")
    expect(main.get_by_role("spinbutton", name="Update k (exact)")).to_have_value(str(last))
    expect(page.locator(".st-key-pg_bucket text", has_text=f"#{last}")).to_have_count(1)
    expect(page.locator("[data-testid='stPlotlyChart'] text", has_text=f"k = {fmt_int(last)}")).to_have_count(2)
    expect(page).to_have_url(re.compile(rf"[?&]step={last}(&|$)"))
    expect_no_exception(page)


def speed(page: Page, times: int) -> None:
    page.get_by_role("radio", name=f"{times}×").or_(page.get_by_role("button", name=f"{times}×", exact=True)).first.click()
    wait_for_app_run(page)


def test_play_at_1x_pause_then_10x_to_the_end(context: BrowserContext, app_server: StreamlitServer) -> None:
    """A run of about a minute at 10×: played at 1× for a sixtieth of it (as long as a sixth of the run at 10×),
    paused (on a phone the dialog once came on Pause: Pause holds k where the run stood), then at 10× from there
    to the end. One test for both speeds and the pause between them keeps the suite's minute of playing to one."""
    last = course_plan().optimizer_steps
    page, errors = open_playground(context, app_server.url, 10)
    speed(page, 1)
    page.get_by_role("button", name="Play").click()
    page.wait_for_function(f"() => window.__steplab_broken() || (window.__steplab_seen.steps.slice(-1)[0] || 0) >= "
                           f"{max(3, last // 60)}", timeout=END_TIMEOUT_MS, polling=500)
    expect_forward_so_far(page, errors)
    page.get_by_role("button", name="Pause").click()
    expect(page.get_by_role("button", name="Play")).to_be_visible()
    wait_for_app_run(page)
    held = seen(page)["steps"][-1]
    assert held < last and seen(page)["bars"][-1] == held, seen(page)
    speed(page, 10)
    assert seen(page)["steps"][-1] == held, seen(page)  # a new speed does not move k
    play_until_the_end(page, last)
    expect_forward_to(page, errors, last)


def test_reset_soon_after_play(context: BrowserContext, app_server: StreamlitServer) -> None:
    """Reset, Play, and Reset again while the first tick is on its way: update 1's figure comes back within two
    runs of being drawn, and the tick in flight finishes before the answer comes. Streamlit's message cache sent
    it as a reference to what the browser had just dropped ("Cached ForwardMsg MISS": 2 of 3 tries with the cache
    on; the browser hears the server late, so the tick is surely in flight when Reset is clicked)."""
    page, errors = open_playground(context, app_server.url, 1)
    page.get_by_role("button", name="Reset", exact=True).click()
    wait_for_app_run(page)
    page.get_by_role("button", name="Play").click()
    expect(page.get_by_role("button", name="Pause")).to_be_visible()  # Play's run is drawn: the ticks begin
    before = sent(page)
    page.wait_for_function(f"() => window.__steplab_sent > {before}", timeout=END_TIMEOUT_MS)  # a tick went out
    page.get_by_role("button", name="Reset", exact=True).click()
    page.wait_for_function("() => window.__steplab_broken() || [...document.querySelectorAll('button')]"
                           ".some((button) => button.innerText.split('\\n').includes('Play'))",
                           timeout=END_TIMEOUT_MS, polling=500)
    assert not seen(page)["dialogs"], seen(page)["dialogs"]
    wait_for_app_run(page)
    record = seen(page)
    assert not record["dialogs"], record["dialogs"]
    assert not errors, errors
    assert record["bars"][-1] == 1 and record["steps"][-1] == 1, record
    expect(page.get_by_test_id("stMain").get_by_role("spinbutton", name="Update k (exact)")).to_have_value("1")
    expect_no_exception(page)
