"""Lab B's view (`steplab_ui/views/labs/token_weighting.py`): the token-weight figure, its sentence and the verdict built
from a real lab run, without a Streamlit run."""

from __future__ import annotations

import pytest

from steplab.i18n import fmt_float, fmt_int
from steplab.labs import readings, token_weighting
from steplab_ui.views.labs import token_weighting as view


@pytest.fixture(scope="module")
def lab_results():
    """Lab B run once at the page's defaults (the unequal example), straight from the engine."""
    unequal = tuple(token_weighting.parse_lengths(token_weighting.EXAMPLES["unequal"], 1))
    return {"b": token_weighting.run(unequal, 1, seed=view.TOKEN_LAB_SEED)}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_token_weight_figure_draws_each_micro_batchs_weight(lab_results, lang):
    result = lab_results["b"]
    figure = view.token_weight_figure(result, lang)
    old, fixed = figure.data
    assert list(old.y) == readings.token_weights(result, fixed=False)
    assert list(fixed.y) == pytest.approx([1.0] * result.accumulation)  # the fix: every token its fair share
    assert [label.split(" ")[0] for label in old.x] == [str(j) for j in range(1, result.accumulation + 1)]
    assert all(f"({fmt_int(n)})" in label for label, n in zip(old.x, result.tokens_per_micro_batch, strict=True))
    sentence = view.token_weight_sentence(result, lang)
    shortest = result.tokens_per_micro_batch.index(min(result.tokens_per_micro_batch))
    assert fmt_float(readings.token_weights(result, fixed=False)[shortest], 2) in sentence
    assert view.token_verdict(result, lang).kind == "warning"  # unequal lengths: not the same run
