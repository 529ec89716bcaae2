"""The plan: the seed chapter's numbers, the reference's edge cases, and properties over many setups."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from steplab.trainer.events import events
from steplab.trainer.plan import make_plan
from steplab.trainer.profiles import PROFILES
from steplab.trainer.setup import setup_from_mapping


def plan(**values):
    setup, unknown = setup_from_mapping(values)
    assert unknown == []
    return make_plan(setup)


COURSE = {"num_samples": 1600, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 8, "num_train_epochs": 3}


@pytest.mark.parametrize("trainer", sorted(PROFILES))
@pytest.mark.parametrize(
    ("batch", "accumulation", "micro", "per_epoch", "total"),
    [(4, 8, 400, 50, 150), (2, 8, 800, 100, 300), (2, 16, 800, 50, 150)],
)
def test_seed_chapter_numbers(trainer, batch, accumulation, micro, per_epoch, total):
    p = plan(**{**COURSE, "per_device_train_batch_size": batch, "gradient_accumulation_steps": accumulation,
                "trainer": trainer})
    assert (p.micro_batches_per_epoch, p.num_update_steps_per_epoch, p.max_steps) == (micro, per_epoch, total)
    assert p.optimizer_steps == total


def test_seed_chapter_eval_every_50_steps():
    p = plan(**COURSE, eval_strategy="steps", eval_steps=50)
    assert events(p, "eval").steps() == [50, 100, 150]
    twice = plan(**{**COURSE, "per_device_train_batch_size": 2}, eval_strategy="steps", eval_steps=50)
    assert events(twice, "eval").steps() == [50, 100, 150, 200, 250, 300]


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        # edge case 2 and 3 of trainer-math.md §7
        ({"num_samples": 1001, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 8}, (251, 32, 96)),
        ({"num_samples": 1001, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 8, "trainer": "hf-4.51"}, (251, 31, 93)),
        ({"num_samples": 1000, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 8}, (250, 32, 96)),
        # edge case 4 and 5: two processes
        ({"num_samples": 1000, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 8, "world_size": 2}, (125, 16, 48)),
        ({"num_samples": 1001, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 8, "world_size": 2}, (126, 16, 48)),
        # edge case 7 and 21: fractional epochs in float arithmetic
        ({**COURSE, "num_train_epochs": 2.5}, (400, 50, 125)),
        ({**COURSE, "num_train_epochs": 0.33}, (400, 50, 17)),
        ({**COURSE, "num_train_epochs": 1.1}, (400, 50, 56)),
        # edge case 20: the LLaMA-Factory example, today and in 4.51
        ({"num_samples": 1090, "per_device_train_batch_size": 1, "gradient_accumulation_steps": 8}, (1090, 137, 411)),
        ({"num_samples": 1090, "per_device_train_batch_size": 1, "gradient_accumulation_steps": 8, "trainer": "hf-4.51"}, (1090, 136, 408)),
        ({"num_samples": 1090, "per_device_train_batch_size": 1, "gradient_accumulation_steps": 8, "world_size": 2}, (545, 69, 207)),
        # edge case 27: Lightning
        ({"num_samples": 1000, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 8, "world_size": 2, "trainer": "lightning-2"}, (125, 16, 48)),
        ({"num_samples": 1000, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 8, "world_size": 2, "trainer": "lightning-2", "limit_train_batches": 0.5}, (62, 8, 24)),
        ({"num_samples": 1000, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 8, "world_size": 2, "trainer": "lightning-2", "max_steps": 30}, (125, 16, 30)),
    ],
)
def test_reference_edge_cases(values, expected):
    p = plan(**{"num_train_epochs": 3, **values})
    assert (p.micro_batches_per_epoch, p.num_update_steps_per_epoch, p.max_steps) == expected


def test_edge_case_3_versions():
    values = {"num_samples": 1000, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 8, "num_train_epochs": 3}
    assert plan(**values).final_epoch == 3.0
    assert plan(**values, trainer="hf-4.51").final_epoch == 2 + 232 / 250
    assert plan(**values, trainer="hf-4.46").final_epoch == pytest.approx(2.976)


def test_edge_case_26_lightning_pads_before_batching():
    values = {"num_samples": 15, "per_device_train_batch_size": 4, "world_size": 2, "dataloader_drop_last": True}
    assert plan(**values, trainer="lightning-2").micro_batches_per_epoch == 2
    assert plan(**values).micro_batches_per_epoch == 1


def test_warmup_float_products():
    p = plan(**COURSE, max_steps=100, warmup_steps=0.07)
    assert p.warmup_steps == 8  # ceil(7.000000000000001)
    assert plan(**COURSE, warmup_steps=0.1).warmup_steps == 15
    assert plan(**COURSE, warmup_ratio=0.03, trainer="hf-4.57").warmup_steps == 5
    assert plan(**COURSE, warmup_ratio=0.1, warmup_steps=20, trainer="hf-4.57").warmup_steps == 20


def test_old_release_no_update_at_all():
    for n in (10, 20):
        p = plan(num_samples=n, per_device_train_batch_size=4, gradient_accumulation_steps=8, num_train_epochs=3,
                 trainer="hf-4.51")
        assert p.max_steps == 3 and p.optimizer_steps == 0
    assert plan(num_samples=10, per_device_train_batch_size=4, gradient_accumulation_steps=8,
                trainer="hf-4.46").optimizer_steps == 0


def test_old_release_nine_micro_batch_update():
    p = plan(num_samples=1001, per_device_train_batch_size=4, gradient_accumulation_steps=8, num_train_epochs=3,
             trainer="hf-4.51")
    sizes = [size for size, _ in p.micro_batches_per_step_rle()]
    assert max(sizes) == 9
    assert p.fetched_per_epoch == 249  # 2 of 251 micro-batches are never drawn


def naive_steps(length, fetched, ga, running, epochs, max_steps):
    """Micro-batch by micro-batch, as the Trainer loops (small cases only)."""
    sizes, count, since, last = [], 0, 0, None
    for epoch in range(epochs):
        for i in range(fetched):
            count += 1
            since += 1
            if running:
                fire = count % ga == 0 or (length <= ga and i + 1 == length)
            else:
                fire = (i + 1) % ga == 0 or i + 1 == length
            if fire:
                sizes.append(since)
                since = 0
                last = epoch + (i + 1) / length
                if len(sizes) >= max_steps:
                    return sizes, last
    return sizes, last or 0


@settings(max_examples=300, deadline=None)
@given(
    n=st.integers(1, 300), b=st.integers(1, 9), ga=st.integers(1, 12), world=st.integers(1, 3),
    epochs=st.sampled_from([0.3, 1, 1.5, 2, 3, 4.7]), max_steps=st.sampled_from([-1, -1, 1, 5, 40, 200]),
    drop=st.booleans(), trainer=st.sampled_from(sorted(PROFILES)),
)
def test_closed_form_equals_micro_batch_loop(n, b, ga, world, epochs, max_steps, drop, trainer):
    if trainer == "lightning-2":
        epochs = math.ceil(epochs)
    values = {"num_samples": n, "per_device_train_batch_size": b, "gradient_accumulation_steps": ga, "world_size": world,
              "num_train_epochs": epochs, "max_steps": max_steps, "dataloader_drop_last": drop, "trainer": trainer}
    try:
        p = plan(**values)
    except Exception as error:  # an empty dataloader is refused; nothing else may be
        # 4.46's empty dataloader: the TypeError, or accelerate's UnboundLocalError when the first update asks for
        # two or more micro-batches (tests/data/golden/hf-4.46.json)
        assert "len" in str(error) or "max_steps" in str(error) or "current_batch" in str(error)
        return
    if not p.micro_batches_per_epoch:
        assert p.optimizer_steps == 0
        return
    sizes, last = naive_steps(p.micro_batches_per_epoch, p.fetched_per_epoch, ga, p.profile.running_count,
                              p.epochs_loop, p.max_steps)
    rle = [[s, 1] for s in sizes]
    merged = []
    for size, k in rle:
        if merged and merged[-1][0] == size:
            merged[-1][1] += k
        else:
            merged.append([size, k])
    assert p.micro_batches_per_step_rle() == merged
    assert p.optimizer_steps == len(sizes)
    assert p.final_epoch == last
    # every micro-batch drawn belongs to exactly one update, except what is left unstepped at the end
    assert sum(sizes) <= p.fetched_per_epoch * p.epochs_run


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 10**9), b=st.integers(1, 1024), ga=st.integers(1, 1024), world=st.integers(1, 1024),
       epochs=st.floats(0.01, 100), trainer=st.sampled_from(["hf-5", "hf-4.57", "hf-4.51", "hf-4.46"]))
def test_huge_setups_plan_instantly(n, b, ga, world, epochs, trainer):
    values = {"num_samples": n, "per_device_train_batch_size": b, "gradient_accumulation_steps": ga,
              "world_size": world, "num_train_epochs": epochs, "trainer": trainer}
    p = plan(**values)  # without drop_last every epoch has a micro-batch: nothing here may be refused
    ends = p.epoch_end_steps()
    assert ends == sorted(ends) and ends[-1] == p.optimizer_steps
    assert p.optimizer_steps <= p.max_steps
    assert 0 <= p.final_epoch <= p.epochs_loop
    assert sum(size * count for size, count in p.micro_batches_per_step_rle()) <= p.fetched_per_epoch * p.epochs_run
