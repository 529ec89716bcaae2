"""Issue 16, "what a student and an instructor tripped on": the items that AppTest and the engine can check.

The browser checks of the same list are in tests/e2e/test_tripped.py. Expected numbers come from the engine.
"""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from steplab.i18n import fmt_lr, t
from steplab.simulation import lr_curve
from steplab.teaching.presets import presets
from steplab.trainer.plan import make_plan

ROOT = Path(__file__).resolve().parents[1]


def run(page: str, **params: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app_pages" / f"{page}.py"), default_timeout=60)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


# ---- 5. /schedule: the note on update 1 cannot contradict the summary beside it ---------------------------------


def test_schedule_note_on_update_one_agrees_with_the_summary():
    for lang in ("en", "zh"):
        at = run("schedule", lang=lang)
        result = lr_curve.curve(make_plan(presets()["course_default"].setup()))
        assert result.warmup == 0 and result.first and result.first > 0
        shown = [m.value for m in at.markdown]
        assert t(lang, "schedule.note_first_no_warmup", first=fmt_lr(result.first)) in shown
        assert lr_curve.summary(result).get(lang) in shown
        assert not [text for text in shown if "λ(0) = 0" in text], shown  # no "update 1 runs at zero" beside it


def test_schedule_with_warmup_from_zero_still_explains_the_zero():
    at = run("schedule", lang="en", warmup_steps="15")
    result = lr_curve.curve(make_plan(presets()["course_default"].setup(warmup_steps=15)))
    assert result.first == 0
    assert any(m.value.startswith("**Why the first update runs at learning rate zero.**") for m in at.markdown)


# ---- 9. /selfcheck: a code that starts right but holds a wrong character says which ------------------------------


def test_selfcheck_names_the_wrong_character():
    at = run("selfcheck", lang="en")
    at.text_input(key="selfcheck_progress__code").set_value("SL1-ZZZZ-!!!!-0000").run()
    at.button(key="selfcheck_progress__restore").click().run()
    said = at.error[-1].value
    assert "'!'" in said and "not a StepLab progress code" not in said, said


# ---- 10. plurals: one micro-batch, one checkpoint -----------------------------------------------------------------


def test_one_micro_batch_per_epoch_reads_right():
    from steplab.teaching.warnings import plan_warnings
    from steplab.trainer.setup import setup_from_mapping

    setup = setup_from_mapping({"num_samples": 4, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 8})[0]
    plan = make_plan(setup)
    assert plan.micro_batches_per_epoch == 1
    text = next(w for w in plan_warnings(plan) if w.code == "partial_accumulation_group").text.en
    assert "1 micro-batches" not in text and "micro-batches do" not in text, text
    assert f"{plan.micro_batches_per_epoch} micro-batch (" in text, text


def test_one_checkpoint_in_lab_c_reads_right():
    from steplab.labs import overfitting
    from steplab_ui.views.labs import overfitting as labs_view

    result = overfitting.run(12, 0)
    plan = make_plan(presets()["course_default"].setup(save_steps=500))  # only the final checkpoint
    checkpoints = overfitting.setup_checkpoints(plan, result.steps_per_epoch, result.steps)
    assert len(checkpoints) == 1
    text = labs_view.setup_mapping(plan, result, checkpoints, "en")
    assert "1 checkpoint falls within" in text and "of them fall" not in text, text
    more = overfitting.setup_checkpoints(make_plan(presets()["course_default"].setup()), result.steps_per_epoch,
                                         result.steps)
    assert f"{len(more)} checkpoints fall within" in labs_view.setup_mapping(plan, result, more, "en")


# ---- 2. the animation's state.epoch moves at optimizer steps only, as the Trainer's does --------------------------


def test_state_epoch_changes_only_at_optimizer_steps():
    import pytest

    from steplab.simulation.timeline import build_timeline
    from steplab.trainer.profiles import PROFILES

    for profile in PROFILES:
        for changes in ({}, {"num_samples": 1001}, {"num_samples": 90, "per_device_train_batch_size": 3}):
            plan = make_plan(presets()["course_default"].setup(trainer=profile, **changes))
            timeline = build_timeline(plan)
            held = 0.0
            for frame, gap in zip(timeline.frames, timeline.gaps, strict=True):
                length = plan.micro_batches_per_epoch
                if frame.is_step:
                    held = frame.epoch + frame.micro_batch / length
                    assert frame.trainer_epoch == pytest.approx(held)
                elif gap is None:  # without a skipped stretch before it, the value of the last step stands
                    assert frame.trainer_epoch == pytest.approx(held)
                else:
                    held = frame.trainer_epoch
            first = timeline.frames[0]
            assert first.trainer_epoch == (first.micro_batch / plan.micro_batches_per_epoch if first.is_step else 0)


# ---- 4. lesson 3 says how the loss is scaled, per Trainer release ---------------------------------------------------


def test_lesson_3_says_how_each_release_scales_the_loss():
    import dataclasses

    from steplab.teaching.lessons import load_lessons
    from steplab.trainer.profiles import PROFILES

    lesson = next(lesson for lesson in load_lessons() if lesson.number == 3)
    block = next(block for block in lesson.blocks if "{course.loss_scaling}" in block.data.get("en", ""))
    said = {}
    for profile_id, profile in PROFILES.items():
        scenarios = {**lesson.scenarios, "course": lesson.scenarios["course"].replace(trainer=profile_id)}
        changed = dataclasses.replace(lesson, scenarios=scenarios)
        said[profile_id] = {lang: changed.fill(block.data[lang], lang) for lang in ("en", "zh")}
        for lang in ("en", "zh"):
            assert profile.releases in said[profile_id][lang] and profile.matched in said[profile_id][lang]
    for profile_id in ("hf-5", "hf-4.57", "hf-4.51"):  # 4.46 and later: the causal LM loss takes the group's tokens
        assert "num_items_in_batch" in said[profile_id]["en"] and "whole accumulation group" in said[profile_id]["en"]
    assert "`4.45`" in said["hf-4.46"]["en"] and "`4.46`" in said["hf-4.46"]["en"]  # the range where it changed
    assert "accumulate_grad_batches" in said["lightning-2"]["en"]
    assert "amounts to the group's average gradient" not in said["hf-5"]["en"]
    assert len({texts["en"] for texts in said.values()}) == len(PROFILES)
