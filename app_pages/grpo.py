"""GRPO: prompts fanning out into completions, generation rounds, micro-batches and updates, event by event.

A page beside the playground rather than a mode of it: GRPO counts two things (prompts the sampler draws,
completions the batch holds), and a learner sees both only where the picture, the controls and the arithmetic
all speak GRPO; the sidebar's setup (N = the training samples as prompts, B, GA, GPUs, epochs) is shared, and
GRPOConfig's fields (G, S, Gb, μ) are setup fields drawn here, kept in the URL like every other.

The run is planned by `steplab.trl.grpo.plan_grpo` under TRL's `GRPOTrainer` (evaluation checked as TRL
checks it, not drawn); its refusals are shown in TRL's words with what to change. Playback is the one `Player`; a
generation round is a frame of its own; the curve and the console follow the event shown.
"""


import streamlit as st

from steplab.errors import SetupError, TrainerRefusal
from steplab.i18n import t
from steplab.simulation import grpo_run
from steplab.simulation.grpo_run import GrpoTimeline
from steplab.trl.grpo import GrpoPlan, plan_grpo
from steplab_ui.shell import layout, state
from steplab_ui.shell.page import page
from steplab_ui.views import grpo as view
from steplab_ui.widgets import grpo_figures as figures
from steplab_ui.widgets.player import SPEEDS, Player, url_frame_ok
from steplab_ui.widgets.stored_player import StoredPlayer

FRAME = "grpo_frame"  # the scrubber: 1-based window position, bound to ?grpo_frame=
SPEED = "grpo_speed"
TICKING = "_grpo_ticking"
STORED = {"position": "_grpo_position", "playing": "grpo_playing", "hold": "_grpo_hold",
          "last_tick": "_grpo_last_tick", "echoes": "_grpo_ticks"}  # Player field -> session key
SECONDS_PER_UPDATE = 1.0  # the console's clock: illustrative (a GRPO update's time is the generation's)
TAIL = 24


PLAYER = StoredPlayer(STORED, SPEED)
load, apply = PLAYER.load, PLAYER.apply


def grpo_controls(lang: str, setup) -> None:  # noqa: ANN001 - the shared TrainingSetup, or None
    """GRPOConfig's count fields: setup fields (the URL keeps them), drawn here, not in the sidebar; and, where the
    setup's differ, GRPOConfig's own defaults for the Trainer's fields, one click away (the one writer)."""
    with st.container(border=True, key="grpo_settings"):
        st.markdown(f"**{t(lang, 'grpo.settings')}**")
        with st.container(horizontal=True, key="grpo_fields"):
            for name in view.GRPO_FIELDS:
                with st.container(width=175):
                    state.field_control(lang, name)
        st.caption(t(lang, "grpo.settings_note"))
        differing = view.config_defaults_differing(setup)
        if differing:
            with st.container(horizontal=True, vertical_alignment="center", key="grpo_defaults"):
                st.caption(view.config_defaults_text(lang))
                st.button(t(lang, "grpo.use_defaults"), key="grpo_use_defaults", on_click=state.set_values,
                          args=(differing,), icon=":material/settings_backup_restore:")


def planned(lang: str, setup, presenter: bool):  # noqa: ANN001, ANN201 - a TrainingSetup in, a GrpoPlan or None out
    """The GRPO plan of the shared setup (its evaluations are checked as TRL checks them, not drawn), or a clear
    message."""
    if setup is None:
        return None
    if setup.eval_strategy != "no" and not presenter:
        st.caption(t(lang, "grpo.no_eval", strategy=setup.eval_strategy))
    try:
        return plan_grpo(setup)
    except TrainerRefusal as refusal:
        heading, words, fix = view.refusal_texts(refusal, lang)
        st.error(heading, icon=":material/block:")
        layout.console_text(words)
        st.markdown(fix)
    except SetupError as problem:
        layout.show_setup_error(problem, lang)
    return None


def buttons(timeline: GrpoTimeline, lang: str, player: Player) -> None:
    """The player's buttons (each one transition of `Player.moves`), the next generation round, speed and skips."""
    count = len(timeline.frames)
    with st.container(horizontal=True, key="grpo_controls"):
        for name, (transition, args, possible) in player.moves(timeline).items():
            st.button(**view.control_button(name, player.playing, lang), key=f"grpo_{name}", on_click=apply,
                      args=(transition, *args), disabled=not possible)
        following = timeline.next_generation_position(player.at(count) - 1)
        st.button(t(lang, "grpo.next_round"), key="grpo_next_round", icon=":material/auto_awesome:",
                  help=t(lang, "grpo.next_round_help"), on_click=apply,
                  args=(Player.go_to, (following or 0) + 1, count), disabled=following is None)
        st.segmented_control(t(lang, "anim.speed"), SPEEDS, key=SPEED, default=1.0, required=True,
                             format_func=lambda speed: f"{speed:g}×", on_change=apply, args=(Player.holding,),
                             label_visibility="collapsed")
        for name, target in player.skips(timeline).items():
            st.button(t(lang, view.SKIP_LABELS[name]), key=f"grpo_skip_{name}", icon=":material/fast_forward:",
                      on_click=apply, args=(Player.go_to, target, count))


def player_view(timeline: GrpoTimeline, lang: str, presenter: bool) -> None:
    """The animated part: controls, scrubber, figure, words and counters, then the curve and the console at the
    event shown (one fragment: they tick together)."""
    count = len(timeline.frames)
    player = PLAYER.ticked(count, TICKING, FRAME)
    top = st.container()
    player = PLAYER.scrubber(player, count, FRAME, t(lang, "grpo.frame"), collapsed=presenter)
    position = player.at(count) - 1
    with top:
        buttons(timeline, lang, player)
    caption, skipped = view.position_texts(timeline, position, lang)
    story = view.narration(timeline, position, lang)
    st.caption(caption)
    layout.chart(figures.frame_figure(timeline, position, lang, presenter), "grpo_figure", story)
    if not presenter:
        st.caption(view.legend(timeline.plan, lang))
    with st.container(border=True, key="grpo_narration"):
        if skipped is not None:
            st.markdown(skipped)
        st.markdown(story)
    with st.container(horizontal=True, gap="small", key=layout.CARDS_KEY + "_grpo_counters"):
        for label, value, help_text in view.counters(timeline, position, lang):
            st.metric(label, value, help=help_text, border=True)
    plan, frame = timeline.plan, timeline.frames[position]
    step = view.current_update(timeline, position)
    curve_column, console_column = st.columns(2, gap="medium")
    with curve_column:
        figure = figures.curve_figure(plan, step, lang, presenter)
        if figure is None:
            st.info(t(lang, "playground.no_curve", name=plan.setup.lr_scheduler_type))
        else:
            layout.chart(figure, "grpo_curve", t(lang, "grpo.curve_alt", step=step))
    with console_column:
        layout.console_text(grpo_run.run_log(plan, SECONDS_PER_UPDATE).screen(frame.updates, tail=TAIL))
        st.caption(t(lang, "grpo.illustrative", release=plan.trainer.profile.matched))
    if st.session_state.get(TICKING) != player.interval:
        st.rerun()  # the last event was reached while playing: stop the ticks


def show_cards(plan: GrpoPlan, lang: str, presenter: bool) -> None:
    """The result cards; on a projector's larger type two rows of three (one row cut "S = 8, μ = 1" short)."""
    cards = view.cards(plan, lang)
    for index, row in enumerate((cards[:3], cards[3:]) if presenter else (cards,)):
        with st.container(horizontal=True, gap="small", key=f"{layout.CARDS_KEY}_grpo{index}"):
            for label, value, help_text in row:
                st.metric(label, value, help=help_text, border=True)


context = page("grpo")
lang, presenter = context.lang, context.presenter
if context.error is not None:
    layout.show_setup_error(context.error, lang)
if not presenter:  # the projector gets the picture: the settings stay in the link (and on the presenter's laptop)
    grpo_controls(lang, context.setup)
plan = planned(lang, context.setup, presenter)
if plan is not None:
    if not presenter:
        show_cards(plan, lang, presenter)
        with st.expander(t(lang, "grpo.arithmetic"), expanded=True):
            st.markdown(view.arithmetic_text(plan, lang))
    timeline = grpo_run.build_grpo_timeline(plan)
    if not timeline.frames:
        st.info(t(lang, "grpo.no_rounds", u=plan.unique_prompts_per_round, n=plan.setup.num_samples),
                icon=":material/info:")
    else:
        if FRAME not in st.session_state and not url_frame_ok(st.query_params.get(FRAME), len(timeline.frames)):
            state.url_notice(lang, FRAME, str(st.query_params.get(FRAME)))  # before the bound slider drops it
        st.session_state[TICKING] = apply(Player.holding).interval  # a full run is never a tick
        st.fragment(player_view, run_every=st.session_state[TICKING])(timeline, lang, presenter)
    if presenter:  # the projector's first screen is the picture; the cards follow it
        show_cards(plan, lang, presenter)
