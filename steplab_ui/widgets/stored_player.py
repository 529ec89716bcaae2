"""A page's `Player` kept in the session: loaded from the session state under the page's own keys, moved by one
pure transition and stored back (the animation, the playground and the GRPO page each keep one)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import streamlit as st

from steplab_ui.widgets.player import Player


@dataclass(frozen=True)
class StoredPlayer:
    """Where a page keeps its player: `keys` maps a `Player` field to its session key, `speed_key` is the page's
    speed control (read into the player, never written)."""

    keys: Mapping[str, str]
    speed_key: str
    default_speed: float = 1.0

    def load(self) -> Player:
        """The player as the session state holds it (no position until a first run has read the link's)."""
        speed = st.session_state.get(self.speed_key) or self.default_speed
        return Player.stored(st.session_state, self.keys, speed=speed)

    def apply(self, transition: Callable[..., Player], *args: object) -> Player:
        """One pure transition of the stored player, stored back (the position only once known) and returned."""
        player = transition(self.load(), *args)
        st.session_state.update(player.storing(self.keys))
        return player

    def ticked(self, count: int, ticking_key: str, frame_key: str) -> Player:
        """A playing fragment's run over `count` frames: registered again (`st.rerun`) when play, pause or the speed
        changed its interval (`ticking_key` holds the one it runs with), moved on by the clock, its position shown
        by the scrubber (`frame_key`)."""
        stored = self.load()
        if st.session_state.get(ticking_key) != stored.interval:
            st.rerun()
        player = self.apply(Player.tick, count, time.monotonic())
        if stored.position is not None:
            st.session_state[frame_key] = player.position
        return player

    def scrubber(self, player: Player, count: int, frame_key: str, label: str, *, help: str | None = None,
                 collapsed: bool = False) -> Player:
        """The position slider bound to the link (`frame_key`): a move is a scrub of the stored player; on a first
        run (no position yet) the player opens where the link's value puts it. Returns the player to draw."""
        if count <= 1:
            return player
        value = st.slider(label, min_value=1, max_value=count, key=frame_key, bind="query-params",
                          on_change=lambda: self.apply(Player.scrub, st.session_state[frame_key], count,
                                                       time.monotonic()),
                          help=help, label_visibility="collapsed" if collapsed else "visible",
                          **({} if frame_key in st.session_state else {"value": 1}))
        return self.apply(Player.opened_at, value) if player.position is None else player
