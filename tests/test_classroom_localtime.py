"""The live class's times in the reader's zone (issue 27 item 14): the browser's IANA name when this machine knows
it, else its JavaScript offset (minutes behind UTC, as `Date.getTimezoneOffset` and `st.context.timezone_offset`
give it), else UTC, said as such. The expected wall-clock times are worked out by hand."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from steplab.classroom.localtime import browser_zone, local_text, zone_label

NOON_UTC = datetime(2026, 12, 3, 12, 0, 5, tzinfo=UTC)
JULY_NOON_UTC = datetime(2026, 7, 3, 12, 0, 5, tzinfo=UTC)


@pytest.mark.parametrize(("name", "offset", "label", "wall"), [
    ("Asia/Shanghai", -480, "Asia/Shanghai", "2026-12-03 20:00"),  # a class in China: UTC+8
    ("Asia/Shanghai", None, "Asia/Shanghai", "2026-12-03 20:00"),
    (None, -480, "UTC+08:00", "2026-12-03 20:00"),  # no name: the offset (minutes *behind* UTC, so -480 is +8)
    ("Not/A_Zone", -480, "UTC+08:00", "2026-12-03 20:00"),  # a name this machine does not know: the offset
    ("../../etc/passwd", -330, "UTC+05:30", "2026-12-03 17:30"),  # not a zone name at all (a path): the offset
    ("America/New_York", 300, "America/New_York", "2026-12-03 07:00"),
    (None, 300, "UTC-05:00", "2026-12-03 07:00"),
    (None, 0, "UTC", "2026-12-03 12:00"),
    ("UTC", 0, "UTC", "2026-12-03 12:00"),
    (None, None, "UTC", "2026-12-03 12:00"),  # the browser said nothing: UTC, named
    ("x" * 500, None, "UTC", "2026-12-03 12:00"),
    ("亚洲/上海", float("nan"), "UTC", "2026-12-03 12:00"),
    (["Asia/Shanghai"], True, "UTC", "2026-12-03 12:00"),  # not a string, not a number
    (None, 10**9, "UTC", "2026-12-03 12:00"),  # an offset no place has
    (None, float("inf"), "UTC", "2026-12-03 12:00"),
])
def test_the_readers_zone_and_its_wall_clock(name, offset, label, wall):
    zone = browser_zone(name, offset)
    assert zone_label(zone, NOON_UTC) == label
    assert local_text(NOON_UTC, zone) == wall
    assert local_text(NOON_UTC, zone, seconds=True) == wall + ":05"


def test_a_named_zone_follows_daylight_saving_and_an_offset_does_not():
    named, fixed = browser_zone("America/New_York", 300), browser_zone(None, 300)
    assert local_text(JULY_NOON_UTC, named) == "2026-07-03 08:00"  # summer time: UTC-4
    assert local_text(JULY_NOON_UTC, fixed) == "2026-07-03 07:00"
    assert zone_label(named, JULY_NOON_UTC) == "America/New_York"


def test_the_database_times_are_utc_and_a_naive_time_is_refused():
    assert browser_zone("Asia/Shanghai", None) == ZoneInfo("Asia/Shanghai")
    assert browser_zone(None, -480) == timezone(timedelta(hours=8))
    with pytest.raises(ValueError):
        local_text(datetime(2026, 12, 3, 12, 0), UTC)
