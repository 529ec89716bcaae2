"""steplab.simulation.lr_curve: downsampling, where a step sits (epoch, samples), the curve, summary, CSV and code snippets."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from steplab.i18n import zh_typography
from steplab.simulation import downsample, lr_curve, lr_export, lr_overlays
from steplab.trainer import geometry, schedule_arguments, schedules
from steplab.trainer.plan import make_plan
from steplab.trainer.run import iter_epochs
from steplab.trainer.schedules import METRIC_DRIVEN, SCHEDULER_TYPES, available_schedulers
from steplab.trainer.setup import setup_from_mapping

COURSE = {"num_samples": 1600, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 8,
          "num_train_epochs": 3, "eval_strategy": "steps", "eval_steps": 50}
# Setups whose updates sit differently in their epochs: short last groups, the 4.46 running count and its
# chunk bug, several GPUs, fractional epochs, max_steps beyond the data, Lightning's limit.
SHAPES = [
    {},
    {"num_samples": 1001},
    {"num_samples": 1001, "trainer": "hf-4.51", "warmup_steps": 10},
    {"num_samples": 1001, "trainer": "hf-4.46", "num_train_epochs": 2.5},
    {"num_samples": 1001, "world_size": 2, "num_train_epochs": 2.5},
    {"num_samples": 1001, "dataloader_drop_last": True, "max_steps": 200},
    {"num_samples": 10, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 3, "max_steps": 50,
     "trainer": "hf-4.46"},
    {"num_samples": 999, "per_device_train_batch_size": 3, "gradient_accumulation_steps": 7, "world_size": 3,
     "trainer": "hf-4.57", "num_train_epochs": 4},
    {"num_samples": 1000, "trainer": "lightning-2", "limit_train_batches": 0.5, "world_size": 2},
]


def plan_of(**values):
    return make_plan(setup_from_mapping({**COURSE, **values})[0])


def with_starters(name: str, profile: str = "hf-5", **values):
    """A plan of `name` with the arguments it cannot be built without."""
    base = plan_of(trainer=profile, **values)
    kwargs = schedules.starter_kwargs(name, profile, base.warmup_steps, base.max_steps)
    return plan_of(trainer=profile, lr_scheduler_type=name, lr_scheduler_kwargs=kwargs, **values)


# ------------------------------------------------------------------------------------------ downsampling


def buckets(n: int, cap: int, kept: int) -> list[slice]:
    """The buckets `downsample` documents: size = ⌈n / ⌊(cap − K) / 2⌋⌉ consecutive points."""
    size = -(-n // max(1, (cap - kept) // 2))
    return [slice(start, min(start + size, n)) for start in range(0, n, size)]


def test_short_curve_is_kept_whole():
    values = np.linspace(0, 1, 50)
    assert downsample.downsample(values, cap=50).tolist() == list(range(50))


def test_cap_below_four_is_refused():
    with pytest.raises(ValueError):
        downsample.downsample(np.zeros(10), cap=3)


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=1, max_size=3000),
    cap=st.integers(4, 300),
    keep=st.lists(st.integers(-5, 3100), max_size=40),
)
def test_downsample_keeps_every_bucket_extreme_and_the_exact_points(values, cap, keep):
    values = np.asarray(values)
    n = len(values)
    index = downsample.downsample(values, cap=cap, keep=keep)
    assert len(index) <= cap
    assert np.all(np.diff(index) > 0) and index[0] == 0 and index[-1] == n - 1
    if n <= cap:
        assert len(index) == n
        return
    wanted = {k for k in keep if 0 <= k < n} | {0, n - 1}
    if len(wanted) <= cap // 2:
        assert wanted <= set(index.tolist())
        kept = len(wanted)
    else:
        kept = len(set(index.tolist()) & wanted)
    chosen = set(index.tolist())
    for part in buckets(n, cap, kept):
        segment = values[part]
        assert any(values[i] == segment.min() for i in chosen if part.start <= i < part.stop)
        assert any(values[i] == segment.max() for i in chosen if part.start <= i < part.stop)
    assert values.max() in values[index] and values.min() in values[index]


def test_downsample_passes_over_nan():
    values = np.arange(10_000, dtype=float)
    values[5000:5003] = np.nan
    index = downsample.downsample(values, cap=100)
    assert not np.isnan(values[index]).any()
    assert len(index) <= 100


def test_a_million_steps_keep_every_restart_and_warmup_end():
    plan = plan_of(num_samples=10**9, per_device_train_batch_size=1, gradient_accumulation_steps=1, max_steps=10**6,
                   lr_scheduler_type="cosine_with_restarts", lr_scheduler_kwargs={"num_cycles": 5}, warmup_steps=1000)
    curve = lr_curve.curve(plan)
    assert len(curve.run) <= lr_curve.CAP and curve.planned is None and curve.every_update
    full = plan.learning_rates()
    assert curve.run.rates.tolist() == full[curve.run.steps - 1].tolist()
    assert {1000, 1001, 10**6} <= set(curve.run.steps.tolist())
    # each of the five waves restarts at the peak: the first update of each wave is drawn at exactly the peak
    assert np.count_nonzero(curve.run.rates == plan.setup.learning_rate) >= 5
    # the drawn line stays within one bucket's step of the true curve everywhere
    drawn = np.interp(np.arange(1, 10**6 + 1), curve.run.steps, curve.run.rates)
    assert np.abs(drawn - full).max() <= plan.setup.learning_rate + 1e-18
    assert np.mean(np.abs(drawn - full)) < 0.01 * plan.setup.learning_rate


# ------------------------------------------------------------------------------------------ epochs and samples


def brute_force(plan) -> tuple[list[float], list[int]]:
    """state.epoch and samples seen after every update, walking micro-batch by micro-batch."""
    length = plan.epoch.micro_batches
    per_micro = plan.setup.per_device_train_batch_size * plan.setup.world_size
    used = plan.epoch.samples_used
    epochs, samples, before = [], [], 0
    for index, epoch in enumerate(iter_epochs(list(plan.segments))):
        sizes = [max(0, min(per_micro, used - j * per_micro)) for j in range(epoch.fetched)]
        for run in epoch.runs:
            for j in range(run.count):
                micro = run.end + j * run.stride
                epochs.append(index + micro / length)
                samples.append(before + sum(sizes[:micro]))
        before += sum(sizes)
    return epochs, samples


@pytest.mark.parametrize("values", SHAPES, ids=lambda v: ",".join(f"{k}={x}" for k, x in v.items()) or "course")
def test_epochs_and_samples_match_a_walk_over_the_micro_batches(values):
    plan = plan_of(**values)
    steps = np.arange(1, plan.optimizer_steps + 1)
    epochs, samples = geometry.epochs_and_samples(plan, steps)
    want_epochs, want_samples = brute_force(plan)
    assert epochs.tolist() == want_epochs
    assert samples.tolist() == want_samples
    if plan.optimizer_steps:
        assert epochs[-1] == plan.final_epoch


def test_samples_at_epoch_ends_are_the_dataset_not_updates_times_batch():
    plan = plan_of(num_samples=1001)  # 251 micro-batches: 31 groups of 8 and one of 3 per epoch
    numbers, ends = geometry.epoch_boundaries(plan)
    assert numbers.tolist() == [1, 2, 3] and ends.tolist() == [32, 64, 96]
    _, samples = geometry.epochs_and_samples(plan, ends)
    assert samples.tolist() == [1001, 2002, 3003]
    assert 32 * plan.total_train_batch_size == 1024  # what updates × effective batch would claim


def test_epoch_boundaries_leave_out_an_epoch_the_horizon_cuts():
    plan = plan_of(num_train_epochs=2.5)
    assert geometry.epoch_boundaries(plan)[1].tolist() == [50, 100]
    assert plan.epoch_end_steps() == [50, 100, 125]
    assert geometry.epoch_boundaries(plan_of())[1].tolist() == [50, 100, 150]


def test_a_million_epochs_give_every_nth_boundary_quickly():
    plan = plan_of(num_samples=1, per_device_train_batch_size=1, gradient_accumulation_steps=1, num_train_epochs=10**6)
    numbers, ends = geometry.epoch_boundaries(plan, cap=200)
    assert len(numbers) == 200 and numbers[0] == 5000 and ends.tolist() == numbers.tolist()


# ------------------------------------------------------------------------------------------ the curve


@pytest.mark.parametrize("values", SHAPES, ids=lambda v: ",".join(f"{k}={x}" for k, x in v.items()) or "course")
def test_curve_points_are_the_engines_learning_rates(values):
    plan = plan_of(lr_scheduler_type="cosine", warmup_ratio=0.1, **values)
    curve = lr_curve.curve(plan)
    runs, horizon = plan.optimizer_steps, plan.max_steps
    full = plan.learning_rates(1, max(runs, horizon))
    assert curve.run.steps.tolist() == list(range(1, runs + 1))  # short curves are drawn whole
    assert curve.run.rates.tolist() == full[:runs].tolist()
    if runs < horizon:
        assert curve.planned.steps[0] == max(runs, 1) and curve.planned.steps[-1] == horizon
        assert curve.planned.rates.tolist() == full[curve.planned.steps - 1].tolist()
    else:
        assert curve.planned is None


def test_horizon_stops_early_in_4_51_and_4_46_edge_cases():
    plan = plan_of(num_samples=4, per_device_train_batch_size=2, gradient_accumulation_steps=3, max_steps=50,
                   trainer="hf-4.46", warmup_steps=5)
    curve = lr_curve.curve(plan)
    assert (plan.optimizer_steps, plan.max_steps) == (16, 50)
    assert curve.run.steps[-1] == 16 and curve.planned.steps[0] == 16 and curve.planned.steps[-1] == 50
    assert curve.last == plan.learning_rates(16, 16)[0]
    none = lr_curve.curve(plan_of(num_samples=4, per_device_train_batch_size=2, gradient_accumulation_steps=3,
                                  max_steps=50, trainer="hf-4.51"))
    assert len(none.run) == 0 and none.first is None and none.planned.steps[0] == 1


def test_warmup_the_schedule_applies():
    assert lr_curve.curve(plan_of(warmup_steps=15)).warmup == 15
    assert lr_curve.curve(plan_of(warmup_steps=15, lr_scheduler_type="constant")).warmup == 0
    assert lr_curve.curve(plan_of(warmup_steps=15, lr_scheduler_type="constant")).first == 5e-5


def test_beyond_the_exact_limit_an_even_grid_is_read():
    plan = plan_of(num_samples=10**6, per_device_train_batch_size=1, gradient_accumulation_steps=1, max_steps=20_000,
                   warmup_steps=777, lr_scheduler_type="cosine")
    assert lr_curve.curve(plan, cap=200).every_update
    curve = lr_curve.curve(plan, cap=200, exact_limit=1000)
    assert not curve.every_update and len(curve.run) <= 200
    assert {777, 778, 20_000} <= set(curve.run.steps.tolist())
    assert curve.run.rates.tolist() == plan.learning_rates()[curve.run.steps - 1].tolist()


def test_metric_driven_has_no_curve():
    plan = plan_of(lr_scheduler_type="reduce_lr_on_plateau")
    assert not lr_curve.drawable(plan)
    with pytest.raises(ValueError):
        lr_curve.curve(plan)


def test_event_steps_thin_out_beyond_the_cap():
    plan = plan_of(num_samples=10**6, per_device_train_batch_size=1, gradient_accumulation_steps=1, max_steps=10**5,
                   eval_steps=10, save_steps=1000)
    evals = lr_curve.event_steps(plan, "eval", cap=400)
    assert len(evals) <= 401 and evals[0] == 250 and np.all(np.diff(evals) == 250)
    assert lr_curve.event_steps(plan, "save", cap=400).tolist() == list(range(1000, 100_001, 1000))
    assert lr_curve.event_steps(plan_of(), "eval").tolist() == [50, 100, 150]


def test_rates_at_any_step_equal_the_whole_curve():
    plan = plan_of(lr_scheduler_type="polynomial", lr_scheduler_kwargs={"power": 2.0}, warmup_steps=7)
    steps = np.array([1, 7, 8, 9, 100, 150])
    assert lr_curve.rates_at(plan, steps).tolist() == plan.learning_rates()[steps - 1].tolist()


# ------------------------------------------------------------------------------------------ words


def test_summary_sentences():
    text = lr_curve.summary(lr_curve.curve(plan_of(warmup_steps=15)))
    assert text.en == ("The learning rate peaks at 5.00e-05 at step 16; update 1 uses 0 and the last update "
                       "(step 150) uses 3.70e-07; warmup takes 15 steps.")
    assert text.zh.startswith("学习率在第 16 步达到峰值 5.00e-05；第 1 次更新的学习率是 0")
    constant = lr_curve.summary(lr_curve.curve(plan_of(warmup_steps=15, lr_scheduler_type="constant")))
    assert "constant ignores warmup_steps = 15" in constant.en
    early = lr_curve.summary(lr_curve.curve(plan_of(num_samples=4, per_device_train_batch_size=2,
                                                    gradient_accumulation_steps=3, max_steps=50, trainer="hf-4.46")))
    assert "stops after 16 of the 50 planned steps" in early.en
    nothing = lr_curve.summary(lr_curve.curve(plan_of(num_samples=4, per_device_train_batch_size=2,
                                                      gradient_accumulation_steps=3, max_steps=50, trainer="hf-4.51")))
    assert nothing.en.startswith("No update runs at all (50 were planned)")
    for text in (constant, early, nothing):
        assert zh_typography(text.zh) == text.zh and text.en.count(".") >= 1


# ------------------------------------------------------------------------------------------ export


def test_csv_holds_every_update_with_exact_numbers():
    plan = plan_of(num_samples=1001, lr_scheduler_type="cosine", warmup_steps=10)
    lines = lr_export.csv_text(plan).splitlines()
    assert lines[0] == "step,epoch,learning_rate" and len(lines) == plan.optimizer_steps + 1
    rows = [line.split(",") for line in lines[1:]]
    assert [int(r[0]) for r in rows] == list(range(1, plan.optimizer_steps + 1))
    assert [float(r[2]) for r in rows] == plan.learning_rates().tolist()
    assert float(rows[-1][1]) == plan.final_epoch and float(rows[31][1]) == 1.0


def test_csv_refuses_more_than_its_limit(monkeypatch):
    monkeypatch.setattr(lr_export, "CSV_LIMIT", 100)
    with pytest.raises(ValueError):
        lr_export.csv_text(plan_of())


def run_snippet(code: str) -> list[float]:
    scope: dict = {}
    exec(compile(code, "<snippet>", "exec"), scope)  # noqa: S102 - our own generated code
    return scope["learning_rates"]


def drawable_types(profile: str) -> list[str]:
    return [n for n in available_schedulers(profile) if n not in METRIC_DRIVEN]


@pytest.mark.parametrize("profile", ["hf-5", "hf-4.46"])
def test_plain_torch_snippet_reproduces_the_curve(profile):
    pytest.importorskip("torch")
    for name in drawable_types(profile):
        plan = with_starters(name, profile, warmup_steps=12, num_samples=800)
        code = lr_export.torch_snippet(plan, "en")
        assert "from steplab" not in code  # the engine's own function, copied in
        assert run_snippet(code) == plan.learning_rates().tolist(), name


def test_get_scheduler_snippet_reproduces_the_curve():
    pytest.importorskip("transformers")
    for name in drawable_types("hf-5"):
        plan = with_starters(name, warmup_steps=12, num_samples=800)
        code = lr_export.get_scheduler_snippet(plan, "zh")
        assert f"get_scheduler(\n    {name!r}," in code
        assert run_snippet(code) == plan.learning_rates().tolist(), name


def test_plateau_snippets_step_after_evaluations():
    plan = plan_of(lr_scheduler_type="reduce_lr_on_plateau", lr_scheduler_kwargs={"patience": 3})
    assert "ReduceLROnPlateau(optimizer, patience=3)" in lr_export.torch_snippet(plan)
    assert "scheduler.step(eval_loss)" in lr_export.get_scheduler_snippet(plan)


def test_setup_yaml_is_the_config_export():
    from steplab.io.config_read import read_config
    from steplab.io.config_write import write_config

    plan = plan_of(lr_scheduler_type="cosine", lr_scheduler_kwargs={"num_cycles": 1.5})
    text = lr_export.setup_yaml(plan.setup)
    assert text == write_config(plan.setup.to_dict())
    assert "num_cycles: 1.5" in text and read_config(text) is not None


# ------------------------------------------------------------------------------------------ scheduler arguments


def test_starters_make_every_scheduler_buildable_in_every_release():
    for profile in ("hf-5", "hf-4.57", "hf-4.51", "hf-4.46"):
        for name in drawable_types(profile):
            plan = with_starters(name, profile, warmup_steps=10)
            assert lr_curve.curve(plan).run.rates.size, (profile, name)


def test_adapt_kwargs_keeps_removes_and_adds():
    switch = schedule_arguments.adapt_kwargs("linear", {"num_cycles": 1.5}, "hf-5", 0, 150)
    assert (switch.kwargs, switch.removed, switch.added) == ({}, ["num_cycles"], [])
    switch = schedule_arguments.adapt_kwargs("cosine_with_min_lr", {"num_cycles": 1.5}, "hf-5", 0, 150)
    assert switch.kwargs == {"num_cycles": 1.5, "min_lr_rate": 0.1} and switch.added == ["min_lr_rate"]
    switch = schedule_arguments.adapt_kwargs("warmup_stable_decay", {}, "hf-5", 15, 150)
    assert switch.kwargs == {"num_decay_steps": 90} and switch.added == ["num_decay_steps"]  # LLaMA-Factory: S = ⌊135 / 3⌋
    assert schedule_arguments.adapt_kwargs("warmup_stable_decay", {}, "hf-4.46", 15, 150).kwargs == {
        "num_stable_steps": 45, "num_decay_steps": 90}
    switch = schedule_arguments.adapt_kwargs("cosine_with_min_lr", {"min_lr": 1e-6}, "hf-5", 0, 150)
    assert switch.kwargs == {"min_lr": 1e-6} and switch.added == []


@pytest.mark.parametrize("profile", ["hf-5", "hf-4.57", "hf-4.51", "hf-4.46"])
def test_an_argument_that_means_something_else_is_not_carried_over(profile):
    """Issue 27: `num_cycles: 3` of cosine-with-restarts (three hard restarts) carried into warmup-stable-decay made
    its cosine decay oscillate three times and end at the peak. It is reset (said), while a `num_cycles` that means
    the same in both (cosine's half-waves) is kept (said too). Checked on the curve the real scheduler draws: the
    switched WSD ends at its floor, as a WSD does."""
    warmup, total = 15, 150
    switch = schedule_arguments.adapt_kwargs("warmup_stable_decay", {"num_cycles": 3}, profile, warmup, total,
                                   previous="cosine_with_restarts")
    assert "num_cycles" not in switch.kwargs and switch.reset == ["num_cycles"] and not switch.kept
    setup = setup_from_mapping({"num_samples": 1600, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 8,
                                "warmup_steps": warmup, "max_steps": total, "lr_scheduler_type": "warmup_stable_decay",
                                "lr_scheduler_kwargs": switch.kwargs, "trainer": profile})[0]
    plan = make_plan(setup)
    rates = plan.learning_rates()
    assert rates[-1] < 0.01 * setup.learning_rate < rates.max()
    kept = schedule_arguments.adapt_kwargs("warmup_stable_decay", {"num_cycles": 1.5}, profile, warmup, total, previous="cosine")
    assert kept.kwargs["num_cycles"] == 1.5 and kept.kept == ["num_cycles"] and not kept.reset
    back = schedule_arguments.adapt_kwargs("cosine_with_restarts", {"num_cycles": 0.5}, profile, warmup, total, previous="cosine")
    assert "num_cycles" not in back.kwargs and back.reset == ["num_cycles"]


def test_the_two_meanings_of_num_cycles_are_the_real_signatures():
    """The defaults that tell the meanings apart are those of the installed transformers' own functions."""
    import inspect

    from transformers import optimization

    def default(function):
        return inspect.signature(function).parameters["num_cycles"].default

    assert default(optimization.get_cosine_with_hard_restarts_schedule_with_warmup) == 1
    assert default(optimization.get_cosine_schedule_with_warmup) == default(optimization.get_wsd_schedule) == 0.5
    accepted = {name: schedule_arguments.accepted_kwargs(name, "hf-5").get("num_cycles")
                for name in ("cosine_with_restarts", "cosine", "warmup_stable_decay")}
    assert accepted == {"cosine_with_restarts": 1, "cosine": 0.5, "warmup_stable_decay": 0.5}


def test_set_kwarg():
    assert schedule_arguments.set_kwarg({"min_lr_rate": 0.1}, "min_lr", 1e-6) == {"min_lr": 1e-6}
    assert schedule_arguments.set_kwarg({"min_lr": 1e-6}, "min_lr_rate", 0.2) == {"min_lr_rate": 0.2}
    assert schedule_arguments.set_kwarg({"num_cycles": 2.0}, "num_cycles", None) == {}
    assert schedule_arguments.set_kwarg({}, "num_decay_steps", 40.0) == {"num_decay_steps": 40}


def test_kwargs_dropped_by_get_scheduler():
    assert schedule_arguments.kwargs_dropped("constant", "hf-5") and schedule_arguments.kwargs_dropped("constant_with_warmup", "hf-4.46")
    assert schedule_arguments.kwargs_dropped("inverse_sqrt", "hf-4.57") and not schedule_arguments.kwargs_dropped("inverse_sqrt", "hf-5")
    assert not schedule_arguments.kwargs_dropped("linear", "hf-5")  # forwarded, it just takes none


def test_variants_for_overlays():
    plan = plan_of()
    assert make_plan(lr_overlays.variant(plan, "max_steps", 300)).max_steps == 300
    epochs = make_plan(lr_overlays.variant(plan_of(max_steps=80), "epochs", 2))
    assert epochs.max_steps == 100 and not epochs.setup.uses_max_steps
    other = lr_overlays.variant(plan, "scheduler", "cosine_with_min_lr")
    assert other.scheduler_kwargs == {"min_lr_rate": 0.1}
    assert lr_overlays.variant_label("epochs", 2.0, epochs).en == f"2 epochs → {epochs.max_steps} steps"
    assert lr_overlays.variant_label("epochs", 2.0, epochs).zh == f"2 轮 → 共 {epochs.max_steps} 步"
    assert "reduce_lr_on_plateau" not in lr_overlays.overlay_schedulers("hf-5")
    with pytest.raises(ValueError):
        lr_overlays.variant(plan, "warmup", 3)


def test_horizon_even_when_only_the_scheduler_is_refused():
    setup = setup_from_mapping({**COURSE, "lr_scheduler_type": "cosine_with_min_lr", "warmup_steps": 15})[0]
    assert schedule_arguments.horizon(setup) == (15, 150)
    assert math.isclose(schedules.STARTER_MIN_LR_RATE, 0.1)
    assert set(SCHEDULER_TYPES) >= set(drawable_types("hf-5"))
