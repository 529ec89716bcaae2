"""The animation player as a pure state machine: play and pause, steps, updates, scrubs and ticks.

Timelines are built from real plans (`steplab.simulation.timeline.build_timeline`); time is passed in, never read.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

import pytest

from steplab.simulation.timeline import Timeline, build_timeline
from steplab.trainer.plan import make_plan
from steplab.trainer.setup import setup_from_mapping
from steplab_ui.widgets.player import ECHO_SECONDS, SPEEDS, Player

ROOT = Path(__file__).resolve().parents[1]
COURSE = {"num_samples": 1600, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 8,
          "num_train_epochs": 3}
# 24 samples, batch 4, accumulation 4, 2 epochs: 12 micro-batches, the whole run in the window
SMALL = {"num_samples": 24, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 4, "num_train_epochs": 2}


def timeline_of(values: dict) -> Timeline:
    return build_timeline(make_plan(setup_from_mapping(values)[0]))


@pytest.fixture(scope="module")
def course() -> Timeline:
    return timeline_of(COURSE)


@pytest.fixture(scope="module")
def small() -> Timeline:
    timeline = timeline_of(SMALL)
    assert timeline.whole_run and len(timeline.frames) == 12
    return timeline


def test_the_module_is_pure():
    """No Streamlit and no clock: the page passes the time in."""
    tree = ast.parse((ROOT / "steplab_ui" / "widgets" / "player.py").read_text(encoding="utf-8"))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    assert not imported & {"streamlit", "time", "datetime"}


def test_a_fresh_player_waits_for_the_url():
    player = Player()
    assert player.position is None and player.at(49) == 1 and player.interval is None
    ticked = player.holding().tick(49, now=100.0)
    assert ticked.position is None and not ticked.hold  # a first run: nothing moves, the hold is spent
    assert ticked.opened_at(24).at(49) == 24


def test_play_and_pause_keep_the_frame_and_hold_the_next_run():
    player = Player(position=5)
    playing = player.toggle_play(49)
    assert playing.playing and playing.position == 5 and playing.hold
    assert playing.interval == 1.0
    paused = playing.toggle_play(49)
    assert not paused.playing and paused.position == 5 and paused.interval is None


def test_play_on_the_last_frame_starts_again():
    player = Player(position=49).toggle_play(49)
    assert player.playing and player.position == 1
    assert Player(position=60).toggle_play(49).position == 1  # beyond a shorter window counts as the end


@pytest.mark.parametrize("speed", SPEEDS)
def test_interval_follows_the_speed(speed):
    assert Player(playing=True, speed=speed).interval == pytest.approx(1.0 / speed)
    assert Player(playing=False, speed=speed).interval is None


def test_step_clamps_at_one_and_at_the_window_end_and_pauses():
    player = Player(position=2, playing=True)
    back = player.step(-1, 12)
    assert back.position == 1 and not back.playing and back.hold
    assert back.step(-1, 12).position == 1
    end = Player(position=11).step(1, 12)
    assert end.position == 12 and end.step(1, 12).position == 12
    assert Player(position=3).step(100, 12).position == 12 and Player(position=3).step(-100, 12).position == 1


def test_go_to_clamps_and_pauses():
    assert Player(position=4, playing=True).go_to(0, 12) == Player(position=1, playing=False, hold=True)
    assert Player(position=4).go_to(99, 12).position == 12


def test_next_update_lands_on_the_next_update_frame(course):
    count = len(course.frames)
    player = Player(position=1)
    visited = []
    while player.next_update_position(course) is not None:
        player = player.next_update(course)
        frame = course.frames[player.position - 1]
        assert frame.is_step and not player.playing and player.hold
        visited.append(frame.step)
    assert visited == sorted(visited) and len(visited) == len(set(visited))
    steps = [p + 1 for p, f in enumerate(course.frames) if f.is_step]
    assert [p for p in range(1, count + 1) if course.frames[p - 1].is_step] == steps
    assert course.frames[steps[0] - 1].updates == 1 and steps[0] == 8  # batch 4 × accumulation 8: the 8th
    assert player.next_update(course).position == count  # none left: the last frame


def test_next_update_skips_nothing_in_between(small):
    player = Player(position=1).next_update(small)
    assert player.position == 4 and small.frames[3].is_step
    assert all(not small.frames[p].is_step for p in range(0, 3))
    assert player.next_update(small).position == next(p + 1 for p in range(4, 12) if small.frames[p].is_step)


def test_moves_say_which_buttons_can_move(small):
    first = Player(position=1).moves(small)
    assert first["play"][2] and not first["back"][2] and first["step"][2] and not first["reset"][2]
    last = Player(position=12).moves(small)
    assert not last["step"][2] and last["back"][2] and last["reset"][2]
    assert last["update"][2] is (Player(position=12).next_update_position(small) is not None)
    transition, args, _ = first["step"]
    assert transition(Player(position=1), *args).position == 2


def test_skips_point_past_the_first_frame(course):
    skips = Player.skips(course)
    assert set(skips) == {"epoch_end", "last_update"}
    assert skips["epoch_end"] == course.target("epoch_end") + 1
    last = Player().go_to(skips["last_update"], len(course.frames))
    assert course.frames[last.position - 1].step == course.total_steps  # on the last update itself, not before it
    end = Player().go_to(skips["epoch_end"], len(course.frames))
    assert course.frames[end.position - 1].epoch_end and course.frames[end.position - 1].epoch == 0


def test_a_tick_advances_one_frame_and_records_the_echo():
    player = Player(position=5, playing=True, speed=1.0)
    ticked = player.tick(49, now=100.0)
    assert ticked.position == 6 and ticked.playing and not ticked.hold
    assert ticked.last_tick == 100.0 and ticked.echoes == ((5, 100.0), (6, 100.0))  # on screen until now, and new


def test_the_frame_play_started_from_echoes_on_the_first_tick():
    """Play's own run drew frame 1 (not a tick); the first tick draws 2, and a slow browser sends 1 back with the
    next one: that is not a scrub (it paused the animation at once: "the first Play does nothing")."""
    player = Player(position=1).toggle_play(49).tick(49, now=100.0)  # Play's run: held
    player = player.tick(49, now=101.0)
    assert player.position == 2 and player.playing
    assert player.scrub(1, 49, now=101.5) == player


def test_ticks_advance_by_speed_and_time():
    """The timer may fire twice: a tick sooner than half an interval after the last does not skip a frame."""
    slow = Player(position=5, playing=True, speed=0.5).tick(49, now=100.0)  # interval 2 s
    assert slow.tick(49, now=100.9).position == 6  # sooner than 1 s: the same frame
    assert slow.tick(49, now=101.0).position == 7
    fast = Player(position=5, playing=True, speed=2.0).tick(49, now=100.0)  # interval 0.5 s
    assert fast.tick(49, now=100.2).position == 6
    assert fast.tick(49, now=100.25).position == 7
    player, now = Player(position=1, playing=True, speed=2.0), 100.0
    for _ in range(10):
        now += player.interval
        player = player.tick(49, now)
    assert player.position == 11


def test_a_held_or_paused_run_is_not_a_tick():
    held = Player(position=5, playing=True, hold=True).tick(49, now=100.0)
    assert held.position == 5 and held.playing and not held.hold and held.echoes == ()
    assert held.tick(49, now=101.0).position == 6  # the hold lasts one run
    paused = Player(position=5).tick(49, now=100.0)
    assert paused.position == 5 and paused.last_tick == 0.0


def test_playing_to_the_end_stops(small):
    count = len(small.frames)
    player, now = Player(position=1).toggle_play(count), 10.0
    player = player.tick(count, now)  # the run right after Play is held
    shown = [player.position]
    while player.playing:
        now += player.interval
        player = player.tick(count, now)
        shown.append(player.position)
    assert shown == list(range(1, count + 1))
    assert not player.playing and player.interval is None
    assert player.tick(count, now + 5).position == count


def test_a_stale_slider_value_is_an_echo_not_a_scrub():
    player = Player(position=5, playing=True).tick(49, now=100.0).tick(49, now=101.0)  # drew 6, then 7
    assert player.position == 7
    assert player.is_echo(6, now=101.5) and player.scrub(6, 49, now=101.5) == player  # no jump back, no pause
    late = player.scrub(6, 49, now=101.0 + ECHO_SECONDS)  # 6 was on screen until 7 was drawn
    assert late.position == 6 and not late.playing  # too old to be an echo: a scrub
    scrubbed = player.scrub(30, 49, now=101.5)
    assert scrubbed.position == 30 and not scrubbed.playing and scrubbed.hold
    assert player.scrub(80, 49, now=101.5).position == 49


def test_old_echoes_are_forgotten():
    player, now = Player(position=1, playing=True, speed=2.0), 0.0
    for _ in range(20):
        now += 0.5
        player = player.tick(49, now)
    assert len(player.echoes) == 10 and player.echoes[-2:] == ((20, now), (21, now))
    later = player.tick(49, now + ECHO_SECONDS + 1)
    assert later.echoes == ((21, now + ECHO_SECONDS + 1), (22, now + ECHO_SECONDS + 1))


def test_a_shorter_run_clamps_the_position(course, small):
    player = Player(position=40)
    assert player.at(len(course.frames)) == 40
    assert player.at(len(small.frames)) == 12
    assert player.tick(len(small.frames), now=1.0).position == 12  # a fragment run stores the clamped position
    assert player.step(-1, len(small.frames)).position == 11
    assert player.next_update(small).position == 12


# A run played by the clock (the playground's console): `run_for` moves by the time since the last run.


def test_a_run_played_by_the_clock_moves_by_time_and_carries_the_rest():
    player = Player(position=1).toggle_play(150, now=10.0)
    assert player.playing and player.last_tick == 10.0 and player.carried == 0.0
    player = player.run_for(150, now=10.25, rate=4.0)  # a quarter second at 4 updates a second: one update
    assert (player.position, player.carried, player.playing) == (2, 0.0, True)
    player = player.run_for(150, now=10.5, rate=2.0)  # half an update: carried, not lost
    assert player.position == 2 and player.carried == pytest.approx(0.5)
    player = player.run_for(150, now=10.75, rate=2.0)
    assert player.position == 3 and player.carried == pytest.approx(0.0)


def test_a_run_played_by_the_clock_never_goes_back_and_stops_at_the_end():
    player = Player(position=140, playing=True, last_tick=0.0)
    assert player.run_for(150, now=-5.0, rate=100.0).position == 140  # a clock read earlier: no step back
    ended = player.run_for(150, now=1.0, rate=100.0)
    assert (ended.position, ended.playing, ended.carried) == (150, False, 0.0)
    assert ended.run_for(150, now=2.0, rate=100.0) == replace(ended, hold=False)  # paused: nothing moves
    again = ended.toggle_play(150, now=3.0)  # Play at the end runs it again from the start
    assert (again.position, again.playing, again.last_tick) == (1, True, 3.0)


def test_pause_forward_and_reset_of_a_run_played_by_the_clock():
    player = Player(position=5, playing=True, last_tick=0.0, carried=0.75)
    paused = player.toggle_play(150)
    assert (paused.position, paused.playing, paused.last_tick) == (5, False, 0.0)
    assert paused.run_for(150, now=9.0, rate=1000.0).position == 5
    forward = player.step(1, 150)
    assert (forward.position, forward.playing, forward.carried) == (6, False, 0.0)
    assert player.go_to(1, 150).position == 1 and player.go_to(1, 150).carried == 0.0
    assert Player().run_for(150, now=1.0, rate=1.0).position is None  # waits for ?step=


def test_the_state_a_page_stores_comes_back():
    keys = {"position": "pos", "playing": "on", "last_tick": "t", "carried": "c", "echoes": "e"}
    player = Player(position=7, playing=True, last_tick=3.5, carried=0.25, echoes=((6, 3.0), (7, 3.5)))
    stored = player.storing(keys)
    stored["e"] = list(stored["e"])  # a session state may hand a list back
    assert Player.stored(stored, keys) == player
    assert Player.stored({}, keys, speed=10) == Player(speed=10)
    assert "pos" not in Player().storing(keys)  # no position until a first run reads the URL
