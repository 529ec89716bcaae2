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


@pytest.mark.parametrize("lang", ["zh", "en"])
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
