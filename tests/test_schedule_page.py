"""AppTest: the learning-rate schedule page (app_pages/schedule.py) in both languages.

The figure is read back from the chart's spec (plotly JSON; numpy arrays arrive as base64 typed arrays) and
compared with the engine: learning rates at the drawn steps, warmup band, markers, the stop and the horizon.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import yaml
from streamlit.testing.v1 import AppTest
from test_app import run as run_page

from steplab.i18n import catalogue, t, zh_typography
from steplab.simulation import lr_curve, lr_export
from steplab.teaching.presets import presets
from steplab.trainer import geometry
from steplab.trainer.events import events
from steplab.trainer.plan import make_plan
from steplab.trainer.schedules import METRIC_DRIVEN, SCHEDULER_TYPES
from steplab.trainer.setup import setup_from_mapping
from steplab_ui.shell.state import ADVANCED_OPEN, control_key

ROOT = Path(__file__).resolve().parents[1]
PAGE = str(ROOT / "app_pages" / "schedule.py")
COURSE = presets()["course_default"].values  # what the sidebar opens with


def run(**params: str) -> AppTest:
    """The schedule page with the sidebar's advanced section open (its controls are drawn only then)."""
    return run_page(PAGE, session={ADVANCED_OPEN: True}, **params)


def array(values) -> np.ndarray:
    """A plotly array from the spec: a list, or {"dtype", "bdata"[, "shape"]}."""
    if isinstance(values, dict):
        out = np.frombuffer(base64.b64decode(values["bdata"]), dtype=np.dtype(values["dtype"]))
        if "shape" in values:
            out = out.reshape([int(d) for d in str(values["shape"]).split(",")])
        return out
    return np.asarray(values, dtype=float)


def spec(at: AppTest) -> dict:
    charts = at.get("plotly_chart")
    assert len(charts) == 1
    return json.loads(charts[0].proto.spec)


def trace(figure: dict, name: str) -> dict:
    found = [tr for tr in figure["data"] if tr.get("name", "").startswith(name)]
    assert len(found) == 1, [tr.get("name") for tr in figure["data"]]
    return found[0]


def shown_setup(at: AppTest):
    """The shared setup as the page's widgets hold it now."""
    values = {key: at.session_state[key] for key in ("num_samples", "per_device_train_batch_size",
                                                     "gradient_accumulation_steps", "num_train_epochs",
                                                     "lr_scheduler_type", "lr_scheduler_kwargs", "trainer",
                                                     "learning_rate", "warmup_steps", "eval_strategy", "eval_steps",
                                                     "save_strategy", "save_steps", "logging_strategy",
                                                     "logging_steps")
              if key in at.session_state}
    values["max_steps"] = at.session_state["max_steps"] if at.session_state["use_max_steps"] else -1
    return make_plan(setup_from_mapping(values)[0])


def assert_curve_is_the_engines(figure: dict, plan, lang: str) -> None:
    main = trace(figure, t(lang, "schedule.run"))
    steps, rates = array(main["x"]).astype(np.int64), array(main["y"])
    assert len(steps) <= lr_curve.CAP and steps[-1] == plan.optimizer_steps
    assert rates.tolist() == plan.learning_rates()[steps - 1].tolist()
    epochs, samples = array(main["customdata"]).reshape(-1, 2).T
    want_epochs, want_samples = geometry.epochs_and_samples(plan, steps)
    assert epochs.tolist() == want_epochs.tolist() and samples.tolist() == want_samples.tolist()


def test_course_default_curve_markers_and_text_equal_the_engine():
    at = run(lang="en", warmup_steps="15", lr_scheduler_type="cosine")
    plan = make_plan(setup_from_mapping({**COURSE, "warmup_steps": 15, "lr_scheduler_type": "cosine"})[0])
    figure = spec(at)
    assert_curve_is_the_engines(figure, plan, "en")
    sampled = np.array([1, 15, 16, 17, 50, 100, 149, 150])
    main = trace(figure, "learning rate of each update")
    x, y = array(main["x"]).astype(int).tolist(), array(main["y"])
    assert [y[x.index(k)] for k in sampled] == lr_curve.rates_at(plan, sampled).tolist()
    assert y[0] == 0.0 and y[15] == 5e-5  # update 1 runs at 0, update 16 (λ(15)) at the peak
    band = [s for s in figure["layout"]["shapes"] if s.get("name") == "warmup"]
    assert len(band) == 1 and (band[0]["x0"], band[0]["x1"]) == (0, 15)
    horizon = [s for s in figure["layout"]["shapes"] if s.get("name") == "horizon"]
    assert horizon[0]["x0"] == horizon[0]["x1"] == 150
    evaluation = trace(figure, "evaluation")
    assert array(evaluation["x"]).tolist() == events(plan, "eval").steps() == [50, 100, 150]
    assert array(evaluation["y"]).tolist() == lr_curve.rates_at(plan, [50, 100, 150]).tolist()
    assert array(trace(figure, "checkpoint")["x"]).tolist() == events(plan, "save").steps() == [50, 100, 150]
    stop = trace(figure, "last update")
    assert stop["x"] == [150] and stop["y"] == [plan.learning_rates(150, 150)[0]]
    lines = array(trace(figure, "epoch ends")["x"])
    assert lines[~np.isnan(lines)].tolist() == [50, 50, 100, 100, 150, 150]
    assert figure["layout"]["xaxis2"]["tickvals"] == [50, 100, 150]
    sentence = lr_curve.summary(lr_curve.curve(plan)).en
    assert at.get("plotly_chart")[0].proto.alt == sentence
    assert any(m.value == sentence for m in at.markdown)
    assert any(m.value.startswith("**Why the first update runs at learning rate zero.**") and "update 16 is the first" in m.value
               for m in at.markdown)


def test_stop_before_the_horizon_is_drawn_dashed_and_said():
    params = {"num_samples": "4", "per_device_train_batch_size": "2", "gradient_accumulation_steps": "3",
              "max_steps": "50", "trainer": "hf-4.46", "warmup_steps": "5"}
    at = run(lang="en", **params)
    plan = shown_setup(at)
    assert (plan.optimizer_steps, plan.max_steps) == (16, 50)
    figure = spec(at)
    assert_curve_is_the_engines(figure, plan, "en")
    planned = trace(figure, "planned, never run")
    assert planned["line"]["dash"] == "dash"
    steps = array(planned["x"]).astype(int)
    assert steps[0] == 16 and steps[-1] == 50
    assert array(planned["y"]).tolist() == plan.learning_rates(1, 50)[steps - 1].tolist()
    assert any("stops before the horizon" in w.value and "only 16" in w.value for w in at.warning)
    assert any("logs `learning_rate` after stepping the scheduler" in c.value for c in at.caption)


def test_every_scheduler_renders_or_explains_itself_in_both_languages():
    for lang in ("zh", "en"):
        at = run(lang=lang, warmup_steps="10")
        for name in SCHEDULER_TYPES:
            at.selectbox(key="sched_type").set_value(name).run()
            assert not at.exception, (lang, name, [e.value for e in at.exception])
            assert at.session_state["lr_scheduler_type"] == name
            if name in METRIC_DRIVEN:
                assert not at.get("plotly_chart")
                assert any("patience" in i.value for i in at.info)
                assert any("50" in m.value and "150" in m.value for m in at.markdown)  # the evaluations
            else:
                plan = shown_setup(at)
                assert_curve_is_the_engines(spec(at), plan, lang)
                assert not at.error
            codes = [c.value for c in at.code]
            assert any(f"get_scheduler(\n    {name!r}," in c for c in codes)


def test_schedulers_refused_from_the_url_say_what_the_trainer_raises():
    at = run(lang="en", lr_scheduler_type="cosine_with_min_lr")
    assert any("refuses" in e.value for e in at.error)
    assert any("One of min_lr or min_lr_rate should be set" in c.value for c in at.code)
    assert at.number_input(key="sched_kw_min_lr_rate").value is None  # the controls stay, to fix it
    at.number_input(key="sched_kw_min_lr_rate").set_value(0.2).run()
    assert json.loads(at.session_state["lr_scheduler_kwargs"]) == {"min_lr_rate": 0.2}
    assert not at.error and spec(at)
    at = run(lang="zh", lr_scheduler_type="reduce_lr_on_plateau", eval_strategy="no")
    assert at.error and not at.exception


def test_the_pages_own_controls_set_the_shared_setup_while_the_sidebars_section_is_closed():
    """The scheduler and its arguments are advanced fields: with the sidebar's section closed (its controls not
    drawn) the page's own controls still set them, in the plan, the curve and the URL, across reruns."""
    at = run(lang="en", warmup_steps="10")
    at.session_state[ADVANCED_OPEN] = False
    at.run()
    assert all(box.key != control_key("lr_scheduler_kwargs") for box in at.text_input)  # the section's is not drawn
    at.selectbox(key="sched_type").set_value("cosine").run()
    at.number_input(key="sched_kw_num_cycles").set_value(1.5).run()
    at.run()
    assert (at.query_params["lr_scheduler_type"], at.query_params["lr_scheduler_kwargs"]) == (
        "cosine", '{"num_cycles": 1.5}')
    assert shown_setup(at).setup.scheduler_kwargs == {"num_cycles": 1.5}
    assert shown_setup(at).setup.warmup_steps == 10
    assert_curve_is_the_engines(spec(at), shown_setup(at), "en")


def test_kwargs_controls_round_trip_through_the_shared_setup():
    at = run(lang="en", lr_scheduler_type="cosine")
    assert at.number_input(key="sched_kw_num_cycles").value is None  # not set: the default 0.5 applies
    at.number_input(key="sched_kw_num_cycles").set_value(1.5).run()
    assert at.session_state["lr_scheduler_kwargs"] == '{"num_cycles": 1.5}'
    assert at.text_input(key=control_key("lr_scheduler_kwargs")).value == '{"num_cycles": 1.5}'
    assert at.query_params["lr_scheduler_kwargs"] == '{"num_cycles": 1.5}'
    assert_curve_is_the_engines(spec(at), shown_setup(at), "en")
    assert shown_setup(at).setup.scheduler_kwargs == {"num_cycles": 1.5}
    at.text_input(key=control_key("lr_scheduler_kwargs")).set_value('{"num_cycles": 2}').run()  # the sidebar edits it
    assert at.number_input(key="sched_kw_num_cycles").value == 2.0
    at.selectbox(key="sched_type").set_value("warmup_stable_decay").run()
    assert json.loads(at.session_state["lr_scheduler_kwargs"]) == {"num_cycles": 2, "num_decay_steps": 100}
    assert any("`num_decay_steps`" in c.value and "starting value" in c.value for c in at.caption)
    at.selectbox(key="sched_kw_decay_type").set_value("1-sqrt").run()
    at.number_input(key="sched_kw_num_stable_steps").set_value(20.0).run()
    kwargs = json.loads(at.session_state["lr_scheduler_kwargs"])
    assert kwargs == {"num_cycles": 2, "num_decay_steps": 100, "decay_type": "1-sqrt", "num_stable_steps": 20}
    assert_curve_is_the_engines(spec(at), shown_setup(at), "en")
    at.selectbox(key="sched_type").set_value("linear").run()
    assert at.session_state["lr_scheduler_kwargs"] == ""
    assert any("removed arguments it does not take" in c.value for c in at.caption)
    at.selectbox(key="sched_type").set_value("cosine_with_min_lr").run()
    at.number_input(key="sched_kw_min_lr").set_value(1e-6).run()
    assert json.loads(at.session_state["lr_scheduler_kwargs"]) == {"min_lr": 1e-6}  # min_lr_rate cleared
    at.selectbox(key="sched_type").set_value(None).run()  # a cleared choice changes nothing
    assert not at.exception and at.selectbox(key="sched_type").value == "cosine_with_min_lr"


def test_overlays_draw_other_curves_and_say_when_one_is_refused():
    at = run(lang="en")
    base = shown_setup(at)
    at.selectbox(key="sched_cmp_0_kind").set_value("scheduler").run()
    at.selectbox(key="sched_cmp_0_scheduler").set_value("cosine").run()
    at.selectbox(key="sched_cmp_1_kind").set_value("max_steps").run()
    at.number_input(key="sched_cmp_1_max_steps").set_value(400).run()
    at.selectbox(key="sched_cmp_2_kind").set_value("epochs").run()
    at.number_input(key="sched_cmp_2_epochs").set_value(1.5).run()
    figure = spec(at)
    for name, setup in (("cosine · 150 steps", base.setup.replace(lr_scheduler_type="cosine")),
                        ("max_steps = 400", base.setup.replace(max_steps=400)),
                        ("1.5 epochs → 75 steps", base.setup.replace(num_train_epochs=1.5))):
        overlay = trace(figure, name)
        plan = make_plan(setup)
        steps = array(overlay["x"]).astype(int)
        assert steps[-1] == plan.optimizer_steps and len(steps) <= lr_curve.CAP
        assert array(overlay["y"]).tolist() == plan.learning_rates()[steps - 1].tolist()
        assert overlay["line"]["dash"] in ("dot", "dashdot", "longdash")
    assert_curve_is_the_engines(figure, base, "en")  # the shared setup itself is untouched
    assert at.session_state["lr_scheduler_type"] == "linear"
    at.number_input(key=control_key("learning_rate")).set_value(1e-7).run()  # polynomial's lr_end 1e-7 is then too big
    at.selectbox(key="sched_cmp_0_scheduler").set_value("polynomial").run()
    assert any("Curve 1 cannot be drawn" in w.value and "lr_end" in w.value for w in at.warning)
    assert not at.exception


def test_plateau_explains_instead_of_drawing():
    at = run(lang="en", lr_scheduler_type="reduce_lr_on_plateau", lr_scheduler_kwargs='{"patience": 3}')
    assert not at.get("plotly_chart")
    info = " ".join(i.value for i in at.info)
    assert "`patience` (3)" in info and "`factor` (0.1)" in info and "5.00e-05" in info
    assert any("3 of them, at steps 50, 100, 150" in m.value for m in at.markdown)
    assert not [b for b in at.get("download_button") if b.proto.label.startswith("CSV")]
    assert any("ReduceLROnPlateau(optimizer, patience=3)" in c.value for c in at.code)


def test_constant_explains_why_warmup_is_ignored():
    at = run(lang="zh", lr_scheduler_type="constant", warmup_steps="15")
    figure = spec(at)
    assert not [s for s in figure["layout"]["shapes"] if s.get("name") == "warmup"]
    assert set(array(trace(figure, t("zh", "schedule.run"))["y"]).tolist()) == {5e-5}
    assert any(m.value.startswith("**`constant` 会忽略预热。**") and "15" in m.value for m in at.markdown)


def test_exports():
    at = run(lang="en", lr_scheduler_type="cosine", warmup_steps="15")
    plan = shown_setup(at)
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels == ["CSV: step, epoch, learning rate", "Setup as YAML"]
    codes = [c.value.strip() for c in at.code]
    assert lr_export.get_scheduler_snippet(plan, "en").strip() in codes
    assert lr_export.torch_snippet(plan, "en").strip() in codes
    assert lr_export.setup_yaml(plan.setup, "en").strip() in codes
    assert yaml.safe_load(lr_export.setup_yaml(plan.setup))["lr_scheduler_type"] == "cosine"
    chinese = run(lang="zh", lr_scheduler_type="cosine", warmup_steps="15")
    assert lr_export.setup_yaml(shown_setup(chinese).setup, "zh").strip() in [c.value.strip() for c in chinese.code]


def test_a_million_steps_stay_small():
    at = run(lang="en", num_samples="1000000000", per_device_train_batch_size="1", gradient_accumulation_steps="1",
             max_steps="1000000", lr_scheduler_type="cosine", warmup_steps="10000", eval_steps="1000")
    for kind in ("scheduler", "max_steps", "epochs"):
        index = ("scheduler", "max_steps", "epochs").index(kind)
        at.selectbox(key=f"sched_cmp_{index}_kind").set_value(kind).run()
    assert not at.exception
    raw = at.get("plotly_chart")[0].proto.spec
    figure = json.loads(raw)
    assert len(raw.encode()) <= 200_000
    assert all(len(array(tr["x"])) <= lr_curve.CAP + 1 for tr in figure["data"])
    plan = shown_setup(at)
    assert_curve_is_the_engines(figure, plan, "en")
    main = array(trace(figure, "learning rate of each update")["x"]).astype(int).tolist()
    assert {10_000, 10_001, 1_000_000} <= set(main)


def test_catalogues_are_complete_and_chinese_is_full_width():
    folder = ROOT / "steplab" / "locales"
    zh = yaml.safe_load((folder / "zh" / "schedule.yaml").read_text(encoding="utf-8"))
    en = yaml.safe_load((folder / "en" / "schedule.yaml").read_text(encoding="utf-8"))
    assert set(zh) == set(en) and all(zh.values()) and all(en.values())
    assert all(key == "page.schedule.title" or key == "page.schedule.intro" or key.startswith("schedule.")
               for key in zh)
    for key, text in zh.items():
        assert zh_typography(text) == text, key
    assert catalogue("zh")["page.schedule.title"] == "学习率调度"
