"""The animation's frames: a pure function of the plan that agrees with it at every micro-batch.

The property tests replay every setup micro-batch by micro-batch with a naive loop written here from the
accumulation rules (no segments, no arithmetic shortcuts) and compare it with the frames the animation
shows, for every Trainer profile.
"""

from __future__ import annotations

import dataclasses
import itertools
import re

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from steplab.errors import SetupError, TrainerRefusal
from steplab.i18n import LOCALES, fmt_lr, zh_typography
from steplab.simulation.narration import narration, totals
from steplab.simulation.timeline import CHAPTER, WHOLE_RUN, _Run, build_timeline
from steplab.trainer.plan import Plan, make_plan
from steplab.trainer.profiles import PROFILES
from steplab.trainer.setup import setup_from_mapping

COURSE = {"num_samples": 1600, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 8,
          "num_train_epochs": 3}


def plan_of(**values) -> Plan:
    return make_plan(setup_from_mapping(values)[0])


def naive_run(plan: Plan) -> list[tuple[int, int, int]]:
    """(epoch, micro-batch, micro-batches in the step it closes or 0) for every micro-batch the loop runs.

    Straight from the rules: per-epoch profiles step every GA micro-batches of the epoch and at its last
    micro-batch; ≤ 4.46 steps at every multiple of GA of a running count (and at the end of an epoch of
    at most GA micro-batches); 4.46–4.51 fetch only `fetched_per_epoch`; training stops at max_steps.
    """
    ga = plan.setup.gradient_accumulation_steps
    length, fetched = plan.micro_batches_per_epoch, plan.fetched_per_epoch
    running = plan.profile.running_count
    out: list[tuple[int, int, int]] = []
    count = bucket = steps = 0
    for epoch in range(plan.epochs_loop):
        if steps >= plan.max_steps or not length:
            break
        for m in range(1, fetched + 1):
            count += 1
            bucket += 1
            closes = count % ga == 0 if running else m % ga == 0
            if m == length and (length <= ga if running else True):
                closes = True
            out.append((epoch, m, bucket if closes else 0))
            if closes:
                bucket = 0
                steps += 1
                if steps >= plan.max_steps:
                    break
    return out


def rle(sizes: list[int]) -> list[list[int]]:
    pairs: list[list[int]] = []
    for size, group in itertools.groupby(sizes):
        pairs.append([size, len(list(group))])
    return pairs


SETUPS = st.fixed_dictionaries({
    "num_samples": st.one_of(st.integers(1, 60), st.integers(61, 500)),
    "per_device_train_batch_size": st.integers(1, 6),
    "gradient_accumulation_steps": st.integers(1, 12),
    "world_size": st.sampled_from([1, 1, 2, 3, 4, 8, 9]),
    "num_train_epochs": st.sampled_from([0.3, 1, 1.5, 2, 3, 4]),
    "max_steps": st.sampled_from([-1, -1, 1, 2, 5, 13]),
    "dataloader_drop_last": st.booleans(),
    "trainer": st.sampled_from([*sorted(PROFILES), "hf-4.46", "hf-4.51"]),  # old releases hold the edge cases
    "lr_scheduler_type": st.sampled_from(["linear", "cosine", "constant_with_warmup"]),
    "warmup_steps": st.sampled_from([0, 2]),
})


def plan_or_none(values: dict) -> Plan | None:
    try:
        return make_plan(setup_from_mapping(values)[0])
    except (SetupError, TrainerRefusal):
        return None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values=SETUPS)
@example(values={**COURSE, "trainer": "hf-4.46", "num_samples": 1001, "world_size": 3, "max_steps": -1,
                 "dataloader_drop_last": False, "lr_scheduler_type": "linear", "warmup_steps": 0})
@example(values={"num_samples": 90, "per_device_train_batch_size": 3, "gradient_accumulation_steps": 8,
                 "world_size": 1, "num_train_epochs": 3, "max_steps": -1, "dataloader_drop_last": False,
                 "trainer": "hf-4.51", "lr_scheduler_type": "cosine", "warmup_steps": 2})
def test_frames_replay_the_plan_for_every_profile(values):
    plan = plan_or_none(values)
    if plan is None:
        return
    expected = naive_run(plan)
    walk = _Run(plan)  # every micro-batch round, not only the animation's window
    shown = [walk.frame(index) for index in range(walk.total_frames)]
    assert len(shown) == len(expected)
    assert [(f.epoch, f.micro_batch) for f in shown] == [(e, m) for e, m, _ in expected]

    # the micro-batches of every update, counted frame by frame, are the plan's composition
    counted, since = [], 0
    for frame in shown:
        since += 1
        if frame.is_step:
            counted.append(since)
            assert frame.fill == since
            since = 0
        else:
            assert frame.fill == since
    assert rle(counted) == plan.micro_batches_per_step_rle()
    assert counted == [size for _, _, size in expected if size]

    # counters match the plan at every frame
    done = 0
    for frame in shown:
        if frame.is_step:
            done += 1
            assert frame.step == done
        assert frame.updates == done
    # and every frame the animation shows carries the learning rate of the update it closes or feeds
    rates = plan.learning_rates()
    for frame in build_timeline(plan).frames:
        if frame.is_step:
            assert frame.lr == pytest.approx(rates[frame.step - 1], rel=1e-12, abs=0)
        elif frame.updates < plan.optimizer_steps:
            assert frame.lr == pytest.approx(rates[frame.updates], rel=1e-12, abs=0)
        else:
            assert frame.lr is None
    assert done == plan.optimizer_steps

    # samples, epochs, repeats
    lanes, batch = plan.setup.world_size, plan.setup.per_device_train_batch_size
    seen = 0
    for frame in shown:
        seen += lanes * frame.samples
        assert frame.samples_seen == seen
        assert frame.samples == (plan.epoch.last_batch if frame.micro_batch == plan.micro_batches_per_epoch else batch)
        if frame.epoch_end and plan.fetched_per_epoch == plan.micro_batches_per_epoch:
            assert frame.samples_seen == (frame.epoch + 1) * plan.epoch.samples_used
            assert sum(frame.duplicated) == plan.epoch.duplicated
            assert frame.dropped == plan.epoch.dropped
        if frame.epoch_end:
            assert frame.skipped == plan.micro_batches_per_epoch - plan.fetched_per_epoch
    ends = [f.updates for f in shown if f.epoch_end]
    assert ends == plan.epoch_end_steps(len(ends))
    if shown and plan.optimizer_steps:
        last_step = [f for f in shown if f.is_step][-1]
        assert last_step.epoch + last_step.micro_batch / plan.micro_batches_per_epoch == pytest.approx(plan.final_epoch)

    # the window is made of exactly these frames, bounded, with honest gaps
    timeline = build_timeline(plan)
    assert timeline.total_frames == len(shown) and timeline.total_steps == plan.optimizer_steps
    assert all(dataclasses.replace(f, lr=None) == shown[f.index] for f in timeline.frames)  # shown: no LR
    assert len(timeline.frames) <= max(WHOLE_RUN, 3 * CHAPTER)
    assert timeline.whole_run == (len(shown) <= WHOLE_RUN)
    for position, gap in enumerate(timeline.gaps):
        if gap is None:
            assert position == 0 or timeline.frames[position].index == timeline.frames[position - 1].index + 1
        else:
            before, after = timeline.frames[position - 1], timeline.frames[position]
            assert gap.micro_batches == after.index - before.index - 1 > 0
            skipped = shown[before.index + 1:after.index]
            assert gap.updates == sum(f.is_step for f in skipped)
    if shown:
        assert timeline.frames[0].index == 0 and timeline.frames[-1].index == len(shown) - 1
        if plan.optimizer_steps:
            assert any(f.is_step for f in timeline.frames)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values=SETUPS)
def test_step_frames_are_where_the_geometry_puts_each_update(values):
    """`_Run.step_frame(k)` (read from `geometry.positions`) is the frame that closes update k, and the epoch end
    frames are the last round of each epoch, replayed frame by frame."""
    plan = plan_or_none(values)
    if plan is None:
        return
    walk = _Run(plan)
    shown = [walk.frame(index) for index in range(walk.total_frames)]
    assert [walk.step_frame(k) for k in range(1, walk.total_steps + 1)] == [f.index for f in shown if f.is_step]
    ends = [f.index for f in shown if f.epoch_end]
    assert [walk.epoch_end_frame(e) for e in range(len(ends))] == ends
    assert walk.epoch_end_frame(plan.epochs_run) is None


def test_course_setup_window():
    plan = plan_of(**COURSE)
    timeline = build_timeline(plan)
    assert (timeline.total_frames, timeline.total_steps, len(timeline.frames)) == (1200, 150, 49)
    first = timeline.frames[:8]
    assert [f.fill for f in first] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert [f.step for f in first] == [0] * 7 + [1]
    assert first[-1].bucket_samples == 32 and first[-1].samples_seen == 32
    assert first[-1].lr == pytest.approx(5e-5)
    epoch_end = timeline.target("epoch_end")
    last = timeline.target("last_update")
    # a skip lands on the moment itself: the first epoch's last micro-batch (update 50), the last update (150)
    assert (timeline.frames[epoch_end].index, timeline.frames[epoch_end].step) == (399, 50)
    assert timeline.frames[epoch_end].epoch_end
    assert (timeline.frames[last].index, timeline.frames[last].step) == (1199, 150) and last == len(timeline.frames) - 1
    # the window's part before each leads up to it: 360 micro-batches (45 updates) skipped before the epoch's end
    lead_up = max(position for position in range(epoch_end) if timeline.gaps[position])
    assert timeline.frames[lead_up].index == 384 and timeline.gaps[lead_up].micro_batches == 360
    assert timeline.gaps[lead_up].updates == 45
    assert timeline.frames[max(p for p in range(last) if timeline.gaps[p])].index == 1192
    end_of_epoch = next(f for f in timeline.frames if f.epoch_end)
    assert (end_of_epoch.index, end_of_epoch.step, end_of_epoch.samples_seen) == (399, 50, 1600)
    assert timeline.next_step_position(0) == 7
    assert "1,200" in totals(timeline).en and "49" in totals(timeline).en and "1,200" in totals(timeline).zh


def test_partial_group_steps_alone_in_current_versions():
    timeline = build_timeline(plan_of(num_samples=100, per_device_train_batch_size=4, gradient_accumulation_steps=8,
                                      num_train_epochs=3, trainer="hf-5"))
    end = next(f for f in timeline.frames if f.epoch_end)
    assert (end.micro_batch, end.fill, end.step) == (25, 1, 4)
    text = narration(end, timeline)
    assert "short group" in text.en and "1 of 8" in text.en
    assert "不满的组" in text.zh


def test_old_release_straddles_into_the_next_epoch():
    timeline = build_timeline(plan_of(num_samples=100, per_device_train_batch_size=4, gradient_accumulation_steps=8,
                                      num_train_epochs=3, trainer="hf-4.46"))
    end = next(f for f in timeline.frames if f.epoch_end)
    assert (end.micro_batch, end.fill, end.step) == (25, 1, 0)
    assert "wait for the next epoch" in narration(end, timeline).en
    straddle = next(f for f in timeline.frames if f.is_step and f.carried)
    assert (straddle.epoch, straddle.micro_batch, straddle.fill, straddle.carried) == (1, 7, 8, 1)
    assert "mixes two epochs" in narration(straddle, timeline).en and "跨了两轮" in narration(straddle, timeline).zh
    assert timeline.frames[-1].step == 9 and "max_steps" in narration(timeline.frames[-1], timeline).en


def test_skipped_micro_batches_and_an_oversized_step_in_4_51():
    timeline = build_timeline(plan_of(num_samples=90, per_device_train_batch_size=3, gradient_accumulation_steps=8,
                                      num_train_epochs=3, trainer="hf-4.51"))
    end = next(f for f in timeline.frames if f.epoch_end)
    assert (end.micro_batch, end.skipped) == (26, 4)
    assert "never fetched" in narration(end, timeline).en
    big = next(f for f in timeline.frames if f.is_step and f.fill > 8)
    assert (big.fill, big.carried) == (10, 2)
    assert "more than" in narration(big, timeline).en
    over = next(f for f in timeline.frames if not f.is_step and f.fill >= 8)
    assert "already holds" in narration(over, timeline).en


def test_leftover_micro_batches_are_never_stepped():
    timeline = build_timeline(plan_of(num_samples=9, per_device_train_batch_size=3, gradient_accumulation_steps=8,
                                      num_train_epochs=3, trainer="hf-4.51"))
    assert timeline.total_steps == 0 and [f.fill for f in timeline.frames] == [1, 2, 3]
    assert timeline.frames[-1].lr is None and timeline.frames[-1].run_end
    assert "never used" in narration(timeline.frames[-1], timeline).en


@pytest.mark.parametrize("trainer, lanes", [("hf-5", (0, 0, 0, 2)), ("lightning-2", (0, 0, 1, 1))])
def test_repeated_samples_fill_the_last_lanes(trainer, lanes):
    timeline = build_timeline(plan_of(num_samples=10, per_device_train_batch_size=3, gradient_accumulation_steps=2,
                                      world_size=4, num_train_epochs=1, trainer=trainer))
    assert timeline.frames[-1].duplicated == lanes
    assert "repeats" in narration(timeline.frames[-1], timeline).en


def test_dropped_samples_are_marked_at_the_epoch_end():
    timeline = build_timeline(plan_of(num_samples=10, per_device_train_batch_size=3, gradient_accumulation_steps=2,
                                      world_size=2, num_train_epochs=2, dataloader_drop_last=True))
    assert [f.dropped for f in timeline.frames] == [4, 4]
    assert "dataloader_drop_last" in narration(timeline.frames[0], timeline).en


def test_a_billion_samples_stay_a_bounded_window():
    plan = plan_of(num_samples=10**9, per_device_train_batch_size=8, gradient_accumulation_steps=1024,
                   world_size=64, num_train_epochs=50, trainer="hf-4.46")
    timeline = build_timeline(plan)
    assert timeline.total_steps == plan.optimizer_steps
    assert len(timeline.frames) <= 3 * CHAPTER and not timeline.whole_run
    last = timeline.frames[-1]
    assert last.run_end and last.updates == plan.optimizer_steps
    assert any(f.is_step for f in timeline.frames)
    assert timeline.target("epoch_end") is not None and timeline.target("last_update") is not None


def test_the_timeline_is_a_pure_function_of_the_plan():
    plan = plan_of(**COURSE)
    assert build_timeline(plan) == build_timeline(make_plan(setup_from_mapping(COURSE)[0]))
    build_timeline.cache_clear()
    again = build_timeline(plan)
    assert again.frames == build_timeline(plan_of(**COURSE)).frames


def test_empty_dataloader_has_no_frames():
    timeline = build_timeline(plan_of(num_samples=3, per_device_train_batch_size=4, dataloader_drop_last=True,
                                      max_steps=5))
    assert timeline.frames == () and timeline.total_frames == 0


def test_narration_is_complete_in_both_languages():
    for values in (COURSE, {**COURSE, "num_samples": 1001, "world_size": 3, "trainer": "hf-4.46"}):
        timeline = build_timeline(plan_of(**values))
        for frame in timeline.frames:
            text = narration(frame, timeline)
            assert text.en and text.zh and text.zh == zh_typography(text.zh)
            if frame.lr is not None and frame.is_step:
                assert fmt_lr(frame.lr) in text.en


def test_locale_files_have_the_same_keys_and_full_width_chinese():
    zh = yaml.safe_load((LOCALES / "zh" / "animation.yaml").read_text(encoding="utf-8"))
    en = yaml.safe_load((LOCALES / "en" / "animation.yaml").read_text(encoding="utf-8"))
    assert set(zh) == set(en)
    assert all(key.startswith("anim.") or key in ("page.animation.title", "page.animation.intro") for key in zh)
    for key, value in zh.items():
        assert value and en[key], key
        assert zh_typography(value) == value, key
        english = en[key].values() if isinstance(en[key], dict) else [en[key]]  # plural forms: one, other
        for form in english:
            assert set(re.findall(r"{(\w+)}", value)) == set(re.findall(r"{(\w+)}", form)), (key, form)
