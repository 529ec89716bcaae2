"""/animation in Debian's Chromium: Play advances the frame, Step adds exactly one micro-batch; screenshots.

Uses the shared `app_server` (`streamlit run app.py`, the page listed in `steplab_ui.shell.navigation.PAGES`).
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from steplab.i18n import t

from .conftest import CHROMIUM, SKIP_REASON, StreamlitServer
from .slow_browser import can_hear_late, console_errors, hear_late
from .streamlit_page import expect_no_exception, lowest_figure_contrast, open_app, wait_for_app_run

pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason=SKIP_REASON)]

SLOW = 90_000  # this machine is shared: first paints can take long
LATE_MS = 1500  # a browser that hears the server this late (`slow_browser`): its ticks carry the frame before
POSITION = re.compile(r"(?:Frame|动画第) (\d+) (?:of|/) \d+")


@pytest.fixture(scope="module")
def server_url(app_server: StreamlitServer) -> str:
    return app_server.url


def open_animation(browser: Browser, url: str, *, width: int = 1280, height: int = 1000,
                   scheme: str = "light") -> Page:
    context = browser.new_context(viewport={"width": width, "height": height}, color_scheme=scheme)
    page = context.new_page()
    open_app(page, url)
    expect(page.get_by_test_id("stPlotlyChart").first.locator(".main-svg").first).to_be_visible(timeout=SLOW)
    return page


def position(page: Page) -> int:
    """The frame shown, read from the caption under the scrubber ("Frame 8 of 49 …" / "动画第 8 / 49 帧 …")."""
    caption = page.get_by_text(POSITION).first
    return int(POSITION.search(caption.inner_text(timeout=SLOW)).group(1))


def counter(page: Page, label: str):
    card = page.get_by_test_id("stMetric").filter(has=page.get_by_test_id("stMetricLabel").filter(has_text=label))
    return card.get_by_test_id("stMetricValue").first


def wait_for_position(page: Page, predicate, timeout_s: float = 90.0) -> int:
    deadline = time.monotonic() + timeout_s
    while True:
        value = position(page)
        if predicate(value) or time.monotonic() > deadline:
            return value
        page.wait_for_timeout(250)


def settled_position(page: Page, quiet_ms: int = 2500, timeout_s: float = 90.0) -> int:
    """The frame once it has not changed for `quiet_ms`."""
    deadline = time.monotonic() + timeout_s
    value = position(page)
    while time.monotonic() < deadline:
        page.wait_for_timeout(quiet_ms)
        now = position(page)
        if now == value:
            return value
        value = now
    return value


def test_play_advances_then_step_adds_exactly_one_micro_batch(browser: Browser, server_url: str):
    page = open_animation(browser, server_url + "/animation?lang=en")
    try:
        expect(counter(page, "Micro-batch")).to_have_text("1 / 1,200", timeout=SLOW)
        wait_for_app_run(page, timeout=SLOW)
        page.get_by_role("button", name=re.compile(r"^Play")).click()
        expect(page.get_by_role("button", name=re.compile(r"^Pause"))).to_be_visible(timeout=SLOW)
        reached = wait_for_position(page, lambda p: p >= 3)
        assert reached >= 3, "the counter did not advance while playing"
        expect(counter(page, "Micro-batch")).not_to_have_text("1 / 1,200")
        page.get_by_role("button", name=re.compile(r"^Pause")).click()
        expect(page.get_by_role("button", name=re.compile(r"^Play"))).to_be_visible(timeout=SLOW)
        paused = settled_position(page)  # ticks already on their way when Pause was pressed may still land
        page.wait_for_timeout(3000)  # paused: no further tick may move it
        assert position(page) == paused
        expect(page).to_have_url(re.compile(rf"[?&]frame={paused}(&|$)"), timeout=SLOW)

        page.get_by_role("button", name=re.compile(r"^Next micro-batch")).click()
        expect(counter(page, "Micro-batch")).to_have_text(f"{paused + 1} / 1,200", timeout=SLOW)
        wait_for_app_run(page, timeout=SLOW)
        page.wait_for_timeout(1500)
        assert position(page) == paused + 1  # exactly one more, and it stays there
        expect(page).to_have_url(re.compile(rf"[?&]frame={paused + 1}(&|$)"), timeout=SLOW)

        page.mouse.click(5, 5)  # focus the page, not a widget
        page.keyboard.press("ArrowRight")  # the Step button's shortcut
        expect(counter(page, "Micro-batch")).to_have_text(f"{paused + 2} / 1,200", timeout=SLOW)
        expect_no_exception(page)
    finally:
        page.context.close()


PLAYED_OR_STOPPED = """(least) => {
    // the frame shown, and whether Play turned back into Play after Pause had shown (the animation stopped)
    const caption = [...document.querySelectorAll("[data-testid='stCaptionContainer']")]
        .map((element) => element.innerText).find((text) => /Frame \\d+ of/.test(text));
    const frame = caption ? Number(caption.match(/Frame (\\d+) of/)[1]) : 0;
    const lines = [...document.querySelectorAll("[data-testid='stMain'] button")]
        .flatMap((button) => button.innerText.split("\\n").map((line) => line.trim()));  // icon, label, shortcut
    if (lines.includes("Pause")) window.__steplab_played = true;
    const stopped = window.__steplab_played && lines.includes("Play");
    return frame >= least || stopped;
}"""


def test_first_play_on_a_slow_browser_plays_and_the_last_update_skip_lands_on_it(browser: Browser, server_url: str):
    """On a browser that hears the server late (a phone on a slow network), the first ticks carry back the frame
    Play started from: Play goes on anyway (it used to pause there at once: "the first Play does nothing").
    "Skip to the last update" shows the last update, 150 / 150 (it used to stop a group short, at 149)."""
    from steplab.teaching.presets import presets
    from steplab.trainer.plan import make_plan

    steps = make_plan(presets()["course_default"].setup()).optimizer_steps
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    can_hear_late(context)
    page = context.new_page()
    errors = console_errors(page)
    try:
        open_app(page, server_url + "/animation?lang=en")
        expect(page.get_by_test_id("stPlotlyChart").first.locator(".main-svg").first).to_be_visible(timeout=SLOW)
        wait_for_app_run(page, timeout=SLOW)
        hear_late(page, LATE_MS)
        page.get_by_role("button", name=re.compile(r"^Play")).click()
        page.wait_for_function(PLAYED_OR_STOPPED, arg=4, timeout=SLOW, polling=200)
        assert position(page) >= 4, "the first Play stopped before it got going"
        assert page.get_by_role("button", name=re.compile(r"^Pause")).is_visible()
        page.get_by_role("button", name=re.compile(r"^Pause")).click()
        expect(page.get_by_role("button", name=re.compile(r"^Play"))).to_be_visible(timeout=SLOW)
        page.get_by_role("button", name=t("en", "anim.skip_last")).click()
        expect(counter(page, "Updates")).to_have_text(f"{steps} / {steps}", timeout=SLOW)
        expect(counter(page, "Bucket")).to_have_text("8 / 8", timeout=SLOW)
        expect_no_exception(page)
        assert not errors, errors
    finally:
        context.close()


def test_a_shared_link_opens_at_its_frame(browser: Browser, server_url: str):
    page = open_animation(browser, server_url + "/animation?lang=en&frame=8")
    try:
        expect(counter(page, "Updates")).to_have_text("1 / 150", timeout=SLOW)
        expect(counter(page, "Bucket")).to_have_text("8 / 8", timeout=SLOW)
        chart = page.get_by_test_id("stPlotlyChart").first
        expect(chart).to_contain_text("optimizer.step()", timeout=SLOW)
    finally:
        page.context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_words_in_the_figure_read_in_either_theme(browser: Browser, server_url: str, scheme: str):
    """Every word the animation draws on the page's ground (the theme's chart text, the waiting optimizer, the
    epoch and loss notes) reaches WCAG AA, 4.5:1, on the ground the browser really shows."""
    page = open_animation(browser, server_url + "/animation?lang=en", scheme=scheme)
    try:
        expect(page.get_by_test_id("stPlotlyChart").first).to_contain_text("waiting for step", timeout=SLOW)
        ratio, text = lowest_figure_contrast(page)
        assert ratio >= 4.5, f"{text!r} at {ratio:.2f}:1"
    finally:
        page.context.close()


# each language once, the widths and schemes taking turns (the suite's time: every combination of the four, then
# each language at both, were 20 s for pictures the presenter, contrast and layout tests already hold to account)
SHOTS = [("zh", 1280, "light"), ("en", 420, "dark")]


@pytest.mark.parametrize("lang, width, scheme", SHOTS)
def test_screenshots(browser: Browser, server_url: str, screenshot_dir: Path, lang: str, width: int, scheme: str):
    query = "frame=8" + ("&lang=en" if lang == "en" else "")
    page = open_animation(browser, f"{server_url}/animation?{query}", width=width,
                          height=1500 if width > 1000 else 2600, scheme=scheme)
    try:
        expect(page.get_by_test_id("stMain").locator("h1").first).to_have_text(
            t(lang, "page.animation.title"), timeout=SLOW)
        expect(counter(page, t(lang, "anim.metric.updates"))).to_have_text("1 / 150", timeout=SLOW)
        wait_for_app_run(page, timeout=SLOW)
        page.wait_for_timeout(600)
        page.screenshot(path=str(screenshot_dir / f"animation-{lang}-{width}-{scheme}.png"), timeout=SLOW)
        expect_no_exception(page)
    finally:
        page.context.close()


@pytest.mark.parametrize("lang, scheme", [("en", "dark")])  # Chinese in the light scheme: test_presenter
def test_presenter_mode_fills_a_projector(browser: Browser, server_url: str, screenshot_dir: Path, lang: str,
                                          scheme: str):
    query = "presenter=true&frame=8" + ("&lang=en" if lang == "en" else "")
    page = open_animation(browser, f"{server_url}/animation?{query}", width=1920, height=1080, scheme=scheme)
    try:
        expect(page.get_by_test_id("stSidebar")).to_be_hidden(timeout=SLOW)
        expect(counter(page, t(lang, "anim.metric.updates"))).to_have_text("1 / 150", timeout=SLOW)
        wait_for_app_run(page, timeout=SLOW)
        page.wait_for_timeout(600)
        page.screenshot(path=str(screenshot_dir / f"animation-presenter-{lang}-1920-{scheme}.png"), timeout=SLOW)
        metric = counter(page, t(lang, "anim.metric.updates"))
        deepest = "e => { let n = e; while (n.firstElementChild) n = n.firstElementChild; return n; }"
        size = metric.evaluate(f"e => parseFloat(getComputedStyle(({deepest})(e)).fontSize)")
        assert float(size) >= 36  # the number itself, not only its box, is projector-sized
        ratio, text = lowest_figure_contrast(page)  # full-contrast words on the ground the browser shows
        assert ratio >= 7, f"{text!r} at {ratio:.2f}:1"
        chart = page.get_by_test_id("stPlotlyChart").first.bounding_box()
        narration = page.locator(".st-key-anim_narration").first.bounding_box()
        assert chart and chart["width"] >= 1700  # the scene spans the projector
        assert narration and narration["y"] + narration["height"] <= 1080  # and the narration is on screen
        expect_no_exception(page)
    finally:
        page.context.close()


SLIDER_AND_CAPTION = """() => {
    const box = (element) => element && element.getBoundingClientRect();
    const slider = document.querySelector("[data-testid='stMain'] [data-testid='stSlider']");
    const caption = [...document.querySelectorAll("[data-testid='stMain'] [data-testid='stCaptionContainer']")]
        .find((element) => /Frame \\d+ of|动画第/.test(element.innerText));
    const ticks = box(slider.querySelector("[data-testid='stSliderTickBar']"));
    return {ticks: ticks && {top: ticks.top, bottom: ticks.bottom}, caption: box(caption).top};
}"""


@pytest.mark.parametrize("lang", ["zh"])  # the caption's Chinese words are the taller
def test_presenter_slider_numbers_stay_off_the_frame_caption(browser: Browser, server_url: str, lang: str):
    """At 1920 × 1080 in presenter view, the scrubber's min and max (shown under the track while the pointer is on
    it, in projector-sized words) stand clear above the frame caption (they covered it: issue 27, item 14)."""
    query = "presenter=1&frame=8" + ("&lang=en" if lang == "en" else "")
    page = open_animation(browser, f"{server_url}/animation?{query}", width=1920, height=1080)
    try:
        wait_for_app_run(page, timeout=SLOW)
        page.get_by_test_id("stMain").get_by_test_id("stSlider").get_by_role("group").hover()
        expect(page.get_by_test_id("stMain").get_by_test_id("stSliderTickBar")).to_be_visible(timeout=SLOW)
        boxes = page.evaluate(SLIDER_AND_CAPTION)
        assert boxes["ticks"] and boxes["ticks"]["bottom"] <= boxes["caption"], boxes
        expect_no_exception(page)
    finally:
        page.context.close()


def test_the_html_download_is_a_standalone_animation(browser: Browser, server_url: str, tmp_path: Path):
    page = open_animation(browser, server_url + "/animation?lang=en")
    try:
        with page.expect_download(timeout=SLOW) as download:
            page.get_by_role("button", name=re.compile(r"Download the animation as HTML")).click()
        saved = tmp_path / download.value.suggested_filename
        download.value.save_as(saved)
        assert saved.name == "steplab-animation-en.html"
        html = saved.read_text(encoding="utf-8")
        assert "<title>StepLab · Accumulation animation</title>" in html
        assert html.count('id="steplab-plotly-gz"') == 1  # plotly.js inside, once (compressed): works offline
        offline = browser.new_page()
        offline.goto(saved.as_uri())
        expect(offline.locator(".main-svg").first).to_be_visible(timeout=SLOW)
        expect(offline.get_by_text("▶ Play")).to_be_visible(timeout=SLOW)
        offline.close()
    finally:
        page.context.close()
