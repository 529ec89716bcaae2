"""Live widgets a lesson embeds by reference, each drawn for the lesson's own scenario (not the sidebar's)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import streamlit as st

from steplab.dataset.load import known_rows
from steplab.errors import InputError
from steplab.i18n import fmt_exponent, fmt_fixed, fmt_int, t
from steplab.labs import readings as overfitting_readings
from steplab.teaching.lessons import FUNNEL_DATASETS, Block, Lesson, yaml_val_size
from steplab.trainer.fields import DATA_FIELDS, MAX_SAMPLES
from steplab_ui.shell import layout, state
from steplab_ui.views import calculator as calculator_view
from steplab_ui.views import compare as compare_view
from steplab_ui.views.labs import accumulation as accumulation_lab
from steplab_ui.views.labs import overfitting as overfitting_lab
from steplab_ui.views.labs import parts as lab_parts

if TYPE_CHECKING:
    from steplab.teaching.rl_pipeline import RlvrSetup


def _open_in_app(lesson: Lesson, scenario: str) -> None:
    state.apply_values(lesson.scenarios[scenario].to_dict())


def calculator(lesson: Lesson, block: Block, lang: str, key: str, presenter: bool = False) -> None:
    scenario = block.data["scenario"]
    plan = lesson.plan(scenario)
    calculator_view.cards(plan, lang, key=f"_{key}")
    with st.expander(t(lang, "lesson.show_arithmetic")):
        calculator_view.arithmetic(plan, lang)
    st.button(t(lang, "lesson.use_setup"), key=f"{key}_use", on_click=_open_in_app, args=(lesson, scenario),
              help=t(lang, "lesson.use_setup_help"), icon=":material/input:")


def compare(lesson: Lesson, block: Block, lang: str, key: str, presenter: bool = False) -> None:
    names = block.data.get("scenarios") or [block.data["scenario"]]
    compare_view.table([lesson.scenarios[name].to_dict() for name in names], lang, presenter=presenter, key=f"_{key}")


def schedule(lesson: Lesson, block: Block, lang: str, key: str, presenter: bool = False) -> None:
    from steplab.simulation import lr_curve
    from steplab_ui.widgets import schedule_chart

    plan = lesson.plan(block.data["scenario"])
    result = lr_curve.curve(plan)
    sentence = lr_curve.summary(result).get(lang)
    if lr_curve.drawable(plan):
        layout.chart(schedule_chart.figure(result, lang, presenter=presenter), f"{key}_chart", sentence)
    st.caption(sentence)


def animation(lesson: Lesson, block: Block, lang: str, key: str, presenter: bool = False) -> None:
    """A compact stepper over the scenario's accumulation frames (the full player is on the animation page).

    Presenter view: the counters in one row under the slider (above the fold), the figure's words projector-sized.
    """
    from steplab.simulation.narration import narration
    from steplab.simulation.timeline import build_timeline
    from steplab_ui.widgets import animation_frames as animation_view

    timeline = build_timeline(lesson.plan(block.data["scenario"]))
    last = len(timeline.frames) - 1
    position = 0
    if last > 0:
        slot = f"{key}_frame"
        with st.container(horizontal=True, vertical_alignment="bottom"):
            st.button(t(lang, "anim.back"), key=f"{key}_back", icon=":material/skip_previous:",
                      on_click=_move_frame, args=(slot, -1, last), disabled=st.session_state.get(slot, 0) <= 0)
            st.button(t(lang, "anim.step"), key=f"{key}_next", icon=":material/skip_next:",
                      on_click=_move_frame, args=(slot, 1, last), disabled=st.session_state.get(slot, 0) >= last)
            st.button(t(lang, "anim.step_update"), key=f"{key}_update", icon=":material/fast_forward:",
                      on_click=_next_update, args=(slot, timeline), disabled=st.session_state.get(slot, 0) >= last)
        # the slider names each position by its micro-batch in the run (1, 2, …), as the frame below does
        position = st.select_slider(t(lang, "lesson.frame"), options=range(last + 1), key=slot,
                                    format_func=lambda p: fmt_int(timeline.frames[p].index + 1),
                                    **({} if slot in st.session_state else {"value": 0}))
    frame = timeline.frames[position]
    text = narration(frame, timeline).get(lang)
    counters = animation_view.counters(frame, timeline, lang)
    if presenter:
        with st.container(horizontal=True, gap="small", key=f"{key}_counters"):
            for name, value in counters:
                st.metric(name, value, border=True)
        figure = animation_view.player_figure(timeline, position, lang, presenter=True,
                                              height=animation_view.LESSON_PRESENTER_HEIGHT)
    else:
        figure = lesson_frame_figure(timeline, position, lang)
    layout.chart(figure, f"{key}_figure", text)
    st.markdown(text)
    if not presenter:
        columns = st.columns(3)
        for index, (name, value) in enumerate(counters):
            columns[index % 3].metric(name, value)


LESSON_MIN_FONT = 12
"""The smallest word in a lesson's animation (px): the figure spans the lesson's column, not half of it."""


def lesson_frame_figure(timeline, position: int, lang: str):
    """One frame of the animation at the lesson column's width, no word smaller than `LESSON_MIN_FONT`."""
    import plotly.graph_objects as go

    from steplab_ui.widgets import animation_frames as animation_view

    spec = animation_view.frame_spec(timeline, position, lang)
    for note in spec["layout"]["annotations"]:
        font = note.setdefault("font", {})
        font["size"] = max(font.get("size") or 0, LESSON_MIN_FONT)
    return go.Figure(spec, _validate=False)


def _move_frame(slot: str, by: int, last: int) -> None:
    st.session_state[slot] = min(max(st.session_state.get(slot, 0) + by, 0), last)


def _next_update(slot: str, timeline) -> None:
    """To the next frame that closes an optimizer step (or the last frame)."""
    later = timeline.next_step_position(st.session_state.get(slot, 0))
    st.session_state[slot] = len(timeline.frames) - 1 if later is None else later


def lab(lesson: Lesson, block: Block, lang: str, key: str, presenter: bool = False) -> None:
    """A lab's headline result, computed for real with torch on this machine; the full lab is one click away."""
    name = block.data["lab"]
    setup = lesson.scenarios[block.data["scenario"]]
    if name == "accumulation":
        batch = min(setup.per_device_train_batch_size, 32)
        accumulation = min(setup.gradient_accumulation_steps, 32)
        result = accumulation_lab.run_accumulation(batch, accumulation)
        correct, forgot = result.variant("correct"), result.variant("no_divide")
        st.markdown(t(lang, "lesson.lab_accumulation", batch=batch, accumulation=accumulation,
                      total=fmt_int(batch * accumulation), diff=fmt_exponent(correct.grad_max_abs_diff, 1),
                      ratio=fmt_fixed(forgot.grad_norm_ratio, 2)))
    elif name == "overfitting":
        result = overfitting_lab.run_overfitting(overfitting_lab.OVERFIT_EPOCHS, overfitting_lab.OVERFIT_SEED)
        best = result.best_step
        # the labs page's own figure (projector-sized words in presenter view), without checkpoints or a stop
        lab_parts.chart(overfitting_lab.loss_figure(result, (), None, None, lang), f"{key}_loss",
                        overfitting_lab.loss_sentence(result, lang))
        st.markdown(t(lang, "lesson.lab_overfitting",
                      position=overfitting_readings.step_position(result, best).get(lang)))
    else:
        st.markdown(t(lang, f"lesson.lab_{name}"))
    target = {"accumulation": "a", "token_weighting": "b", "overfitting": "c", "memory": "d"}[name]
    st.markdown(f"[{t(lang, 'lesson.lab_open')}](/labs?lab={target}&lang={lang})")


MAX_ROWS = MAX_SAMPLES // max(FUNNEL_DATASETS)
"""Rows a funnel's dataset may have: the datasets together stay within the sidebar's sample count."""


def _use_sample_count(count: int) -> None:
    """Only the sidebar's training samples change; the rest of the shared setup stays as the learner left it."""
    st.session_state["num_samples"] = int(count)


def funnel(lesson: Lesson, block: Block, lang: str, key: str, presenter: bool = False) -> None:
    """LLaMA-Factory's dataset funnel on the learner's numbers: rows per dataset, `max_samples`, `val_size`.

    Starts from the block's `llamafactory` scenario; a combination LLaMA-Factory refuses is said, never raised."""
    from steplab_ui.views.funnel import show_chart, show_stages

    scenario = block.data["scenario"]
    yaml_values = lesson.llamafactory[scenario]
    start = known_rows(yaml_values)
    max_samples, val_size = DATA_FIELDS["max_samples"], DATA_FIELDS["val_size"]
    with st.container(horizontal=True):
        rows = {name: st.number_input(t(lang, "lesson.funnel.rows", dataset=name), min_value=1, max_value=MAX_ROWS,
                                      value=start[name], step=1, key=f"{key}_rows_{name}",
                                      help=t(lang, "lesson.funnel.rows_help"))
                for name in start}
        # starts at the scenario's cap through the state, not `value=`: an input with a default cannot be emptied
        st.session_state.setdefault(f"{key}_max_samples", yaml_values.get("max_samples"))
        cap = st.number_input(t(lang, "lesson.funnel.max_samples"), min_value=int(max_samples.low),
                              max_value=int(max_samples.high), value=None, step=1,
                              key=f"{key}_max_samples", placeholder=t(lang, "lesson.funnel.no_cap"),
                              help=t(lang, "lesson.funnel.max_samples_help"))
        held = st.number_input(t(lang, "lesson.funnel.val_size"), min_value=float(val_size.low),
                               max_value=float(val_size.high), value=float(yaml_values.get("val_size", val_size.default)),
                               step=0.05, format="%g", key=f"{key}_val_size", help=t(lang, "lesson.funnel.val_size_help"))
    try:
        result = lesson.funnel(scenario, rows=rows, max_samples=cap, val_size=yaml_val_size(held))
    except InputError as error:  # e.g. a val_size that leaves no training row: say what to change
        st.error(t(lang, "lesson.funnel.refused", problem=error.message(lang)), icon=":material/block:")
    else:
        train = fmt_int(result.train_examples)
        show_chart(result, lang, f"{key}_chart", t(lang, "lesson.funnel.alt", train=train), presenter=presenter)
        with st.container(horizontal=True):
            st.metric(t(lang, "lesson.funnel.train"), train)
            if result.eval_examples is not None:
                st.metric(t(lang, "lesson.funnel.eval"), fmt_int(result.eval_examples))
        show_stages(result, lang)
        st.button(t(lang, "lesson.funnel.use"), key=f"{key}_use", on_click=_use_sample_count,
                  args=(result.train_examples,), help=t(lang, "lesson.funnel.use_help", field=t(lang, "field.num_samples")), icon=":material/input:")
    if "caption" in block.data:
        st.caption(lesson.say(block.text("caption"), lang))


def roll_arithmetic(setup: RlvrSetup, lang: str) -> None:
    """A ROLL RLVR run's worked arithmetic, one paragraph per line (as the calculator's)."""
    from steplab.teaching import rl_pipeline

    colon = "：" if lang == "zh" else ": "
    st.markdown("\n\n".join(f"**{text.get(lang)}**{colon}`{formula}`" for text, formula in rl_pipeline.worked(setup)))


def roll(lesson: Lesson, block: Block, lang: str, key: str, presenter: bool = False) -> None:
    """A ROLL RLVR run on the learner's numbers: the config's seven numbers in, the pipeline's counts out."""
    from steplab.teaching import rl_pipeline

    start = lesson.scenarios[block.data["scenario"]].to_dict()
    values = {}
    with st.container(horizontal=True):
        for name, (low, high) in rl_pipeline.LIMITS.items():
            values[name] = st.number_input(rl_pipeline.label(name).get(lang), min_value=low, max_value=high,
                                           value=start[name], step=1, key=f"{key}_{name}", help=f"`{name}`")
    setup = rl_pipeline.RlvrSetup(**{name: int(value) for name, value in values.items()})
    refused = rl_pipeline.refusal(setup)
    if refused is not None:  # ROLL's own assertion, word for word, and what to change
        st.error(t(lang, "rlvr.refused", error=f"`{refused.error_type}: {refused.message}`") + "\n\n"
                 + refused.fix.get(lang), icon=":material/block:")
        return
    counts = rl_pipeline.rlvr_quantities(setup)
    with st.container(horizontal=True, key=f"{key}_results"):
        for name in rl_pipeline.RESULTS:
            st.metric(rl_pipeline.label(name).get(lang), fmt_int(counts[name]), border=True)
    for note in rl_pipeline.notes(setup):
        st.info(note.get(lang), icon=":material/info:")
    with st.expander(t(lang, "lesson.show_arithmetic")):
        roll_arithmetic(setup, lang)


def grpo(lesson: Lesson, block: Block, lang: str, key: str, presenter: bool = False) -> None:
    """A TRL GRPO run on the learner's numbers: N, B, P, GA, G, μ and S in; the engine's prompts per generation
    round, rounds, micro-batches and updates out (`grpo_counting.widget_view`: plain data), or TRL's refusal."""
    from steplab.teaching import grpo_counting

    run = lesson.scenarios[block.data["scenario"]]
    plan = grpo_counting.grpo_plan(run)
    follow = st.toggle(t(lang, "lesson.grpo.s_follows_ga"), value=run.setup.steps_per_generation is None,
                       key=f"{key}_s_follows_ga", help=t(lang, "lesson.grpo.s_follows_ga_help"))
    values: dict[str, int] = {}
    with st.container(horizontal=True, key=f"{key}_inputs"):
        for name, (low, high) in grpo_counting.RANGES.items():
            start = int(grpo_counting.grpo_quantity(plan, name))
            caption = grpo_counting.label(name).get(lang)
            if name == "num_samples":  # a slider over a dataset's size cannot land on one number: typed
                values[name] = st.number_input(caption, min_value=low, max_value=high, value=start, step=1,
                                               key=f"{key}_{name}", help=f"`{name}`", width=220)
            elif name == "steps_per_generation" and follow:
                st.caption(t(lang, "lesson.grpo.s_is_ga", ga=values["gradient_accumulation_steps"]), width=220)
            else:
                values[name] = st.slider(caption, min_value=low, max_value=high, value=min(max(start, low), high),
                                         step=1, key=f"{key}_{name}", help=f"`{name}`", width=220)
    changed = {**run.values(), **values}
    changed.pop("generation_batch_size", None)  # the sliders set S; Gb follows from it (both set: TRL refuses)
    if follow:
        changed.pop("steps_per_generation", None)
    view = grpo_counting.widget_view(changed)
    if view.refusal is not None:
        st.error(view.refusal.get(lang), icon=":material/block:")
        if view.fix is not None:  # TRL's words are English: the reason and the allowed values in the reader's
            st.markdown(view.fix.get(lang))
        for note in view.notes:
            st.info(note.get(lang), icon=":material/info:")
        return
    with st.container(horizontal=True, key=f"{key}_results"):
        for label, value in view.results:
            st.metric(label.get(lang), fmt_int(value), border=True)
    for note in view.notes:
        st.info(note.get(lang), icon=":material/info:")
    with st.expander(t(lang, "lesson.show_arithmetic")):
        st.markdown(layout.worked_markdown(view.worked, lang))


WIDGETS: dict[str, Callable[[Lesson, Block, str, str, bool], None]] = {
    "lab": lab,
    "animation": animation,
    "calculator": calculator,
    "compare": compare,
    "schedule": schedule,
    "roll": roll,
    "grpo": grpo,
}


def render(lesson: Lesson, block: Block, lang: str, key: str, presenter: bool = False) -> None:
    WIDGETS[block.data["widget"]](lesson, block, lang, key, presenter)
    if "caption" in block.data:
        st.caption(lesson.say(block.text("caption"), lang))
