"""Step calculator: the shared setup's numbers, the worked arithmetic, warnings, the log block and a timeline."""

import streamlit as st

from steplab.explain import explain
from steplab.i18n import fmt_float, fmt_int, t
from steplab.logblock import running_training_block
from steplab.warnings import plan_warnings
from steplab_ui import charts, layout, state

setup, error = state.shared_setup()
lang = state.language()
layout.header(lang, "calculator")
state.show_url_notices(lang)
plan = layout.plan_or_message(setup, error, lang)

if plan is not None:
    final = plan.final_epoch
    stopped = fmt_float(final, 3)
    cards = [
        ("card.micro_batches", fmt_int(plan.micro_batches_per_epoch), t(lang, "card.micro_batches_help")),
        ("card.updates_per_epoch", fmt_int(plan.num_update_steps_per_epoch), t(lang, "card.updates_per_epoch_help")),
        ("card.total_steps", fmt_int(plan.max_steps), t(lang, "card.total_steps_help")),
        ("card.effective_batch", fmt_int(plan.total_train_batch_size), t(lang, "card.effective_batch_help")),
        ("card.warmup", fmt_int(plan.warmup_steps), t(lang, "card.warmup_help")),
        ("card.epochs_run", t(lang, "card.epochs_run_value", epoch=stopped), t(lang, "card.epochs_run_help")),
    ]
    columns = st.columns(3)
    for index, (key, value, help_text) in enumerate(cards):
        columns[index % 3].metric(t(lang, key), value, help=help_text, border=True)
    if plan.optimizer_steps != plan.max_steps:
        st.info(t(lang, "card.runs_differ", runs=fmt_int(plan.optimizer_steps), total=fmt_int(plan.max_steps)),
                icon=":material/info:")

    st.subheader(t(lang, "calc.arithmetic"))
    for line in explain(plan):
        note = f" — {line.note.get(lang)}" if line.note else ""
        st.markdown(f"**{line.label.get(lang)}**: `{line.formula}`{note}")

    st.subheader(t(lang, "calc.warnings"))
    layout.show_warnings(plan_warnings(plan), lang)

    st.subheader(t(lang, "calc.timeline"))
    sentence = charts.timeline_sentence(plan, lang)
    st.plotly_chart(charts.timeline(plan, lang), key="timeline", alt=sentence, config={"displaylogo": False})
    st.caption(sentence)

    st.subheader(t(lang, "calc.log"))
    st.caption(t(lang, "calc.log_hint", trainer=plan.profile.matched))
    st.code(running_training_block(plan, lang), language="text")
