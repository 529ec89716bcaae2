"""Run geometry: the update-level view (`geometry`) and the micro-batch walk (`timeline`) agree on where every
update sits, how many samples have gone through and where epochs end, for every Trainer profile."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from steplab.errors import SetupError, TrainerRefusal
from steplab.simulation.timeline import _Run
from steplab.trainer import geometry, run
from steplab.trainer.plan import make_plan
from steplab.trainer.setup import setup_from_mapping

SETUPS = st.fixed_dictionaries({
    "num_samples": st.integers(1, 300), "per_device_train_batch_size": st.integers(1, 9),
    "gradient_accumulation_steps": st.integers(1, 12), "world_size": st.integers(1, 4),
    "num_train_epochs": st.sampled_from([1, 2, 3, 0.5, 2.5]), "dataloader_drop_last": st.booleans(),
    "trainer": st.sampled_from(["hf-5", "hf-4.51", "hf-4.46", "hf-4.57", "lightning"]),
})


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values=SETUPS)
def test_updates_sit_where_the_micro_batch_walk_closes_them(values):
    try:
        plan = make_plan(setup_from_mapping(values)[0])
    except (SetupError, TrainerRefusal):
        return
    walk = _Run(plan)
    closing = [walk.frame(i) for i in range(walk.total_frames)]
    steps = [f for f in closing if f.is_step]
    numbers = np.arange(1, len(steps) + 1)
    epoch, micro = geometry.positions(plan, numbers)
    assert list(zip(epoch.tolist(), micro.tolist(), strict=True)) == [(f.epoch, f.micro_batch) for f in steps]
    _, samples = geometry.epochs_and_samples(plan, numbers)
    assert samples.tolist() == [f.samples_seen for f in steps]
    walked, total = [], 0
    for epoch_steps in run.iter_epochs(list(plan.segments)):
        total += epoch_steps.steps
        walked.append(total)
    assert plan.epoch_end_steps() == walked and plan.epoch_end_steps(1) == walked[:1]
    assert geometry.samples_in_epoch(plan, plan.micro_batches_per_epoch) == plan.epoch.samples_used


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values=SETUPS, epochs=st.sampled_from([1, 3, 7.5, 40]))
def test_the_step_sizes_rle_is_the_epoch_by_epoch_expansion(values, epochs):
    """The RLE multiplies a segment's one-run copy by its repeat instead of walking every epoch: the same pairs."""
    try:
        plan = make_plan(setup_from_mapping({**values, "num_train_epochs": epochs})[0])
    except (SetupError, TrainerRefusal):
        return
    expanded: list[list[int]] = []
    for epoch in run.iter_epochs(plan.segments):
        for step_run in epoch.runs:
            if expanded and expanded[-1][0] == step_run.size:
                expanded[-1][1] += step_run.count
            else:
                expanded.append([step_run.size, step_run.count])
    assert geometry.step_sizes_rle(plan.segments) == expanded
