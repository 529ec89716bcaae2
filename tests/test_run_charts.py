"""/run's pictures: every figure of every shared and release run is a valid plotly figure (the builders skip
plotly's validation for speed), draws what the files logged, and says it in its text alternative."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest

from steplab.i18n import t
from steplab.runfiles.explain import explain_entries
from steplab.runfiles.gather import path_entries
from steplab_ui.widgets import run_charts

DATA = Path(__file__).resolve().parent / "data"
FOLDERS = sorted([*(DATA / "llamafactory-runs" / "artefacts").glob("*/"), *(DATA / "release-runs").glob("*/*/")])


def explain(folder: Path):
    problems: list = []
    config = folder / "config.yaml"
    return explain_entries(path_entries([folder], problems), problems, config=(str(config), config.read_text()),
                           base=DATA / "llamafactory-runs")


@pytest.mark.parametrize("folder", FOLDERS, ids=[f"{p.parent.name}-{p.name}" for p in FOLDERS])
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_picture_is_valid_and_draws_the_logged_rows(folder, lang):
    explanation = explain(folder)
    pictures = run_charts.pictures(explanation, lang)
    assert {p.key for p in pictures} >= {"lr", "loss", "grad"}
    rows = explanation.reconciliation.rows
    for picture in pictures:
        figure = go.Figure(picture.figure.to_dict())  # plotly's own validation
        assert picture.alt and "{" not in picture.alt
        logged = next(trace for trace in figure.data if trace.name in (t(lang, "run.chart.logged"),
                                                                       t(lang, "run.chart.loss"),
                                                                       t(lang, "run.chart.eval_loss"),
                                                                       t(lang, "run.chart.grad_norm")))
        column = {"lr": "learning_rate", "loss": "loss", "eval": "eval_loss", "grad": "grad_norm"}[picture.key]
        mask = rows.has(column)
        assert list(logged.x) == rows.steps[mask].tolist()
        np.testing.assert_array_equal(np.asarray(logged.y, dtype=float), rows.column(column)[mask])


def test_a_long_run_is_thinned_and_keeps_its_spikes():
    steps = np.arange(1, 100_001)
    keep = np.array([54_321])
    chosen = run_charts._thin(len(steps), keep)
    assert len(chosen) <= run_charts.CAP + 1 and 54_321 in chosen and chosen[-1] == len(steps) - 1
