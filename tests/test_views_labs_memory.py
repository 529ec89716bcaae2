"""Lab D's view (`steplab_ui/views/labs/memory.py`): the memory model's figure and verdicts from the chapter's runs, and
the CPU measurement's figure and table, without a Streamlit run."""

from __future__ import annotations

import pytest

from steplab.i18n import catalogue
from steplab.labs import chapter_memory, memory
from steplab_ui.views.labs import memory as view


@pytest.fixture(scope="module")
def lab_results():
    """Lab D's CPU measurement run once, straight from the engine."""
    return {"d": memory.measure_activations()}


def _trace(figure, name: str):
    return next(trace for trace in figure.data if trace.name == name)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_memory_model_figure_draws_the_stated_line_and_the_choice(lang):
    strings = catalogue(lang)
    figure = view.memory_model_figure(8, lang)
    model = _trace(figure, strings["labs.d.series_model"])
    assert list(model.x) == list(chapter_memory.MICRO_BATCHES)
    assert list(model.y) == [memory.predicted_peak_gib(b) for b in chapter_memory.MICRO_BATCHES]
    measured = _trace(figure, strings["labs.d.series_measured"])
    assert sorted(measured.y) == sorted(r.peak_gib for r in memory.CHAPTER_RUNS)
    choice = _trace(figure, strings["labs.d.series_choice"])
    assert (list(choice.x), list(choice.y)) == ([8], [memory.predicted_peak_gib(8)])
    assert figure.layout.shapes[0].y0 == memory.V100_GIB
    sentence = view.memory_model_sentence(lang)
    fixed, per_sample = memory.chapter_line()
    large = chapter_memory.first_too_big()
    assert f"{fixed:.2f}" in sentence and f"{per_sample:.3f}" in sentence
    assert f"{memory.predicted_peak_gib(large):.2f}" in sentence


def test_micro_batch_verdicts_say_measured_fits_or_too_big():
    measured, fits, too_big = (view.micro_batch_verdict(b, "en") for b in (4, 1, 8))
    assert measured.kind == "info" and "27.92 GiB" in measured.text and "accumulation 8" in measured.text
    assert fits.kind == "info" and "accumulation 32" in fits.text and "not measured" in fits.text
    assert too_big.kind == "warning" and "accumulation 4" in too_big.text
    assert "32" in view.micro_batch_label("en")
    assert list(view.chapter_runs_table("en")["Effective batch"]) == [32, 32]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_activation_figure_draws_the_cpu_measurement(lab_results, lang):
    measurement = lab_results["d"]
    (trace,) = view.activation_figure(measurement, lang).data
    assert list(trace.x) == [p.batch_size for p in measurement.by_batch]
    assert list(trace.y) == [p.saved_bytes / 2**20 for p in measurement.by_batch]
    intercept, slope = measurement.batch_line()
    sentence = view.activation_sentence(measurement, lang)
    assert f"{slope / 2**20:.2f}" in sentence and f"{intercept / 2**10:.1f}" in sentence
    assert f"{measurement.by_batch[-1].batch_size} → {measurement.by_batch[-1].saved_bytes / 2**20:.2f} MiB" in sentence
    assert list(view.lengths_table(measurement, lang).iloc[:, 0]) == [p.sequence_length for p in measurement.by_length]
