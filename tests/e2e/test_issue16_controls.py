"""Issue 16, items 6 and 11, as a person sees them in a real browser: a refused exact value is said next to its
field, the schedule's select has no gap under it and its `max_steps` label keeps clear of the epoch line, and
/compare shows its results, named by what differs, on a phone's first screen.

Screenshots go to artifacts/screenshots/issue16-*.png.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from steplab.i18n import t
from steplab.teaching.compare import COMPARE_FIELDS
from steplab.teaching.presets import presets
from steplab.trainer.plan import make_plan
from steplab_ui.shell import state
from steplab_ui.views.compare import column_names
from steplab_ui.widgets.schedule_chart import HORIZON_LABEL_GAP

from .conftest import CHROMIUM, SKIP_REASON, StreamlitServer
from .streamlit_page import exact_input, expect_no_exception, open_app, sidebar, wait_for_app_run

pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason=SKIP_REASON)]

ACCUMULATION = "gradient_accumulation_steps"
COURSE = presets()["course_default"]


# each boundary once, the two languages taking turns (the AppTest in tests/test_fields.py checks every message in both)
@pytest.mark.parametrize("typed, lang", [("-5", "en"), ("1000000000000", "zh")])
def test_a_refused_exact_value_is_said_next_to_the_field(page: Page, app_server: StreamlitServer,
                                                         screenshot_dir: Path, lang: str, typed: str) -> None:
    """Typed, Enter: the field shows the value kept (not the red "Press Enter to apply"), and right under it, in
    the field's own box, what was kept and why with the field table's range; no "hand-edited link" notice."""
    kept = COURSE.values[ACCUMULATION]
    open_app(page, f"{app_server.url}/calculator?lang={lang}")
    field = exact_input(page, t(lang, "field.exact", name=t(lang, f"field.{ACCUMULATION}")))
    field.fill(typed)
    field.press("Enter")
    wait_for_app_run(page)
    expect(field).to_have_value(str(kept))
    box = sidebar(page).locator(f".st-key-{ACCUMULATION}__control")
    said = state.refusal_text(lang, ACCUMULATION, kept, int(typed))
    expect(box.get_by_test_id("stAlert")).to_contain_text(said)
    assert "1,000,000" in said  # the field table's top, not a number typed into the message
    # the message sits just under the input, inside the same box as the slider
    field_box, alert_box = field.bounding_box(), box.get_by_test_id("stAlert").bounding_box()
    assert 0 <= alert_box["y"] - (field_box["y"] + field_box["height"]) < 40, (field_box, alert_box)
    assert box.get_by_role("slider").count() == 1  # slider and exact input: one control, one box
    expect(page.get_by_test_id("stMain").get_by_text(t(lang, "url.ignored", key=ACCUMULATION, value=typed))).to_have_count(0)
    expect(sidebar(page).get_by_text("Press Enter to apply")).to_have_count(0)
    assert f"{ACCUMULATION}=" not in page.url  # the URL holds the kept value (the default: left out)
    expect_no_exception(page)
    if typed == "0":
        field.blur()
        box.screenshot(path=str(screenshot_dir / f"issue16-refused-{lang}.png"))
    # a value in range is taken and the message goes
    field.fill("16")
    field.press("Enter")
    wait_for_app_run(page)
    expect(box.get_by_test_id("stAlert")).to_have_count(0)
    expect(field).to_have_value("16")


HORIZON = """() => {
    const gd = document.querySelector("[data-testid='stPlotlyChart'] .js-plotly-plot");
    const axis = gd._fullLayout.xaxis, box = gd.getBoundingClientRect();
    const lines = gd._fullLayout.xaxis2.tickvals.map((step) => box.left + axis._offset + axis.l2p(step));
    const label = [...gd.querySelectorAll(".annotation")].find((a) => a.textContent.includes("max_steps"));
    const text = label.querySelector("text").getBoundingClientRect();
    return {lines, left: text.left, right: text.right};
}"""


@pytest.mark.parametrize("width, lang", [(420, "en")])  # the narrow screen, where the label crowds
def test_schedule_has_no_gap_and_its_horizon_label_keeps_clear(page: Page, app_server: StreamlitServer,
                                                               screenshot_dir: Path, lang: str, width: int) -> None:
    plan = make_plan(COURSE.setup())
    page.set_viewport_size({"width": width, "height": 900})
    open_app(page, f"{app_server.url}/schedule?lang={lang}")
    page.wait_for_selector("[data-testid='stPlotlyChart'] .annotation", timeout=60_000)
    page.wait_for_timeout(1_000)
    found = page.evaluate(HORIZON)
    assert len(found["lines"]) == 3  # epochs 1, 2 and 3 (the last one on max_steps)
    gaps = [min(abs(line - found["left"]), abs(line - found["right"])) for line in found["lines"]]
    crossed = [found["left"] <= line <= found["right"] for line in found["lines"]]
    assert not any(crossed) and min(gaps) >= HORIZON_LABEL_GAP - 2, (found, plan.max_steps)
    # no empty stacked columns under the scheduler select: the next line follows within a normal gap
    panel = page.locator(".st-key-sched_controls")
    select_box = panel.get_by_test_id("stSelectbox").first.bounding_box()
    below_box = panel.get_by_test_id("stCaptionContainer").first.bounding_box()
    assert 0 <= below_box["y"] - (select_box["y"] + select_box["height"]) <= 32, (select_box, below_box)
    expect_no_exception(page)
    page.get_by_test_id("stMain").screenshot(path=str(screenshot_dir / f"issue16-schedule-{width}-{lang}.png"))


@pytest.mark.parametrize("lang", ["zh"])
def test_compare_results_come_first_on_a_phone(page: Page, app_server: StreamlitServer, screenshot_dir: Path,
                                               lang: str) -> None:
    page.set_viewport_size({"width": 420, "height": 900})
    open_app(page, f"{app_server.url}/compare?lang={lang}")
    table = page.locator(".st-key-cmp_results").get_by_test_id("stTable")
    expect(table).to_be_visible()
    top = table.bounding_box()["y"]
    first_form = page.get_by_test_id("stNumberInput").first.bounding_box()["y"]
    assert top < 900 and top < first_form, (top, first_form)  # on the first screen, above the forms
    chapter = [presets()[key].values for key in ("course_default", "course_batch2_acc8", "course_batch2_acc16")]
    names = column_names([{field: values.get(field, state.widget_default(field)) for field in COMPARE_FIELDS}
                          for values in chapter], lang)
    headers = table.locator("thead th").all_inner_texts()
    assert [header for header in headers if header.strip()] == names, headers
    assert t(lang, "compare.short.gradient_accumulation_steps", value="16") in names[2]
    expect_no_exception(page)
    page.screenshot(path=str(screenshot_dir / f"issue16-compare-420-{lang}.png"))
