"""The floors of benchmarks/bench_pages.py: the empty page draws no figure, and with `?figure=1` exactly one."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

FLOOR = Path(__file__).resolve().parents[1] / "benchmarks" / "empty_page.py"


@pytest.mark.parametrize(("query", "figures"), [({}, 0), ({"figure": "1"}, 1)])
def test_floor_page(query, figures):
    at = AppTest.from_file(str(FLOOR))
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception and at.title[0].value == "Empty page"
    assert len(at.get("plotly_chart")) == figures
