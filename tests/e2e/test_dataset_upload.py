"""The dataset stage in a real browser: on /config a LLaMA-Factory YAML with packing, its dataset file,
`dataset_info.json` and the model's tokenizer are uploaded; the funnel shows the engine's counts, the sidebar
says where the sample count came from, and the calculator plans from it (zh and en, a cold deep link)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from playwright.sync_api import Browser, expect

from steplab.dataset.load import funnel_from_files
from steplab.i18n import fmt_int, t
from steplab.trainer.plan import make_plan
from steplab.trainer.setup import setup_from_mapping

from .conftest import CHROMIUM, SCREENSHOTS, SKIP_REASON, StreamlitServer
from .streamlit_page import (
    exact_input,
    expect_no_exception,
    metric_value,
    open_app,
    sidebar,
    title,
    wait_for_app_run,
)

pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason=SKIP_REASON)]

RUNS = Path(__file__).resolve().parents[1] / "data" / "llamafactory-runs"
CASE = RUNS / "configs" / "d_packing.yaml"
FILES = [RUNS / "assets" / "data" / "short1600.json", RUNS / "assets" / "data" / "dataset_info.json",
         RUNS / "assets" / "tiny-qwen2" / "tokenizer.json", RUNS / "assets" / "tiny-qwen2" / "tokenizer_config.json"]


@pytest.mark.parametrize("lang", ["zh"])
def test_uploaded_datasets_set_the_sample_count_everywhere(browser: Browser, app_server: StreamlitServer,
                                                           lang: str) -> None:
    values = yaml.safe_load(CASE.read_text())
    examples = funnel_from_files(values, RUNS).train_examples  # the engine's count (400: the real run's)
    total = make_plan(setup_from_mapping({"num_samples": examples, "per_device_train_batch_size": 4,
                                          "gradient_accumulation_steps": 8, "num_train_epochs": 3,
                                          "lr_scheduler_type": "cosine", "warmup_ratio": 0.1})[0]).max_steps
    context = browser.new_context(viewport={"width": 1280, "height": 1400})
    page = context.new_page()
    try:
        open_app(page, f"{app_server.url}/config?lang={lang}")
        expect(title(page)).to_have_text(t(lang, "page.config.title"), timeout=60_000)
        page.get_by_label(t(lang, "config.yaml")).fill(CASE.read_text())
        page.keyboard.press("Control+Enter")
        wait_for_app_run(page)
        data = page.get_by_test_id("stMain").get_by_test_id("stExpander")
        data.get_by_text(t(lang, "config.data.heading")).click()
        data.locator("input[type=file]").set_input_files([str(path) for path in FILES])
        wait_for_app_run(page)
        page.get_by_role("button", name=t(lang, "config.apply")).click()
        wait_for_app_run(page)
        summary = t(lang, "config.data.summary", train=fmt_int(examples)).replace("**", "").replace("`", "")
        expect(page.get_by_test_id("stMain")).to_contain_text(summary, timeout=60_000)
        expect(page.get_by_test_id("stPlotlyChart")).to_be_visible()
        samples = t(lang, "field.exact", name=t(lang, "field.num_samples"))
        expect(exact_input(page, samples)).to_have_value(str(examples))
        expect(sidebar(page).get_by_text(t(lang, "config.data.sidebar_source", n=fmt_int(examples)))).to_be_visible()
        page.screenshot(path=str(SCREENSHOTS / f"config-dataset-{lang}.png"), full_page=True)

        sidebar(page).get_by_role("link", name=t(lang, "page.calculator.title")).click()
        expect(title(page)).to_have_text(t(lang, "page.calculator.title"), timeout=60_000)
        expect(metric_value(page, t(lang, "card.total_steps"))).to_have_text(fmt_int(total), timeout=60_000)
        expect_no_exception(page)
    finally:
        context.close()
    assert (examples, total) == (400, 39)  # the real LLaMA-Factory run logged 400 examples and 39 steps


COURSE = Path(__file__).resolve().parents[1] / "data" / "course-qwen3"


@pytest.mark.parametrize("lang", ["en"])  # one language each (the course run in Chinese); the CLI test counts both
def test_the_course_run_uploaded_plans_as_the_real_run_logged(browser: Browser, app_server: StreamlitServer,
                                                             lang: str) -> None:
    """The course's own YAML (qwen3, a sharegpt training file and a separate eval file) with its three data files:
    1,600 examples, 200 for evaluation, 150 steps, evaluations and checkpoints at 50, 100 and 150."""
    context = browser.new_context(viewport={"width": 1280, "height": 1400})
    page = context.new_page()
    try:
        open_app(page, f"{app_server.url}/config?lang={lang}")
        expect(title(page)).to_have_text(t(lang, "page.config.title"), timeout=60_000)
        page.get_by_label(t(lang, "config.yaml")).fill((COURSE / "course.yaml").read_text())
        page.keyboard.press("Control+Enter")
        wait_for_app_run(page)
        data = page.get_by_test_id("stMain").get_by_test_id("stExpander")
        data.get_by_text(t(lang, "config.data.heading")).click()
        data.locator("input[type=file]").set_input_files(sorted(str(p) for p in (COURSE / "data").iterdir()))
        wait_for_app_run(page)
        page.get_by_role("button", name=t(lang, "config.apply")).click()
        wait_for_app_run(page)
        summary = (t(lang, "config.data.summary", train=fmt_int(1600))
                   + t(lang, "config.data.summary_eval", eval=fmt_int(200))).replace("**", "").replace("`", "")
        expect(page.get_by_test_id("stMain")).to_contain_text(summary, timeout=60_000)
        expect(page.get_by_role("spinbutton", name=t(lang, "config.processes"))).to_have_value("1")
        expect(page.get_by_test_id("stMain")).to_contain_text(
            t(lang, "config.processes_assumed", world_size=1).replace("`", ""))
        page.screenshot(path=str(SCREENSHOTS / f"config-course-{lang}.png"), full_page=True)

        sidebar(page).get_by_role("link", name=t(lang, "page.calculator.title")).click()
        expect(title(page)).to_have_text(t(lang, "page.calculator.title"), timeout=60_000)
        expect(metric_value(page, t(lang, "card.total_steps"))).to_have_text(fmt_int(150), timeout=60_000)
        expect(page.get_by_test_id("stMain")).to_contain_text("eval_steps = 50 → 50, 100, 150")
        expect(page.locator(".js-plotly-plot").first).to_be_visible()
        drawn = page.evaluate("""names => Object.fromEntries([...document.querySelectorAll('.js-plotly-plot')]
            .flatMap(plot => plot.data || []).filter(trace => names.includes(trace.name))
            .map(trace => [trace.name, Array.from(trace.x)]))""", [t(lang, "timeline.save"), t(lang, "timeline.eval")])
        assert drawn == {t(lang, "timeline.save"): [50, 100, 150], t(lang, "timeline.eval"): [50, 100, 150]}, drawn
        page.screenshot(path=str(SCREENSHOTS / f"calculator-course-{lang}.png"), full_page=True)
        expect_no_exception(page)
    finally:
        context.close()
