"""The playground in a real browser: the linked views at 1280 and 420 px, and scrubbing to update k shows k's
learning rate; editing an operand where it stands changes the setup. Screenshots: artifacts/screenshots/playground-*.png.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from steplab.i18n import fmt_lr, t
from steplab.teaching.presets import presets
from steplab.trainer.plan import make_plan
from steplab.trainer.setup import setup_from_mapping
from steplab_ui.shell.layout import CONSOLE_CLASS

from .conftest import CHROMIUM, SKIP_REASON, StreamlitServer
from .streamlit_page import (
    HEIGHT,
    exact_input,
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


def test_the_linked_views_and_scrubbing_to_k(context: BrowserContext, app_server: StreamlitServer,
                                             screenshot_dir: Path) -> None:
    width = 1280  # the 420 px stack is measured in the figures test below
    page = context.new_page()
    set_size(page, width)
    open_app(page, f"{app_server.url}/playground?lang=en")
    charts_drawn(page)
    main = page.get_by_test_id("stMain")
    exact = main.get_by_role("spinbutton", name="Update k (exact)")
    exact.fill("37")
    exact.press("Enter")
    wait_for_app_run(page)
    rate = fmt_lr(float(course_plan().learning_rates(37, 37)[0]))
    sentence = main.get_by_test_id("stMarkdownContainer").filter(has_text="takes").first
    expect(sentence).to_contain_text("Update 37", timeout=SLOW)
    expect(sentence).to_contain_text(rate)
    expect(page.locator(".st-key-pg_bucket text", has_text="#37")).to_have_count(1, timeout=SLOW)
    expect(page.locator("[data-testid='stPlotlyChart'] text", has_text="k = 37")).to_have_count(2, timeout=SLOW)
    assert "step=37" in page.url
    grow_to_full_height(page, width)
    charts_drawn(page)
    page.screenshot(path=screenshot_dir / f"playground-en-{width}-step37.png", full_page=True, animations="disabled")
    expect_no_exception(page)


def view_boxes(page: Page) -> dict[str, dict[str, float]]:
    """Where the linked views stand on the page: the arithmetic's rows, the bucket, the curve, the strip and the
    console (page coordinates with the main area scrolled to the top)."""
    main = page.get_by_test_id("stMain")
    main.evaluate("element => { element.scrollTop = 0; }")
    rows = page.locator("[class*='st-key-steplab_labelled_row_']")
    boxes = {"arithmetic": rows.last.bounding_box(), "first_row": rows.first.bounding_box()}
    for name, key in (("bucket", "pg_bucket"), ("curve", "pg_schedule"), ("strip", "pg_timeline")):
        boxes[name] = page.locator(f".st-key-{key}").bounding_box()
    boxes["console"] = main.locator(f"pre.{CONSOLE_CLASS}").bounding_box()
    return boxes


def expect_one_screen(page: Page, lang: str) -> None:
    """At 1280 × 900, unscrolled, the arithmetic, the bucket, the learning-rate curve and the strip are all on
    screen whole: the arithmetic beside the bucket, the curve beside the strip."""
    boxes = view_boxes(page)
    for name in ("arithmetic", "bucket", "curve", "strip"):
        box = boxes[name]
        assert box["y"] >= 0 and box["y"] + box["height"] <= HEIGHT, (lang, name, box)
    assert boxes["bucket"]["x"] > boxes["arithmetic"]["x"] and boxes["strip"]["x"] > boxes["curve"]["x"]


def expect_stacked(page: Page) -> None:
    """At 420 px the views stack: arithmetic, bucket, curve, strip, then the console, each inside the width."""
    boxes = view_boxes(page)
    order = ["first_row", "bucket", "curve", "strip", "console"]
    tops = [boxes[name]["y"] for name in order]
    assert tops == sorted(tops), dict(zip(order, tops, strict=True))
    assert all(boxes[name]["x"] + boxes[name]["width"] <= 420 for name in order), boxes


AGREEING = """() => {
    // Step k on every view at one moment (read in one go between ticks): the console's bar, the exact step input,
    // the bucket's optimizer.step() #k and the curve's and strip's "k = …" marks; the ks seen agreeing so far.
    const agreeing = window.__steplab_agreeing = window.__steplab_agreeing || new Set();
    const main = document.querySelector("[data-testid='stMain']");
    const pre = main.querySelector("pre.CONSOLE_CLASS");
    const exact = main.querySelector("[class*='st-key-pg_step_exact'] input");
    if (!pre || !exact) return false;
    const done = (pre.innerText.trim().split("\\n").pop().match(/\\| (\\d+)\\/\\d+ /) || [])[1];
    const step = [...main.querySelectorAll(".st-key-pg_bucket text")].map(t => t.textContent)
        .find(text => text.includes("optimizer.step()"));
    const bucket = ((step || "").match(/#\\d+/) || [])[0];
    const labels = [...main.querySelectorAll("[data-testid='stPlotlyChart'] text")].map(t => t.textContent)
        .filter(text => text.startsWith("k = "));
    if (done !== undefined && Number(done) >= 2 && exact.value === done && bucket === `#${done}`
        && labels.length === 2 && labels.every(label => label === `k = ${done}`)) agreeing.add(Number(done));
    return agreeing.size >= 2;
}""".replace("CONSOLE_CLASS", CONSOLE_CLASS)


def test_while_the_run_plays_step_k_moves_on_every_view(context: BrowserContext, app_server: StreamlitServer) -> None:
    """Play, and without Pause: the console's bar, the exact step input, the bucket's optimizer.step() #k and the
    curve's and strip's "k = …" marks show the same update, and it moves on (two such updates seen, each read in
    one go between ticks; the run lasts 75 s, however slowly a busy machine draws its ticks)."""
    page = context.new_page()
    set_size(page, 1280)
    open_app(page, f"{app_server.url}/playground?lang=en")
    charts_drawn(page)
    seconds = 0.5  # at 1×: an update a tick
    page.get_by_role("spinbutton", name="Seconds per update").fill(str(seconds))
    page.get_by_role("spinbutton", name="Seconds per update").press("Enter")
    wait_for_app_run(page)
    page.get_by_role("radio", name="1×").or_(page.get_by_role("button", name="1×", exact=True)).first.click()
    wait_for_app_run(page)
    page.get_by_role("button", name="Play").click()
    run_ms = course_plan().optimizer_steps * seconds * 1000  # after that, the run has ended anyway
    page.wait_for_function(AGREEING, polling=100, timeout=run_ms)
    assert page.get_by_role("button", name="Pause").is_visible()  # still playing: nothing waited for Pause
    expect_no_exception(page)


def test_click_the_accumulation_in_the_arithmetic_and_change_it(context: BrowserContext,
                                                                app_server: StreamlitServer) -> None:
    page = context.new_page()
    set_size(page, 1280)
    open_app(page, f"{app_server.url}/playground?lang=en")
    charts_drawn(page)
    row = page.locator(".st-key-steplab_labelled_row_num_update_steps_per_epoch")
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
    expect(page.locator(".st-key-steplab_labelled_row_num_update_steps_per_epoch")).to_contain_text("= 100", timeout=SLOW)
    assert "gradient_accumulation_steps=4" in page.url
    # the operand is the shared setup: the whole page reran, the sidebar's control shows it too
    label = t("en", "field.exact", name=t("en", "field.gradient_accumulation_steps"))
    expect(exact_input(page, label)).to_have_value("4", timeout=SLOW)
    expect_no_exception(page)


@pytest.mark.parametrize("lang", ["zh"])  # both themes; English words in the figures: the k-label test, AppTest
def test_one_screen_and_every_word_in_the_figures_in_both_themes(context: BrowserContext, app_server: StreamlitServer,
                                                        lang: str, screenshot_dir: Path) -> None:
    page = context.new_page()
    open_app(page, f"{app_server.url}/playground?lang={lang}&step=60")
    charts_drawn(page)
    for width in (1280, 420):
        for theme in ("light", "dark"):
            page.emulate_media(color_scheme=theme)
            set_size(page, width)
            page.wait_for_timeout(800)
            if theme == "light" and width == 1280:
                expect_one_screen(page, lang)
            elif theme == "light":
                expect_stacked(page)
            ratio, text = lowest_figure_contrast(page)
            assert ratio >= 4.5, f"{text!r} at {ratio:.2f}:1 ({theme}, {width} px)"
            grow_to_full_height(page, width)
            charts_drawn(page)
            page.screenshot(path=screenshot_dir / f"playground-{lang}-{width}-{theme}.png", full_page=True,
                            animations="disabled")
    expect_no_exception(page)


LABEL_BOXES = """() => {
    // the boxes of the curve's words: "k = …" and the upright "max_steps = …"
    const texts = [...document.querySelectorAll(".st-key-pg_schedule text")];
    const box = (prefix) => {
        const text = texts.find((element) => element.textContent.startsWith(prefix));
        if (!text) return null;
        const r = text.getBoundingClientRect();
        return {left: r.left, right: r.right, top: r.top, bottom: r.bottom};
    };
    return {k: box("k = "), horizon: box("max_steps = ")};
}"""


@pytest.mark.parametrize("lang, step, presenter", [("en", 75, False), ("zh", 72, False), ("en", 75, True)])
def test_the_k_label_stays_clear_of_the_max_steps_label(context: BrowserContext, app_server: StreamlitServer,
                                                        lang: str, step: int, presenter: bool) -> None:
    """At the last update of a 75-update run, or just before it, "k = …" and the upright "max_steps = 75" on the
    learning-rate curve do not cover each other (they did: issue 27, item 14), also on a projector."""
    page = context.new_page()
    set_size(page, 1920 if presenter else 1280, 1080 if presenter else HEIGHT)
    query = f"max_steps=75&step={step}" + ("&lang=en" if lang == "en" else "") + ("&presenter=1" if presenter else "")
    open_app(page, f"{app_server.url}/playground?{query}")
    expect(page.locator(".st-key-pg_schedule text", has_text=f"k = {step}")).to_have_count(1, timeout=SLOW)
    boxes = page.evaluate(LABEL_BOXES)
    k, horizon = boxes["k"], boxes["horizon"]
    assert k and horizon, boxes
    apart = k["right"] <= horizon["left"] or horizon["right"] <= k["left"] or k["bottom"] <= horizon["top"] \
        or horizon["bottom"] <= k["top"]
    assert apart, boxes
    expect_no_exception(page)
