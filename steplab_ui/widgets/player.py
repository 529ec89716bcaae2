"""Playback as a pure state machine (no Streamlit, no clock): the accumulation animation's frames, and the
playground's run, which plays by the clock (`Player.run_for`).

A `Player` is where the animation stands, whether it plays and how fast, plus what tick timing needs. Every
transition returns a new `Player`; the page loads one from `st.session_state`, applies a transition in a
callback or on a fragment run, and stores the result. Time is passed in (seconds of a monotonic clock).

While playing, a tick can be requested before the browser has drawn the previous one, so the slider value
it sends may be a frame the server has already passed. Such an echo of a frame drawn a moment ago is not
a scrub (`Player.scrub`): it neither moves the animation back nor pauses it. The frame a tick moves on from
counts as drawn a moment ago too: on the first tick after Play it was drawn by Play's own run, and a slow
browser sent it back and paused the animation at once (issue 27: "the first Play does nothing").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from steplab.simulation.timeline import Timeline

SPEEDS = (0.5, 1.0, 2.0)  # frames a second: the animation
RUN_SPEEDS = (1, 10, 100, 1000)  # times the real run's pace: a run played by the clock (the playground's console)
SECONDS_PER_FRAME = 1.0  # at speed 1
ECHO_SECONDS = 5.0  # a slider value equal to a frame a tick drew this recently is an echo, not a scrub
ECHOES_KEPT = 8  # recent echoes kept besides the newest
DOUBLE_TICK = 0.5  # a tick sooner than this share of the interval after the last one is the timer firing twice


@dataclass(frozen=True)
class Player:
    """Playback state; `position` is 1-based in the timeline's window, None until a first run reads `?frame=`."""

    position: int | None = None
    playing: bool = False
    speed: float = 1.0
    hold: bool = False  # set by full runs and by controls: the next fragment run is not a tick
    last_tick: float = 0.0  # when the last tick advanced the animation
    echoes: tuple[tuple[int, float], ...] = ()  # (position, time) of frames drawn by recent ticks
    carried: float = 0.0  # a run played by the clock: the share of the next frame its time has already covered

    @classmethod
    def stored(cls, state: Mapping[str, Any], keys: Mapping[str, str], **controls: Any) -> Player:
        """The player a session's state holds under `keys` (Player field -> key); `controls`: the fields a page's
        own controls hold (the speed)."""
        values = {field: value for field, key in keys.items() if (value := state.get(key)) is not None}
        if "echoes" in values:
            values["echoes"] = tuple(values["echoes"])
        return cls(**values, **controls)

    def storing(self, keys: Mapping[str, str]) -> dict[str, Any]:
        """What to store under `keys` (Player field -> key): the position only once known."""
        return {key: value for field, key in keys.items() if (value := getattr(self, field)) is not None}

    @property
    def interval(self) -> float | None:
        """Seconds between ticks while playing, None when paused."""
        return SECONDS_PER_FRAME / self.speed if self.playing else None

    def at(self, count: int) -> int:
        """The position shown, kept inside a window of `count` frames (a shorter run after a setup change)."""
        return min(max(int(1 if self.position is None else self.position), 1), count)

    def opened_at(self, position: int) -> Player:
        """A first run: the position comes from the URL (`?frame=`) through the slider; nothing else changes."""
        return replace(self, position=position)

    def holding(self) -> Player:
        """The next fragment run is not a tick (a full run, or a control such as the speed changed)."""
        return replace(self, hold=True)

    def go_to(self, target: int, count: int) -> Player:
        """A control moved the animation: there, clamped to the window, paused, and the next run is no tick."""
        return replace(self, position=min(max(target, 1), count), playing=False, hold=True, carried=0.0)

    def toggle_play(self, count: int, now: float | None = None) -> Player:
        """Play or pause; Play on the last frame starts again at the first. `now`: a run played by the clock
        (`run_for`) counts its time from here."""
        playing = not self.playing
        position = 1 if playing and self.at(count) >= count else self.position
        started = {"last_tick": now, "carried": 0.0} if playing and now is not None else {}
        return replace(self, position=position, playing=playing, hold=True, **started)

    def step(self, delta: int, count: int) -> Player:
        """`delta` frames on (back when negative), clamped to 1 and `count`; pauses."""
        return self.go_to(self.at(count) + delta, count)

    def next_update_position(self, timeline: Timeline) -> int | None:
        """The 1-based position of the next frame whose micro-batch closes an optimizer step, if any."""
        target = timeline.next_step_position(self.at(len(timeline.frames)) - 1)
        return None if target is None else target + 1

    def next_update(self, timeline: Timeline) -> Player:
        """Jump to the next optimizer update (the last frame when none is left); pauses."""
        count = len(timeline.frames)
        target = self.next_update_position(timeline)
        return self.go_to(count if target is None else target, count)

    def moves(self, timeline: Timeline) -> dict[str, tuple[Callable[..., Player], tuple, bool]]:
        """Each button's transition as (method, its arguments after the player, whether it can move now)."""
        count = len(timeline.frames)
        current = self.at(count)
        return {
            "play": (Player.toggle_play, (count,), count > 1),
            "back": (Player.step, (-1, count), current > 1),
            "step": (Player.step, (1, count), current < count),
            "update": (Player.next_update, (timeline,), self.next_update_position(timeline) is not None),
            "reset": (Player.go_to, (1, count), current > 1),
        }

    @staticmethod
    def skips(timeline: Timeline) -> dict[str, int]:
        """The skip buttons' 1-based targets ("epoch_end", "last_update"), for those past the first frame."""
        targets = {name: timeline.target(name) for name in ("epoch_end", "last_update")}
        return {name: target + 1 for name, target in targets.items() if target is not None and target > 0}

    def is_echo(self, value: int, now: float) -> bool:
        """`value` is a frame a tick drew less than `ECHO_SECONDS` before `now`."""
        return any(shown == value and now - when < ECHO_SECONDS for shown, when in self.echoes)

    def scrub(self, value: int, count: int, now: float) -> Player:
        """The slider moved to `value`: go there and pause, unless it is the browser echoing a recent tick."""
        return self if self.is_echo(value, now) else self.go_to(value, count)

    def tick(self, count: int, now: float) -> Player:
        """A fragment run at time `now`: the position clamped to the window, one frame further when it is a
        tick of the playing animation (not held, not a second tick right after one); the end pauses.

        Before a first run has a position, nothing moves (`opened_at` takes it from the URL)."""
        if self.position is None:
            return replace(self, hold=False)
        current = self.at(count)
        # a second tick right after one (the browser's timer can fire twice) does not skip a frame
        if not self.playing or self.hold or now - self.last_tick < DOUBLE_TICK * (self.interval or 0):
            return replace(self, position=current, hold=False)
        previous, current = current, min(current + 1, count)
        recent = tuple((shown, when) for shown, when in self.echoes
                       if now - when < ECHO_SECONDS and shown != previous)
        # the frame on screen until now is an echo too: the first tick's predecessor was drawn by Play's own run
        return replace(self, position=current, playing=current < count, hold=False, last_tick=now,
                       echoes=(*recent[-ECHOES_KEPT:], (previous, now), (current, now)))

    def run_for(self, count: int, now: float, rate: float) -> Player:
        """A fragment run at time `now` of a run played by the clock at `rate` frames a second (the playground's
        console: the chosen speed over the time per update): forward by the time since the last run, the part of
        a frame carried to the next one; the end pauses. Only forward: nothing the browser sends moves it back
        (its controls take no value while it plays), and any run is a tick.

        Before a first run has a position, nothing moves (`opened_at` takes it from the URL)."""
        if self.position is None:
            return replace(self, hold=False)
        current = self.at(count)
        if not self.playing:
            return replace(self, position=current, hold=False, carried=0.0)
        covered = current + self.carried + max(now - self.last_tick, 0.0) * rate
        position = min(int(covered), count)
        playing = covered < count
        return replace(self, position=position, playing=playing, hold=False, last_tick=now,
                       carried=covered - position if playing else 0.0)


def url_frame_ok(raw: str | None, count: int) -> bool:
    """Whether `?frame=` names a frame of this window (1 to `count`, a whole number); no `?frame=` is fine too.

    A slider bound to the URL drops a value outside its range without a word; the page says so instead."""
    if raw is None:
        return True
    text = raw.strip()
    return text.isascii() and text.isdigit() and 1 <= int(text) <= count
