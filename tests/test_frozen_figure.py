"""Cached figures hand Streamlit a spec made once (steplab_ui/widgets/frozen_figure.py), and it is the spec plotly would
have made."""

from __future__ import annotations

import json

import plotly.graph_objects as go
import plotly.io as pio
from plotly.basedatatypes import BaseFigure

from steplab.trainer.plan import make_plan
from steplab.trainer.setup import setup_from_mapping
from steplab_ui.views import playground as view
from steplab_ui.widgets import charts
from steplab_ui.widgets.frozen_figure import FrozenFigure, frozen

COURSE = {"num_samples": 1600, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 8,
          "num_train_epochs": 3, "warmup_steps": 10}
SPEC = {"data": [{"type": "scatter", "x": [1, 2, 3], "y": [3, 1, 2], "name": "loss"}],
        "layout": {"height": 200, "shapes": [{"type": "line", "x0": 2, "x1": 2, "y0": 0, "y1": 1}]}}


def test_the_spec_is_plotlys_own_and_made_on_the_first_draw_only(monkeypatch) -> None:
    made = []
    plain = BaseFigure.to_dict
    monkeypatch.setattr(BaseFigure, "to_dict", lambda self: made.append(1) or plain(self))
    figure = frozen(SPEC)
    first = figure.to_dict()
    assert figure.to_dict() is first and figure.to_dict() is first
    assert len(made) == 1
    assert first == go.Figure(SPEC).to_dict()  # plotly's validated figure: the same traces, layout and template


def test_the_cached_builders_return_frozen_figures_that_validate() -> None:
    plan = make_plan(setup_from_mapping(COURSE)[0])
    for figure in (charts.timeline(plan, "en"), view.bucket_figure(plan, 37, "zh", False),
                   view.timeline_figure(plan, 37, "en", True), view.schedule_figure(plan, 37, "en", False)):
        assert isinstance(figure, FrozenFigure)
        validated = go.Figure(figure.to_dict())  # plotly's full validation of what Streamlit is given
        assert json.loads(pio.to_json(validated)) == json.loads(pio.to_json(figure.to_dict()))


def test_the_playgrounds_strip_leaves_the_calculators_as_it_was() -> None:
    """The playground builds its strip on the calculator's cached figure: the shared spec keeps its height."""
    plan = make_plan(setup_from_mapping({**COURSE, "num_samples": 1700})[0])
    before = json.loads(pio.to_json(charts.timeline(plan, "en", False).to_dict()))
    assert view.timeline_figure(plan, 5, "en", False).to_dict()["layout"]["height"] == view.STRIP_HEIGHT
    assert json.loads(pio.to_json(charts.timeline(plan, "en", False).to_dict())) == before
