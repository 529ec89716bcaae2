"""The calculator's timeline strip (steplab_ui/widgets/charts.py): built from plain dicts without plotly's validation,
so these tests validate it and check every marker against the engine and the chapter's numbers."""

from __future__ import annotations

import plotly.graph_objects as go
import pytest

from steplab.i18n import t
from steplab.trainer.events import events
from steplab.trainer.plan import make_plan
from steplab.trainer.setup import setup_from_mapping
from steplab_ui.widgets import charts

COURSE = {"num_samples": 1600, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 8,
          "num_train_epochs": 3, "eval_strategy": "steps", "eval_steps": 50}
SCENARIOS = {
    "course": COURSE,
    "warmup and checkpoints": {**COURSE, "warmup_steps": 10, "save_steps": 40},
    "max_steps beyond the data (several GPUs)": {**COURSE, "world_size": 2, "max_steps": 250, "eval_steps": 0.25},
    "partial last step, old release": {**COURSE, "num_samples": 1090, "trainer": "hf-4.46", "warmup_ratio": 0.1},
    "epoch evaluation, no checkpoints": {**COURSE, "eval_strategy": "epoch", "save_strategy": "no"},
    "lightning": {**COURSE, "trainer": "lightning-2", "eval_strategy": "no"},
}


def plan_of(values: dict):
    return make_plan(setup_from_mapping(values)[0])


def traces(figure: go.Figure) -> dict[str, go.Scatter]:
    return {trace.name: trace for trace in figure.data}


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_every_marker_is_the_engines(name: str, lang: str) -> None:
    plan = plan_of(SCENARIOS[name])
    figure = go.Figure(charts.timeline(plan, lang).to_dict())  # plotly's full validation
    drawn = traces(figure)
    assert list(drawn[t(lang, "timeline.epoch_end")].x) == plan.epoch_end_steps(charts.MAX_MARKERS)
    assert list(drawn[t(lang, "timeline.eval")].x) == events(plan, "eval").steps(limit=charts.MAX_MARKERS)
    assert list(drawn[t(lang, "timeline.save")].x) == events(plan, "save").steps(limit=charts.MAX_MARKERS)
    assert list(drawn[t(lang, "timeline.stop")].x) == [plan.optimizer_steps]
    horizon = max(plan.max_steps, plan.optimizer_steps, 1)
    assert figure.layout.xaxis.range[1] > horizon
    warmup = [shape for shape in figure.layout.shapes if shape.type == "rect"]
    assert [(shape.x0, shape.x1) for shape in warmup] == ([(0, min(plan.warmup_steps, horizon))]
                                                        if plan.warmup_steps else [])
    assert [a.text for a in figure.layout.annotations] == ([t(lang, "timeline.warmup")] if plan.warmup_steps else [])


def test_the_chapters_run_by_hand() -> None:
    """1,600 samples, batch 4, accumulation 8, 3 epochs: 50 updates an epoch, evaluation every 50 steps."""
    figure = charts.timeline(plan_of({**COURSE, "warmup_steps": 10}), "en")
    drawn = traces(figure)
    assert list(drawn["epoch end"].x) == [50, 100, 150]
    assert list(drawn["evaluation"].x) == [50, 100, 150]
    assert list(drawn["end of training"].x) == [150]
    assert figure.layout.shapes[0].x1 == 10


def test_the_figure_is_shared_and_cached_per_plan_and_language() -> None:
    plan = plan_of(COURSE)
    assert charts.timeline(plan, "en") is charts.timeline(plan_of(COURSE), "en")
    assert charts.timeline(plan, "zh") is not charts.timeline(plan, "en")
