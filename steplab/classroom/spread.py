"""The spread of a poll's answers as the projector draws it: bars of counts, marked after the reveal. Pure.

A student's name or seat never reaches here: only the tally's sorted values (`store.Tally.values`).
Numeric answers get one bar per distinct value while there are few; beyond `MAX_BARS` distinct values they are
grouped into equal-width ranges of whole numbers. A choice poll gets one bar per option, empty ones included.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Literal

from steplab.classroom import polls
from steplab.classroom.polls import Poll, Trap
from steplab.i18n import Text, fmt_number, whole

MAX_BARS = 12
Verdict = Literal["open", "right", "trap", "other"]  # "open": before the reveal, no bar is marked


@dataclass(frozen=True)
class Bar:
    """One bar: answers from `low` to `high` (equal for a single value or an option index), how many gave one,
    and, after the reveal, whether the bar holds the right answer or a named wrong rule (`trap`)."""

    low: float
    high: float
    count: int
    verdict: Verdict
    option: Text | None = None  # a choice poll's option text
    trap: Trap | None = None

    def label(self, lang: str) -> str:
        if self.option is not None:
            return self.option.get(lang)
        if self.low == self.high:
            return fmt_number(whole(self.low))
        return f"{fmt_number(whole(self.low))}–{fmt_number(whole(self.high))}"


def _verdict(poll: Poll, low: float, high: float, revealed: bool) -> tuple[Verdict, Trap | None]:
    if not revealed:
        return "open", None
    if low == high:
        if polls.is_correct(poll, low):
            return "right", None
        trap = polls.trap_for(poll, low)
        return ("trap", trap) if trap is not None else ("other", None)
    answer = polls.reveal(poll).answer
    return ("right", None) if answer is not None and low <= answer <= high else ("other", None)


def _bar(poll: Poll, low: float, high: float, count: int, revealed: bool) -> Bar:
    verdict, trap = _verdict(poll, low, high, revealed)
    return Bar(low, high, count, verdict, trap=trap)


def _ranges(values: tuple[float, ...]) -> list[tuple[float, float]]:
    """Up to MAX_BARS equal ranges of whole numbers covering the values (the last one closed)."""
    low, high = math.floor(values[0]), math.ceil(values[-1])
    width = max(1, math.ceil((high - low + 1) / MAX_BARS))
    return [(float(start), float(start + width - 1)) for start in range(low, high + 1, width)]


def spread(poll: Poll, values: tuple[float, ...], revealed: bool) -> tuple[Bar, ...]:
    """The bars for these answers (sorted values, as the tally keeps them)."""
    if not polls.is_numeric(poll):
        counts = Counter(int(value) for value in values)
        bars = []
        for index, option in enumerate(polls.options(poll)):
            verdict: Verdict = "open"
            if revealed:
                verdict = "right" if index in polls.reveal(poll).correct_options else "other"
            bars.append(Bar(float(index), float(index), counts.get(index, 0), verdict, option=option))
        return tuple(bars)
    if not values:
        return ()
    counts = Counter(values)
    if len(counts) <= MAX_BARS:
        return tuple(_bar(poll, value, value, count, revealed) for value, count in sorted(counts.items()))
    bars = []
    ranges = _ranges(values)
    for number, (low, high) in enumerate(ranges):
        last = number == len(ranges) - 1
        count = sum(1 for value in values if low <= value < high + 1 or (last and value >= low))
        if count:
            bars.append(_bar(poll, low, high, count, revealed))
    return tuple(bars)


def right_count(poll: Poll, values: tuple[float, ...]) -> int:
    """How many of the answers are right (as the self-check grades them)."""
    return sum(1 for value in values if polls.is_correct(poll, value))
