"""Torch labs A–D: accumulation equals one big batch (and when it does not), more epochs can hurt, memory.

Each lab is one function of `steplab_ui.labs_view`; torch is imported only inside them. `?lab=b` opens lab B's tab.
"""

from __future__ import annotations

import streamlit as st

from steplab.i18n import t
from steplab_ui import labs_view as view
from steplab_ui.page import page

LABS = ("a", "b", "c", "d")

# --- the page ------------------------------------------------------------------------------------------

context = page("labs")
setup, error, lang = context.setup, context.error, context.lang

raw_lab = st.query_params.get("lab")
if raw_lab is not None and raw_lab not in LABS:
    st.warning(t(lang, "url.ignored", key="lab", value=raw_lab[:40]), icon=":material/link_off:")
labels = [t(lang, f"labs.{key}.tab") for key in LABS]
tabs = st.tabs(labels, default=labels[LABS.index(raw_lab)] if raw_lab in LABS else None)
with tabs[0]:
    view.lab_a(lang)
with tabs[1]:
    view.lab_b(lang)
with tabs[2]:
    view.lab_c(lang, setup, error)
with tabs[3]:
    view.lab_d(lang)
