"""Learning-rate schedule: the LR every update of the shared setup uses, every scheduler, overlays, export."""

import streamlit as st

from steplab.i18n import t
from steplab.simulation import lr_curve
from steplab_ui.shell import layout
from steplab_ui.shell.page import page
from steplab_ui.views import schedule as view
from steplab_ui.widgets import schedule_chart

context = page("schedule")
lang, presenter = context.lang, context.presenter
top = st.container() if presenter else None  # presenter view: the numbers and the curve first, the controls below
if context.setup is not None:
    view.scheduler_controls(context.setup, lang)
plan = context.plan()

if plan is not None and not lr_curve.drawable(plan):
    st.subheader(t(lang, "schedule.plateau_title"))
    view.plateau(plan, lang)
    view.export(plan, lang)
elif plan is not None:
    result = lr_curve.curve(plan)
    sentence = lr_curve.summary(result).get(lang)
    chart_area = top if top is not None else st.container()
    overlays = view.overlay_controls(plan, lang)
    with chart_area:
        if presenter:
            view.headline(result, lang)
        view.stop_note(result, lang)
        layout.chart(schedule_chart.figure(result, lang, overlays, presenter=presenter), "sched_chart", sentence,
                     file_name="learning-rate")
        st.markdown(sentence)
        view.notes(result, lang)
    view.export(plan, lang)
