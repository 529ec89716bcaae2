"""Once per server process: the objects alive after start-up (`warmup`, under `serve.py`) or after the first run
(Streamlit, plotly, numpy and StepLab as imported) are set aside from the garbage collector, so its full
collections stop walking them again and again.

`runner.postScriptGC = false` (.streamlit/config.toml) stopped a full collection after every run; Python's
own collector still runs, and under `benchmarks/load.py` (60 sessions, 540 runs) its collections took about
0.85 s of the server's CPU before and 0.45 s after this. Frozen objects are still freed by reference counting;
only a cycle among them would stay (the first run's own garbage, once)."""

from __future__ import annotations

import gc

_done = False


def freeze_once() -> bool:
    """`gc.freeze()` the first time it is called in this process; True when it froze."""
    global _done
    if _done:
        return False
    _done = True
    gc.collect()  # garbage goes first, so none of it is frozen
    gc.freeze()
    return True
