"""A figure that a cache hands out: drawn many times, never changed, so its plain spec is made once.

`st.plotly_chart` asks a figure for `to_dict()` on every rerun, and plotly answers with a deep copy of every
trace and shape (0.4 ms for the calculator's strip, for every student's every change); handed a plain dict
instead, Streamlit runs plotly's full validation on it (6 ms for the playground's bucket). A cached builder
returns a `FrozenFigure`, whose dict is made on the first draw and then reused.
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go


class FrozenFigure(go.Figure):
    """A `go.Figure` built without plotly's validation whose `to_dict()` is computed once (never change it)."""

    def to_dict(self) -> dict[str, Any]:
        spec = self.__dict__.get("_frozen_spec")
        if spec is None:
            spec = super().to_dict()
            self._frozen_spec = spec
        return spec


def frozen(spec: dict[str, Any]) -> FrozenFigure:
    """The figure of a plain plotly spec (`data`, `layout`), for a cached builder to return."""
    return FrozenFigure(spec, _validate=False)
