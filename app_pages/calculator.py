"""Step calculator: the shared setup's numbers, the worked arithmetic, warnings, the log block and a timeline."""

import streamlit as st

from steplab.i18n import t
from steplab_ui.shell.page import page
from steplab_ui.views import calculator as view

context = page("calculator")
lang = context.lang
plan = context.plan()

if plan is not None:
    view.cards(plan, lang)
    st.subheader(t(lang, "calc.arithmetic"))
    view.arithmetic(plan, lang)
    st.subheader(t(lang, "calc.warnings"))
    view.warnings(plan, lang)
    st.subheader(t(lang, "calc.timeline"))
    view.timeline(plan, lang, key="timeline", presenter=context.presenter)
    st.subheader(t(lang, "calc.log"))
    view.log_block(plan, lang)
