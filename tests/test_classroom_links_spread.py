"""The class's join link (where the QR code points, whether a phone can reach it) and the spread of answers the
projector draws (bars, ranges, verdicts after the reveal), all against the engine's own answers."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from steplab.classroom import links, polls, spread
from steplab.teaching.presets import presets
from steplab.trainer.plan import make_plan

SETUP = presets()["course_default"].setup()
POLL = polls.poll_from_setup(SETUP)
RIGHT = float(make_plan(SETUP).max_steps)


@pytest.mark.parametrize(("page_url", "public", "expected"), [
    ("http://10.0.0.5:8501/class", None, "http://10.0.0.5:8501/join?code=AB23CD"),
    ("https://course.example/steplab/class", None, "https://course.example/steplab/join?code=AB23CD"),
    ("http://127.0.0.1:8501/class", "https://steplab.example/", "https://steplab.example/join?code=AB23CD"),
    ("http://127.0.0.1:8501/class", "https://steplab.example/app", "https://steplab.example/app/join?code=AB23CD"),
    (None, None, "/join?code=AB23CD"),
    (None, "  ", "/join?code=AB23CD"),
])
def test_the_join_link_sits_beside_the_class_page(page_url, public, expected):
    assert links.join_url(page_url, "AB23CD", public) == expected


@pytest.mark.parametrize(("url", "reachable"), [
    ("http://localhost:8501/join?code=X", False), ("http://127.0.0.1:8501/join", False),
    ("http://127.8.9.1/join", False), ("http://[::1]:8501/join", False), ("http://0.0.0.0:8501/join", False),
    ("http://app.localhost/join", False), ("/join?code=X", False),
    ("http://10.0.0.5:8501/join", True), ("http://192.168.1.20/join", True), ("https://steplab.example/join", True),
])
def test_a_phone_cannot_reach_this_machine_only_addresses(url, reachable):
    assert links.reachable_from_phones(url) is reachable


def test_before_the_reveal_no_bar_is_marked():
    bars = spread.spread(POLL, (7.0, RIGHT, RIGHT, 1200.0), revealed=False)
    assert [(bar.low, bar.count, bar.verdict) for bar in bars] == [(7.0, 1, "open"), (RIGHT, 2, "open"),
                                                                    (1200.0, 1, "open")]


def test_after_the_reveal_the_right_bar_and_the_traps_are_the_engines():
    traps = polls.reveal(POLL).traps
    assert traps, "the course setup has common wrong answers"
    values = tuple(sorted([7.0, RIGHT, RIGHT] + [trap.value for trap in traps]))
    bars = {bar.low: bar for bar in spread.spread(POLL, values, revealed=True)}
    assert bars[RIGHT].verdict == "right" and bars[RIGHT].count == 2
    assert bars[7.0].verdict == "other"
    for trap in traps:
        assert bars[trap.value].verdict == "trap" and bars[trap.value].trap == trap
    assert spread.right_count(POLL, values) == 2


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=10**9), min_size=1, max_size=80))
def test_bars_count_every_answer_once_and_stay_few(numbers):
    values = tuple(sorted(float(n) for n in numbers))
    bars = spread.spread(POLL, values, revealed=True)
    assert sum(bar.count for bar in bars) == len(values)
    assert len(bars) <= spread.MAX_BARS
    assert all(bar.low <= bar.high for bar in bars)
    assert [bar.low for bar in bars] == sorted(bar.low for bar in bars)
    for value in values:  # each answer lies in exactly one bar
        assert sum(1 for bar in bars if bar.low <= value < bar.high + 1 or bar.low == value) >= 1


def test_many_distinct_answers_become_ranges_and_the_right_range_is_marked():
    values = tuple(float(n) for n in range(100, 400, 10))  # 30 distinct answers around the right 150
    bars = spread.spread(POLL, values, revealed=True)
    assert 1 < len(bars) <= spread.MAX_BARS
    marked = [bar for bar in bars if bar.verdict == "right"]
    assert len(marked) == 1 and marked[0].low <= RIGHT <= marked[0].high
    assert "–" in marked[0].label("en")


def test_a_choice_poll_has_one_bar_per_option_with_the_right_one_marked():
    qid = next(q for q in polls.bank_choices() if not polls.is_numeric(polls.poll_from_bank(q, 3)))
    poll = polls.poll_from_bank(qid, 3)
    options = polls.options(poll)
    bars = spread.spread(poll, (0.0, 0.0, float(len(options) - 1)), revealed=True)
    assert len(bars) == len(options)
    assert [bar.option for bar in bars] == list(options)
    assert bars[0].count == 2 and bars[-1].count == 1
    right = polls.reveal(poll).correct_options
    assert {index for index, bar in enumerate(bars) if bar.verdict == "right"} == set(right)
    assert spread.spread(poll, (), revealed=False)[0].verdict == "open"
