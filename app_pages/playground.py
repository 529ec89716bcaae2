"""Playground: the arithmetic you can touch, step k everywhere at once, and the run as the Trainer prints it.

At 1280 × 900 the linked views fit one screen (the arithmetic beside step k's sentence and bucket, the curve
beside the strip); at 420 px they stack in that order, and the console comes last.

The operands of the worked arithmetic are the shared setup (editing one changes the sidebar and the URL). One
step control (slider plus exact input, `?step=`) marks update k on the bucket, the timeline and the LR curve, and
the console shows the lines printed up to update k, its bar at k of the run's updates (what the Trainer's tqdm bar
shows once update k is done; a fresh page, `?step=1` and Reset all stand at update 1). Everything that shows step
k is one fragment (`linked`) that ticks while Play runs the simulated console (`steplab.simulation.run_log`): step k
follows the run on every view, tick by tick, only forward, and Pause leaves it where the run stopped. Playback is
the animation's pure `steplab_ui.widgets.player.Player`: step k is its position, a tick `Player.run_for` (the run moves by
the clock at the chosen speed), the buttons its transitions.

While the run plays, the step control shows k but does not take it (drawn disabled, under keys of its own): the
browser sends the control's value back with every tick, and that value can be a tick or two old (the browser had
not drawn the newest one yet). Taken as a scrub it would step k back, and a figure drawn a few ticks earlier would
come again while ticks are in flight, which Streamlit's message cache cannot take ("Cached ForwardMsg MISS"). Pause,
then pick an update.
"""

import time
from collections.abc import Callable

import streamlit as st

from steplab.i18n import fmt_float, fmt_int, t
from steplab.simulation.run_log import RunLog, measured_seconds_per_step
from steplab.teaching.measurements import measurements
from steplab_ui.shell import layout, state
from steplab_ui.shell.page import page
from steplab_ui.views import playground as view
from steplab_ui.widgets.player import RUN_SPEEDS, Player, url_frame_ok
from steplab_ui.widgets.stored_player import StoredPlayer

SLIDER, EXACT = "pg_step_slider", "pg_step_exact"  # the step control while paused: it takes k
SHOWN = {SLIDER: "pg_step_slider_playing", EXACT: "pg_step_exact_playing"}  # while playing: it only shows k
SECONDS, SPEED, MEASURED = "pg_seconds", "pg_speed", "_pg_measured"
STORED = {"position": "_pg_run_position", "playing": "pg_playing", "last_tick": "_pg_last_tick",
          "carried": "_pg_carried"}  # Player field -> session key: the run's playback, step k its position
SETUP_EDITED = "_pg_setup_edited"  # an operand changed the shared setup inside the fragment: rerun the page
DEFAULT_SPEED = 10
TICK = 0.5  # seconds between console redraws while playing
TAIL = 30


PLAYER = StoredPlayer(STORED, SPEED, DEFAULT_SPEED)
load, apply = PLAYER.load, PLAYER.apply


def apply_now(transition: Callable[..., Player], *args: object) -> Player:
    """`apply` with the clock's time as the last argument (Play starts counting the run's time there)."""
    return apply(transition, *args, time.monotonic())


def opened(lang: str, steps: int) -> Player:
    """A first run stands at `?step=` (a value that is not an update of this run gets a notice), else at 1."""
    raw = st.query_params.get("step")
    if not url_frame_ok(raw, steps):
        state.url_notice(lang, "step", raw)
        del st.query_params["step"]
        raw = None
    return apply(Player.opened_at, 1 if raw is None else int(raw))


def _pick(source: str, steps: int) -> None:
    """Step k was picked (paused: the control takes no value while the run plays): the console goes there too."""
    apply(Player.go_to, int(st.session_state[source]), steps)


def step_control(lang: str, steps: int, player: Player) -> int:
    """The one step control: a slider and an exact input that both move the player; the URL keeps k. While the run
    plays they show k, disabled and under keys of their own, so that no value the browser sends back is taken
    for a pick (see the module's docstring)."""
    k, playing = player.at(steps), player.playing
    slider, exact = (SHOWN[SLIDER], SHOWN[EXACT]) if playing else (SLIDER, EXACT)
    st.session_state[slider] = st.session_state[exact] = k

    def taking(key: str) -> dict:
        return {} if playing else {"on_change": _pick, "args": (key, steps)}

    with st.container(horizontal=True, vertical_alignment="bottom", key="pg_step_row"):
        if steps > 1:
            st.slider(t(lang, "playground.step"), min_value=1, max_value=steps, key=slider, width="stretch",
                      help=t(lang, "playground.step_help"), disabled=playing, **taking(slider))
        st.number_input(t(lang, "playground.step_exact"), min_value=1, max_value=steps, step=1, key=exact,
                        width=160, disabled=playing, **taking(exact))
    if st.query_params.get("step") != str(k):
        st.query_params["step"] = str(k)
    return k


def seconds_per_step(plan) -> tuple[float, str, float]:  # noqa: ANN001 - a Plan
    """The time per update the console uses (the user's, else the course measurement nearest the setup), the
    measurement's name and its time per update."""
    name, measured = measured_seconds_per_step(plan.setup.per_device_train_batch_size,
                                               plan.setup.gradient_accumulation_steps, measurements())
    if st.session_state.get(MEASURED) != name or st.session_state.get(SECONDS) is None:
        st.session_state[MEASURED] = name  # a setup of another measurement: its figure becomes the default
        st.session_state[SECONDS] = round(measured, 3)
    return float(st.session_state.get(SECONDS) or measured), name, measured


def console(plan, lang: str, k: int, playing: bool, seconds: float, name: str, measured: float) -> None:  # noqa: ANN001
    """Play / Pause / Reset, the speed and the time per step, and the simulated console at the run's position
    (`name`, `measured`: the course measurement nearest the setup and its time per update), its bar at update k."""
    figure, steps = measurements()[name], plan.optimizer_steps
    with st.container(horizontal=True, vertical_alignment="bottom", key="pg_run_controls"):
        if playing:
            st.button(t(lang, "playground.pause"), icon=":material/pause:", key="pg_pause", on_click=apply,
                      args=(Player.toggle_play, steps))
        else:
            st.button(t(lang, "playground.play"), icon=":material/play_arrow:", key="pg_play", on_click=apply_now,
                      args=(Player.toggle_play, steps), type="primary")
        st.button(t(lang, "playground.forward"), icon=":material/skip_next:", key="pg_forward", on_click=apply,
                  args=(Player.step, 1, steps), disabled=playing)
        st.button(t(lang, "playground.reset"), icon=":material/replay:", key="pg_reset", on_click=apply,
                  args=(Player.go_to, 1, steps))
        st.number_input(t(lang, "playground.seconds"), min_value=0.001, max_value=1e6, key=SECONDS, format="%.3f",
                        width=200)
        st.segmented_control(t(lang, "playground.speed"), RUN_SPEEDS, default=DEFAULT_SPEED, key=SPEED, required=True,
                             format_func=lambda s: f"{s:g}×")
    st.caption(t(lang, "playground.seconds_source", seconds=figure["seconds"], steps=figure["steps"],
                 batch=figure["per_device_train_batch_size"], accumulation=figure["gradient_accumulation_steps"],
                 per_step=fmt_float(measured, 2)))
    layout.console_text(RunLog(plan, seconds).screen(k, tail=TAIL))
    st.caption(t(lang, "playground.illustrative", release=plan.profile.matched))


def views(plan, k: int, lang: str, presenter: bool) -> None:  # noqa: ANN001 - a Plan
    """Step k on every view: the arithmetic beside k's sentence and bucket, then the curve beside the strip. At
    1280 × 900 they fit one screen; at 420 px they stack in that order."""
    sentence = view.facts_text(view.step_facts(plan, k), lang)
    left, right = st.columns([1, 1.1], gap="medium")
    with left:
        st.markdown(f"**{t(lang, 'playground.arithmetic')}**")
        view.arithmetic(plan, lang, on_edit=SETUP_EDITED)
    with right:
        st.markdown(sentence)
        layout.chart(view.bucket_figure(plan, k, lang, presenter), "pg_bucket", sentence)
    curve_column, strip_column = st.columns(2, gap="medium")
    with curve_column:  # the curve's axis and the strip's legend say what they are: no headings over them
        chart = view.schedule_figure(plan, k, lang, presenter)
        if chart is None:
            st.info(t(lang, "playground.no_curve", name=plan.setup.lr_scheduler_type))
        else:
            layout.chart(chart, "pg_schedule", t(lang, "playground.schedule_alt", step=fmt_int(k)))
    with strip_column:
        timeline_sentence = view.charts.timeline_sentence(plan, lang)
        layout.chart(view.timeline_figure(plan, k, lang, presenter), "pg_timeline", timeline_sentence)
    st.caption(timeline_sentence)


def linked(plan, lang: str, presenter: bool) -> None:  # noqa: ANN001 - a Plan
    """Everything that shows step k, in one fragment that ticks while the run plays: the player moves on by the
    time since the last tick (`Player.run_for`), and the step control, the arithmetic, the bucket, the curve and
    the strip are drawn at k on the same tick. A change that the fragment cannot finish alone (an operand is the
    shared setup; Play and Pause start and stop the ticks) reruns the whole page."""
    playing = load().playing
    transformers = plan.profile.framework == "transformers"
    steps = plan.optimizer_steps

    @st.fragment(run_every=TICK if playing and transformers else None)
    def region() -> None:
        if st.session_state.pop(SETUP_EDITED, False) or load().playing != playing:
            st.rerun(scope="app")
        seconds, name, measured = seconds_per_step(plan) if transformers else (1.0, "", 1.0)
        player = load() if load().position is not None else opened(lang, steps)
        player = apply(Player.run_for, steps, time.monotonic(), player.speed / seconds)
        if playing and not player.playing:
            st.rerun(scope="app")  # the run ended on this tick: stop the ticks, draw its last update
        k = step_control(lang, steps, player)
        views(plan, k, lang, presenter)
        st.subheader(t(lang, "playground.run"))
        if transformers:
            console(plan, lang, k, player.playing, seconds, name, measured)
        else:
            st.info(t(lang, "playground.only_transformers", release=plan.profile.matched))

    region()


context = page("playground")
lang, presenter = context.lang, context.presenter
plan = context.plan()
if plan is not None and plan.optimizer_steps < 1:
    st.info(t(lang, "playground.no_steps"))
elif plan is not None:
    st.session_state.pop(SETUP_EDITED, None)  # a whole run: the shared setup is read afresh anyway
    linked(plan, lang, presenter)
