"""`steplab.simulation.grpo_run`: a GRPO run's frames, console and learning-rate curve read the engine's `GrpoPlan`.

The frames are held to the plan on generated setups (the generation rounds where `generation_micro_batches` puts
them, each update's rounds and reuse as `update_rounds` gives them); the plan itself, and the console's block, are
held to real TRL runs by `tests/test_trl_vs_steplab.py`.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from steplab.errors import TrainerRefusal
from steplab.simulation import grpo_run
from steplab.simulation.timeline import WHOLE_RUN
from steplab.trainer.setup import setup_from_mapping
from steplab.trl.grpo import plan_grpo


def grpo(**values):
    base = {"trainer": "hf-5", "trainer_class": "GRPOTrainer", "num_train_epochs": 1, "save_strategy": "no"}
    return plan_grpo(setup_from_mapping({**base, **values})[0])


FIGURE = {"num_samples": 48, "per_device_train_batch_size": 3, "world_size": 2, "gradient_accumulation_steps": 2,
          "num_generations": 2, "steps_per_generation": 4}
"""`grpo_trainer.py`'s own figure: 2 processes, B 3, G 2, GA 2, S 4."""


def test_the_trl_figure_as_frames():
    plan = grpo(**FIGURE, num_iterations=2)
    timeline = grpo_run.build_grpo_timeline(plan)
    assert timeline.whole_run
    kinds = [(f.kind, f.round, f.slice, f.iteration) for f in timeline.frames[:10]]
    assert kinds == [("generation", 0, 0, 0), *(("micro_batch", 0, s, i) for i in (0, 1) for s in range(4)),
                     ("generation", 1, 0, 0)]
    assert [f.step for f in timeline.frames[1:9]] == [0, 1, 0, 2, 0, 3, 0, 4]  # GA 2: an update every second
    assert timeline.next_generation_position(0) == 9 and timeline.next_step_position(0) == 2
    assert timeline.completions_trained(8) == 8 * 3 * 2  # 8 micro-batches of B 3 on 2 processes
    assert timeline.rounds_done(9) == 2 and timeline.frames[9].updates == 4


@st.composite
def setups(draw):
    values = {"num_samples": draw(st.integers(0, 40)), "per_device_train_batch_size": draw(st.integers(1, 4)),
              "world_size": draw(st.integers(1, 3)), "gradient_accumulation_steps": draw(st.integers(1, 4)),
              "num_generations": draw(st.integers(2, 4)), "num_iterations": draw(st.integers(1, 3)),
              "num_train_epochs": draw(st.sampled_from([0.5, 1, 1.5, 2]))}
    if draw(st.booleans()):
        values["steps_per_generation"] = draw(st.integers(1, 4))
    if draw(st.booleans()):
        values["max_steps"] = draw(st.integers(1, 30))
    return values


@settings(max_examples=150, deadline=None, derandomize=True)
@given(setups())
def test_frames_hold_the_plans_rounds_and_reuse(values):
    try:
        plan = grpo(**values)
    except TrainerRefusal:
        return
    timeline = grpo_run.build_grpo_timeline(plan)
    micro = [f for f in timeline.frames if not f.is_generation]
    if not timeline.whole_run:  # a long run is a window: what it shows plus what it skipped is the run
        assert len(micro) + sum(g.micro_batches for g in timeline.gaps if g) == timeline.total_micro_batches
        shown = sum(f.is_generation for f in timeline.frames)
        assert shown + sum(timeline.skipped_rounds) == plan.generation_rounds
        return
    assert len(micro) == plan.micro_batches_run == timeline.total_micro_batches
    generations = [f.micro.index for f in timeline.frames if f.is_generation]
    assert generations == plan.generation_micro_batches().tolist()
    for position, frame in enumerate(timeline.frames):  # a generation comes right before its round's first slice
        if frame.is_generation:
            following = timeline.frames[position + 1]
            assert (following.round, following.slice, following.iteration) == (frame.round, 0, 0)
    first, last, reused = plan.update_rounds()
    for step in range(1, plan.trainer.optimizer_steps + 1):
        group = [f for f in micro if _update_of(f) == step]
        rounds = [f.round for f in group]
        assert (min(rounds), max(rounds), any(f.reused for f in group)) == (
            first[step - 1], last[step - 1], reused[step - 1]), step
    if micro:
        setup = plan.setup
        assert timeline.completions_trained(len(timeline.frames) - 1) == (
            plan.micro_batches_run * setup.per_device_train_batch_size * setup.world_size)


def _update_of(frame) -> int:
    """The update a micro-batch's gradient goes into: the one it closes, else the next."""
    return frame.step or frame.micro.updates + 1


def test_a_long_run_is_a_window_that_counts_what_it_skips():
    plan = grpo(num_samples=4000, per_device_train_batch_size=4, gradient_accumulation_steps=2, num_generations=4,
                num_iterations=2, num_train_epochs=2)
    timeline = grpo_run.build_grpo_timeline(plan)
    assert not timeline.whole_run and len(timeline.frames) < 3 * WHOLE_RUN
    last = timeline.target("last_update")
    assert timeline.frames[last].step == plan.trainer.optimizer_steps
    epoch_end = timeline.frames[timeline.target("epoch_end")]
    assert epoch_end.round_in_epoch == plan.rounds_per_epoch - 1 and epoch_end.epoch == 0
    assert sum(f.is_generation for f in timeline.frames) + sum(timeline.skipped_rounds) == plan.generation_rounds


def test_the_console_counts_prompts_and_completions():
    plan = grpo(**FIGURE, num_iterations=2, logging_steps=4)
    log = grpo_run.run_log(plan, 1.0)
    block = [line.text for line in log.start_lines()]
    assert "  Num examples = 48" in block  # N prompts, not N·G
    assert "  Total train batch size (w. parallel, distributed & accumulation) = 12" in block  # B·GA·P completions
    assert "  Total optimization steps = 16" in block
    values = dict(log.summary_values())
    # the Trainer's samples for its speed: Num examples × epochs (prompts), over the run's time
    assert values["train_samples_per_second"] == round(48 * 1 / values["train_runtime"], 3)
    logged = [line.step for line in log.lines_between(0, plan.trainer.optimizer_steps) if line.kind == "log"]
    assert logged == [4, 8, 12, 16]


def test_the_learning_rate_curve_is_the_plans_over_completions():
    plan = grpo(**FIGURE, num_iterations=2, learning_rate=1e-3, lr_scheduler_type="cosine", warmup_steps=2)
    curve = grpo_run.learning_rate_curve(plan)
    steps = plan.trainer.optimizer_steps
    assert curve.run.steps.tolist() == list(range(1, steps + 1))
    assert np.array_equal(curve.run.rates, plan.trainer.learning_rates())
    assert curve.run.samples.tolist() == [k * plan.completions_per_update for k in range(1, steps + 1)]
