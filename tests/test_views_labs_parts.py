"""What every lab view draws with (`steplab_ui/views/labs/parts.py`): the labs' two number readings and the figure with
its caption, projector-sized in presenter view."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from steplab.i18n import fmt_exponent, fmt_fixed
from steplab_ui.shell.presenter import FIGURE_FONT, STATE
from steplab_ui.views.labs import parts


def test_readings_write_through_the_i18n_formatters():
    assert parts.sci(0) == "0" and parts.sci(4.2e-17) == "4.2e-17" == fmt_exponent(4.2e-17, 1)
    assert parts.sci(0.0812) == "0.0812" and parts.sci(-3e-9) == "-3.0e-09"
    assert parts.ratio(8) == "8.00×" and parts.ratio(99.994) == "99.99×" and parts.ratio(1024) == "1,024×"
    assert parts.ratio(0.5) == fmt_fixed(0.5, 2) + "×"


def _lab_chart() -> None:
    import plotly.graph_objects as go

    from steplab_ui.views.labs import parts

    figure = parts.framed(go.Figure(go.Bar(x=["a"], y=[1], name="bars")), height=300)
    parts.chart(figure, "labs_demo_chart", "One bar of height 1.")


def test_chart_draws_the_figure_with_its_caption_and_presenter_words():
    plain = AppTest.from_function(_lab_chart, default_timeout=30).run()
    (chart,) = plain.get("plotly_chart")
    assert chart.proto.alt == "One bar of height 1." and [c.value for c in plain.caption] == [chart.proto.alt]
    assert json.loads(chart.proto.spec)["layout"]["height"] == 300
    assert json.loads(chart.proto.spec)["layout"].get("font", {}).get("size") != FIGURE_FONT
    presenting = AppTest.from_function(_lab_chart, default_timeout=30)
    presenting.session_state[STATE] = True
    presenting.run()
    (chart,) = presenting.get("plotly_chart")
    assert json.loads(chart.proto.spec)["layout"]["font"]["size"] == FIGURE_FONT


def _old_sci(value: float) -> str:  # labs_view.sci before issue 31, an inline spec
    return "0" if value == 0 else (f"{value:.1e}" if abs(value) < 1e-3 else f"{value:.3g}")


def _old_ratio(value: float) -> str:  # labs_view.ratio before issue 31
    return f"{value:.2f}×" if value < 100 else f"{value:,.0f}×"


def test_readings_write_what_the_inline_specs_wrote():
    """Over many magnitudes and signs, the readings through i18n write the same text as before."""
    import random

    rng = random.Random(31)
    values = [0.0, 1e-12, 1e-3, 99.995, 100.0, 1024.0] + [
        rng.choice((-1, 1)) * rng.random() * 10 ** rng.randint(-20, 6) for _ in range(2000)]
    for value in values:
        assert parts.sci(value) == _old_sci(value), value
        if value >= 0:
            assert parts.ratio(value) == _old_ratio(value), value
