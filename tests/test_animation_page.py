"""AppTest for /animation: buttons and the URL move the frame, the counters say what the plan says.

Also the drawing (every kind of frame is a valid plotly figure with fixed ranges) and the HTML export.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
import time

import plotly.graph_objects as go
import pytest
from streamlit.testing.v1 import AppTest
from test_app import run as run_page

from steplab.i18n import catalogue, fmt_int, fmt_lr
from steplab.simulation.timeline import build_timeline
from steplab.trainer.plan import make_plan
from steplab.trainer.setup import setup_from_mapping
from steplab_ui.shell import browser, layout, presenter
from steplab_ui.shell.layout import COLOURS
from steplab_ui.widgets import animation_frames as animation_view
from steplab_ui.widgets.animation_html import animation_figure, export_html

PAGE = "app_pages/animation.py"
COURSE = {"num_samples": 1600, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 8,
          "num_train_epochs": 3}
# 24 samples, batch 4, accumulation 4, 2 epochs: 6 micro-batches an epoch, the whole run fits in the window
SMALL = {"num_samples": "24", "per_device_train_batch_size": "4", "gradient_accumulation_steps": "4",
         "num_train_epochs": "2"}


def run(**params: str) -> AppTest:
    """The page alone (as a cold deep link runs it), with URL parameters; no exception."""
    return run_page(PAGE, **params)


def counters(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def timeline_of(values: dict):
    return build_timeline(make_plan(setup_from_mapping(values)[0]))


def expected_counters(timeline, position: int, lang: str = "en") -> dict[str, str]:
    return dict(animation_view.counters(timeline.frames[position], timeline, lang))


def click(at: AppTest, key: str) -> AppTest:
    at.button(key=key).click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_page_alone_in_both_languages(lang):
    at = run(lang=lang)
    strings = catalogue(lang)
    assert at.title[0].value == strings["page.animation.title"]
    shown = counters(at)
    assert shown[strings["anim.metric.micro_batch"]] == "1 / 1,200"
    assert shown[strings["anim.metric.bucket"]] == "1 / 8"
    assert shown[strings["anim.metric.updates"]] == "0 / 150"
    assert at.slider(key="frame").value == 1
    assert at.button(key="anim_play").label == strings["anim.play"]
    assert any(strings["anim.compare.measured"] in m.value for m in at.markdown)


def test_step_buttons_walk_the_plan_frame_by_frame():
    """Every frame of a small run, reached with "next micro-batch", shows the plan's counters."""
    timeline = timeline_of({key: float(v) for key, v in SMALL.items()})
    assert timeline.whole_run and len(timeline.frames) == 12
    at = run(lang="en", **SMALL)
    plan = timeline.plan
    rates = plan.learning_rates()
    for position, frame in enumerate(timeline.frames):
        shown = counters(at)
        assert shown == expected_counters(timeline, position)
        assert shown["Micro-batch"] == f"{position + 1} / 12"
        assert shown["Updates"] == f"{frame.updates} / {plan.optimizer_steps}"
        if frame.is_step:
            assert shown["Learning rate"] == fmt_lr(rates[frame.step - 1])
        assert at.slider(key="frame").value == position + 1
        if position + 1 < len(timeline.frames):
            click(at, "anim_step")
    assert at.button(key="anim_step").disabled


def test_update_back_reset_and_skip_buttons():
    timeline = timeline_of(COURSE)
    at = run(lang="en")
    click(at, "anim_update")
    assert counters(at)["Updates"] == "1 / 150" and counters(at)["Bucket"] == "8 / 8"
    click(at, "anim_update")
    assert counters(at)["Micro-batch"] == "16 / 1,200"
    click(at, "anim_back")
    assert counters(at)["Micro-batch"] == "15 / 1,200" and counters(at)["Bucket"] == "7 / 8"
    click(at, "anim_skip_epoch_end")  # lands on the first epoch's last micro-batch, update 50
    position = timeline.target("epoch_end")
    assert counters(at) == expected_counters(timeline, position)
    assert (counters(at)["Micro-batch"], counters(at)["Updates"]) == ("400 / 1,200", "50 / 150")
    lead_up = max(p for p in range(position) if timeline.gaps[p])  # where the window skipped ahead to
    for _ in range(position - lead_up):  # back through the frames that lead up to the epoch's end
        click(at, "anim_back")
    assert any("Skipped 360 micro-batches and 45 updates" in m.value for m in at.markdown)
    click(at, "anim_skip_last_update")  # lands on the last update itself
    assert counters(at) == expected_counters(timeline, timeline.target("last_update"))
    assert counters(at)["Updates"] == "150 / 150" and at.button(key="anim_update").disabled
    click(at, "anim_reset")
    assert counters(at)["Micro-batch"] == "1 / 1,200" and at.slider(key="frame").value == 1


def test_the_frame_lives_in_the_url():
    at = run(lang="en", frame="24")
    assert counters(at)["Updates"] == "3 / 150" and counters(at)["Micro-batch"] == "24 / 1,200"
    click(at, "anim_step")
    assert at.query_params["frame"] == "25"
    assert counters(at)["Micro-batch"] == "385 / 1,200"
    at.slider(key="frame").set_value(49).run()
    assert counters(at)["Updates"] == "150 / 150" and at.query_params["frame"] == "49"


def test_an_impossible_frame_in_the_url_falls_back_to_the_first():
    at = run(lang="en", frame="500")
    assert counters(at)["Micro-batch"] == "1 / 1,200"


def test_play_and_pause_toggle_and_keep_the_frame():
    at = run(lang="en")
    click(at, "anim_play")
    assert at.session_state["anim_playing"] is True
    assert at.button(key="anim_play").label == "Pause"
    assert counters(at)["Micro-batch"] == "1 / 1,200"  # a full run is never a tick
    click(at, "anim_step")  # stepping pauses
    assert at.session_state["anim_playing"] is False and counters(at)["Micro-batch"] == "2 / 1,200"
    at.slider(key="frame").set_value(49).run()
    click(at, "anim_play")  # Play on the last frame starts again
    assert at.slider(key="frame").value == 1 and at.session_state["anim_playing"] is True


def test_a_stale_slider_value_from_the_browser_is_not_a_scrub():
    """While playing, a tick may carry the slider value of a frame drawn a moment ago: no jump back, no pause."""
    at = run(lang="en", frame="6")
    click(at, "anim_play")
    at.session_state["_anim_ticks"] = [(4, time.monotonic()), (5, time.monotonic())]
    at.slider(key="frame").set_value(5).run()  # the browser still showed frame 5
    assert at.session_state["anim_playing"] is True and counters(at)["Micro-batch"] == "6 / 1,200"
    at.slider(key="frame").set_value(30).run()  # a real scrub pauses there
    assert at.session_state["anim_playing"] is False and at.slider(key="frame").value == 30


def test_setup_from_the_url_and_an_old_release():
    at = run(lang="en", num_samples="100", trainer="hf-4.46")
    timeline = timeline_of({**COURSE, "num_samples": 100, "trainer": "hf-4.46"})
    click(at, "anim_skip_epoch_end")
    assert counters(at) == expected_counters(timeline, timeline.target("epoch_end"))
    end = next(p for p, f in enumerate(timeline.frames) if f.epoch_end)
    at.slider(key="frame").set_value(end + 1).run()
    assert counters(at)["Bucket"] == "1 / 8"
    assert any("transformers 4.46.3 does not step at an epoch's end" in m.value for m in at.markdown)
    click(at, "anim_update")  # the next update straddles two epochs
    assert counters(at)["Updates"] == "4 / 9"
    assert any("mixes two epochs" in m.value for m in at.markdown)


def test_presenter_mode_from_the_url():
    at = run(lang="en", presenter="true")  # the page's older links say `true`; the URL now says 1
    assert at.button(key=presenter.SWITCH).label == catalogue("en")["presenter.leave"]
    assert at.query_params["presenter"] == "1"
    assert not any("Measured, not computed" in m.value for m in at.markdown)  # only the animation
    bodies = [e.proto.body for e in at.get("html") if browser.HIDDEN_KEY not in e.proto.body]  # not the page scripts
    styles = [body for body in bodies if "stSidebar" in body]  # the presenter style
    assert len(styles) == 1 and "<script" not in styles[0]
    assert len(at.metric) == 6
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert min(a["font"]["size"] for a in spec["layout"]["annotations"]) >= presenter.FIGURE_FONT


def test_bad_setup_and_empty_run_give_messages():
    at = run(lang="en", eval_strategy="steps", eval_steps="37.5")
    assert at.error and not at.metric
    at = run(lang="en", num_samples="3", per_device_train_batch_size="4", dataloader_drop_last="true",
             max_steps="5")
    assert any("nothing to animate" in i.value for i in at.info)


def test_comparison_shows_the_measurement_as_measured():
    at = run(lang="en")
    tables = [m.value for m in at.markdown if "27.92 GiB" in m.value]
    assert tables and "21.71 GiB" in tables[0] and "≈ 301 s" in tables[0] and "≈ 560 s" in tables[0]
    assert "Measured, not computed" in tables[0]
    computed = next(m.value for m in at.markdown if "Computed by StepLab" in m.value)
    assert "| Micro-batches per update | 8 | 16 |" in computed and "| Samples per update | 32 | 32 |" in computed
    charts = at.get("plotly_chart")
    assert len(charts) == 3  # the animation and the pair


def test_the_figure_of_a_frame_is_small_and_fixed():
    at = run(lang="en", frame="8")
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert spec["layout"]["xaxis"]["range"] == [0, 100] and spec["layout"]["yaxis"]["range"] == [0, 60]
    texts = [a["text"] for a in spec["layout"]["annotations"]]
    assert "<b>8 / 8</b>" in texts and "<b>optimizer.step()<br>#1</b>" in texts
    assert len(at.get("plotly_chart")[0].proto.spec) < 20_000


CASES = [
    COURSE,
    {**COURSE, "num_samples": 100, "trainer": "hf-4.46"},
    {**COURSE, "num_samples": 90, "per_device_train_batch_size": 3, "trainer": "hf-4.51"},
    {**COURSE, "num_samples": 1001, "world_size": 12, "gradient_accumulation_steps": 40},
    {**COURSE, "num_samples": 10, "per_device_train_batch_size": 3, "gradient_accumulation_steps": 2, "world_size": 4,
     "trainer": "lightning-2"},
    {**COURSE, "per_device_train_batch_size": 40, "dataloader_drop_last": True, "world_size": 3},
]


def telling_positions(timeline) -> list[int]:
    """One frame of each kind: the first, steps, epoch ends, carried buckets, jumps, the last."""
    kinds: dict[tuple, int] = {}
    for position, frame in enumerate(timeline.frames):
        kind = (frame.is_step, frame.fill > timeline.accumulation, frame.epoch_end, frame.run_end,
                bool(frame.carried), bool(sum(frame.duplicated)), frame.samples, timeline.gaps[position] is None)
        kinds.setdefault(kind, position)
    return sorted({0, *kinds.values()})


@pytest.mark.parametrize("values", CASES)
def test_every_frame_is_a_valid_figure_with_the_same_structure(values):
    timeline = timeline_of(values)
    structure = set()
    for position in range(len(timeline.frames)):
        layout = animation_view.frame_spec(timeline, position, "zh")["layout"]
        structure.add((len(layout["shapes"]), len(layout["annotations"])))
    assert len(structure) == 1  # plotly's frame animation morphs shape i into shape i
    positions = telling_positions(timeline)
    for position in positions:
        go.Figure(animation_view.frame_spec(timeline, position, "en"))  # plotly's validation (the page skips it)
    for options in ({"presenter": True}, {"compact": True, "height": 300}):
        go.Figure(animation_view.frame_spec(timeline, positions[-1], "zh", **options))


def test_html_export_has_every_frame_play_pause_and_a_slider():
    timeline = timeline_of({**COURSE, "num_samples": 40, "trainer": "hf-4.46"})
    figure = animation_figure(timeline, "en")
    assert len(figure.frames) == len(timeline.frames) == 24
    buttons = figure.layout.updatemenus[0].buttons
    assert [b.label for b in buttons] == ["▶ Play", "❚❚ Pause"] and list(buttons[1].args[0]) == [None]
    assert len(figure.layout.sliders[0].steps) == 24
    page = export_html(timeline, "zh")
    assert page.startswith("<!doctype html>") and '<html lang="zh">' in page
    assert "<title>StepLab · 梯度累积动画</title>" in page
    assert "24 个小批次" in page
    # plotly.js is inside once (gzip-compressed, the browser unpacks it): the file works offline
    from steplab_ui.widgets.animation_html import PLOTLY_JS

    packed = re.search(r'<script type="application/octet-stream" id="steplab-plotly-gz">([^<]+)</script>', page)
    assert packed and base64.b64decode(packed.group(1)) == PLOTLY_JS.read_bytes()
    assert b"plotly.js" in gzip.decompress(PLOTLY_JS.read_bytes())[:200]
    frames = json.loads(re.search(r'id="steplab-frames">(.*?)</script>', page, re.DOTALL).group(1))
    assert [frame["name"] for frame in frames] == [str(position) for position in range(24)]


def test_counters_match_the_figure():
    timeline = timeline_of(COURSE)
    for position in (0, 7, 24, len(timeline.frames) - 1):
        frame = timeline.frames[position]
        labels = dict(animation_view.counters(frame, timeline, "en"))
        spec = animation_view.frame_spec(timeline, position, "en")
        texts = " ".join(a["text"] for a in spec["layout"]["annotations"])
        assert f"{frame.fill} / 8" in texts and labels["Bucket"] == f"{frame.fill} / 8"
        assert f"updates: {fmt_int(frame.updates)} / 150" in texts


def contrast(colour: str, ground: str) -> float:
    """WCAG contrast ratio of two #rrggbb colours."""
    def luminance(hex_colour: str) -> float:
        channels = [int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
        r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
        return 0.2126 * r + 0.7152 * g + 0.0722 * b
    high, low = sorted((luminance(colour), luminance(ground)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.mark.parametrize("kind", list(layout.FIGURE_TEXT))
def test_words_in_figures_read_on_either_ground(kind: str) -> None:
    """A figure's own text colour: AA (4.5:1) on white; the dark-theme CSS swaps in a variant that is AA on the
    dark ground (the browser test checks what Chromium then draws)."""
    light, dark = layout.FIGURE_TEXT[kind]
    assert contrast(light, "#ffffff") >= 4.5 and contrast(dark, "#171614") >= 4.5  # Streamlit's two grounds
    assert f"text[style*='{layout.svg_fill(light)}'] {{ fill: {dark} !important; }}" in layout.READABILITY_CSS


def test_the_optimizer_flash_label_reads_on_the_vermillion() -> None:
    timeline = timeline_of(COURSE)
    step = next(p for p, f in enumerate(timeline.frames) if f.is_step)
    notes = animation_view.frame_spec(timeline, step, "en")["layout"]["annotations"]
    label = next(n for n in notes if "optimizer.step()" in n["text"])
    assert contrast(label["font"]["color"], COLOURS["update"]) >= 4.5


def test_the_waiting_optimizer_uses_the_muted_figure_text() -> None:
    timeline = timeline_of(COURSE)
    waiting = next(p for p, f in enumerate(timeline.frames) if not f.is_step)
    notes = animation_view.frame_spec(timeline, waiting, "en")["layout"]["annotations"]
    drawn = {n["font"].get("color") for n in notes if n["text"].startswith(("waiting for step", "lr = "))}
    assert drawn == {layout.FIGURE_TEXT["muted"][0]}
