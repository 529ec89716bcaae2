"""The one way a page draws a figure (`steplab_ui/shell/layout.py` `chart`): one plotly config, Streamlit's chart theme,
the text alternative, and no page or view that calls `st.plotly_chart` itself."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from steplab_ui.shell import layout

ROOT = Path(__file__).resolve().parents[1]


def _plotly_chart_calls(path: Path) -> list[tuple[int, str]]:
    """(line, enclosing function) of every `….plotly_chart(…)` call in a file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for function in [tree, *(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef))]:
        body = function.body if isinstance(function, ast.Module) else [function]
        for node in (inner for part in body for inner in ast.walk(part)):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "plotly_chart"):
                found.append((node.lineno, getattr(function, "name", "<module>")))
    return found


def test_no_page_or_view_calls_plotly_chart_but_layout_chart():
    calls = {}
    for path in sorted([*(ROOT / "app_pages").rglob("*.py"), *(ROOT / "steplab_ui").rglob("*.py"), ROOT / "serve.py"]):
        for line, function in _plotly_chart_calls(path):
            calls.setdefault(f"{path.relative_to(ROOT)}:{line}", set()).add(function)
    layout_calls = {place: names for place, names in calls.items() if place.startswith("steplab_ui/shell/layout.py:")}
    assert list(layout_calls.values()) == [{"<module>", "chart"}], calls  # the one call, inside `chart`
    assert calls == layout_calls, f"draw figures with steplab_ui.shell.layout.chart: {sorted(set(calls) - set(layout_calls))}"


def _draw_twice() -> None:
    import streamlit as st

    from steplab_ui.shell import layout
    from steplab_ui.widgets.frozen_figure import frozen

    if "figure" not in st.session_state:  # a cached builder's figure: drawn on every rerun, never changed
        st.session_state["figure"] = frozen({"data": [{"type": "bar", "x": ["a", "b"], "y": [1, 2]}],
                                             "layout": {"height": 200}})
    layout.chart(st.session_state["figure"], "demo_chart", "Two bars: a is 1, b is 2.")
    layout.chart(st.session_state["figure"], "demo_named", "The same bars.", file_name="bars")


def test_chart_draws_with_the_one_config_the_theme_and_the_alt_text():
    at = AppTest.from_function(_draw_twice, default_timeout=30).run()
    assert not at.exception
    first, named = at.get("plotly_chart")
    assert first.proto.alt == "Two bars: a is 1, b is 2." and named.proto.alt == "The same bars."
    assert first.proto.theme == named.proto.theme == "streamlit"
    config = json.loads(first.proto.config)
    assert {key: config[key] for key in layout.CHART_CONFIG} == layout.CHART_CONFIG
    assert config["toImageButtonOptions"] == {"filename": "steplab-demo_chart", "scale": layout.PNG_SCALE}
    assert json.loads(named.proto.config)["toImageButtonOptions"]["filename"] == "steplab-bars"
    assert "displayModeBar" not in config and config["displaylogo"] is False  # the mode bar on hover, no logo
    spec = json.loads(first.proto.spec)
    assert [trace["y"] for trace in spec["data"]] == [[1, 2]] and spec["layout"]["height"] == 200


def test_a_frozen_figure_is_drawn_from_the_spec_it_made_once():
    at = AppTest.from_function(_draw_twice, default_timeout=30).run()
    figure = at.session_state["figure"]
    spec = figure.to_dict()
    at.run()
    assert not at.exception
    assert figure.to_dict() is spec  # the figure kept its one spec across reruns and draws
    assert json.loads(at.get("plotly_chart")[0].proto.spec)["data"][0]["y"] == [1, 2]


def test_the_animations_html_export_carries_the_one_config():
    import re

    from steplab.simulation.timeline import build_timeline
    from steplab.trainer.plan import make_plan
    from steplab.trainer.setup import setup_from_mapping
    from steplab_ui.widgets.animation_html import export_html

    plan = make_plan(setup_from_mapping({"num_samples": 40, "per_device_train_batch_size": 4,
                                         "gradient_accumulation_steps": 8})[0])
    page = export_html(build_timeline(plan), "en")
    figure = json.loads(re.search(r'id="steplab-figure">(.*?)</script>', page, re.DOTALL).group(1))
    assert figure["config"] == layout.chart_config("animation")


def test_a_phone_gets_no_mode_bar_over_the_legends():
    """Issue 39: on a phone (no hover) plotly kept its mode bar drawn over the legends at the top of each figure
    (seen at 420 px on the calculator, the playground, /grpo, the labs and /run): below Streamlit's phone width the
    page's style hides it; wider screens keep it, shown on hover."""
    rule = f"@media (max-width: {layout.PHONE_WIDTH}px) {{ .stPlotlyChart .modebar-container {{ display: none !important; }} }}"
    assert rule in layout.READABILITY_CSS
