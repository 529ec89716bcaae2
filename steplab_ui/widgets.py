"""Live widgets a lesson embeds by reference, each drawn for the lesson's own scenario (not the sidebar's)."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from steplab.i18n import fmt_int, t
from steplab.lessons import Block, Lesson
from steplab_ui import calculator_view, compare_view, state


def _open_in_app(lesson: Lesson, scenario: str) -> None:
    state.apply_values(lesson.scenarios[scenario].to_dict())


def calculator(lesson: Lesson, block: Block, lang: str, key: str) -> None:
    scenario = block.data["scenario"]
    plan = lesson.plan(scenario)
    calculator_view.cards(plan, lang, key=f"_{key}")
    with st.expander(t(lang, "lesson.show_arithmetic")):
        calculator_view.arithmetic(plan, lang)
    st.button(t(lang, "lesson.use_setup"), key=f"{key}_use", on_click=_open_in_app, args=(lesson, scenario),
              help=t(lang, "lesson.use_setup_help"), icon=":material/input:")


def compare(lesson: Lesson, block: Block, lang: str, key: str) -> None:
    names = block.data.get("scenarios") or [block.data["scenario"]]
    compare_view.table([lesson.scenarios[name].to_dict() for name in names], lang)


def schedule(lesson: Lesson, block: Block, lang: str, key: str) -> None:
    from steplab import lr_curve
    from steplab_ui import schedule_chart

    plan = lesson.plan(block.data["scenario"])
    result = lr_curve.curve(plan)
    sentence = lr_curve.summary(result).get(lang)
    if lr_curve.drawable(plan):
        st.plotly_chart(schedule_chart.figure(result, lang), key=f"{key}_chart", alt=sentence,
                        config={"displaylogo": False})
    st.caption(sentence)


def animation(lesson: Lesson, block: Block, lang: str, key: str) -> None:
    """A compact stepper over the scenario's accumulation frames (the full player is on the animation page)."""
    from steplab.timeline import build_timeline, narration
    from steplab_ui import animation_view

    timeline = build_timeline(lesson.plan(block.data["scenario"]))
    last = len(timeline.frames) - 1
    position = st.slider(t(lang, "lesson.frame"), 0, last, 0, key=f"{key}_frame") if last > 0 else 0
    frame = timeline.frames[position]
    text = narration(frame, timeline).get(lang)
    st.plotly_chart(animation_view.frame_figure(timeline, position, lang, compact=True), key=f"{key}_figure",
                    alt=text, config=animation_view.CHART_CONFIG)
    st.markdown(text)
    columns = st.columns(3)
    for index, (name, value) in enumerate(animation_view.counters(frame, timeline, lang)):
        columns[index % 3].metric(name, value)


@st.cache_data(max_entries=64, show_spinner=False)
def _accumulation(batch_size: int, accumulation: int):
    from steplab.labs import accumulation as lab

    return lab.run(batch_size, accumulation)


@st.cache_data(max_entries=4, show_spinner=False)
def _overfitting():
    from steplab.labs import overfitting as lab

    return lab.run()


def lab(lesson: Lesson, block: Block, lang: str, key: str) -> None:
    """A lab's headline result, computed for real with torch on this machine; the full lab is one click away."""
    name = block.data["lab"]
    setup = lesson.scenarios[block.data["scenario"]]
    if name == "accumulation":
        batch = min(setup.per_device_train_batch_size, 32)
        accumulation = min(setup.gradient_accumulation_steps, 32)
        result = _accumulation(batch, accumulation)
        correct, forgot = result.variant("correct"), result.variant("no_divide")
        st.markdown(t(lang, "lesson.lab_accumulation", batch=batch, accumulation=accumulation,
                      total=fmt_int(batch * accumulation), diff=f"{correct.grad_max_abs_diff:.1e}",
                      ratio=f"{forgot.grad_norm_ratio:.2f}"))
    elif name == "overfitting":
        result = _overfitting()
        best = result.best_step
        st.line_chart({t(lang, "lesson.lab_train"): list(result.train_loss), t(lang, "lesson.lab_val"): list(result.val_loss)},
                      height=220, x_label=t(lang, "lesson.lab_step"), y_label=t(lang, "lesson.lab_loss"))
        st.markdown(t(lang, "lesson.lab_overfitting", best=fmt_int(best), epoch=result.epoch_number(best),
                      epochs=result.epochs))
    else:
        st.markdown(t(lang, f"lesson.lab_{name}"))
    target = {"accumulation": "a", "token_weighting": "b", "overfitting": "c", "memory": "d"}[name]
    st.markdown(f"[{t(lang, 'lesson.lab_open')}](/labs?lab={target}&lang={lang})")


WIDGETS: dict[str, Callable[[Lesson, Block, str, str], None]] = {
    "lab": lab,
    "animation": animation,
    "calculator": calculator,
    "compare": compare,
    "schedule": schedule,
}


def render(lesson: Lesson, block: Block, lang: str, key: str) -> None:
    WIDGETS[block.data["widget"]](lesson, block, lang, key)
    if "caption" in block.data:
        st.caption(lesson.say(block.text("caption"), lang))
