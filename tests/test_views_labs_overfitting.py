"""Lab C's view (`steplab_ui/views/labs/overfitting.py`): the loss figure with the shared setup's checkpoints and stop,
its sentence, the epochs table and the checkpoint verdict, built from a real lab run without a Streamlit run."""

from __future__ import annotations

import pytest

from steplab.i18n import catalogue, fmt_float, t
from steplab.labs import overfitting, readings
from steplab.trainer.plan import make_plan
from steplab.trainer.setup import setup_from_mapping
from steplab_ui.views.labs import overfitting as view


@pytest.fixture(scope="module")
def lab_results():
    """Lab C run once with its few epochs, straight from the engine."""
    return {"c": overfitting.run(4, 0)}


def _trace(figure, name: str):
    return next(trace for trace in figure.data if trace.name == name)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_loss_figure_draws_the_run_its_lowest_point_and_the_setups_checkpoints(lab_results, lang):
    result = lab_results["c"]
    strings = catalogue(lang)
    plan = make_plan(setup_from_mapping({"num_samples": 1600, "per_device_train_batch_size": 4,
                                         "gradient_accumulation_steps": 8, "num_train_epochs": 3,
                                         "save_strategy": "epoch"})[0])
    checkpoints, stop = view.setup_on_run(plan, result)
    assert [c.step for c in checkpoints] == [12, 24, 36] and stop == (3.0, 36)
    assert view.setup_on_run(None, result) == ([], None)
    figure = view.loss_figure(result, checkpoints, checkpoints[0], stop, lang)
    assert list(_trace(figure, strings["labs.c.series_train"]).y) == list(result.train_loss)
    assert list(_trace(figure, strings["labs.c.series_val"]).y) == list(result.val_loss)
    summary = readings.overfit_summary(result)
    best = _trace(figure, strings["labs.c.series_best"])
    assert (list(best.x), list(best.y)) == ([summary.best_step], [summary.best_val])
    saved = _trace(figure, strings["labs.c.series_checkpoint"])
    assert list(saved.y) == [result.val_loss[step - 1] for step in (12, 24, 36)]
    assert len(figure.layout.shapes) == result.epochs - 1 + 1  # the boundaries between epochs, and the stop
    assert figure.layout.annotations[0].text == t(lang, "labs.c.stop", epoch=fmt_float(3.0, 2))
    sentence = view.loss_sentence(result, lang)
    assert fmt_float(summary.best_val, 3) in sentence and fmt_float(summary.last_val, 3) in sentence
    table = view.epochs_table(result, lang)
    assert list(table.iloc[:, 1]) == result.epoch_ends
    verdict = view.checkpoint_verdict(result, checkpoints, readings.best_checkpoint(result, checkpoints), lang)
    assert verdict.kind == "success"
