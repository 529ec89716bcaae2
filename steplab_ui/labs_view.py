"""The torch labs' parts, one function per lab: its inputs, its cached run, its figures and its sentences.

torch is imported only inside the cached run functions (never at import time); every lab's result is cached
with `st.cache_data`, keyed by the lab's inputs. The numbers come from `steplab.labs`.
"""

from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from steplab.i18n import fmt_float, fmt_int, fmt_lr, t
from steplab.labs import TOLERANCE  # a constant: steplab.labs itself never imports torch
from steplab_ui import layout
from steplab_ui.layout import COLOURS

CHART_CONFIG = {"displaylogo": False}
POWERS_OF_TWO = [1, 2, 4, 8, 16, 32]
TOKEN_LAB_SEED = 0  # lab B runs with this seed (the method text says which)


# --- cached lab runs (torch is imported here only) ----------------------------------------------------

@st.cache_data(max_entries=256, show_spinner=False)
def run_accumulation(batch_size: int, accumulation: int):
    from steplab.labs import accumulation as lab

    return lab.run(batch_size, accumulation)


@st.cache_data(max_entries=256, show_spinner=False)
def run_token_weighting(lengths: tuple[int, ...], batch_size: int):
    from steplab.labs import token_weighting as lab

    return lab.run(lengths, batch_size, seed=TOKEN_LAB_SEED)


@st.cache_data(max_entries=256, show_spinner=False)
def run_overfitting(epochs: int, seed: int):
    from steplab.labs import overfitting as lab

    return lab.run(epochs, seed)


@st.cache_data(max_entries=4, show_spinner=False)
def run_memory():
    from steplab.labs import memory as lab

    return lab.measure_activations()


def sci(value: float) -> str:
    """Small numbers in scientific notation (4.2e-17), others with three significant digits (0.08)."""
    if value == 0:
        return "0"
    return f"{value:.1e}" if abs(value) < 1e-3 else f"{value:.3g}"


def ratio(value: float) -> str:
    return f"{value:.2f}×" if value < 100 else f"{value:,.0f}×"


def chart(figure: go.Figure, key: str, sentence: str, height: int = 340, legend_below: bool = False) -> None:
    """A figure that follows the theme, with its text alternative as `alt` and as a visible caption.

    A long legend goes below the plot, so that on a phone it does not squeeze the plot from above.
    """
    legend = ({"orientation": "h", "y": -0.2, "yanchor": "top", "x": 0} if legend_below
              else {"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0})
    figure.update_layout(height=height, margin={"l": 10, "r": 10, "t": 30 if legend_below else 40, "b": 40},
                         legend=legend)
    st.plotly_chart(figure, key=key, alt=sentence, config=CHART_CONFIG, theme="streamlit")
    st.caption(sentence)


# --- lab A ---------------------------------------------------------------------------------------------

def lab_a(lang: str) -> None:
    st.markdown(t(lang, "labs.a.intro"))
    left, right = st.columns(2)
    batch = left.select_slider(t(lang, "labs.a.batch"), POWERS_OF_TWO, value=4, key="labs_a_batch",
                               help=t(lang, "labs.a.batch_help"))
    accumulation = right.select_slider(t(lang, "labs.a.accumulation"), POWERS_OF_TWO, value=8,
                                       key="labs_a_accumulation", help=t(lang, "labs.a.accumulation_help"))
    with st.spinner(t(lang, "labs.running")):
        result = run_accumulation(batch, accumulation)
    correct = result.variant("correct")
    st.markdown(t(lang, "labs.a.setup", batch=batch, accumulation=accumulation,
                  samples=fmt_int(result.samples_per_update), parameters=fmt_int(result.parameters)))
    cards = st.columns(3)
    cards[0].metric(t(lang, "labs.a.grad_diff"), sci(correct.grad_max_abs_diff), border=True,
                    help=t(lang, "labs.a.grad_diff_help", scale=fmt_float(result.grad_max_abs, 4)))
    cards[1].metric(t(lang, "labs.a.sgd_diff"), sci(correct.sgd_param_max_abs_diff), border=True,
                    help=t(lang, "labs.a.param_diff_help"))
    cards[2].metric(t(lang, "labs.a.adamw_diff"), sci(correct.adamw_param_max_abs_diff), border=True,
                    help=t(lang, "labs.a.param_diff_help"))
    same = max(correct.grad_max_abs_diff, correct.sgd_param_max_abs_diff, correct.adamw_param_max_abs_diff)
    if same <= TOLERANCE:
        st.success(t(lang, "labs.a.verdict_same", diff=sci(correct.grad_max_abs_diff),
                     scale=fmt_float(result.grad_max_abs, 4), tolerance=sci(TOLERANCE),
                     float32=sci(result.correct_float32_grad_max_abs_diff)), icon=":material/check_circle:")
    else:
        st.warning(t(lang, "labs.a.verdict_differs", diff=sci(same)), icon=":material/warning:")

    st.subheader(t(lang, "labs.a.mistakes"))
    if accumulation == 1:
        st.info(t(lang, "labs.a.no_accumulation"), icon=":material/info:")
    rows = []
    for variant in result.variants:
        rows.append({
            t(lang, "labs.a.col.variant"): t(lang, f"labs.a.variant.{variant.key}"),
            t(lang, "labs.a.col.steps"): fmt_int(variant.optimizer_steps),
            t(lang, "labs.a.col.grad_ratio"): "—" if variant.grad_norm_ratio is None else ratio(variant.grad_norm_ratio),
            t(lang, "labs.a.col.cosine"): "—" if variant.grad_cosine is None else f"{variant.grad_cosine:.3f}",
            t(lang, "labs.a.col.sgd"): ratio(variant.sgd_update_ratio),
            t(lang, "labs.a.col.adamw"): ratio(variant.adamw_update_ratio),
        })
    st.table(pd.DataFrame(rows), hide_index=True)
    no_divide, zero_each, step_each = (result.variant(k) for k in ("no_divide", "zero_each", "step_each"))
    st.markdown("\n".join([
        "- " + t(lang, "labs.a.effect.no_divide", ratio=ratio(no_divide.grad_norm_ratio), ga=accumulation,
                 sgd=ratio(no_divide.sgd_update_ratio), adamw=ratio(no_divide.adamw_update_ratio)),
        "- " + t(lang, "labs.a.effect.zero_each", batch=batch, samples=fmt_int(result.samples_per_update),
                 cosine=f"{zero_each.grad_cosine:.2f}", ratio=ratio(zero_each.grad_norm_ratio)),
        "- " + t(lang, "labs.a.effect.step_each", steps=fmt_int(step_each.optimizer_steps),
                 sgd=ratio(step_each.sgd_update_ratio), adamw=ratio(step_each.adamw_update_ratio)),
    ]))

    names = [t(lang, f"labs.a.variant_short.{v.key}") for v in result.variants]
    figure = go.Figure()
    figure.add_bar(x=names, y=[v.sgd_update_ratio for v in result.variants], name="SGD",
                   marker={"color": COLOURS["update"], "pattern": {"shape": "/"}, "opacity": 0.55})
    figure.add_bar(x=names, y=[v.adamw_update_ratio for v in result.variants], name="AdamW",
                   marker={"color": COLOURS["update"]})
    figure.add_hline(y=1, line_dash="dot", line_color=COLOURS["sample"])
    values = [r for v in result.variants for r in (v.sgd_update_ratio, v.adamw_update_ratio)]
    ticks = [x for x in (1 / 64, 1 / 16, 1 / 4, 1 / 2, 1, 2, 4, 8, 16, 32, 64) if min(values) / 2 <= x <= max(values) * 2]
    figure.update_layout(barmode="group", yaxis={
        "type": "log", "title": t(lang, "labs.a.chart_y"), "tickvals": ticks, "ticktext": [f"{x:g}" for x in ticks],
        "range": [math.log10(min(values) / 1.6), math.log10(max(values) * 1.6)]})
    sentence = t(lang, "labs.a.chart_alt", **{f"sgd_{v.key}": ratio(v.sgd_update_ratio) for v in result.variants},
                 **{f"adamw_{v.key}": ratio(v.adamw_update_ratio) for v in result.variants}, same=ratio(1.0))
    chart(figure, "labs_a_chart", sentence)
    from steplab.labs import accumulation as lab  # torch is loaded by now: the lab has just run

    with st.expander(t(lang, "labs.method"), icon=":material/science:"):
        st.markdown(t(lang, "labs.a.method", features=lab.FEATURES, hidden=lab.HIDDEN, classes=lab.CLASSES,
                      seed=result.seed, sgd_lr=fmt_lr(lab.SGD_LR), adamw_lr=fmt_lr(lab.ADAMW_LR),
                      tolerance=f"{TOLERANCE:g}"))


# --- lab B ---------------------------------------------------------------------------------------------

def _set_lengths(example: str) -> None:
    from steplab.labs.token_weighting import EXAMPLES

    st.session_state["labs_b_lengths"] = EXAMPLES[example]


def lab_b(lang: str) -> None:
    from steplab.labs import token_weighting as lab
    from steplab.labs.token_weighting import EXAMPLES, LabInputError, parse_lengths

    st.markdown(t(lang, "labs.b.intro"))
    left, right = st.columns([3, 1], vertical_alignment="bottom")
    if "labs_b_lengths" not in st.session_state:  # a default, without `value=`: the example buttons set it too
        st.session_state["labs_b_lengths"] = EXAMPLES["unequal"]
    text = left.text_input(t(lang, "labs.b.lengths"), key="labs_b_lengths",
                           max_chars=400, help=t(lang, "labs.b.lengths_help", max_length=lab.MAX_LENGTH,
                                                 max_sequences=lab.MAX_SEQUENCES))
    batch = right.selectbox(t(lang, "labs.b.batch"), [1, 2, 4], key="labs_b_batch",
                            help=t(lang, "labs.b.batch_help", ignore=lab.IGNORE))
    buttons = st.columns(2)
    for column, example in zip(buttons, ("unequal", "equal"), strict=True):
        column.button(t(lang, f"labs.b.example.{example}"), key=f"labs_b_example_{example}", on_click=_set_lengths,
                      args=(example,), icon=":material/edit_note:", width="stretch")
    try:
        lengths = tuple(parse_lengths(text, batch))
    except LabInputError as problem:
        st.error(t(lang, "labs.b.bad_lengths", message=problem.text.get(lang)), icon=":material/error:")
        return
    with st.spinner(t(lang, "labs.running")):
        result = run_token_weighting(lengths, batch)
    counts = result.tokens_per_micro_batch
    st.markdown(t(lang, "labs.b.setup", sequences=len(lengths), batch=batch, accumulation=result.accumulation,
                  counts=", ".join(fmt_int(n) for n in counts), total=fmt_int(result.total_tokens)))
    cards = st.columns(3)
    cards[0].metric(t(lang, "labs.b.old_diff"), sci(result.per_micro_batch_max_abs_diff), border=True,
                    help=t(lang, "labs.b.old_diff_help"))
    cards[1].metric(t(lang, "labs.b.relative"), f"{result.per_micro_batch_relative_diff:.1%}", border=True,
                    help=t(lang, "labs.b.relative_help"))
    cards[2].metric(t(lang, "labs.b.fixed_diff"), sci(result.group_tokens_max_abs_diff), border=True,
                    help=t(lang, "labs.b.fixed_diff_help"))
    if result.per_micro_batch_max_abs_diff > TOLERANCE:
        st.warning(t(lang, "labs.b.verdict_differs", diff=sci(result.per_micro_batch_max_abs_diff),
                     scale=fmt_float(result.grad_max_abs, 4), fixed=sci(result.group_tokens_max_abs_diff),
                     old_loss=fmt_float(result.loss_per_micro_batch, 4), loss=fmt_float(result.loss_full, 4)),
                   icon=":material/warning:")
    else:
        st.success(t(lang, "labs.b.verdict_same", diff=sci(result.per_micro_batch_max_abs_diff),
                     tolerance=sci(TOLERANCE)), icon=":material/check_circle:")

    labels = [f"{j + 1} ({fmt_int(n)})" for j, n in enumerate(counts)]
    old = [result.token_weight(j, fixed=False) * result.total_tokens for j in range(len(counts))]
    figure = go.Figure()
    figure.add_bar(x=labels, y=old, name=t(lang, "labs.b.series_old"), marker={"color": COLOURS["accumulation"]})
    figure.add_bar(x=labels, y=[1.0] * len(counts), name=t(lang, "labs.b.series_fixed"),
                   marker={"color": COLOURS["micro_batch"]})
    figure.update_layout(barmode="group", yaxis={"title": t(lang, "labs.b.chart_y"), "rangemode": "tozero"},
                         xaxis={"title": t(lang, "labs.b.chart_x"), "type": "category"})
    weights = ", ".join(t(lang, "labs.b.alt_item", j=j + 1, n=fmt_int(n), w=fmt_float(w, 2))
                        for j, (n, w) in enumerate(zip(counts, old, strict=True)))
    chart(figure, "labs_b_chart", t(lang, "labs.b.chart_alt", weights=weights))
    with st.expander(t(lang, "labs.b.releases"), icon=":material/history:"):
        st.markdown(t(lang, "labs.b.releases_text"))
    with st.expander(t(lang, "labs.method"), icon=":material/science:"):
        st.markdown(t(lang, "labs.b.method", vocab=lab.VOCAB, seed=TOKEN_LAB_SEED, ignore=lab.IGNORE,
                      tolerance=f"{TOLERANCE:g}"))


# --- lab C ---------------------------------------------------------------------------------------------

def _checkpoint_label(lang: str, result, checkpoint) -> str:
    text = t(lang, "labs.c.checkpoint_label", step=fmt_int(checkpoint.step), epoch=fmt_float(checkpoint.epoch, 2),
             val=fmt_float(result.val_loss[checkpoint.step - 1], 3))
    if checkpoint.setup_step is not None:
        text += t(lang, "labs.c.checkpoint_setup_step", step=fmt_int(checkpoint.setup_step))
    return text


def lab_c(lang: str, setup, error) -> None:
    from steplab.labs import overfitting as lab

    st.markdown(t(lang, "labs.c.intro", samples=lab.TRAIN_SAMPLES, batch=lab.BATCH_SIZE,
                  noise=f"{lab.LABEL_NOISE:.0%}", validation=lab.VALIDATION_SAMPLES))
    left, right = st.columns([3, 1], vertical_alignment="bottom")
    epochs = left.slider(t(lang, "labs.c.epochs"), 1, lab.MAX_EPOCHS, 12, key="labs_c_epochs",
                         help=t(lang, "labs.c.epochs_help"))
    seed = right.number_input(t(lang, "labs.c.seed"), 0, 999, 0, key="labs_c_seed", help=t(lang, "labs.c.seed_help"))
    with st.spinner(t(lang, "labs.running")):
        result = run_overfitting(epochs, int(seed))
    per_epoch = result.steps_per_epoch
    best = result.best_step
    means = result.epoch_train_means()

    plan = layout.plan_or_message(setup, error, lang)
    setup_points, stop = [], None
    if plan is not None:
        setup_points = lab.setup_checkpoints(plan, per_epoch, result.steps)
        stop_epoch, stop_step = lab.setup_stop_step(plan, per_epoch)
        stop = (stop_epoch, stop_step) if stop_step <= result.steps else None
        st.markdown(t(lang, "labs.c.mapping", epochs=fmt_float(plan.final_epoch, 2),
                      steps=fmt_int(plan.optimizer_steps), per_epoch=fmt_int(plan.num_update_steps_per_epoch),
                      lab_per_epoch=per_epoch, saves=fmt_int(len(setup_points))))

    cards = st.columns(3)
    cards[0].metric(t(lang, "labs.c.best"), fmt_float(result.val_loss[best - 1], 3), border=True,
                    delta=t(lang, "labs.c.best_value", step=fmt_int(best), epoch=fmt_float(result.epoch_of(best), 2)),
                    delta_color="off", delta_arrow="off", help=t(lang, "labs.c.best_help"))
    cards[1].metric(t(lang, "labs.c.val_end"), fmt_float(result.val_loss[-1], 3),
                    delta=fmt_float(result.val_loss[-1] - result.val_loss[best - 1], 3), delta_color="inverse",
                    border=True, help=t(lang, "labs.c.val_end_help"))
    cards[2].metric(t(lang, "labs.c.train_end"), fmt_float(means[-1], 3),
                    delta=fmt_float(means[-1] - means[0], 3), delta_color="inverse", border=True,
                    help=t(lang, "labs.c.train_end_help"))

    source = st.radio(t(lang, "labs.c.source"), ["setup", "epoch"], key="labs_c_source", horizontal=True,
                      format_func=lambda k: t(lang, f"labs.c.source.{k}"), help=t(lang, "labs.c.source_help"))
    checkpoints = setup_points if source == "setup" else lab.epoch_checkpoints(result)
    chosen = None
    if not checkpoints:
        st.info(t(lang, "labs.c.no_checkpoints"), icon=":material/info:")
    else:
        steps = [c.step for c in checkpoints]
        if st.session_state.get("labs_c_checkpoint") not in steps:
            st.session_state["labs_c_checkpoint"] = steps[-1]
        by_step = {c.step: c for c in checkpoints}
        picked = st.selectbox(t(lang, "labs.c.pick"), steps, key="labs_c_checkpoint",
                              format_func=lambda s: _checkpoint_label(lang, result, by_step[s]))
        chosen = by_step[picked]
        best_saved = min(checkpoints, key=lambda c: result.val_loss[c.step - 1])
        val = result.val_loss[picked - 1]
        message = t(lang, "labs.c.pick_result", step=fmt_int(picked), epoch=fmt_float(chosen.epoch, 2),
                    val=fmt_float(val, 3), train=fmt_float(means[result.epoch_number(picked) - 1], 3),
                    best_saved=fmt_int(best_saved.step), best_saved_val=fmt_float(result.val_loss[best_saved.step - 1], 3),
                    best=fmt_int(best), best_val=fmt_float(result.val_loss[best - 1], 3))
        (st.success if picked == best_saved.step else st.info)(message, icon=":material/bookmark:")

    x = list(range(1, result.steps + 1))
    figure = go.Figure()
    for end in result.epoch_ends[:-1]:
        figure.add_vline(x=end + 0.5, line_dash="dot", line_color=COLOURS["epoch"], opacity=0.7)
    figure.add_scatter(x=[None], y=[None], mode="lines", name=t(lang, "labs.c.series_epoch"),
                       line={"color": COLOURS["epoch"], "dash": "dot"})
    figure.add_scatter(x=x, y=result.train_loss, mode="lines", name=t(lang, "labs.c.series_train"),
                       line={"color": COLOURS["micro_batch"], "width": 1.5})
    figure.add_scatter(x=x, y=result.val_loss, mode="lines", name=t(lang, "labs.c.series_val"),
                       line={"color": COLOURS["eval"], "width": 2.5})
    figure.add_scatter(x=[best], y=[result.val_loss[best - 1]], mode="markers", name=t(lang, "labs.c.series_best"),
                       marker={"symbol": "star", "size": 16, "color": COLOURS["eval"],
                               "line": {"width": 1, "color": COLOURS["sample"]}})
    if checkpoints:
        figure.add_scatter(x=[c.step for c in checkpoints], y=[result.val_loss[c.step - 1] for c in checkpoints],
                           mode="markers", name=t(lang, "labs.c.series_checkpoint"),
                           marker={"symbol": "square", "size": 11, "color": COLOURS["checkpoint"]})
    if chosen is not None:
        figure.add_scatter(x=[chosen.step], y=[result.val_loss[chosen.step - 1]], mode="markers",
                           name=t(lang, "labs.c.series_chosen"), marker={"symbol": "square-open", "size": 20,
                                                                       "color": COLOURS["checkpoint"], "line": {"width": 3}})
    if stop is not None:
        figure.add_vline(x=stop[1], line_dash="dash", line_color=COLOURS["update"], annotation_text=t(
            lang, "labs.c.stop", epoch=fmt_float(stop[0], 2)), annotation_position="top right")
    figure.update_layout(xaxis={"title": t(lang, "labs.c.chart_x", per_epoch=per_epoch)},
                         yaxis={"title": t(lang, "labs.c.chart_y"), "rangemode": "tozero"})
    sentence = t(lang, "labs.c.chart_alt", steps=fmt_int(result.steps), epochs=epochs,
                 first_train=fmt_float(means[0], 3), last_train=fmt_float(means[-1], 3),
                 first_val=fmt_float(result.initial_val_loss, 3), best=fmt_int(best),
                 best_epoch=fmt_float(result.epoch_of(best), 2), best_val=fmt_float(result.val_loss[best - 1], 3),
                 last_val=fmt_float(result.val_loss[-1], 3))
    chart(figure, "labs_c_chart", sentence, height=480, legend_below=True)
    table = pd.DataFrame({
        t(lang, "labs.c.col.epoch"): list(range(1, result.epochs + 1)),
        t(lang, "labs.c.col.end_step"): result.epoch_ends,
        t(lang, "labs.c.col.train"): [f"{v:.3f}" for v in means],
        t(lang, "labs.c.col.val"): [f"{v:.3f}" for v in result.val_at_epoch_ends()],
    })
    with st.expander(t(lang, "labs.c.table"), icon=":material/table:"):
        st.table(table, hide_index=True)
    st.markdown(t(lang, "labs.c.lesson"))
    with st.expander(t(lang, "labs.method"), icon=":material/science:"):
        st.markdown(t(lang, "labs.c.method", parameters=fmt_int(result.parameters), samples=lab.TRAIN_SAMPLES,
                      batch=lab.BATCH_SIZE, lr=lab.LEARNING_RATE, noise=f"{lab.LABEL_NOISE:.0%}",
                      validation=lab.VALIDATION_SAMPLES, features=lab.FEATURES, hidden=lab.HIDDEN,
                      classes=lab.CLASSES))


# --- lab D ---------------------------------------------------------------------------------------------

def lab_d(lang: str) -> None:
    from steplab.labs import memory as lab

    st.markdown(t(lang, "labs.d.intro"))
    st.subheader(t(lang, "labs.d.measured"))
    rows = [{
        t(lang, "labs.d.col.batch"): r.batch_size, t(lang, "labs.d.col.accumulation"): r.accumulation,
        t(lang, "labs.d.col.effective"): r.effective_batch, t(lang, "labs.d.col.peak"): f"{r.peak_gib:.2f}",
        t(lang, "labs.d.col.seconds"): fmt_int(round(r.seconds)), t(lang, "labs.d.col.per_step"): f"{r.seconds_per_step:.1f}",
        t(lang, "labs.d.col.per_micro"): f"{r.seconds_per_micro_batch:.2f}",
        t(lang, "labs.d.col.per_sample"): f"{r.seconds_per_sample:.3f}",
    } for r in lab.CHAPTER_RUNS]
    st.table(pd.DataFrame(rows), hide_index=True)
    big, small = lab.CHAPTER_RUNS
    effective = big.effective_batch  # the same for both runs
    st.markdown(t(lang, "labs.d.time", steps=big.steps, big_batch=big.batch_size, small_batch=small.batch_size,
                  micro_big=f"{big.seconds_per_micro_batch:.2f}",
                  micro_small=f"{small.seconds_per_micro_batch:.2f}", sample_big=f"{big.seconds_per_sample:.3f}",
                  sample_small=f"{small.seconds_per_sample:.3f}"))

    st.subheader(t(lang, "labs.d.model"))
    fixed, per_sample = lab.chapter_line()
    states = lab.full_training_states_gib()
    st.markdown(t(lang, "labs.d.assumptions", fixed=f"{fixed:.2f}", per_sample=f"{per_sample:.3f}",
                  states=f"{sum(states.values()):.2f}", weights=f"{states['weights']:.2f}",
                  gradients=f"{states['gradients']:.2f}", optimizer=f"{states['optimizer']:.2f}",
                  rest=f"{fixed - sum(states.values()):.2f}", billions=f"{lab.QWEN3_PARAMETERS / 1e9:g}"))
    choice = st.select_slider(t(lang, "labs.d.batch", effective=effective), [1, 2, 4, 8, 16], value=4,
                              key="labs_d_batch",
                              help=t(lang, "labs.d.batch_help"))
    peak = lab.predicted_peak_gib(choice)
    measured = {r.batch_size: r for r in lab.CHAPTER_RUNS}
    if choice in measured:
        st.info(t(lang, "labs.d.choice_measured", batch=choice, accumulation=lab.accumulation_for(choice, effective),
                  peak=f"{measured[choice].peak_gib:.2f}"), icon=":material/straighten:")
    else:
        key = "labs.d.choice_fits" if peak <= lab.V100_GIB else "labs.d.choice_too_big"
        (st.info if peak <= lab.V100_GIB else st.warning)(
            t(lang, key, batch=choice, accumulation=lab.accumulation_for(choice, effective), peak=f"{peak:.2f}", limit=lab.V100_GIB),
            icon=":material/functions:")
    sizes = [1, 2, 4, 8, 16]
    figure = go.Figure()
    figure.add_scatter(x=sizes, y=[lab.predicted_peak_gib(b) for b in sizes], mode="lines+markers",
                       name=t(lang, "labs.d.series_model"),
                       line={"color": COLOURS["sample"], "dash": "dash"}, marker={"symbol": "circle-open", "size": 9})
    figure.add_scatter(x=[r.batch_size for r in lab.CHAPTER_RUNS], y=[r.peak_gib for r in lab.CHAPTER_RUNS],
                       mode="markers", name=t(lang, "labs.d.series_measured"),
                       marker={"color": COLOURS["micro_batch"], "size": 14})
    figure.add_scatter(x=[choice], y=[peak], mode="markers", name=t(lang, "labs.d.series_choice"),
                       marker={"symbol": "diamond-open", "size": 20, "color": COLOURS["accumulation"], "line": {"width": 3}})
    figure.add_hline(y=lab.V100_GIB, line_dash="dot", line_color=COLOURS["update"],
                     annotation_text=t(lang, "labs.d.limit", limit=lab.V100_GIB), annotation_position="top left")
    figure.update_layout(xaxis={"title": t(lang, "labs.d.chart_x"), "tickvals": sizes},
                         yaxis={"title": "GiB", "rangemode": "tozero"})
    points = t(lang, "labs.d.alt_join").join(t(lang, "labs.d.alt_item", peak=f"{r.peak_gib:.2f}", batch=r.batch_size)
                                              for r in sorted(lab.CHAPTER_RUNS, key=lambda r: r.batch_size))
    large = next((b for b in sizes if lab.predicted_peak_gib(b) > lab.V100_GIB), sizes[-1])  # the first too big
    chart(figure, "labs_d_chart", t(lang, "labs.d.chart_alt", measured=points, fixed=f"{fixed:.2f}", per_sample=f"{per_sample:.3f}",
                                    small=sizes[0], small_peak=f"{lab.predicted_peak_gib(sizes[0]):.2f}", large=large,
                                    large_peak=f"{lab.predicted_peak_gib(large):.2f}", limit=lab.V100_GIB))

    st.subheader(t(lang, "labs.d.cpu"))
    st.markdown(t(lang, "labs.d.cpu_method"))
    with st.spinner(t(lang, "labs.running")):
        measurement = run_memory()
    intercept, slope = measurement.batch_line()
    figure = go.Figure()
    figure.add_scatter(x=[p.batch_size for p in measurement.by_batch],
                       y=[p.saved_bytes / 2**20 for p in measurement.by_batch], mode="markers+lines",
                       name=t(lang, "labs.d.series_cpu", length=lab.FIXED_LENGTH),
                       line={"color": COLOURS["micro_batch"]}, marker={"size": 11})
    figure.update_layout(xaxis={"title": t(lang, "labs.d.chart_x"),
                                "tickvals": [p.batch_size for p in measurement.by_batch]},
                         yaxis={"title": "MiB", "rangemode": "tozero"}, showlegend=True)
    points = ", ".join(f"{p.batch_size} → {p.saved_bytes / 2**20:.2f} MiB" for p in measurement.by_batch)
    chart(figure, "labs_d_cpu_chart", t(lang, "labs.d.cpu_alt", length=lab.FIXED_LENGTH, points=points,
                                        per_sample=f"{slope / 2**20:.2f}", intercept=f"{intercept / 2**10:.1f}"), height=300)
    lengths = pd.DataFrame({
        t(lang, "labs.d.col.length"): [p.sequence_length for p in measurement.by_length],
        t(lang, "labs.d.col.saved"): [f"{p.saved_bytes / 2**20:.2f}" for p in measurement.by_length],
        t(lang, "labs.d.col.per_token"): [fmt_int(round(p.bytes_per_token)) for p in measurement.by_length],
    })
    st.markdown(t(lang, "labs.d.length_intro", batch=lab.FIXED_BATCH))
    st.table(lengths, hide_index=True)
    first, last = measurement.by_length[0], measurement.by_length[-1]
    st.markdown(t(lang, "labs.d.length_lesson", short=first.sequence_length, long=last.sequence_length,
                  short_bytes=fmt_int(round(first.bytes_per_token)), long_bytes=fmt_int(round(last.bytes_per_token))))
    with st.expander(t(lang, "labs.method"), icon=":material/science:"):
        st.markdown(t(lang, "labs.d.method", parameters=fmt_int(measurement.parameters),
                      parameter_mib=f"{measurement.parameter_bytes / 2**20:.2f}", layers=lab.LAYERS, width=lab.WIDTH,
                      heads=lab.HEADS, vocab=lab.VOCAB))
