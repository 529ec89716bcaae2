"""AppTest for /playground: both languages, the one step control, touchable operands, the simulated console."""

from __future__ import annotations

import json
import re

import pytest
from test_app import consoles, run

from steplab.i18n import catalogue, fmt_int, fmt_lr
from steplab.simulation.run_log import RunLog, measured_seconds_per_step
from steplab.teaching.measurements import measurements
from steplab.teaching.presets import presets
from steplab.trainer.plan import make_plan
from steplab.trainer.setup import setup_from_mapping

PAGE = "app_pages/playground.py"
STEP_INPUT = "pg_step_exact"
GA_OPERAND = "pg_in_num_update_steps_per_epoch_gradient_accumulation_steps"


def course_plan(**changes):
    setup = setup_from_mapping(presets()["course_default"].values)[0]
    return make_plan(setup.replace(**changes) if changes else setup)


def facts(at) -> str:
    return next(m.value for m in at.markdown if m.value.startswith(("**Update", "**第")))


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_renders_in_both_languages(lang):
    at = run(PAGE, lang=lang)
    assert at.title[0].value == catalogue(lang)["page.playground.title"]
    assert not at.warning
    plan = course_plan()
    assert f"{fmt_int(plan.micro_batches_per_epoch)}" in " ".join(m.value for m in at.markdown)
    assert len(consoles(at)) == 1 and consoles(at)[0].startswith("***** Running training *****")
    assert len([p for p in at.get("plotly_chart")]) == 3


def test_the_step_control_moves_the_numbers_and_the_url():
    at = run(PAGE, lang="en")
    plan = course_plan()
    at.number_input(key=STEP_INPUT).set_value(37).run()
    assert not at.exception
    text = facts(at)
    assert text.startswith("**Update 37**")
    assert fmt_lr(float(plan.learning_rates(37, 37)[0])) in text
    assert "numbers 289 to 296 of epoch 1" in text  # 8 micro-batches: 36 × 8 + 1 .. 37 × 8
    assert at.query_params["step"] == "37"
    assert at.slider(key="pg_step_slider").value == 37
    at.slider(key="pg_step_slider").set_value(120).run()
    assert facts(at).startswith("**Update 120**") and at.number_input(key=STEP_INPUT).value == 120
    bucket = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert "#120" in json.dumps(bucket["layout"]["annotations"], ensure_ascii=False)  # optimizer.step() #120


def test_a_deep_link_opens_at_its_step():
    at = run(PAGE, lang="en", step="50")
    text = facts(at)
    assert text.startswith("**Update 50**") and "numbers 393 to 400 of epoch 1" in text


@pytest.mark.parametrize("raw", ["abc", "-1", "0", "99999", "1.5", "1e3", ""])
def test_hostile_step_values_get_a_notice(raw):
    at = run(PAGE, lang="en", step=raw)
    assert any("step=" in w.value for w in at.warning), [w.value for w in at.warning]
    assert facts(at).startswith("**Update 1**")


def test_editing_an_operand_changes_the_shared_setup_and_the_url():
    at = run(PAGE, lang="en")
    at.number_input(key=GA_OPERAND).set_value(4).run()
    assert not at.exception
    assert at.session_state["gradient_accumulation_steps"] == 4
    assert at.query_params["gradient_accumulation_steps"] == "4"
    text = " ".join(m.value for m in at.markdown)
    assert "400 ÷" in text and "= 100" in text  # 400 micro-batches ÷ 4 = 100 updates per epoch
    assert at.number_input(key="gradient_accumulation_steps").value == 4  # the sidebar's own control


def test_step_forward_prints_the_engines_lines():
    at = run(PAGE, lang="en")
    plan = course_plan()
    seconds = measured_seconds_per_step(4, 8, measurements())[1]
    for _ in range(4):  # a fresh page stands at update 1, its console too
        at.button(key="pg_forward").click().run()
    assert not at.exception
    expected = RunLog(plan, round(seconds, 3)).screen(5, tail=30)
    assert consoles(at)[0] == expected
    assert "{'loss'" in expected.splitlines()[-2]  # logging_steps 5: the line at update 5, then the bar
    assert facts(at).startswith("**Update 5**")  # step k followed the console
    at.button(key="pg_reset").click().run()
    assert consoles(at)[0] == RunLog(plan, round(seconds, 3)).screen(1, tail=30)


def test_play_runs_the_console_and_pause_moves_step_k():
    at = run(PAGE, lang="en")
    plan = course_plan()
    at.number_input(key="pg_seconds").set_value(0.001).run()
    at.button(key="pg_play").click().run()
    at.run()  # a tick: far more than one update has passed at 0.001 s per update
    bar = consoles(at)[0].splitlines()[-1]
    done = int(re.search(r"\| (\d+)/150 ", bar).group(1))
    assert done >= 1
    assert consoles(at)[0] == RunLog(plan, 0.001).screen(done, tail=30)
    # still playing or just ended: step k is the run's position on every view, not only after Pause (while it
    # plays, the step control shows k under keys of its own, disabled)
    keys = ("pg_step_exact_playing", "pg_step_slider_playing") if at.session_state["pg_playing"] else (
        STEP_INPUT, "pg_step_slider")
    assert at.number_input(key=keys[0]).value == max(done, 1) == at.slider(key=keys[1]).value
    if at.session_state["pg_playing"]:
        assert at.number_input(key=keys[0]).disabled and at.slider(key=keys[1]).disabled
    assert facts(at).startswith(f"**Update {max(done, 1)}**")
    if at.session_state["pg_playing"]:
        at.button(key="pg_pause").click().run()
    assert facts(at).startswith(f"**Update {max(done, 1)}") or facts(at).startswith("**Update 150**")


def step_slider(at):
    """The step control's slider as drawn (while the run plays it is drawn under a key of its own)."""
    return next(slider for slider in at.slider if slider.label == catalogue("en")["playground.step"])


def browser_sends(widget, value) -> None:
    """What the browser sends back for a control on the next run, whether a person could change it or not (a
    disabled control's value goes back with every run too; AppTest's `set_value` refuses a disabled one)."""
    widget._value = value


def test_a_stale_step_value_from_the_browser_never_moves_k_back():
    """The browser sends the step control's value back with every tick, and a slow one sends a value a few ticks
    old: while the run plays (and with the Pause click), that is not a pick, k stays where the run is."""
    at = run(PAGE, lang="en", step="40")
    at.number_input(key="pg_seconds").set_value(1000.0).run()  # the run barely moves: k stays at 40
    at.button(key="pg_play").click().run()
    assert at.session_state["pg_playing"] and facts(at).startswith("**Update 40**")
    browser_sends(step_slider(at), 3)  # a tick carrying what the browser showed before
    at.run()
    assert facts(at).startswith("**Update 40**") and at.session_state["pg_playing"]
    at.button(key="pg_pause").click()
    browser_sends(step_slider(at), 3)  # the Pause click carries it too
    at.run()
    assert facts(at).startswith("**Update 40**") and not at.session_state["pg_playing"]
    step_slider(at).set_value(3).run()  # paused, the control takes a pick again
    assert facts(at).startswith("**Update 3**")


def test_a_fresh_page_and_step_1_agree_with_the_trainers_bar():
    """Update k's views and the console's bar say the same update: the bar shows k done, as the Trainer's tqdm
    bar does once update k is done, on a fresh page as with ?step=1 and after Reset."""
    fresh, linked = run(PAGE, lang="en"), run(PAGE, lang="en", step="1")
    assert consoles(fresh) == consoles(linked)
    assert "| 1/150 [" in consoles(fresh)[0].splitlines()[-1]
    assert facts(fresh) == facts(linked) and facts(fresh).startswith("**Update 1**")
    fresh.button(key="pg_forward").click().run()
    fresh.button(key="pg_reset").click().run()
    assert consoles(fresh) == consoles(linked)


def test_lightning_has_no_trainer_console_but_a_sentence():
    at = run(PAGE, lang="en", trainer="lightning-2")
    assert not consoles(at)
    assert any("lightning" in i.value for i in at.info)


def test_presenter_view_draws_the_same_views():
    at = run(PAGE, lang="en", presenter="1", step="20")
    assert facts(at).startswith("**Update 20**")
    assert len(at.get("plotly_chart")) == 3


def test_the_home_page_links_here_first():
    from steplab_ui.shell.navigation import PAGES

    assert PAGES[1][1:3] == ("app_pages/playground.py", "playground")
    at = run("app_pages/home.py", lang="en")
    assert catalogue("en")["home.link.playground"] in [c.value for c in at.caption][:3]


def test_a_run_without_updates_says_so():
    at = run(PAGE, lang="en", trainer="hf-4.51", num_samples="10", per_device_train_batch_size="4")
    assert catalogue("en")["playground.no_steps"] in [i.value for i in at.info]
    assert not consoles(at)


def test_a_metric_driven_schedule_has_no_curve_but_the_rest():
    at = run(PAGE, lang="en", lr_scheduler_type="reduce_lr_on_plateau", eval_strategy="steps", eval_steps="50")
    assert any("reduce_lr_on_plateau" in i.value for i in at.info)
    assert len(at.get("plotly_chart")) == 2 and len(consoles(at)) == 1


def test_a_million_updates_open_at_the_last_one():
    at = run(PAGE, lang="en", max_steps="1000000", logging_steps="1", step="1000000")
    assert facts(at).startswith("**Update 1,000,000**")
    assert "1000000/1000000 [" in consoles(at)[0].splitlines()[-1]  # the console opens there too
    at.button(key="pg_forward").click().run()  # nothing after the last update
    assert facts(at).startswith("**Update 1,000,000**")
    at.button(key="pg_reset").click().run()
    assert "1/1000000 [" in consoles(at)[0].splitlines()[-1]
    at.button(key="pg_forward").click().run()
    assert "2/1000000 [" in consoles(at)[0].splitlines()[-1]


def test_the_console_follows_step_k():
    at = run(PAGE, lang="en", step="40")
    plan = course_plan()
    seconds = round(measured_seconds_per_step(4, 8, measurements())[1], 3)
    assert consoles(at)[0] == RunLog(plan, seconds).screen(40, tail=30)  # a deep link: the lines up to 40
    at.number_input(key=STEP_INPUT).set_value(60).run()
    assert consoles(at)[0] == RunLog(plan, seconds).screen(60, tail=30)  # a scrub: the console goes there
    assert "checkpoint-50" in consoles(at)[0]
    at.button(key="pg_forward").click().run()  # one update on from k, not from the start
    assert facts(at).startswith("**Update 61**")
    assert consoles(at)[0] == RunLog(plan, seconds).screen(61, tail=30)
    at.button(key="pg_reset").click().run()
    assert facts(at).startswith("**Update 1**") and at.query_params["step"] == "1"
    assert consoles(at)[0] == RunLog(plan, seconds).screen(1, tail=30)


def test_play_at_the_end_runs_again_from_the_start():
    at = run(PAGE, lang="en", step="150")
    at.button(key="pg_play").click().run()
    assert at.session_state["_pg_run_position"] < 150


def test_the_figures_are_valid_plotly():
    import plotly.graph_objects as go

    from steplab_ui.views import playground as view

    plan = course_plan(eval_strategy="steps", eval_steps=40, warmup_steps=10.0)
    for figure in (view.timeline_figure(plan, 37, "zh", False), view.schedule_figure(plan, 37, "en", True)):
        go.Figure(figure.to_dict())  # validates every property
    go.Figure(view.bucket_figure(plan, 37, "en", False))


def test_the_k_labels_stay_inside_and_off_the_curve():
    from steplab_ui.views import playground as view

    plan = course_plan()  # linear decay over 150 updates

    def label(figure):
        return next(a for a in figure.layout.annotations if a.name == "step_k_label")

    for step in (1, 75, 150):
        strip = label(view.timeline_figure(plan, step, "en", False))
        assert strip.y > 0.8  # above the evaluations' lane
        assert view.timeline_figure(plan, step, "en", False).layout.legend.yanchor == "bottom"  # wraps upwards
        curve = label(view.schedule_figure(plan, step, "en", False))
        assert (curve.xanchor, strip.xanchor) == (("right",) * 2 if step == 150 else ("left",) * 2)
    assert label(view.schedule_figure(plan, 20, "en", False)).y < 0.5  # the curve is high at the start
    assert label(view.schedule_figure(plan, 140, "en", False)).y > 0.5  # and low near the end
    warm = course_plan(warmup_steps=20.0)
    assert label(view.timeline_figure(warm, 5, "en", False)).y < 0.2  # the band's word takes the top left
