"""Accumulation animation: micro-batches pile up in a bucket until one optimizer.step(), frame by frame.

The state lives in Python: the window position (`_anim_position`) is shown by the `frame` slider (bound to
the URL, so a link can stop at any frame), and a fragment with `run_every` advances it while playing. Only
the fragment is redrawn per tick; the rest of the page (the comparison, the download) on full runs only.

While playing, a tick can be requested before the browser has drawn the previous one, so the slider value
it sends may be a frame the server has already passed. Such an echo of a frame drawn a moment ago is not
a scrub: it neither moves the animation back nor pauses it.
"""

import time

import streamlit as st

from steplab.errors import SetupError, TrainerRefusal
from steplab.i18n import fmt_float, fmt_int, t
from steplab.measurements import measurements
from steplab.plan import make_plan
from steplab.presets import presets
from steplab.timeline import Timeline, build_timeline, narration, totals
from steplab_ui import animation_view, layout, state
from steplab_ui.animation_html import export_html

FRAME = "frame"  # the scrubber: 1-based window position, bound to ?frame=
POSITION = "_anim_position"  # the position the server shows (the slider displays it, a scrub sets it)
ECHOES = "_anim_ticks"  # (position, time) of frames drawn by recent ticks
LAST_TICK = "_anim_last_tick"
ECHO_SECONDS = 5.0
PRESENTER = "presenter"  # bound to ?presenter=true
PLAYING = "anim_playing"
SPEED = "anim_speed"
HOLD = "_anim_hold"  # set by full runs and by controls: the next fragment run is not a tick
TICKING = "_anim_ticking"  # the run_every the fragment was last registered with
SPEEDS = (0.5, 1.0, 2.0)
SECONDS_PER_FRAME = 1.0

# Static CSS only: presenter mode hides the sidebar and enlarges type; the colours stay the theme's.
PRESENTER_CSS = """<style>
section[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"], [data-testid="stExpandSidebarButton"],
header[data-testid="stHeader"], [data-testid="stToolbar"] {display: none !important;}
[data-testid="stMainBlockContainer"] {max-width: 100% !important; padding: 0.6rem 2.2rem 1rem !important;}
[data-testid="stMain"] h1 {font-size: 2.1rem !important; padding: 0.2rem 0 !important;}
[data-testid="stMain"] [data-testid="stCaptionContainer"], [data-testid="stMain"] [data-testid="stCaptionContainer"] p
  {font-size: 1.15rem !important; color: inherit !important; opacity: 1 !important;}
[data-testid="stMain"] [data-testid="stMarkdownContainer"] p {font-size: 1.45rem !important; line-height: 1.4 !important;
  font-weight: 500 !important;}
[data-testid="stMetricLabel"] p {font-size: 1.05rem !important; font-weight: 700 !important; opacity: 1 !important;}
[data-testid="stMain"] [data-testid="stMetricValue"],
[data-testid="stMain"] [data-testid="stMetricValue"] [data-testid="stMarkdownContainer"] p
  {font-size: 2.4rem !important; font-weight: 800 !important; line-height: 1.2 !important;}
[data-testid="stMain"] button p {font-size: 1.25rem !important; font-weight: 700 !important;}
[data-testid="stMain"] button {min-height: 3rem !important; border-width: 2px !important;}
[data-testid="stMetric"] {border-width: 2px !important; padding: 0.4rem 0.9rem !important;}
[data-testid="stMain"] [data-testid="stVerticalBlock"] {gap: 0.55rem !important;}
</style>"""


def position(count: int) -> int:
    """The current 1-based window position, kept inside the window (a shorter run after a setup change)."""
    value = st.session_state.get(POSITION, 1)
    return min(max(int(value), 1), count)


def interval() -> float | None:
    """Seconds between ticks while playing, None when paused."""
    return SECONDS_PER_FRAME / st.session_state.get(SPEED, 1.0) if st.session_state.get(PLAYING) else None


def go_to(target: int, count: int) -> None:
    """A control moved the animation: pause, and do not count the coming fragment run as a tick."""
    st.session_state[POSITION] = min(max(target, 1), count)
    st.session_state[PLAYING] = False
    st.session_state[HOLD] = True


def toggle_play(count: int) -> None:
    playing = not st.session_state.get(PLAYING, False)
    if playing and position(count) >= count:
        st.session_state[POSITION] = 1  # Play at the end starts again
    st.session_state[PLAYING] = playing
    st.session_state[HOLD] = True


def step(delta: int, count: int) -> None:
    go_to(position(count) + delta, count)


def next_update(timeline: Timeline) -> None:
    count = len(timeline.frames)
    target = timeline.next_step_position(position(count) - 1)
    go_to(count if target is None else target + 1, count)


def hold() -> None:
    st.session_state[HOLD] = True


def scrubbed(count: int) -> None:
    """The slider moved: a scrub, unless it is the browser echoing a frame a recent tick drew."""
    value = st.session_state[FRAME]
    now = time.monotonic()
    if any(shown == value and now - when < ECHO_SECONDS for shown, when in st.session_state.get(ECHOES, ())):
        return
    go_to(value, count)


def advance(count: int) -> int:
    """The position this run shows: one frame further when it is a tick of the playing animation."""
    current = position(count)
    now = time.monotonic()
    playing = st.session_state.get(PLAYING) and not st.session_state.get(HOLD)
    # a second tick right after one (the browser's timer can fire twice) does not skip a frame
    if playing and now - st.session_state.get(LAST_TICK, 0.0) >= 0.5 * (interval() or 0):
        current = min(current + 1, count)
        st.session_state[LAST_TICK] = now
        echoes = [(p, w) for p, w in st.session_state.get(ECHOES, ()) if now - w < ECHO_SECONDS]
        st.session_state[ECHOES] = [*echoes[-8:], (current, now)]
        if current >= count:
            st.session_state[PLAYING] = False
    st.session_state[HOLD] = False
    return current


def controls(timeline: Timeline, lang: str, current: int) -> None:
    count = len(timeline.frames)
    playing = bool(st.session_state.get(PLAYING))
    with st.container(horizontal=True, key="anim_controls"):
        st.button(t(lang, "anim.pause" if playing else "anim.play"), key="anim_play", type="primary",
                  icon=":material/pause:" if playing else ":material/play_arrow:", shortcut="P",
                  on_click=toggle_play, args=(count,), help=t(lang, "anim.play_help"), disabled=count < 2)
        st.button(t(lang, "anim.back"), key="anim_back", icon=":material/chevron_left:", shortcut="Left",
                  on_click=step, args=(-1, count), help=t(lang, "anim.back_help"), disabled=current <= 1)
        st.button(t(lang, "anim.step"), key="anim_step", icon=":material/chevron_right:", shortcut="Right",
                  on_click=step, args=(1, count), help=t(lang, "anim.step_help"), disabled=current >= count)
        st.button(t(lang, "anim.step_update"), key="anim_update", icon=":material/skip_next:", shortcut="U",
                  on_click=next_update, args=(timeline,), help=t(lang, "anim.step_update_help"),
                  disabled=timeline.next_step_position(current - 1) is None)
        st.button(t(lang, "anim.reset"), key="anim_reset", icon=":material/first_page:", shortcut="Home",
                  on_click=go_to, args=(1, count), help=t(lang, "anim.reset_help"), disabled=current <= 1)
        st.segmented_control(t(lang, "anim.speed"), SPEEDS, key=SPEED, default=1.0, required=True,
                             format_func=lambda speed: f"{speed:g}×",
                             help=t(lang, "anim.speed_help", slow=min(SPEEDS), period=1 / min(SPEEDS), fast=max(SPEEDS)),
                             on_change=hold, label_visibility="collapsed")
        for name, key in (("epoch_end", "anim.skip_epoch_end"), ("last_update", "anim.skip_last")):
            target = timeline.target(name)
            if target is not None and target > 0:
                st.button(t(lang, key), key=f"anim_skip_{name}", icon=":material/fast_forward:",
                          on_click=go_to, args=(target + 1, count))


def player(timeline: Timeline, lang: str, presenter: bool) -> None:
    """The animated part: controls, scrubber, counters, figure and narration for the current frame."""
    count = len(timeline.frames)
    if st.session_state.get(TICKING) != interval():
        st.rerun()  # play, pause or speed changed: register the fragment again with the new run_every
    known = POSITION in st.session_state
    if known:
        current = advance(count)
        st.session_state[POSITION] = current
        st.session_state[FRAME] = current  # the slider shows the server's position
    st.session_state[HOLD] = False

    buttons = st.container()
    current = position(count)
    if count > 1:
        value = st.slider(t(lang, "anim.frame"), min_value=1, max_value=count, key=FRAME, bind="query-params",
                          on_change=scrubbed, args=(count,), help=t(lang, "anim.frame_help"),
                          label_visibility="collapsed" if presenter else "visible",
                          **({} if FRAME in st.session_state else {"value": 1}))
        if not known:  # the first run: the position comes from the URL (?frame=) through the slider
            st.session_state[POSITION] = current = value
    with buttons:
        controls(timeline, lang, current)
    frame = timeline.frames[current - 1]
    st.caption(t(lang, "anim.position", position=current, count=count, index=fmt_int(frame.index + 1),
                 total=fmt_int(timeline.total_frames)))
    story = narration(frame, timeline).get(lang)
    # Presenter mode: full-contrast words (near-black; the dark-theme CSS turns them white, see layout.FIGURE_TEXT).
    ink = layout.FIGURE_TEXT["ink"][0] if presenter else None
    figure = animation_view.frame_figure(timeline, current - 1, lang, presenter=presenter, ink=ink)
    st.plotly_chart(figure, key="anim_figure", config=animation_view.CHART_CONFIG, alt=story, theme="streamlit")
    with st.container(border=True, key="anim_narration"):
        gap = timeline.gaps[current - 1]
        if gap is not None:
            st.markdown(t(lang, "anim.gap", micro_batches=fmt_int(gap.micro_batches), updates=fmt_int(gap.updates)))
        st.markdown(story)
        if current == count and not st.session_state.get(PLAYING):
            st.caption(t(lang, "anim.end"))
    names = ("micro_batch", "bucket", "updates", "samples", "epoch", "lr")
    per_row = 6 if presenter else 3
    values = list(zip(names, animation_view.counters(frame, timeline, lang), strict=True))
    for row in range(0, len(values), per_row):  # row by row, so a narrow screen stacks them in reading order
        for column, (name, (label, value)) in zip(st.columns(per_row), values[row:row + per_row], strict=True):
            column.metric(label, value, help=t(lang, f"anim.metric.{name}_help"), border=True)
    if st.session_state.get(TICKING) != interval():
        st.rerun()  # the last frame was reached while playing: stop the ticks


def comparison(trainer: str, lang: str) -> None:
    """Batch 4 × accumulation 8 against batch 2 × accumulation 16 (the course setup otherwise), with the
    chapter's V100 measurement of that pair, labelled as measured (`steplab.measurements`)."""
    st.subheader(t(lang, "anim.compare.title"))
    measured = list(measurements().values())
    course = presets()["course_default"]
    pair = [(m["per_device_train_batch_size"], m["gradient_accumulation_steps"]) for m in measured]
    st.caption(t(lang, "anim.compare.intro", batch_a=pair[0][0], ga_a=pair[0][1], batch_b=pair[1][0], ga_b=pair[1][1],
                 samples_per_update=pair[0][0] * pair[0][1], samples=course.setup().num_samples,
                 epochs=course.setup().num_train_epochs))
    rows: dict[str, list[str]] = {}
    labels = []
    for column, figures in zip(st.columns(len(measured)), measured, strict=True):
        batch, ga = figures["per_device_train_batch_size"], figures["gradient_accumulation_steps"]
        labels.append(t(lang, "anim.compare.short", batch=batch, ga=ga))
        try:
            plan = make_plan(presets()["course_default"].setup(
                per_device_train_batch_size=batch, gradient_accumulation_steps=ga, world_size=1, trainer=trainer))
        except (SetupError, TrainerRefusal) as problem:
            message = problem.message(lang) if isinstance(problem, SetupError) else str(problem)
            st.info(t(lang, "anim.compare.unavailable", message=message))
            return
        timeline = build_timeline(plan)
        first_step = next((p for p, f in enumerate(timeline.frames) if f.is_step), 0)
        with column:
            st.markdown(f"**{t(lang, 'anim.compare.column', batch=batch, ga=ga)}**")
            figure = animation_view.frame_figure(timeline, first_step, lang, height=300, compact=True)
            st.plotly_chart(figure, key=f"anim_compare_{batch}_{ga}", config=animation_view.CHART_CONFIG,
                            alt=narration(timeline.frames[first_step], timeline).get(lang), theme="streamlit")
        values = {
            "samples_per_update": plan.total_train_batch_size,
            "micro_per_update": ga,
            "micro_per_epoch": plan.micro_batches_per_epoch,
            "updates_per_epoch": plan.num_update_steps_per_epoch,
            "total_steps": plan.max_steps,
        }
        for name, value in values.items():
            rows.setdefault(t(lang, f"anim.compare.row.{name}"), []).append(fmt_int(value))
    head = " | ".join(labels)
    divider = "|---|" + "---:|" * len(labels)
    st.markdown(f"| {t(lang, 'anim.compare.computed')} | {head} |\n{divider}\n"
                + "".join(f"| {name} | {' | '.join(cells)} |\n" for name, cells in rows.items()))
    memory = " | ".join(f"{fmt_float(m['peak_memory_gib'], 2)} GiB" for m in measured)
    seconds = " | ".join(f"≈ {fmt_int(m['seconds'])} s" for m in measured)
    steps = fmt_int(measured[0]["steps"])
    st.markdown(
        f"| {t(lang, 'anim.compare.measured')} | {head} |\n{divider}\n"
        f"| {t(lang, 'anim.compare.row.memory')} | {memory} |\n"
        f"| {t(lang, 'anim.compare.row.time', steps=steps)} | {seconds} |\n"
    )
    st.caption(t(lang, "anim.compare.measured_caption", steps=steps, model=course.model))
    st.markdown(t(lang, "anim.compare.lesson"))


setup, error = state.shared_setup()
lang = state.language()
title, switch = st.columns([4, 1], vertical_alignment="center")
with switch:
    presenter = st.toggle(t(lang, "anim.presenter"), key=PRESENTER, bind="query-params",
                          help=t(lang, "anim.presenter_help"))
if presenter:
    st.html(PRESENTER_CSS)
with title:
    if presenter:  # the projector gets the title only: every pixel below goes to the animation
        st.title(t(lang, "page.animation.title"))
    else:
        layout.header(lang, "animation")
state.show_url_notices(lang)
plan = layout.plan_or_message(setup, error, lang)

if plan is not None:
    timeline = build_timeline(plan)
    if not timeline.frames:
        st.info(t(lang, "anim.no_frames"), icon=":material/info:")
    else:
        if not presenter:
            st.markdown(totals(timeline).get(lang))
        st.session_state[HOLD] = True  # a full run is never a tick
        st.session_state[TICKING] = interval()
        st.fragment(player, run_every=interval())(timeline, lang, presenter)
        st.caption(t(lang, "anim.shortcuts"))
        st.download_button(
            t(lang, "anim.download"), data=lambda: export_html(timeline, lang),
            file_name=f"steplab-animation-{lang}.html", mime="text/html", on_click="ignore",
            icon=":material/download:", help=t(lang, "anim.download_help"),
        )
    if not presenter:
        comparison(plan.setup.trainer, lang)
