"""Accumulation animation: micro-batches pile up in a bucket until one optimizer.step(), frame by frame.

Playback is the pure `steplab_ui.widgets.player.Player`: loaded from the session state, moved by callbacks and by the
ticks of a `run_every` fragment (the only part redrawn per tick), stored back. The `frame` slider shows the
position and is bound to the URL (?frame=), so a link can stop at any frame.
"""


import streamlit as st

from steplab.errors import SetupError, TrainerRefusal
from steplab.i18n import t
from steplab.simulation.narration import totals
from steplab.simulation.timeline import Timeline, build_timeline
from steplab_ui.shell import layout, state
from steplab_ui.shell.page import page
from steplab_ui.views import animation as view
from steplab_ui.widgets import animation_frames as frames
from steplab_ui.widgets.animation_html import export_html
from steplab_ui.widgets.player import SPEEDS, Player, url_frame_ok
from steplab_ui.widgets.stored_player import StoredPlayer

FRAME = "frame"  # the scrubber: 1-based window position, bound to ?frame=
SPEED = "anim_speed"  # the speed control (read into the player, never written)
TICKING = "_anim_ticking"  # the run_every the fragment was last registered with
STORED = {"position": "_anim_position", "playing": "anim_playing", "hold": "_anim_hold",
          "last_tick": "_anim_last_tick", "echoes": "_anim_ticks"}  # Player field -> session key


PLAYER = StoredPlayer(STORED, SPEED)
load, apply = PLAYER.load, PLAYER.apply


def controls(timeline: Timeline, lang: str, player: Player) -> None:
    """The buttons (each one pure transition of the player, `Player.moves`), the speed and the skips."""
    with st.container(horizontal=True, key="anim_controls"):
        for name, (transition, args, possible) in player.moves(timeline).items():
            st.button(**view.control_button(name, player.playing, lang), key=f"anim_{name}", on_click=apply,
                      args=(transition, *args), disabled=not possible)
        st.segmented_control(t(lang, "anim.speed"), SPEEDS, key=SPEED, default=1.0, required=True,
                             format_func=lambda speed: f"{speed:g}×", on_change=apply, args=(Player.holding,),
                             help=t(lang, "anim.speed_help", slow=min(SPEEDS), period=1 / min(SPEEDS), fast=max(SPEEDS)),
                             label_visibility="collapsed")
        for name, target in player.skips(timeline).items():
            st.button(t(lang, view.SKIP_LABELS[name]), key=f"anim_skip_{name}", icon=":material/fast_forward:",
                      on_click=apply, args=(Player.go_to, target, len(timeline.frames)))


def player_view(timeline: Timeline, lang: str, presenter: bool) -> None:
    """The animated part: controls, scrubber, counters, figure and narration for the current frame."""
    count = len(timeline.frames)
    player = PLAYER.ticked(count, TICKING, FRAME)
    buttons = st.container()
    player = PLAYER.scrubber(player, count, FRAME, t(lang, "anim.frame"), help=t(lang, "anim.frame_help"),
                             collapsed=presenter)
    current = player.at(count)
    with buttons:
        controls(timeline, lang, player)
    caption, skipped, story = frames.frame_texts(timeline, current - 1, lang)
    st.caption(caption)
    layout.chart(frames.player_figure(timeline, current - 1, lang, presenter), "anim_figure", story)
    with st.container(border=True, key="anim_narration"):
        if skipped is not None:
            st.markdown(skipped)
        st.markdown(story)
        if current == count and not player.playing:
            st.caption(t(lang, "anim.end"))
    for row in frames.counter_rows(timeline.frames[current - 1], timeline, lang, 6 if presenter else 3):
        for column, (label, value, help_text) in zip(st.columns(6 if presenter else 3), row, strict=False):
            column.metric(label, value, help=help_text, border=True)
    if st.session_state.get(TICKING) != player.interval:
        st.rerun()  # the last frame was reached while playing: stop the ticks


def comparison(trainer: str, lang: str) -> None:
    """The course's measured pair side by side: what StepLab computes, what the chapter measured (as measured)."""
    st.subheader(t(lang, "anim.compare.title"))
    st.caption(view.comparison_intro(lang))
    try:
        plans = view.compared_plans(trainer)
    except (SetupError, TrainerRefusal) as problem:
        st.info(t(lang, "anim.compare.unavailable",
                  message=problem.message(lang) if isinstance(problem, SetupError) else str(problem)))
        return
    figures = view.compared_figures(plans, lang)
    for column, (heading, key, figure, alt) in zip(st.columns(len(figures)), figures, strict=True):
        with column:
            st.markdown(heading)
            layout.chart(figure, key, alt)
    st.markdown(view.computed_table(plans, lang))
    st.markdown(view.measured_table(lang))
    st.caption(view.measured_caption(lang))
    st.markdown(t(lang, "anim.compare.lesson"))


context = page(None)  # the shell, the first row (the title goes beside the presenter switch), the URL notices
lang, presenter = context.lang, context.presenter
context.heading.title(t(lang, "page.animation.title"))
if not presenter:  # the projector gets the title only: every pixel below goes to the animation
    context.heading.caption(t(lang, "page.animation.intro"))
plan = context.plan()

if plan is not None:
    timeline = build_timeline(plan)
    if not timeline.frames:
        st.info(t(lang, "anim.no_frames"), icon=":material/info:")
    else:
        if FRAME not in st.session_state and not url_frame_ok(st.query_params.get(FRAME), len(timeline.frames)):
            state.url_notice(lang, FRAME, str(st.query_params.get(FRAME)))  # before the bound slider drops it
        if not presenter:
            st.markdown(totals(timeline).get(lang))
        st.session_state[TICKING] = apply(Player.holding).interval  # a full run is never a tick
        st.fragment(player_view, run_every=st.session_state[TICKING])(timeline, lang, presenter)
        st.caption(t(lang, "anim.shortcuts"))
        st.download_button(t(lang, "anim.download"), data=lambda: export_html(timeline, lang), on_click="ignore",
                           file_name=f"steplab-animation-{lang}.html", mime="text/html",
                           icon=":material/download:", help=t(lang, "anim.download_help"))
    if not presenter:
        comparison(plan.setup.trainer, lang)
