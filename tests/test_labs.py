"""The torch labs (issue 7): the numbers each lab shows, asserted."""

from __future__ import annotations

import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest
import torch

from steplab.labs import TOLERANCE, chapter_memory, readings
from steplab.labs import accumulation as lab_a
from steplab.labs import memory as lab_d
from steplab.labs import overfitting as lab_c
from steplab.labs import token_weighting as lab_b
from steplab.labs.torchkit import SGD, AdamW, seeded
from steplab.trainer.plan import make_plan
from steplab.trainer.setup import setup_from_mapping

ROOT = Path(__file__).resolve().parents[1]
COURSE = {"num_samples": 1600, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 8,
          "num_train_epochs": 3, "eval_strategy": "steps", "eval_steps": 50}


# The labs are deterministic, so each setting runs once per test session.
run_a, run_c, measure_d = cache(lab_a.run), cache(lab_c.run), cache(lab_d.measure_activations)


def course_plan(**changes):
    return make_plan(setup_from_mapping({**COURSE, **changes})[0])


# --- shared pieces -------------------------------------------------------------------------------------

def test_importing_the_engine_does_not_import_torch():
    code = ("import sys, steplab, steplab.labs, steplab.trainer.plan, steplab.trainer.events, steplab.i18n; "
            "assert 'torch' not in sys.modules, 'torch imported'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


@pytest.mark.parametrize("name", ["sgd", "adamw"])
def test_written_out_optimizers_match_torch(name):
    def trajectory(make):
        with seeded(3) as generator:
            model = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.Tanh(), torch.nn.Linear(7, 2)).double()
            x = torch.randn(16, 5, generator=generator, dtype=torch.float64)
            optimizer = make(model.parameters())
            for step in range(6):
                optimizer.zero_grad()
                model(x[step:step + 8]).pow(2).mean().backward()
                optimizer.step()
            return torch.cat([p.detach().reshape(-1) for p in model.parameters()])

    if name == "sgd":
        ours, theirs = trajectory(lambda p: SGD(p, lr=0.1)), trajectory(lambda p: torch.optim.SGD(p, lr=0.1))
    else:
        kwargs = {"lr": 1e-2, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.01}
        ours = trajectory(lambda p: AdamW(p, **kwargs))
        theirs = trajectory(lambda p: torch.optim.AdamW(p, foreach=False, **kwargs))
    assert (ours - theirs).abs().max() <= 1e-15


def test_seeded_restores_the_callers_state():
    threads = torch.get_num_threads()
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    with seeded(0):
        assert torch.get_num_threads() == 1
        torch.rand(100)
    assert torch.get_num_threads() == threads
    assert torch.equal(torch.rand(3), expected)


# --- lab A ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("batch", "ga"), [(4, 8), (2, 16), (1, 3), (16, 4)])
def test_lab_a_accumulation_equals_the_big_batch(batch, ga):
    result = run_a(batch, ga)
    correct = result.variant("correct")
    assert correct.grad_max_abs_diff <= TOLERANCE
    assert correct.sgd_param_max_abs_diff <= TOLERANCE
    assert correct.adamw_param_max_abs_diff <= TOLERANCE
    assert correct.optimizer_steps == 1
    assert result.grad_max_abs > 1e-3  # the gradient itself is not tiny: the comparison means something
    assert result.correct_float32_grad_max_abs_diff < 1e-6  # float32: rounding too, just coarser


@pytest.mark.parametrize(("batch", "ga"), [(4, 8), (2, 16), (1, 3)])
def test_lab_a_not_dividing_gives_ga_times_the_gradient(batch, ga):
    mistake = run_a(batch, ga).variant("no_divide")
    assert mistake.grad_norm_ratio == pytest.approx(ga, rel=1e-12)
    assert mistake.grad_cosine == pytest.approx(1, abs=1e-12)
    assert mistake.sgd_update_ratio == pytest.approx(ga, rel=1e-9)
    assert mistake.adamw_update_ratio == pytest.approx(1, abs=1e-3)  # Adam divides the scale away
    assert mistake.grad_max_abs_diff > 1e6 * TOLERANCE


@pytest.mark.parametrize(("batch", "ga"), [(4, 8), (2, 16)])
def test_lab_a_zeroing_every_micro_batch_keeps_only_the_last(batch, ga):
    difference, scale = lab_a.last_micro_batch_gradient(batch, ga)
    assert difference <= TOLERANCE < scale
    mistake = run_a(batch, ga).variant("zero_each")
    assert mistake.optimizer_steps == 1
    assert mistake.grad_cosine < 0.9
    assert mistake.grad_max_abs_diff > 1e6 * TOLERANCE


@pytest.mark.parametrize(("batch", "ga"), [(4, 8), (2, 16)])
def test_lab_a_stepping_every_micro_batch(batch, ga):
    mistake = run_a(batch, ga).variant("step_each")
    assert mistake.optimizer_steps == ga
    assert mistake.grad_max_abs_diff is None
    assert mistake.sgd_param_max_abs_diff > 1e6 * TOLERANCE  # not the same weights ...
    assert mistake.sgd_update_ratio == pytest.approx(1, abs=0.1)  # ... though SGD with loss / GA stays close
    assert mistake.adamw_update_ratio > 2  # AdamW: every step moves about lr


def test_lab_a_without_accumulation_every_variant_is_the_big_batch():
    result = run_a(8, 1)
    for variant in result.variants:
        assert variant.optimizer_steps == 1
        assert variant.sgd_param_max_abs_diff <= TOLERANCE and variant.adamw_param_max_abs_diff <= TOLERANCE


def test_lab_a_is_deterministic_and_checks_its_inputs():
    assert lab_a.run(4, 8) == run_a(4, 8)
    assert run_a(4, 8, seed=1) != run_a(4, 8)
    with pytest.raises(ValueError):
        lab_a.run(0, 8)


# --- lab B ---------------------------------------------------------------------------------------------

UNEQUAL = lab_b.parse_lengths(lab_b.EXAMPLES["unequal"], 1)


@pytest.mark.parametrize("batch", [1, 2, 4])
def test_lab_b_unequal_lengths_differ_and_the_fix_restores_them(batch):
    result = lab_b.run(UNEQUAL, batch)
    assert len(set(result.tokens_per_micro_batch)) > 1
    assert result.per_micro_batch_max_abs_diff > 1e6 * TOLERANCE
    assert result.per_micro_batch_relative_diff > 0.01
    assert result.group_tokens_max_abs_diff <= TOLERANCE
    assert result.loss_per_micro_batch != pytest.approx(result.loss_full, abs=1e-6)
    assert result.total_tokens == sum(UNEQUAL)
    fixed = sum(n * result.token_weight(j, True) for j, n in enumerate(result.tokens_per_micro_batch))
    old = sum(n * result.token_weight(j, False) for j, n in enumerate(result.tokens_per_micro_batch))
    assert fixed == pytest.approx(1) and old == pytest.approx(1)  # both are averages; only the weights move


@pytest.mark.parametrize(("lengths", "batch"), [([20] * 8, 1), ([7] * 6, 2), ([10, 30, 30, 10], 2)])
def test_lab_b_equal_tokens_per_micro_batch_is_rounding_only(lengths, batch):
    """Equal label tokens per micro-batch (even from unequal sequences) weigh every token alike."""
    result = lab_b.run(lengths, batch)
    assert result.per_micro_batch_max_abs_diff <= TOLERANCE
    assert result.group_tokens_max_abs_diff <= TOLERANCE
    assert result.loss_per_micro_batch == pytest.approx(result.loss_full, abs=1e-12)


def test_lab_b_without_accumulation_nothing_to_fix():
    result = lab_b.run(UNEQUAL, len(UNEQUAL))
    assert result.accumulation == 1
    assert result.per_micro_batch_max_abs_diff <= TOLERANCE


@pytest.mark.parametrize(("text", "batch"), [("", 1), ("3, x", 1), ("0, 4", 1), ("300", 1), ("1, 2, 3", 2),
                                             (",".join(["5"] * 33), 1)])
def test_lab_b_rejects_lengths_it_cannot_use(text, batch):
    with pytest.raises(lab_b.LabInputError) as raised:
        lab_b.parse_lengths(text, batch)
    assert raised.value.text.zh and raised.value.text.en


def test_lab_b_reads_lengths_generously():
    assert lab_b.parse_lengths(" 3，40 9;16 ", 2) == [3, 40, 9, 16]


# --- lab C ---------------------------------------------------------------------------------------------

def test_lab_c_validation_turns_up_while_training_loss_keeps_falling():
    result = run_c(12)
    last_epoch_start = (result.epochs - 1) * result.steps_per_epoch + 1
    assert result.best_step < last_epoch_start
    assert result.epoch_number(result.best_step) <= 3
    means = result.epoch_train_means()
    assert all(later < earlier for earlier, later in zip(means, means[1:], strict=False))
    assert means[-1] < 0.25 * means[0]
    assert result.val_loss[-1] > result.val_loss[result.best_step - 1] + 0.5
    assert result.val_loss[result.best_step - 1] < result.initial_val_loss  # it did learn something first
    ends = result.val_at_epoch_ends()
    best_epoch = ends.index(min(ends))
    assert all(later > earlier for earlier, later in zip(ends[best_epoch:], ends[best_epoch + 1:], strict=False))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_lab_c_other_seeds_overfit_too(seed):
    result = run_c(12, seed)
    assert result.epoch_number(result.best_step) < result.epochs
    assert result.val_loss[-1] > result.val_loss[result.best_step - 1]
    assert result.epoch_train_means()[-1] < result.epoch_train_means()[0]


def test_lab_c_is_deterministic_and_fewer_epochs_are_a_prefix():
    long, short = run_c(12), lab_c.run(5)
    assert long == lab_c.run(12)
    assert short.train_loss == long.train_loss[:short.steps]
    assert short.val_loss == long.val_loss[:short.steps]
    assert long.steps == 12 * long.steps_per_epoch == 144
    assert long.epoch_ends[:3] == [12, 24, 36]


def test_lab_c_places_the_course_setups_checkpoints():
    plan = course_plan()  # saves only at the last step, 150 = epoch 3
    assert [(c.step, c.setup_step) for c in lab_c.setup_checkpoints(plan, 12, 144)] == [(36, 150)]
    assert lab_c.setup_stop_step(plan, 12) == (3.0, 36)
    by_epoch = lab_c.setup_checkpoints(course_plan(save_strategy="epoch"), 12, 144)
    assert [(c.step, c.setup_step, c.epoch) for c in by_epoch] == [(12, 50, 1.0), (24, 100, 2.0), (36, 150, 3.0)]
    every_25 = lab_c.setup_checkpoints(course_plan(save_steps=25), 12, 144)
    assert [c.step for c in every_25] == [6, 12, 18, 24, 30, 36]
    longer = lab_c.setup_checkpoints(course_plan(num_train_epochs=20, save_strategy="epoch"), 12, 144)
    assert [c.step for c in longer] == [12 * k for k in range(1, 13)]  # past the lab run: left out
    assert lab_c.setup_checkpoints(course_plan(save_strategy="no"), 12, 144) == []
    assert lab_c.setup_checkpoints(course_plan(trainer="lightning-2"), 12, 144) == []


def test_lab_c_epoch_checkpoints():
    result = run_c(4)
    assert [c.step for c in lab_c.epoch_checkpoints(result)] == [12, 24, 36, 48]


# --- lab D ---------------------------------------------------------------------------------------------

def test_lab_d_the_chapters_measurements_and_the_stated_line():
    big, small = lab_d.CHAPTER_RUNS
    assert (big.batch_size, big.accumulation, big.peak_gib, big.seconds) == (4, 8, 27.92, 301)
    assert (small.batch_size, small.accumulation, small.peak_gib, small.seconds) == (2, 16, 21.71, 560)
    fixed, per_sample = lab_d.chapter_line()
    assert per_sample == pytest.approx(3.105) and fixed == pytest.approx(15.50)
    assert lab_d.predicted_peak_gib(4) == pytest.approx(27.92) and lab_d.predicted_peak_gib(2) == pytest.approx(21.71)
    assert lab_d.predicted_peak_gib(8) > lab_d.V100_GIB > lab_d.predicted_peak_gib(1)
    assert sum(lab_d.full_training_states_gib().values()) == pytest.approx(0.6e9 * 16 / 2**30)
    assert big.seconds_per_step == pytest.approx(6.02) and small.seconds_per_micro_batch == pytest.approx(0.7)
    assert small.seconds_per_sample > big.seconds_per_sample


def test_lab_d_activation_memory_grows_linearly_with_the_micro_batch():
    measurement = measure_d()
    sizes = {p.batch_size: p.saved_bytes for p in measurement.by_batch}
    assert all(sizes[b] < sizes[2 * b] for b in (1, 2, 4, 8))
    assert sizes[8] - sizes[4] == 2 * (sizes[4] - sizes[2])  # exactly linear from 2 on
    assert sizes[16] - sizes[8] == 2 * (sizes[8] - sizes[4])
    intercept, slope = measurement.batch_line()
    for b, size in sizes.items():
        assert size == pytest.approx(intercept + slope * b, rel=0.01)
    assert abs(intercept) < 0.05 * slope  # almost all of it is per sample
    assert measurement.parameter_bytes == 4 * measurement.parameters
    assert measurement == lab_d.measure_activations()


def test_lab_d_per_token_cost_grows_with_the_sequence_length():
    per_token = [p.bytes_per_token for p in measure_d().by_length]
    assert all(later > earlier for earlier, later in zip(per_token, per_token[1:], strict=False))
    assert per_token[-1] > 1.5 * per_token[0]  # the attention scores: quadratic in the length


def test_lab_d_counts_a_saved_storage_once_and_leaves_parameters_out():
    linear = torch.nn.Linear(4, 4, bias=False)
    x = torch.randn(3, 4)
    size, count = lab_d.saved_tensor_bytes(lambda: (linear(x) + linear(x[:, :]).exp()).sum(), linear.parameters())
    # x is saved by both products (once as a view) and counted once; exp saves its 3×4 output; no weight
    assert count == 2 and size == 2 * x.numel() * 4


# --- the numbers the page derives (torch-free: steplab.labs.readings, steplab.labs.chapter_memory) ------

def test_the_derived_numbers_import_without_torch():
    code = ("import sys, steplab.labs.readings, steplab.labs.chapter_memory; "
            "assert 'torch' not in sys.modules, 'torch imported'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


@pytest.mark.parametrize(("batch", "ga"), [(1, 1), (1, 64), (64, 1), (4, 8), (3, 7)])
def test_effective_batch_counts_the_samples_of_one_update(batch, ga):
    samples_seen = [sample for _ in range(ga) for sample in range(batch)]  # GA micro-batches of B samples
    assert readings.effective_batch(batch, ga) == len(samples_seen)
    assert run_a(min(batch, 16), min(ga, 16)).samples_per_update == readings.effective_batch(min(batch, 16), min(ga, 16))


@pytest.mark.parametrize(("batch", "ga"), [(0, 8), (4, 0), (-1, 2)])
def test_effective_batch_refuses_empty_batches(batch, ga):
    with pytest.raises(ValueError):
        readings.effective_batch(batch, ga)


@pytest.mark.parametrize("batch", [1, 2, 4, 8, 16, 32])
def test_accumulation_for_keeps_the_effective_batch(batch):
    accumulation = readings.accumulation_for(batch, 32)
    assert accumulation * batch == 32  # micro-batches of B, GA of them: 32 samples again
    assert readings.effective_batch(batch, accumulation) == 32


def test_accumulation_for_edge_values():
    assert readings.accumulation_for(32, 32) == 1  # the whole batch at once: no accumulation
    assert readings.accumulation_for(1, 32) == 32  # one sample per pass
    assert readings.accumulation_for(1, 1) == 1
    for batch, effective in [(3, 32), (64, 32), (0, 32), (4, 0), (-2, 32)]:
        with pytest.raises(ValueError):
            readings.accumulation_for(batch, effective)


def test_lab_d_derived_numbers_follow_the_chapters_runs():
    big, small = lab_d.CHAPTER_RUNS
    assert big.effective_batch == small.effective_batch == chapter_memory.chapter_effective_batch() == 32
    assert chapter_memory.chapter_accumulation(4) == big.accumulation and chapter_memory.chapter_accumulation(2) == 16
    assert chapter_memory.chapter_accumulation(16) == 2
    assert chapter_memory.measured_run(2) is small and chapter_memory.measured_run(8) is None
    assert chapter_memory.fits_v100(lab_d.V100_GIB) and not chapter_memory.fits_v100(lab_d.V100_GIB + 0.01)
    too_big = chapter_memory.first_too_big()
    assert too_big == 8  # 15.50 + 3.105 × 8 ≈ 40.3 GiB, while 4 is the measured 27.92
    assert all(lab_d.predicted_peak_gib(b) <= lab_d.V100_GIB for b in chapter_memory.MICRO_BATCHES if b < too_big)
    assert chapter_memory.first_too_big((1, 2)) == 2  # none too big: the largest
    budget = chapter_memory.memory_budget()
    assert (budget.fixed, budget.per_sample) == lab_d.chapter_line()
    assert budget.states == pytest.approx(sum(lab_d.full_training_states_gib().values()))
    assert budget.rest == pytest.approx(budget.fixed - budget.states) and budget.billions == pytest.approx(0.6)
    with pytest.raises(ValueError):
        chapter_memory.chapter_effective_batch([big, lab_d.V100Run(4, 4, 20.0, 100.0)])


def test_lab_a_derived_numbers():
    result = run_a(4, 8)
    correct, mistake = result.variant("correct"), result.variant("step_each")
    assert readings.worst_difference(correct) == max(
        correct.grad_max_abs_diff, correct.sgd_param_max_abs_diff, correct.adamw_param_max_abs_diff)
    assert readings.is_rounding(readings.worst_difference(correct))
    assert readings.worst_difference(mistake) == max(mistake.sgd_param_max_abs_diff, mistake.adamw_param_max_abs_diff)
    assert readings.is_rounding(TOLERANCE) and not readings.is_rounding(2 * TOLERANCE)
    axis = readings.log_axis([0.3, 8.0])
    assert axis.ticks == (1 / 4, 1 / 2, 1, 2, 4, 8, 16)
    assert 10**axis.low == pytest.approx(0.3 / 1.6) and 10**axis.high == pytest.approx(8 * 1.6)


def test_lab_b_token_weights_against_their_fair_share():
    result = lab_b.run(UNEQUAL, 2)
    old, fixed = readings.token_weights(result, fixed=False), readings.token_weights(result, fixed=True)
    n, ga = result.tokens_per_micro_batch, result.accumulation
    assert old == pytest.approx([sum(n) / (ga * n_j) for n_j in n])  # N / (GA × n_j)
    assert fixed == pytest.approx([1.0] * ga)
    assert sum(w * n_j for w, n_j in zip(old, n, strict=True)) == pytest.approx(sum(n))  # still an average


def test_lab_c_derived_numbers():
    result = run_c(12)
    summary = readings.overfit_summary(result)
    means = result.epoch_train_means()
    assert summary.best_step == result.best_step and summary.best_val == min(result.val_loss)
    assert summary.best_epoch == result.best_step / result.steps_per_epoch
    assert summary.val_rise == result.val_loss[-1] - min(result.val_loss) > 0
    assert summary.train_change == means[-1] - means[0] < 0
    assert readings.train_mean_at(result, 13) == means[1] and readings.train_mean_at(result, 12) == means[0]
    checkpoints = lab_c.epoch_checkpoints(result)
    best = readings.best_checkpoint(result, checkpoints)
    assert result.val_loss[best.step - 1] == min(result.val_at_epoch_ends())
    assert readings.stop_within((3.0, 36), result.steps) == (3.0, 36)
    assert readings.stop_within((13.0, result.steps + 12), result.steps) is None
    assert readings.stop_within((12.0, result.steps), result.steps) == (12.0, result.steps)  # the last step: in
