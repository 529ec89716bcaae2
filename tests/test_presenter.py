"""Presenter view on every page (steplab_ui/shell/presenter.py): `?presenter=1` turns it on, the one switch turns it off
and on again and keeps the URL in step; the key numbers it shows are the engine's and its figures' words are
projector-sized. The browser side (visible, not covered, font sizes, the fold) is tests/e2e/test_presenter.py."""

from __future__ import annotations

import json

import plotly.graph_objects as go
import pytest
from streamlit.testing.v1 import AppTest
from test_app import PAGE_FILES, ROOT
from test_app import run as run_page

from steplab.i18n import catalogue, fmt_int, fmt_lr
from steplab.simulation import lr_curve
from steplab.simulation.timeline import build_timeline
from steplab.teaching.lessons import load_lessons
from steplab.trainer.plan import make_plan
from steplab.trainer.setup import setup_from_mapping
from steplab_ui.shell import presenter
from steplab_ui.widgets import animation_frames as animation_view
from steplab_ui.widgets import charts, schedule_chart

COURSE = {"num_samples": 1600, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 8,
          "num_train_epochs": 3}


def plan_of(values: dict):
    return make_plan(setup_from_mapping(values)[0])


def styled(at: AppTest) -> bool:
    """Whether the run drew the presenter style."""
    return any(element.proto.body == presenter.CSS for element in at.get("html"))


def switch_label(at: AppTest) -> str:
    return at.button(key=presenter.SWITCH).label


def click_switch(at: AppTest) -> AppTest:
    at.button(key=presenter.SWITCH).click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.parametrize("path", PAGE_FILES)
def test_the_url_turns_it_on_and_the_switch_turns_it_off_and_on(path):
    words = catalogue("en")
    at = run_page(path, lang="en", presenter="1")
    assert styled(at) and switch_label(at) == words["presenter.leave"]
    assert at.query_params["presenter"] == "1"
    click_switch(at)
    assert not styled(at) and switch_label(at) == words["presenter.enter"]
    assert "presenter" not in at.query_params and at.query_params["lang"] == "en"  # the rest of the URL stays
    click_switch(at)
    assert styled(at) and at.query_params["presenter"] == "1"


@pytest.mark.parametrize("path", PAGE_FILES)
def test_off_without_the_url_value(path):
    at = run_page(path)
    assert not styled(at) and switch_label(at) == catalogue("zh")["presenter.enter"]
    assert "presenter" not in at.query_params


@pytest.mark.parametrize("raw, on", [("1", True), ("true", True), ("0", False), ("false", False), ("yes", False)])
def test_the_url_values_it_reads(raw, on):
    at = run_page("app_pages/calculator.py", presenter=raw)
    assert styled(at) is on
    assert at.query_params.get("presenter") == ("1" if on else None)  # the URL says it one way


def test_the_session_keeps_it_when_a_page_change_drops_the_url_value():
    at = run_page("app.py", presenter="1")
    del at.query_params["presenter"]  # what a page link does to a value no widget is bound to
    at.switch_page("app_pages/calculator.py").run()
    assert not at.exception
    assert styled(at) and at.query_params["presenter"] == "1"
    click_switch(at)
    at.switch_page("app_pages/schedule.py").run()
    assert not styled(at) and "presenter" not in at.query_params


def test_the_intro_is_dropped_and_the_title_stays():
    words = catalogue("en")
    at = run_page("app_pages/calculator.py", lang="en", presenter="1")
    assert at.title[0].value == words["page.calculator.title"]
    assert words["page.calculator.intro"] not in [c.value for c in at.caption]
    at = run_page("app_pages/calculator.py", lang="en")
    assert words["page.calculator.intro"] in [c.value for c in at.caption]


def test_the_schedule_cards_are_the_engines():
    at = run_page("app_pages/schedule.py", lang="en", presenter="1")
    words = catalogue("en")
    shown = {m.label: m.value for m in at.metric}
    curve = lr_curve.curve(plan_of(COURSE))
    assert shown == {words["card.total_steps"]: fmt_int(curve.plan.max_steps), words["card.warmup"]: "0",
                     words["schedule.card.peak"]: fmt_lr(curve.peak), words["schedule.card.first"]: fmt_lr(curve.first),
                     words["schedule.card.last"]: fmt_lr(curve.last)}
    assert not run_page("app_pages/schedule.py", lang="en").metric  # only presenter view adds the cards


def test_the_compare_cards_are_each_columns_total_steps():
    at = run_page("app_pages/compare.py", lang="en", presenter="1")
    totals = [plan_of({**COURSE, "per_device_train_batch_size": batch, "gradient_accumulation_steps": ga}).max_steps
              for batch, ga in ((4, 8), (2, 8), (2, 16))]
    assert [m.value for m in at.metric] == [fmt_int(total) for total in totals] == ["150", "300", "150"]
    assert [m.label for m in at.metric] == [f"Total steps, setup {n}" for n in (1, 2, 3)]
    at.number_input(key="cmp_1_gradient_accumulation_steps").set_value(4).run()
    assert at.metric[1].value == fmt_int(plan_of({**COURSE, "per_device_train_batch_size": 2,
                                                   "gradient_accumulation_steps": 4}).max_steps)


def test_lesson_parts_move_by_buttons_and_the_animation_part_is_projector_sized():
    lesson = next(lesson for lesson in load_lessons() if lesson.id == "accumulation")
    part = next(i for i, block in enumerate(lesson.blocks) if block.data.get("widget") == "animation")
    at = AppTest.from_file(str(ROOT / "app_pages" / "lessons.py"), default_timeout=90)
    at.query_params.update(lesson=lesson.id, lang="en", presenter="1")
    at.run()
    assert at.button(key="lesson_parts_previous").disabled and not at.get("plotly_chart")
    for _ in range(part):
        at.button(key="lesson_parts_next").click().run()
    assert not at.exception
    assert at.get("progress")[0].proto.text == f"Part {part + 1} of {len(lesson.blocks)}"
    timeline = build_timeline(lesson.plan(lesson.blocks[part].data["scenario"]))
    assert [(m.label, m.value) for m in at.metric] == animation_view.counters(timeline.frames[0], timeline, "en")
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert min(note["font"]["size"] for note in spec["layout"]["annotations"]) >= presenter.FIGURE_FONT
    at.button(key="lesson_parts_previous").click().run()
    assert at.get("progress")[0].proto.text == f"Part {part} of {len(lesson.blocks)}"
    click_switch(at)  # off: the whole lesson again, the animation's words at their usual size
    assert not at.get("progress")
    bucket = catalogue("en")["anim.bucket"]
    drawn = [json.loads(chart.proto.spec)["layout"].get("annotations", []) for chart in at.get("plotly_chart")]
    notes = next(notes for notes in drawn if any(note.get("text") == bucket for note in notes))  # the animation
    assert min(note.get("font", {}).get("size", 12) for note in notes) < presenter.FIGURE_FONT  # plotly: 12


def test_the_overfitting_lab_in_a_lesson_is_the_labs_figure_with_projector_sized_words():
    """Lesson 5's lab part draws the labs page's plotly figure (not a small st.line_chart), enlarged on the
    projector: every font size it sets is at least presenter.FIGURE_FONT."""
    lesson = next(lesson for lesson in load_lessons() if lesson.id == "more-epochs")
    part = next(i for i, block in enumerate(lesson.blocks) if block.data.get("widget") == "lab")
    at = AppTest.from_file(str(ROOT / "app_pages" / "lessons.py"), default_timeout=90)
    at.query_params.update(lesson=lesson.id, lang="en", presenter="1")
    at.run()
    for _ in range(part):
        at.button(key="lesson_parts_next").click().run()
    assert not at.exception and not at.get("arrow_line_chart") and not at.get("vega_lite_chart")
    (chart,) = at.get("plotly_chart")
    figure = go.Figure(json.loads(chart.proto.spec))
    assert figure.data and all(size is not None and size >= presenter.FIGURE_FONT for size in _sizes(figure))
    assert chart.proto.alt in [caption.value for caption in at.caption]  # its sentence is on the page too


def _sizes(figure: go.Figure) -> list[float]:
    """Every font size a figure sets for its words (layout, legend, axes, annotations, text traces)."""
    layout = figure.layout
    sizes = [layout.font.size, layout.legend.font.size]
    axes = [layout[name] for name in figure.to_dict()["layout"] if name.startswith(("xaxis", "yaxis"))]
    assert len(axes) >= 2
    for axis in axes:
        if axis.visible is not False:
            sizes.append(axis.tickfont.size)
        if axis.title.text:
            sizes.append(axis.title.font.size)
    sizes += [note.font.size if note.font.size is not None else layout.font.size for note in layout.annotations]
    return sizes


@pytest.mark.parametrize("build", ["timeline", "schedule"])
def test_figures_grow_their_words_in_presenter_view(build):
    plan = plan_of({**COURSE, "warmup_steps": 10, "eval_strategy": "steps", "eval_steps": 50})
    make = {"timeline": lambda on: charts.timeline(plan, "en", on),
            "schedule": lambda on: schedule_chart.figure(lr_curve.curve(plan), "en", presenter=on)}[build]
    projected = go.Figure(make(True).to_dict())  # plotly's full validation: the page skips it
    assert all(size is not None and size >= presenter.FIGURE_FONT for size in _sizes(projected))
    assert projected.layout.height > make(False).layout.height
    assert make(False).layout.font.size is None  # the normal view keeps the theme's sizes


def test_enlarged_copies_a_cached_figure_and_leaves_it_alone():
    original = charts.timeline(plan_of(COURSE), "en")
    copy = presenter.enlarged(original)
    assert copy is not original and original.layout.font.size is None
    assert all(size >= presenter.FIGURE_FONT for size in _sizes(copy))


def test_one_style_and_no_script():
    assert "<script" not in presenter.CSS and "stSidebar" in presenter.CSS
    assert f"font-size: {presenter.NUMBER_PX}px" in presenter.CSS and presenter.NUMBER_PX >= 48
    assert f"font-size: {presenter.TEXT_PX}px" in presenter.CSS and presenter.TEXT_PX >= 24
    assert not hasattr(animation_view, "PRESENTER_CSS")  # the pages' own styles are gone: one block for all
