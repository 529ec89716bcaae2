"""A server's start-up: import what a first visitor would otherwise wait for, before the first request.

`serve.py` hands `lifespan` to `st.App`, so `streamlit run serve.py` imports torch (the labs), pandas, plotly and
every StepLab view once, before it answers its health check; then the heap is frozen (`heap.freeze_once`).
It only imports: no lab is computed, no page is run."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import steplab.labs
import steplab_ui
from steplab_ui.shell import heap

PACKAGES = (steplab_ui, steplab.labs)


def import_everything() -> list[str]:
    """Import every module of the views and the labs, in subpackages too (`steplab_ui.views.labs`; torch comes with the
    labs); their names, in order."""
    names = [module.name for package in PACKAGES
             for module in pkgutil.walk_packages(package.__path__, package.__name__ + ".")]
    for name in names:
        importlib.import_module(name)
    return names


@asynccontextmanager
async def lifespan(_app: Any) -> AsyncIterator[None]:
    """`st.App`'s start-up hook: everything imported and the heap frozen before the server takes a request."""
    import_everything()
    heap.freeze_once()
    yield
