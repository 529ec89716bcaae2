"""Lab D's view: memory and time, the chapter's V100 runs, the stated memory model and a measurement of saved
activations on this CPU (`steplab.labs.memory`, `steplab.labs.chapter_memory`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from steplab.i18n import fmt_fixed, fmt_int, fmt_significant, t
from steplab.labs import chapter_memory as chapter
from steplab.labs import readings
from steplab_ui.shell.layout import COLOURS
from steplab_ui.views.labs.parts import Notice, framed

if TYPE_CHECKING:
    from steplab.labs.memory import ActivationMeasurement


@st.cache_data(max_entries=4, show_spinner=False)
def run_memory() -> ActivationMeasurement:
    """Lab D's CPU measurement run for real (imports the lab, and so torch), cached for every session."""
    from steplab.labs import memory as lab

    return lab.measure_activations()


def chapter_runs_table(lang: str) -> pd.DataFrame:
    """The chapter's V100 runs: sizes, peak memory and times."""
    return pd.DataFrame([{
        t(lang, "labs.d.col.batch"): r.batch_size, t(lang, "labs.d.col.accumulation"): r.accumulation,
        t(lang, "labs.d.col.effective"): r.effective_batch, t(lang, "labs.d.col.peak"): fmt_fixed(r.peak_gib, 2),
        t(lang, "labs.d.col.seconds"): fmt_int(round(r.seconds)),
        t(lang, "labs.d.col.per_step"): fmt_fixed(r.seconds_per_step, 1),
        t(lang, "labs.d.col.per_micro"): fmt_fixed(r.seconds_per_micro_batch, 2),
        t(lang, "labs.d.col.per_sample"): fmt_fixed(r.seconds_per_sample, 3),
    } for r in chapter.CHAPTER_RUNS])


def chapter_time(lang: str) -> str:
    """The two runs' times per micro-batch and per sample."""
    big, small = chapter.CHAPTER_RUNS
    return t(lang, "labs.d.time", steps=big.steps, big_batch=big.batch_size, small_batch=small.batch_size,
             micro_big=fmt_fixed(big.seconds_per_micro_batch, 2),
             micro_small=fmt_fixed(small.seconds_per_micro_batch, 2),
             sample_big=fmt_fixed(big.seconds_per_sample, 3), sample_small=fmt_fixed(small.seconds_per_sample, 3))


def memory_assumptions(lang: str) -> str:
    """The stated model, its F and A, and the fp32 training states for comparison."""
    b = chapter.memory_budget()
    return t(lang, "labs.d.assumptions", fixed=fmt_fixed(b.fixed, 2), per_sample=fmt_fixed(b.per_sample, 3),
             states=fmt_fixed(b.states, 2), weights=fmt_fixed(b.weights, 2), gradients=fmt_fixed(b.gradients, 2),
             optimizer=fmt_fixed(b.optimizer, 2), rest=fmt_fixed(b.rest, 2), billions=fmt_significant(b.billions))


def micro_batch_label(lang: str) -> str:
    """The micro-batch picker's label, with the effective batch it keeps."""
    return t(lang, "labs.d.batch", effective=chapter.chapter_effective_batch())


def micro_batch_verdict(batch_size: int, lang: str) -> Notice:
    """The measured peak of a measured micro-batch, else the model's prediction against the V100's memory."""
    accumulation = chapter.chapter_accumulation(batch_size)
    measured = chapter.measured_run(batch_size)
    if measured is not None:
        return Notice("info", t(lang, "labs.d.choice_measured", batch=batch_size, accumulation=accumulation,
                                peak=fmt_fixed(measured.peak_gib, 2)), ":material/straighten:")
    peak = chapter.predicted_peak_gib(batch_size)
    fits = chapter.fits_v100(peak)
    return Notice("info" if fits else "warning",
                  t(lang, "labs.d.choice_fits" if fits else "labs.d.choice_too_big", batch=batch_size,
                    accumulation=accumulation, peak=fmt_fixed(peak, 2), limit=chapter.V100_GIB), ":material/functions:")


def memory_model_figure(batch_size: int, lang: str) -> go.Figure:
    """The model's line, the measured runs, the learner's choice and the V100's memory."""
    sizes = list(chapter.MICRO_BATCHES)
    figure = go.Figure()
    figure.add_scatter(x=sizes, y=[chapter.predicted_peak_gib(b) for b in sizes], mode="lines+markers",
                       name=t(lang, "labs.d.series_model"),
                       line={"color": COLOURS["sample"], "dash": "dash"}, marker={"symbol": "circle-open", "size": 9})
    figure.add_scatter(x=[r.batch_size for r in chapter.CHAPTER_RUNS], y=[r.peak_gib for r in chapter.CHAPTER_RUNS],
                       mode="markers", name=t(lang, "labs.d.series_measured"),
                       marker={"color": COLOURS["micro_batch"], "size": 14})
    figure.add_scatter(x=[batch_size], y=[chapter.predicted_peak_gib(batch_size)], mode="markers",
                       name=t(lang, "labs.d.series_choice"),
                       marker={"symbol": "diamond-open", "size": 20, "color": COLOURS["accumulation"],
                               "line": {"width": 3}})
    figure.add_hline(y=chapter.V100_GIB, line_dash="dot", line_color=COLOURS["update"],
                     annotation_text=t(lang, "labs.d.limit", limit=chapter.V100_GIB), annotation_position="top left")
    figure.update_layout(xaxis={"title": t(lang, "labs.d.chart_x"), "tickvals": sizes},
                         yaxis={"title": t(lang, "labs.d.chart_y"), "rangemode": "tozero"})
    return framed(figure)


def memory_model_sentence(lang: str) -> str:
    """The memory-model figure in words (its text alternative)."""
    fixed, per_sample = chapter.chapter_line()
    points = t(lang, "labs.d.alt_join").join(
        t(lang, "labs.d.alt_item", peak=fmt_fixed(r.peak_gib, 2), batch=r.batch_size)
        for r in sorted(chapter.CHAPTER_RUNS, key=lambda r: r.batch_size))
    small, large = chapter.MICRO_BATCHES[0], chapter.first_too_big()
    return t(lang, "labs.d.chart_alt", measured=points, fixed=fmt_fixed(fixed, 2), per_sample=fmt_fixed(per_sample, 3),
             small=small, small_peak=fmt_fixed(chapter.predicted_peak_gib(small), 2), large=large,
             large_peak=fmt_fixed(chapter.predicted_peak_gib(large), 2), limit=chapter.V100_GIB)


def activation_figure(measurement: ActivationMeasurement, lang: str) -> go.Figure:
    """Saved activation memory (MiB) against micro-batch size, measured on this CPU."""
    from steplab.labs import memory as lab

    sizes = [p.batch_size for p in measurement.by_batch]
    figure = go.Figure()
    figure.add_scatter(x=sizes, y=[readings.mib(p.saved_bytes) for p in measurement.by_batch], mode="markers+lines",
                       name=t(lang, "labs.d.series_cpu", length=lab.FIXED_LENGTH),
                       line={"color": COLOURS["micro_batch"]}, marker={"size": 11})
    figure.update_layout(xaxis={"title": t(lang, "labs.d.chart_x"), "tickvals": sizes},
                         yaxis={"title": t(lang, "labs.d.cpu_chart_y"), "rangemode": "tozero"}, showlegend=True)
    return framed(figure, height=300)


def activation_sentence(measurement: ActivationMeasurement, lang: str) -> str:
    """The activation figure in words (its text alternative), with the fitted line's slope and intercept."""
    from steplab.labs import memory as lab

    intercept, slope = measurement.batch_line()
    points = t(lang, "labs.list_join").join(
        t(lang, "labs.d.cpu_alt_item", batch=p.batch_size, mib=fmt_fixed(readings.mib(p.saved_bytes), 2))
        for p in measurement.by_batch)
    return t(lang, "labs.d.cpu_alt", length=lab.FIXED_LENGTH, points=points,
             per_sample=fmt_fixed(readings.mib(slope), 2), intercept=fmt_fixed(readings.kib(intercept), 1))


def lengths_intro(lang: str) -> str:
    from steplab.labs import memory as lab

    return t(lang, "labs.d.length_intro", batch=lab.FIXED_BATCH)


def lengths_table(measurement: ActivationMeasurement, lang: str) -> pd.DataFrame:
    """Saved activation memory and bytes per token against sequence length."""
    return pd.DataFrame({
        t(lang, "labs.d.col.length"): [p.sequence_length for p in measurement.by_length],
        t(lang, "labs.d.col.saved"): [fmt_fixed(readings.mib(p.saved_bytes), 2) for p in measurement.by_length],
        t(lang, "labs.d.col.per_token"): [fmt_int(round(p.bytes_per_token)) for p in measurement.by_length],
    })


def lengths_lesson(measurement: ActivationMeasurement, lang: str) -> str:
    """The shortest and the longest sequence's cost per token."""
    first, last = measurement.by_length[0], measurement.by_length[-1]
    return t(lang, "labs.d.length_lesson", short=first.sequence_length, long=last.sequence_length,
             short_bytes=fmt_int(round(first.bytes_per_token)), long_bytes=fmt_int(round(last.bytes_per_token)))


def activation_method(measurement: ActivationMeasurement, lang: str) -> str:
    from steplab.labs import memory as lab

    return t(lang, "labs.d.method", parameters=fmt_int(measurement.parameters),
             parameter_mib=fmt_fixed(readings.mib(measurement.parameter_bytes), 2), layers=lab.LAYERS, width=lab.WIDTH,
             heads=lab.HEADS, vocab=lab.VOCAB)
