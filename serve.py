"""The served app: `streamlit run serve.py` runs `app.py` (the router) for every visitor, after importing the
heavy libraries once when the server starts (`steplab_ui/shell/warmup.py`): a fresh server's first /labs does not
wait for torch. `streamlit run app.py` works too, importing on first use instead."""

import streamlit as st

from steplab_ui.shell.warmup import lifespan

app = st.App("app.py", lifespan=lifespan)
