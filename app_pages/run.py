"""Your run, explained: a finished training's console log and files read, every number reconciled with StepLab's
plan, and why they differ."""

import streamlit as st

from steplab.i18n import t
from steplab_ui.shell.page import page
from steplab_ui.views import run as view

context = page("run")
lang = context.lang

given = view.inputs(lang)
explanation = view.explanation(given)
if explanation is None:
    st.info(t(lang, "run.empty"), icon=":material/upload_file:")
    st.stop()
view.verdict(explanation, lang)
view.table(explanation, lang)
view.why(explanation, lang)
view.pictures(explanation, lang, context.presenter)
view.findings(explanation, lang)
if explanation.readable:
    view.setup(explanation, lang)
view.files(explanation, lang)
