"""The learning-rate schedule page in a real browser: drawn, hoverable, in zh and en, light and dark, 1280 and 420 px.

Screenshots go to artifacts/screenshots/lr-schedule-*.png; the shared `app_server` (`streamlit run app.py`)
serves the page.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import parse_qs, quote, urlparse

import pytest
from playwright.sync_api import BrowserContext, Locator, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from steplab.i18n import t
from steplab.simulation import lr_curve
from steplab.trainer import geometry
from steplab.trainer.events import events
from steplab.trainer.plan import make_plan
from steplab.trainer.setup import setup_from_mapping

from .conftest import CHROMIUM, SKIP_REASON, StreamlitServer
from .streamlit_page import (
    COURSE,
    expect_no_exception,
    grow_to_full_height,
    lowest_figure_contrast,
    open_app,
    set_size,
    title,
    wait_for_app_run,
)

pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason=SKIP_REASON)]

SLOW = 60_000
WIDTHS = (1280, 420)
THEMES = ("light", "dark")
SCENARIO = {"lr_scheduler_type": "cosine", "warmup_steps": "15"}



def schedule_url(base: str, lang: str, **params: str) -> str:
    query = {**params, **({"lang": "en"} if lang == "en" else {})}
    return base + "/schedule" + ("?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else "")


def wait_until_drawn(page: Page, lang: str) -> None:
    expect(title(page)).to_have_text(t(lang, "page.schedule.title"), timeout=SLOW)
    main = page.get_by_test_id("stMain")
    chart = main.get_by_test_id("stPlotlyChart")
    expect(chart).to_have_count(1, timeout=SLOW)
    expect(chart.locator(".main-svg").first).to_be_visible(timeout=SLOW)
    expect(chart.locator(".legend")).to_contain_text(t(lang, "schedule.run"), timeout=SLOW)
    expect(main.get_by_test_id("stCode")).to_have_count(3, timeout=SLOW)


def choose_option(page: Page, box: Locator, name: str) -> None:
    """Open a selectbox and pick `name`, reopening it if a late re-render of the page closed the list."""
    option = page.get_by_role("option", name=name, exact=True)
    for _ in range(10):
        box.get_by_role("combobox").click()  # the input itself, not the middle of label + input
        try:
            option.click(timeout=3_000)
            return
        except PlaywrightTimeoutError:
            page.keyboard.press("Escape")
    option.click()  # one last try that fails with Playwright's own message


def expect_theme(page: Page, theme: str) -> None:
    """The app follows `prefers-color-scheme`; so does the chart's legend text (Streamlit's plotly theme)."""
    script = """(dark) => {
        const luminance = (css) => {
            const [r, g, b] = css.match(/\\d+/g).map(Number);
            return 0.2126 * r + 0.7152 * g + 0.0722 * b;
        };
        const app = document.querySelector("[data-testid='stApp']");
        const legend = document.querySelector("[data-testid='stPlotlyChart'] .legendtext");
        if (!legend) return false;
        const background = luminance(getComputedStyle(app).backgroundColor);
        const text = luminance(getComputedStyle(legend).fill);
        return dark ? background < 80 && text > 128 : background > 200 && text < 128;
    }"""
    page.wait_for_function(script, arg=theme == "dark", timeout=SLOW)


@pytest.mark.parametrize("lang", ["zh"])  # the other language: the accessibility and presenter tests, AppTest
def test_schedule_page_screenshots(context: BrowserContext, app_server: StreamlitServer, screenshot_dir: Path,
                                   lang: str) -> None:
    page = context.new_page()
    open_app(page, schedule_url(app_server.url, lang, **SCENARIO))
    wait_until_drawn(page, lang)
    plan = make_plan(setup_from_mapping({**COURSE, "eval_strategy": "steps", "eval_steps": 50, **SCENARIO})[0])
    sentence = lr_curve.summary(lr_curve.curve(plan)).get(lang)
    expect(page.get_by_test_id("stMain")).to_contain_text(sentence, timeout=SLOW)
    expect_no_exception(page)
    for width in WIDTHS:
        for theme in THEMES:
            page.emulate_media(color_scheme=theme)
            set_size(page, width)
            wait_for_app_run(page)
            wait_until_drawn(page, lang)
            expect_theme(page, theme)
            ratio, text = lowest_figure_contrast(page)  # every word in the figure reads on this ground
            assert ratio >= 4.5, f"{text!r} at {ratio:.2f}:1 ({theme})"
            grow_to_full_height(page, width)
            wait_until_drawn(page, lang)
            page.screenshot(path=screenshot_dir / f"lr-schedule-{lang}-{width}-{theme}.png", full_page=True,
                            animations="disabled")
            expect_no_exception(page)


def test_hover_shows_step_epoch_samples_and_learning_rate(context: BrowserContext, app_server: StreamlitServer) -> None:
    page = context.new_page()
    open_app(page, schedule_url(app_server.url, "en", **SCENARIO))
    wait_until_drawn(page, "en")
    chart = page.get_by_test_id("stPlotlyChart")
    step = 90  # no marker there
    plan = make_plan(setup_from_mapping({**COURSE, "eval_strategy": "steps", "eval_steps": 50, **SCENARIO})[0])
    rate = plan.learning_rates(step, step)[0]
    epochs, samples = geometry.epochs_and_samples(plan, [step])
    assert (epochs[0], samples[0]) == (1.8, 2880)  # 40 of the epoch's 50 updates, 1,600 + 320 × 4 samples
    x, y = page.evaluate("""([step, rate]) => {
        const plot = document.querySelector("[data-testid='stPlotlyChart'] .js-plotly-plot");
        const layout = plot._fullLayout, box = plot.getBoundingClientRect();
        return [box.left + layout._size.l + layout.xaxis.l2p(step), box.top + layout._size.t + layout.yaxis.l2p(rate)];
    }""", [step, rate])
    page.mouse.move(x, y)
    hover = chart.locator(".hoverlayer")
    expect(hover).to_contain_text(f"Step {step}", timeout=SLOW)
    expect(hover).to_contain_text("epoch 1.800")
    expect(hover).to_contain_text("samples seen 2,880")
    expect(hover).to_contain_text(f"learning rate {rate:.3e}".replace("e-0", "e-"))  # d3 writes 3.333e-5
    expect_no_exception(page)


def test_stop_before_the_horizon_with_overlays(context: BrowserContext, app_server: StreamlitServer,
                                               screenshot_dir: Path) -> None:
    """4.46 edge case: 16 updates of 50 planned, plus two overlays; a screenshot for the eye."""
    page = context.new_page()
    open_app(page, schedule_url(app_server.url, "en", num_samples="4", per_device_train_batch_size="2",
                                gradient_accumulation_steps="3", max_steps="50", trainer="hf-4.46", warmup_steps="5",
                                eval_strategy="steps", eval_steps="10"))
    wait_until_drawn(page, "en")
    main = page.get_by_test_id("stMain")
    for index, kind in ((0, "another scheduler"), (1, "driven by max_steps")):
        box = main.get_by_test_id("stSelectbox").filter(has_text=f"Curve {index + 1}")
        choose_option(page, box, kind)
        wait_for_app_run(page)
    legend = page.get_by_test_id("stPlotlyChart").locator(".legend")
    expect(legend).to_contain_text("planned, never run", timeout=SLOW)
    expect(legend).to_contain_text("max_steps = 100", timeout=SLOW)
    expect(main).to_contain_text("stops before the horizon")
    grow_to_full_height(page, 1280)
    page.screenshot(path=screenshot_dir / "lr-schedule-en-1280-light-stops-early.png", full_page=True,
                    animations="disabled")
    expect_no_exception(page)


COVERED = """([eval, checkpoint]) => {
    const points = [...document.querySelectorAll("[data-testid='stPlotlyChart'] g.scatterlayer path.point")];
    const box = (p) => p.getBoundingClientRect();
    const filled = (p) => p.style.fill && p.style.fill !== "none" && Number(p.style.fillOpacity || 1) > 0;
    const problems = [];
    points.forEach((point, index) => {
        const b = box(point), x = b.left + b.width / 2, y = b.top + b.height / 2;
        const later = points.slice(index + 1).filter((p) => {
            const c = box(p);
            return c.left <= x && x <= c.right && c.top <= y && y <= c.bottom;
        });
        if (point.style.fill === eval && later.some(filled)) problems.push(`an evaluation at (${x}, ${y}) is covered`);
        if (point.style.stroke === checkpoint && later.some((p) => box(p).width >= b.width))
            problems.push(`a checkpoint at (${x}, ${y}) is covered`);
    });
    return [points.filter((p) => p.style.fill === eval).length, problems];
}"""


def rgb(colour: str) -> str:
    """`#rrggbb` as the browser writes a computed colour."""
    return "rgb({}, {}, {})".format(*(int(colour[i:i + 2], 16) for i in (1, 3, 5)))


@pytest.mark.parametrize("lang", ["zh"])
def test_an_evaluation_at_a_checkpoint_shows_both_markers(page: Page, app_server: StreamlitServer, lang: str) -> None:
    """The course evaluates and saves every 50 steps: each evaluation's diamond stays in sight inside its
    checkpoint's open square (a filled square drawn after it hid it), and nothing hides a checkpoint."""
    from steplab_ui.shell.layout import COLOURS

    open_app(page, schedule_url(app_server.url, lang))
    wait_until_drawn(page, lang)
    plan = make_plan(setup_from_mapping({**COURSE, "eval_strategy": "steps", "eval_steps": 50, "save_steps": 50})[0])
    evaluations = events(plan, "eval").steps()
    assert set(evaluations) <= set(events(plan, "save").steps()) and len(evaluations) == 3
    count, problems = page.evaluate(COVERED, [rgb(COLOURS["eval"]), rgb(COLOURS["checkpoint"])])
    assert count == len(evaluations) and not problems, problems


@pytest.mark.parametrize("lang", ["zh"])  # the other language: the accessibility and presenter tests, AppTest
def test_switching_scheduler_says_what_became_of_each_argument(page: Page, app_server: StreamlitServer,
                                                               lang: str) -> None:
    """cosine_with_restarts with `num_cycles: 3`, switched to warmup_stable_decay: `num_cycles` (three hard restarts
    there, cosine half-waves here) is not carried over, and the page says so; the decay then ends at its floor as a
    WSD does (it oscillated and ended near the peak)."""
    kwargs = '{"num_cycles": 3}'
    open_app(page, schedule_url(app_server.url, lang, lr_scheduler_type="cosine_with_restarts",
                                lr_scheduler_kwargs=quote(kwargs)))
    wait_until_drawn(page, lang)
    main = page.get_by_test_id("stMain")
    box = main.get_by_test_id("stSelectbox").filter(has_text=t(lang, "schedule.field.type").replace("`", ""))
    choose_option(page, box, "warmup_stable_decay")
    wait_for_app_run(page)
    reset = t(lang, "schedule.switched_reset", name="warmup_stable_decay", previous="cosine_with_restarts",
              keys="`num_cycles`").replace("`", "")
    expect(main.get_by_test_id("stCaptionContainer").filter(has_text=reset)).to_be_visible()
    setup = setup_from_mapping({**COURSE, "eval_strategy": "steps", "eval_steps": 50,
                                "lr_scheduler_type": "warmup_stable_decay",
                                "lr_scheduler_kwargs": json.loads(parse_qs(urlparse(page.url).query)["lr_scheduler_kwargs"][0])})[0]
    assert "num_cycles" not in setup.scheduler_kwargs
    plan = make_plan(setup)
    assert plan.learning_rates()[-1] < 0.01 * setup.learning_rate
    expect(main).to_contain_text(lr_curve.summary(lr_curve.curve(plan)).get(lang))
    expect_no_exception(page)
