"""Step calculator: the shared setup's numbers, the worked arithmetic, warnings, the log block and a timeline."""

import streamlit as st

from steplab.i18n import t
from steplab_ui import calculator_view as view
from steplab_ui import layout, state

setup, error = state.shared_setup()
lang = state.language()
layout.header(lang, "calculator")
state.show_url_notices(lang)
plan = layout.plan_or_message(setup, error, lang)

if plan is not None:
    view.cards(plan, lang)
    st.subheader(t(lang, "calc.arithmetic"))
    view.arithmetic(plan, lang)
    st.subheader(t(lang, "calc.warnings"))
    view.warnings(plan, lang)
    st.subheader(t(lang, "calc.timeline"))
    view.timeline(plan, lang, key="timeline")
    st.subheader(t(lang, "calc.log"))
    view.log_block(plan, lang)
