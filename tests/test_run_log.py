"""The simulated Trainer console (`steplab.simulation.run_log`): bar, logged values, events and the summary."""

from __future__ import annotations

import ast

import numpy as np
import pytest
from golden import golden_cases, hf_setup_values
from tqdm import tqdm

from steplab.errors import TrainerRefusal
from steplab.simulation import run_log
from steplab.simulation.run_log import RunLog, bar_text, logged_epochs, logged_learning_rates
from steplab.trainer.events import events
from steplab.trainer.plan import make_plan
from steplab.trainer.setup import TrainingSetup, setup_from_mapping

COURSE = TrainingSetup().replace(num_samples=1600, per_device_train_batch_size=4, gradient_accumulation_steps=8,
                                 num_train_epochs=3, save_steps=50, logging_steps=10)


def golden_plans():
    """(id, plan, result) of every recorded transformers run that trained."""
    found = []
    for profile in ("hf-4.46", "hf-4.51", "hf-4.57", "hf-5"):
        for case_id, case, result in golden_cases(profile):
            if result["status"] != "ok":
                continue
            setup, _ = setup_from_mapping(hf_setup_values(case, profile))
            try:
                plan = make_plan(setup)
            except TrainerRefusal:
                continue
            found.append((f"{profile}-{case_id}", plan, result))
    return found


GOLDEN = golden_plans()


@pytest.mark.parametrize(("n", "total", "elapsed"), [
    (0, 150, 0.0), (1, 150, 0.3), (37, 150, 12.0), (37, 150, 120.0), (150, 150, 48.3), (149, 150, 903.0),
    (5, 7, 2.5), (999_999, 1_000_000, 500_000.0), (12, 12, 7200.5), (3, 1000, 3.0), (10, 10, 1.0),
])
def test_bar_is_tqdms_meter(n, total, elapsed):
    assert bar_text(n, total, elapsed) == tqdm.format_meter(n, total, elapsed)


def test_bar_slower_than_one_step_a_second_says_seconds_per_step():
    assert bar_text(37, 150, 120.0).endswith("3.24s/it]")
    assert bar_text(37, 150, 12.0).endswith(" 3.08it/s]")


@pytest.mark.parametrize(("case_id", "plan", "result"), GOLDEN, ids=[g[0] for g in GOLDEN])
def test_logged_learning_rate_and_epoch_match_the_recorded_run(case_id, plan, result):
    steps = np.arange(1, plan.optimizer_steps + 1)
    rates = logged_learning_rates(plan, steps)
    recorded = np.asarray(result["lr_per_step"])
    if plan.profile.id == "hf-4.46":  # logged after the scheduler stepped: the next update's rate
        np.testing.assert_allclose(rates[:-1], recorded[1:], rtol=1e-12, atol=0)
    else:
        np.testing.assert_allclose(rates, recorded, rtol=1e-12, atol=0)
    if plan.optimizer_steps:
        assert logged_epochs(plan, [plan.optimizer_steps])[0] == pytest.approx(result["final_epoch"], abs=1e-12)


def _parsed(line):
    return ast.literal_eval(line.text)


@pytest.mark.parametrize(("case_id", "plan", "result"), GOLDEN, ids=[g[0] for g in GOLDEN])
def test_lines_fall_at_the_recorded_event_steps(case_id, plan, result):
    log = RunLog(plan, 1.0)
    lines = log.lines_between(-1, plan.optimizer_steps)
    assert [line.step for line in lines if line.kind == "log"] == result["log_at_steps"]
    assert [line.step for line in lines if line.kind == "eval"] == result["eval_at_steps"]
    assert [line.step for line in lines if line.kind == "save"] == result["save_at_steps"]
    assert lines[-1].kind == "summary"


def test_a_recorded_run_with_logging_logs_the_engines_values():
    case_id, plan, result = next(g for g in GOLDEN if g[0] == "hf-4.57-llamafactory_example")
    lines = [line for line in RunLog(plan, 1.0).lines_between(0, plan.optimizer_steps) if line.kind == "log"]
    assert len(lines) == len(result["log_at_steps"])
    for line in lines:
        values = _parsed(line)
        assert list(values) == ["loss", "grad_norm", "learning_rate", "epoch"]
        assert values["learning_rate"] == result["lr_per_step"][line.step - 1]
        assert values["epoch"] == round(float(logged_epochs(plan, [line.step])[0]), 2)


def test_release_formats_differ_as_their_code_does():
    old = RunLog(make_plan(COURSE.replace(trainer="hf-4.57")), 6.02).lines_between(9, 10)[0]
    new = RunLog(make_plan(COURSE.replace(trainer="hf-5")), 6.02).lines_between(9, 10)[0]
    old_values, new_values = _parsed(old), _parsed(new)
    assert old_values["learning_rate"] == pytest.approx(5e-05 * (1 - 9 / 150), rel=1e-12)
    assert old_values["epoch"] == 0.2 and new_values["epoch"] == "0.2"
    assert new_values["learning_rate"] == f"{5e-05 * (1 - 9 / 150):.4g}"
    assert round(old_values["loss"], 4) == old_values["loss"]
    v446 = _parsed(RunLog(make_plan(COURSE.replace(trainer="hf-4.46")), 6.02).lines_between(9, 10)[0])
    assert v446["learning_rate"] == pytest.approx(5e-05 * (1 - 10 / 150), rel=1e-12)


def test_save_and_eval_lines_at_exactly_the_engines_steps():
    setup = COURSE.replace(num_samples=1001, per_device_train_batch_size=3, eval_strategy="steps", eval_steps=7,
                           save_strategy="epoch", logging_steps=13)
    plan = make_plan(setup)
    lines = RunLog(plan, 2.0, output_dir="out").lines_between(-1, plan.optimizer_steps)
    assert [x.step for x in lines if x.kind == "save"] == events(plan, "save").steps()
    assert [x.step for x in lines if x.kind == "eval"] == events(plan, "eval").steps()
    assert [x.step for x in lines if x.kind == "log"] == events(plan, "log").steps()
    first_save = next(x for x in lines if x.kind == "save")
    assert first_save.text == f"Saving model checkpoint to out/checkpoint-{events(plan, 'save').steps()[0]}"
    evals = [_parsed(x) for x in lines if x.kind == "eval"]
    assert list(evals[0]) == ["eval_loss", "eval_runtime", "eval_samples_per_second", "eval_steps_per_second", "epoch"]


def test_print_order_at_one_step_is_log_then_eval_then_save():
    plan = make_plan(COURSE.replace(eval_strategy="steps", eval_steps=50))
    kinds = [line.kind for line in RunLog(plan, 1.0).lines_between(49, 50)]
    assert kinds == ["log", "eval", "save"]


def test_summary_at_the_end():
    plan = make_plan(COURSE.replace(trainer="hf-4.57"))
    log = RunLog(plan, 6.02)
    assert log.lines_between(0, 149)[-1].kind != "summary"
    last = log.lines_between(140, 150)[-1]
    values = _parsed(last)
    assert last.kind == "summary"
    assert list(values) == ["train_runtime", "train_samples_per_second", "train_steps_per_second", "train_loss", "epoch"]
    assert values["train_runtime"] == round(150 * 6.02, 4)
    assert values["train_samples_per_second"] == round(1600 * 3 / (150 * 6.02), 3)
    assert values["train_steps_per_second"] == round(150 / (150 * 6.02), 3)
    assert values["epoch"] == 3.0
    assert log.screen(150).splitlines()[-1] == tqdm.format_meter(150, 150, 150 * 6.02)


def test_the_screen_is_the_tail_and_the_bar():
    plan = make_plan(COURSE)
    log = RunLog(plan, 6.02)
    start = log.screen(0).splitlines()
    assert start[0] == "***** Running training *****"
    assert start[-1] == tqdm.format_meter(0, 150, 0)
    middle = log.screen(100, tail=5).splitlines()
    assert len(middle) == 6
    assert middle[-2] == "Saving model checkpoint to saves/qwen3-0.6b/lora/sft/checkpoint-100"
    assert middle[-1] == tqdm.format_meter(100, 150, 100 * 6.02)


def test_a_million_steps_builds_only_the_tail(monkeypatch):
    plan = make_plan(COURSE.replace(max_steps=1_000_000, logging_steps=1))
    built = []
    original = RunLog._log_lines
    monkeypatch.setattr(RunLog, "_log_lines", lambda self, steps: built.append(len(steps)) or original(self, steps))
    lines = RunLog(plan, 0.5).lines_upto(654_321, tail=30)
    assert len(lines) == 30 and lines[-1].step == 654_321
    assert sum(built) < 200
    assert _parsed(lines[-1])["learning_rate"] == f"{plan.learning_rates(654_321, 654_321)[0]:.4g}"  # hf-5 prints .4g


def test_loss_is_illustrative_but_repeatable_and_seeded():
    plan = make_plan(COURSE)
    a = RunLog(plan, 1.0, seed=1).lines_between(0, 150)
    assert a == RunLog(plan, 1.0, seed=1).lines_between(0, 150)
    assert a != RunLog(plan, 1.0, seed=2).lines_between(0, 150)
    losses = [float(_parsed(x)["loss"]) for x in a if x.kind == "log"]
    assert losses[0] > losses[-1] > 0


def test_the_curve_mean_is_the_mean_of_its_steps():
    curve = run_log.illustrative_curve(make_plan(COURSE), seed=3)
    steps = np.arange(11, 21)
    direct = np.mean(curve.floor + curve.rise * curve.ratio ** steps)
    assert curve.window_mean(np.array([10]), np.array([20]))[0] == pytest.approx(direct, rel=1e-12)


def test_next_event_is_the_first_at_or_after_the_step():
    plan = make_plan(COURSE.replace(trainer="hf-4.57", eval_strategy="steps", eval_steps=40))
    assert run_log.next_event(plan, "save", 1) == 50
    assert run_log.next_event(plan, "save", 50) == 50
    assert run_log.next_event(plan, "save", 51) == 100
    assert run_log.next_event(plan, "eval", 121) is None  # 4.x: eval at 40, 80, 120; 5.x also at 150
    assert run_log.next_event(make_plan(COURSE.replace(trainer="hf-5", eval_strategy="steps", eval_steps=40)),
                              "eval", 121) == 150
    big = make_plan(COURSE.replace(max_steps=1_000_000, save_steps=250_000))
    assert run_log.next_event(big, "save", 3) == 250_000


def test_measured_seconds_come_from_the_course_figures():
    from steplab.teaching.measurements import measurements

    name, seconds = run_log.measured_seconds_per_step(2, 16, measurements())
    assert name == "v100_batch2_acc16" and seconds == 560 / 50
    assert run_log.measured_seconds_per_step(7, 7, measurements()) == ("v100_batch4_acc8", 301 / 50)


def test_the_clock_counts_the_evaluations_time_too():
    """The Trainer's bar and its train_runtime are wall clock: every evaluation run so far adds its runtime."""
    plan = make_plan(COURSE.replace(eval_strategy="steps", eval_steps=50))
    log = RunLog(plan, 6.02, eval_seconds=12.0)
    assert log.elapsed(49) == 49 * 6.02
    assert log.elapsed(100) == 100 * 6.02 + 2 * 12.0
    assert float(_parsed(log.summary())["train_runtime"]) == pytest.approx(150 * 6.02 + 3 * 12.0, rel=1e-3)
    assert log.screen(150).splitlines()[-1] == tqdm.format_meter(150, 150, 150 * 6.02 + 3 * 12.0)
    evals = [_parsed(line) for line in log.lines_between(-1, 150) if line.kind == "eval"]
    assert {float(values["eval_runtime"]) for values in evals} == {12.0}


@pytest.mark.parametrize("changes", [
    {"eval_strategy": "steps", "eval_steps": 7, "num_samples": 1001, "per_device_train_batch_size": 3},
    {"eval_strategy": "epoch"},
    {"eval_strategy": "steps", "eval_steps": 40, "eval_on_start": True},
    {"eval_strategy": "no"},
])
def test_the_evaluation_count_is_the_listed_evaluations(changes):
    plan = make_plan(COURSE.replace(**changes))
    for high in (0, 1, 39, 40, 50, 149, plan.optimizer_steps):
        listed = run_log.event_steps_between(plan, "eval", -1, high)
        assert run_log.event_count_upto(plan, "eval", high) == len(listed), (changes, high)
