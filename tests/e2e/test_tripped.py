"""What a student and an instructor tripped on (issue 16), tried the way they tried it: in a real browser.

Every number the tests expect comes from the engine (`make_plan`, the presets, the timeline), never typed in.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import Page, expect

from steplab.dataset.files import MAX_FILE_BYTES
from steplab.i18n import fmt_float, fmt_int, t
from steplab.teaching.presets import presets
from steplab.trainer.plan import make_plan

from .conftest import CHROMIUM, SKIP_REASON, StreamlitServer
from .streamlit_page import expect_no_exception, metric_value, open_app, sidebar, wait_for_app_run

pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason=SKIP_REASON)]
# A condition's bound, never a pause: what these tests wait for (a control drawn, a rerun's numbers, the URL) a
# working app reaches; on a machine loaded 10-19 by other work the sidebar's controls took over 30 s to be drawn.
BUSY_MS = 120_000


@pytest.fixture
def page(page: Page) -> Page:
    """pytest-playwright's page, its clicks and waits bounded by `BUSY_MS` instead of 30 s."""
    page.set_default_timeout(BUSY_MS)
    return page


def query(page: Page) -> dict[str, str]:
    return {key: values[-1] for key, values in parse_qs(urlparse(page.url).query, keep_blank_values=True).items()}


def calculator_numbers(page: Page) -> tuple[str, str]:
    """(updates per epoch, total steps) as the calculator shows them."""
    return (metric_value(page, t("en", "card.updates_per_epoch")).inner_text(),
            metric_value(page, t("en", "card.total_steps")).inner_text())


def expect_calculator(page: Page, plan) -> None:  # noqa: ANN001 - a Plan
    """The calculator shows `plan`'s updates per epoch and total steps (once its rerun has drawn them)."""
    expect(metric_value(page, t("en", "card.updates_per_epoch"))).to_have_text(
        fmt_int(plan.num_update_steps_per_epoch), timeout=BUSY_MS)
    expect(metric_value(page, t("en", "card.total_steps"))).to_have_text(fmt_int(plan.max_steps), timeout=BUSY_MS)


def wait_for_query(page: Page, values: dict[str, str]) -> None:
    """Until the page's URL holds every `values` pair (the rerun that writes it may still be on its way)."""
    page.wait_for_function("""(wanted) => {
        const query = new URLSearchParams(window.location.search);
        return Object.entries(wanted).every(([key, value]) => query.get(key) === value);
    }""", arg=values, timeout=BUSY_MS)


# ---- 1. every way of changing the setup leaves a URL that reopens exactly it ---------------------------------


def test_lesson_use_setup_reaches_the_url(page: Page, app_server: StreamlitServer) -> None:
    from steplab.teaching.lessons import load_lessons

    lesson = next(lesson for lesson in load_lessons() if lesson.id == "batch-epoch-step")
    scenario = lesson.scenarios["no_accumulation"]
    plan = make_plan(scenario)
    open_app(page, f"{app_server.url}/lessons?lesson={lesson.id}&lang=en")
    for block in [block for block in lesson.blocks if block.kind == "predict"]:  # the widget waits for the answers
        guess = page.get_by_label(t("en", "lesson.your_guess")).last
        guess.fill(str(lesson.answer(block)))
        guess.press("Enter")
        wait_for_app_run(page)
        page.get_by_role("button", name=t("en", "lesson.check_guess")).last.click()
        wait_for_app_run(page)
    page.get_by_role("button", name=t("en", "lesson.use_setup")).last.click()
    wait_for_query(page, {"gradient_accumulation_steps": str(scenario.gradient_accumulation_steps)})
    # the same URL, opened fresh (reloaded or shared), on the calculator: the lesson's setup, not the default
    fresh = page.context.new_page()
    fresh.set_default_timeout(BUSY_MS)
    open_app(fresh, f"{app_server.url}/calculator?{urlparse(page.url).query}")
    expect(metric_value(fresh, t("en", "card.updates_per_epoch"))).to_have_text(
        fmt_int(plan.num_update_steps_per_epoch), timeout=BUSY_MS)
    assert plan.num_update_steps_per_epoch != make_plan(presets()["course_default"].setup()).num_update_steps_per_epoch
    fresh.close()


def test_a_preset_leaves_whole_numbers_in_the_url_and_reopens_exactly(page: Page, app_server: StreamlitServer) -> None:
    preset = presets()["llamafactory_qwen3_lora_sft"]
    open_app(page, f"{app_server.url}/calculator?lang=en")
    sidebar(page).get_by_test_id("stSelectbox").first.click()
    page.get_by_role("option", name=preset.title.get("en")).click()
    plan = make_plan(preset.setup())
    expect_calculator(page, plan)
    shown = calculator_numbers(page)
    wait_for_query(page, {"num_samples": str(preset.values["num_samples"])})  # the run that writes the URL came
    values = query(page)
    assert not [value for value in values.values() if re.fullmatch(r"-?\d+\.0", value)], page.url
    for key, value in preset.values.items():
        if isinstance(value, int) and key in values:
            assert values[key] == str(value), (key, page.url)
    fresh = page.context.new_page()
    fresh.set_default_timeout(BUSY_MS)
    open_app(fresh, f"{app_server.url}/calculator?{urlparse(page.url).query}")
    expect_calculator(fresh, plan)
    assert calculator_numbers(fresh) == shown
    expect_no_exception(fresh)
    fresh.close()


# ---- 2. the animation shows state.epoch as the Trainer holds it -----------------------------------------------


def test_animation_shows_the_trainers_state_epoch(page: Page, app_server: StreamlitServer) -> None:
    from steplab.simulation.timeline import build_timeline
    from steplab.trainer.geometry import epochs_and_samples

    plan = make_plan(presets()["course_default"].setup())
    timeline = build_timeline(plan)
    first_step = next(position for position, frame in enumerate(timeline.frames) if frame.is_step)
    logged = fmt_float(float(epochs_and_samples(plan, [1])[0][0]), 3)
    label = t("en", "anim.metric.epoch")
    for position, expected in ((0, "0"), (first_step - 1, "0"), (first_step, logged), (first_step + 1, logged)):
        open_app(page, f"{app_server.url}/animation?lang=en&frame={position + 1}")
        expect(metric_value(page, label)).to_have_text(expected)
    assert logged != "0" and first_step > 0


# ---- 7. a frame or warmup_ratio the page cannot use is never dropped without a word -----------------------------


@pytest.mark.parametrize("raw", ["99999", "-1", "abc"])
def test_a_bad_frame_in_the_url_gets_the_notice(page: Page, app_server: StreamlitServer, raw: str) -> None:
    open_app(page, f"{app_server.url}/animation?lang=en&frame={raw}")
    notice = t("en", "url.ignored", key="frame", value=raw)
    expect(page.get_by_test_id("stAlertContentWarning").filter(has_text=notice)).to_have_count(1)
    expect_no_exception(page)


def test_a_good_frame_gets_no_notice(page: Page, app_server: StreamlitServer) -> None:
    open_app(page, f"{app_server.url}/animation?lang=en&frame=3")
    expect(page.get_by_test_id("stAlertContentWarning").filter(has_text="frame=")).to_have_count(0)
    assert query(page).get("frame") == "3"


def test_warmup_ratio_5_is_said_not_dropped(page: Page, app_server: StreamlitServer) -> None:
    open_app(page, f"{app_server.url}/calculator?lang=en&warmup_ratio=5")
    assert query(page).get("warmup_ratio") == "5"  # kept: transformers 5.x copies it into warmup_steps
    plan = make_plan(presets()["course_default"].setup(warmup_ratio=5.0))
    expect(metric_value(page, t("en", "card.warmup"))).to_have_text(fmt_int(plan.warmup_steps))
    expect(page.get_by_test_id("stAlert").filter(has_text="warmup_ratio")).not_to_have_count(0)
    open_app(page, f"{app_server.url}/calculator?lang=en&warmup_ratio=5&trainer=hf-4.57")
    expect(page.get_by_test_id("stMain").get_by_text("warmup_ratio must lie in range [0,1]")).to_have_count(1)


# ---- 8. a file that is not YAML on /config: say what was wrong with it ---------------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_non_yaml_upload_says_what_was_wrong(page: Page, app_server: StreamlitServer, lang: str) -> None:
    open_app(page, f"{app_server.url}/config" + ("?lang=en" if lang == "en" else ""))
    page.get_by_role("tab", name=t(lang, "config.upload")).click()
    page.get_by_test_id("stTabs").locator("input[type='file']").set_input_files(
        {"name": "notes.txt", "mimeType": "text/plain", "buffer": b"per_device_train_batch_size = 4\n"})
    wait_for_app_run(page)
    said = t(lang, "config.not_yaml_file", name="notes.txt").replace("`", "")
    errors = page.get_by_test_id("stAlertContentError")
    expect(errors.filter(has_text=said)).to_have_count(1)  # beside the file, before anything is clicked
    page.get_by_role("button", name=t(lang, "config.apply")).click()
    wait_for_app_run(page)
    expect(errors.filter(has_text=said)).to_have_count(1)  # said once: now under the button (issue 27)
    body = page.get_by_test_id("stMain").inner_text()
    assert t(lang, "config_io.empty") not in body and t(lang, "config.nothing", mb=MAX_FILE_BYTES // 2**20) not in body
    expect_no_exception(page)


# ---- 13. the animation's HTML export: plotly.js once, frames as data, a fraction of the old size -----------------


def test_html_export_is_a_fraction_of_the_old_size_and_plays_every_frame(page: Page, tmp_path) -> None:
    from steplab.simulation.timeline import build_timeline
    from steplab_ui.widgets.animation_html import animation_figure, export_html

    timeline = build_timeline(make_plan(presets()["course_default"].setup()))
    exported = export_html(timeline, "en")
    old_way = animation_figure(timeline, "en").to_html(include_plotlyjs=True, full_html=True)  # the full bundle
    assert len(exported) * 5 < len(old_way), (len(exported), len(old_way))
    path = tmp_path / "animation.html"
    path.write_text(exported, encoding="utf-8")
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-steplab-ready='true']", timeout=60_000)
    frames = page.evaluate("() => document.getElementById('steplab-animation')._transitionData._frames.length")
    assert frames == len(timeline.frames)
    steps = page.evaluate("() => document.getElementById('steplab-animation').layout.sliders[0].steps.length")
    assert steps == len(timeline.frames)
    page.get_by_text("▶ " + t("en", "anim.play")).click()
    page.wait_for_function(
        "() => document.getElementById('steplab-animation').layout.sliders[0].active > 1", timeout=30_000)
    assert page.get_by_text(t("en", "anim.export.slider").strip()).count() >= 1


# ---- 12. the accumulation lesson's stepper: buttons that step, a slider that shows the frame's micro-batch ---------


def test_lesson_stepper_steps_and_shows_the_frames_micro_batch(page: Page, app_server: StreamlitServer) -> None:
    from steplab.simulation.timeline import build_timeline
    from steplab.teaching.lessons import load_lessons

    lesson = next(lesson for lesson in load_lessons() if lesson.id == "accumulation")
    timeline = build_timeline(lesson.plan("course"))
    open_app(page, f"{app_server.url}/lessons?lesson={lesson.id}&lang=en")
    # item 4 as the reader sees it: the release's loss scaling, in the page's language
    scaling = lesson.value("course.loss_scaling").get("en").replace("**", "").replace("`", "")
    expect(page.get_by_test_id("stMarkdown").filter(has_text=scaling[:60])).to_have_count(1)
    slider = page.get_by_test_id("stSlider").filter(has_text=t("en", "lesson.frame"))
    thumb = slider.get_by_role("slider")
    expect(thumb).to_have_attribute("aria-valuetext", fmt_int(timeline.frames[0].index + 1))
    page.get_by_role("button", name=t("en", "anim.step_update")).first.click()
    wait_for_app_run(page)
    first_step = next(frame for frame in timeline.frames if frame.is_step)
    expect(thumb).to_have_attribute("aria-valuetext", fmt_int(first_step.index + 1))
    expect(metric_value(page, t("en", "anim.metric.updates"))).to_have_text(
        f"{fmt_int(first_step.updates)} / {fmt_int(timeline.total_steps)}")
    page.get_by_role("button", name=t("en", "anim.back")).first.click()
    wait_for_app_run(page)
    expect(thumb).to_have_attribute("aria-valuetext", fmt_int(first_step.index))
    caption = lesson.say(next(b for b in lesson.blocks if b.data.get("widget") == "animation").text("caption"), "en")
    assert "Play, pause" not in caption
    expect(page.get_by_text(caption)).to_have_count(1)


# ---- 11. /schedule: the max_steps label clear of the last epoch line is tests/e2e/test_issue16_controls.py -----
