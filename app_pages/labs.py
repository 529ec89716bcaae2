"""Torch labs A–D: accumulation equals one big batch (and when it does not), more epochs can hurt, memory.

Reads the inputs, runs the labs (each lab view's `run_*`, cached) and draws what the lab views of
`steplab_ui.views.labs` (one per lab) build from the results; torch is imported only inside functions, never at import
time. `?lab=b` opens lab B's tab; only the open tab's lab is computed (the tabs rerun the page when another is
chosen).
"""

from __future__ import annotations

import streamlit as st

from steplab.i18n import t
from steplab_ui.shell.page import page
from steplab_ui.views.labs import accumulation as accumulation_view
from steplab_ui.views.labs import memory as memory_view
from steplab_ui.views.labs import overfitting as overfitting_view
from steplab_ui.views.labs import parts
from steplab_ui.views.labs import token_weighting as token_view

context = page("labs")
lang = context.lang
LABS = ("a", "b", "c", "d")
TAB = "labs_tab"
POWERS_OF_TWO = [1, 2, 4, 8, 16, 32]


def lab_a() -> None:
    st.markdown(t(lang, "labs.a.intro"))
    left, right = st.columns(2)
    batch = left.select_slider(t(lang, "labs.a.batch"), POWERS_OF_TWO, value=4, key="labs_a_batch",
                               help=t(lang, "labs.a.batch_help"))
    accumulation = right.select_slider(t(lang, "labs.a.accumulation"), POWERS_OF_TWO, value=8,
                                       key="labs_a_accumulation", help=t(lang, "labs.a.accumulation_help"))
    with st.spinner(t(lang, "labs.running")):
        result = accumulation_view.run_accumulation(batch, accumulation)
    st.markdown(accumulation_view.accumulation_setup(result, lang))
    parts.show_cards(accumulation_view.accumulation_cards(result, lang))
    parts.show(accumulation_view.accumulation_verdict(result, lang))
    st.subheader(t(lang, "labs.a.mistakes"))
    parts.show(accumulation_view.no_accumulation(result, lang))
    st.table(accumulation_view.mistakes_table(result, lang), hide_index=True)
    st.markdown(accumulation_view.mistake_effects(result, lang))
    parts.chart(accumulation_view.update_ratio_figure(result, lang), "labs_a_chart",
                accumulation_view.update_ratio_sentence(result, lang))
    parts.method(accumulation_view.accumulation_method(result, lang), lang)


def lab_b() -> None:
    from steplab.labs import token_weighting as lab

    st.markdown(t(lang, "labs.b.intro"))
    left, right = st.columns([3, 1], vertical_alignment="bottom")
    st.session_state.setdefault(token_view.LENGTHS_KEY, lab.EXAMPLES["unequal"])  # not `value=`: the buttons set it too
    text = left.text_input(t(lang, "labs.b.lengths"), key=token_view.LENGTHS_KEY, max_chars=400, help=t(
        lang, "labs.b.lengths_help", max_length=lab.MAX_LENGTH, max_sequences=lab.MAX_SEQUENCES))
    batch = right.selectbox(t(lang, "labs.b.batch"), [1, 2, 4], key="labs_b_batch",
                            help=t(lang, "labs.b.batch_help", ignore=lab.IGNORE))
    for column, example in zip(st.columns(2), ("unequal", "equal"), strict=True):
        column.button(t(lang, f"labs.b.example.{example}"), key=f"labs_b_example_{example}", args=(example,),
                      on_click=token_view.set_example_lengths, icon=":material/edit_note:", width="stretch")
    try:
        lengths = tuple(lab.parse_lengths(text, batch))
    except lab.LabInputError as problem:
        st.error(t(lang, "labs.b.bad_lengths", message=problem.text.get(lang)), icon=":material/error:")
        return
    with st.spinner(t(lang, "labs.running")):
        result = token_view.run_token_weighting(lengths, batch)
    st.markdown(token_view.token_setup(result, lang))
    parts.show_cards(token_view.token_cards(result, lang))
    parts.show(token_view.token_verdict(result, lang))
    parts.chart(token_view.token_weight_figure(result, lang), "labs_b_chart",
                token_view.token_weight_sentence(result, lang))
    with st.expander(t(lang, "labs.b.releases"), icon=":material/history:"):
        st.markdown(t(lang, "labs.b.releases_text"))
    parts.method(token_view.token_method(lang), lang)


def lab_c() -> None:
    from steplab.labs import overfitting as lab

    st.markdown(overfitting_view.overfit_intro(lang))
    left, right = st.columns([3, 1], vertical_alignment="bottom")
    epochs = left.slider(t(lang, "labs.c.epochs"), 1, lab.MAX_EPOCHS, overfitting_view.OVERFIT_EPOCHS,
                         key="labs_c_epochs", help=t(lang, "labs.c.epochs_help"))
    seed = right.number_input(t(lang, "labs.c.seed"), 0, 999, overfitting_view.OVERFIT_SEED, key="labs_c_seed",
                              help=t(lang, "labs.c.seed_help"))
    with st.spinner(t(lang, "labs.running")):
        result = overfitting_view.run_overfitting(epochs, int(seed))
    setup_points, stop = overfitting_view.setup_on_run(plan := context.plan(), result)
    if plan is not None:
        st.markdown(overfitting_view.setup_mapping(plan, result, setup_points, lang))
    parts.show_cards(overfitting_view.overfit_cards(result, lang))
    source = st.radio(t(lang, "labs.c.source"), ["setup", "epoch"], key="labs_c_source", horizontal=True,
                      format_func=lambda k: t(lang, f"labs.c.source.{k}"), help=t(lang, "labs.c.source_help"))
    checkpoints = setup_points if source == "setup" else lab.epoch_checkpoints(result)
    chosen = None
    if not checkpoints:
        st.info(t(lang, "labs.c.no_checkpoints"), icon=":material/info:")
    else:
        by_step = {c.step: c for c in checkpoints}
        if st.session_state.get("labs_c_checkpoint") not in by_step:
            st.session_state["labs_c_checkpoint"] = checkpoints[-1].step
        chosen = by_step[st.selectbox(
            t(lang, "labs.c.pick"), list(by_step), key="labs_c_checkpoint",
            format_func=lambda s: overfitting_view.checkpoint_label(result, by_step[s], lang))]
        parts.show(overfitting_view.checkpoint_verdict(result, checkpoints, chosen, lang))
    parts.chart(overfitting_view.loss_figure(result, checkpoints, chosen, stop, lang), "labs_c_chart",
                overfitting_view.loss_sentence(result, lang))
    with st.expander(t(lang, "labs.c.table"), icon=":material/table:"):
        st.table(overfitting_view.epochs_table(result, lang), hide_index=True)
    st.markdown(t(lang, "labs.c.lesson"))
    parts.method(overfitting_view.overfit_method(result, lang), lang)


def lab_d() -> None:
    from steplab.labs.chapter_memory import MICRO_BATCHES

    st.markdown(t(lang, "labs.d.intro"))
    st.subheader(t(lang, "labs.d.measured"))
    st.table(memory_view.chapter_runs_table(lang), hide_index=True)
    st.markdown(memory_view.chapter_time(lang))
    st.subheader(t(lang, "labs.d.model"))
    st.markdown(memory_view.memory_assumptions(lang))
    choice = st.select_slider(memory_view.micro_batch_label(lang), list(MICRO_BATCHES), value=4, key="labs_d_batch",
                              help=t(lang, "labs.d.batch_help"))
    parts.show(memory_view.micro_batch_verdict(choice, lang))
    parts.chart(memory_view.memory_model_figure(choice, lang), "labs_d_chart", memory_view.memory_model_sentence(lang))
    st.subheader(t(lang, "labs.d.cpu"))
    st.markdown(t(lang, "labs.d.cpu_method"))
    with st.spinner(t(lang, "labs.running")):
        measurement = memory_view.run_memory()
    parts.chart(memory_view.activation_figure(measurement, lang), "labs_d_cpu_chart",
                memory_view.activation_sentence(measurement, lang))
    st.markdown(memory_view.lengths_intro(lang))
    st.table(memory_view.lengths_table(measurement, lang), hide_index=True)
    st.markdown(memory_view.lengths_lesson(measurement, lang))
    parts.method(memory_view.activation_method(measurement, lang), lang)


raw_lab = st.query_params.get("lab")
if raw_lab is not None and raw_lab not in LABS:
    st.warning(t(lang, "url.ignored", key="lab", value=raw_lab[:40]), icon=":material/link_off:")
labels = [t(lang, f"labs.{key}.tab") for key in LABS]
# The open tab is the tabs' own state, set from the URL when the tabs have none in this language (a new visit, a
# deep link, a language switch: the URL names the open lab). Not through `default=`: the tabs' identity includes
# it, so a default that followed the URL made a new widget on the click after next, back on the URL's lab.
if st.session_state.get(TAB) not in labels:
    st.session_state[TAB] = labels[LABS.index(raw_lab) if raw_lab in LABS else 0]
# Only the open tab's lab runs (a tab change reruns the page): the others would cost torch time off screen.
tabs = st.tabs(labels, key=TAB, on_change="rerun")
for key, tab, lab in zip(LABS, tabs, (lab_a, lab_b, lab_c, lab_d), strict=True):
    if tab.open:
        if key == LABS[0]:  # the URL names the open lab, as `?lab=b` opens it
            st.query_params.pop("lab", None)
        else:
            st.query_params["lab"] = key
        with tab:
            lab()
