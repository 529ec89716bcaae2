"""The calculator's parts, drawn for any plan: used by the calculator page and by lesson widgets."""

from __future__ import annotations

import streamlit as st

from steplab.i18n import fmt_float, fmt_int, t
from steplab.simulation.logblock import running_training_block
from steplab.teaching.explain import explain
from steplab.teaching.warnings import plan_warnings
from steplab.trainer.plan import Plan
from steplab_ui.shell import layout
from steplab_ui.widgets import charts


def cards(plan: Plan, lang: str, key: str = "") -> None:
    """The result cards: micro-batches, updates per epoch, total steps, effective batch, warmup, epochs run.

    `key`: tells apart several sets of cards on one page (a lesson).
    """
    values = [
        ("card.micro_batches", fmt_int(plan.micro_batches_per_epoch)),
        ("card.updates_per_epoch", fmt_int(plan.num_update_steps_per_epoch)),
        ("card.total_steps", fmt_int(plan.max_steps)),
        ("card.effective_batch", fmt_int(plan.total_train_batch_size)),
        ("card.warmup", fmt_int(plan.warmup_steps)),
        ("card.epochs_run", t(lang, "card.epochs_run_value", epoch=fmt_float(plan.final_epoch, 3))),
    ]
    # One wrapping row (see layout.CARDS_KEY), in reading order on any width: 7 elements where rows of
    # columns took 14, and every element costs a rerun about half a millisecond of server time.
    with st.container(horizontal=True, gap="small", key=layout.CARDS_KEY + key):
        for name, value in values:
            st.metric(t(lang, name), value, help=t(lang, f"{name}_help"), border=True)
    if plan.optimizer_steps != plan.max_steps:
        st.info(t(lang, "card.runs_differ", runs=fmt_int(plan.optimizer_steps), total=fmt_int(plan.max_steps),
                  count=plan.optimizer_steps),
                icon=":material/info:")


def arithmetic(plan: Plan, lang: str) -> None:
    """The worked arithmetic, one paragraph per step of the reasoning (one element: cheaper reruns)."""
    st.markdown(layout.worked_markdown(explain(plan), lang))


def warnings(plan: Plan, lang: str) -> None:
    layout.show_warnings(plan_warnings(plan), lang)


def timeline(plan: Plan, lang: str, key: str, presenter: bool = False) -> None:
    sentence = charts.timeline_sentence(plan, lang)
    layout.chart(charts.timeline(plan, lang, presenter), key, sentence)
    st.caption(sentence)


def log_block(plan: Plan, lang: str) -> None:
    st.caption(t(lang, "calc.log_hint", trainer=plan.profile.matched))
    layout.console_text(running_training_block(plan, lang))
