"""Lab A's view (`steplab_ui/views/labs/accumulation.py`): the update-ratio figure, cards, verdict, table and sentences
built from a real lab run, without a Streamlit run."""

from __future__ import annotations

import pytest

from steplab.labs import accumulation, readings
from steplab_ui.views.labs import accumulation as view


@pytest.fixture(scope="module")
def lab_results():
    """Lab A run once at the page's defaults, straight from the engine."""
    return {"a": accumulation.run(4, 8)}


def _trace(figure, name: str):
    return next(trace for trace in figure.data if trace.name == name)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_update_ratio_figure_draws_the_engines_ratios(lab_results, lang):
    result = lab_results["a"]
    figure = view.update_ratio_figure(result, lang)
    assert [trace.name for trace in figure.data] == ["SGD", "AdamW"]
    assert list(_trace(figure, "SGD").y) == [v.sgd_update_ratio for v in result.variants]
    assert list(_trace(figure, "AdamW").y) == [v.adamw_update_ratio for v in result.variants]
    axis = readings.log_axis([v.sgd_update_ratio for v in result.variants]
                             + [v.adamw_update_ratio for v in result.variants])
    assert list(figure.layout.yaxis.tickvals) == list(axis.ticks) and 1 in axis.ticks  # "the same" is a tick
    assert list(figure.layout.yaxis.range) == [axis.low, axis.high]
    sentence = view.update_ratio_sentence(result, lang)
    no_divide = result.variant("no_divide")
    assert view.ratio(no_divide.sgd_update_ratio) in sentence and view.ratio(no_divide.adamw_update_ratio) in sentence
    assert view.ratio(no_divide.sgd_update_ratio) == view.ratio(result.accumulation)  # 8.00×: GA times as far


def test_accumulation_parts_read_the_result(lab_results):
    result = lab_results["a"]
    assert "**4** × accumulation **8** = **32**" in view.accumulation_setup(result, "en")
    assert [card.value for card in view.accumulation_cards(result, "en")][0] == view.sci(
        result.variant("correct").grad_max_abs_diff)
    assert view.accumulation_verdict(result, "en").kind == "success"
    assert view.no_accumulation(result, "en") is None
    table = view.mistakes_table(result, "en")
    assert list(table.iloc[:, 1]) == ["1", "1", "1", "8"] and table.iloc[3, 2] == view.MISSING
    assert view.sci(0) == "0" and view.sci(4.2e-17) == "4.2e-17" and view.sci(0.0812) == "0.0812"
    assert view.ratio(8) == "8.00×" and view.ratio(1024) == "1,024×"
