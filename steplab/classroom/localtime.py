"""The class's times in the reader's own time zone. Pure: the zone comes from the page (the browser's).

The database keeps UTC; a class in Beijing reads "18:30 (Asia/Shanghai)", not "10:30 UTC". The browser tells its
zone as an IANA name (`Asia/Shanghai`) and as JavaScript's offset (minutes *behind* UTC: -480 for UTC+8). The name
wins when this machine knows it (daylight saving included); else the offset; else UTC, said as such.
"""

from __future__ import annotations

import math
import numbers
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

MAX_ZONE_CHARS = 64  # the longest IANA name is about 30 characters; anything longer is not one
MAX_OFFSET_MINUTES = 18 * 60  # Python's timezone() takes offsets strictly inside ±24 h; real ones lie within ±14 h


def browser_zone(name: object, offset_minutes: object) -> tzinfo:
    """The zone to show times in: the browser's IANA `name` if known here, else its JavaScript `offset_minutes`
    (minutes behind UTC), else UTC. Untrusted input: anything odd falls through to the next choice."""
    if isinstance(name, str) and 0 < len(name) <= MAX_ZONE_CHARS and name.isascii():
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError, OSError):
            pass
    if isinstance(offset_minutes, numbers.Real) and not isinstance(offset_minutes, bool) and \
            math.isfinite(offset_minutes) and abs(offset_minutes) <= MAX_OFFSET_MINUTES:
        minutes = -int(offset_minutes)
        return UTC if minutes == 0 else timezone(timedelta(minutes=minutes))
    return UTC


def zone_label(zone: tzinfo, moment: datetime | None = None) -> str:
    """How the zone is named beside a time: its IANA name (`Asia/Shanghai`), else its offset (`UTC+08:00`),
    `UTC` for UTC."""
    if isinstance(zone, ZoneInfo) and zone.key not in ("UTC", "Etc/UTC"):
        return zone.key
    offset = (moment or datetime.now(UTC)).astimezone(zone).utcoffset() or timedelta(0)
    if not offset:
        return "UTC"
    sign = "+" if offset > timedelta(0) else "-"
    hours, minutes = divmod(abs(int(offset.total_seconds())) // 60, 60)
    return f"UTC{sign}{hours:02d}:{minutes:02d}"


def local_text(moment: datetime, zone: tzinfo, seconds: bool = False) -> str:
    """`moment` (timezone-aware) as a wall-clock time in `zone`: `2026-12-03 17:00` (with `:05` seconds if
    asked), without the zone's name (say it once, with `zone_label`)."""
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError("local_text takes a timezone-aware datetime")
    return moment.astimezone(zone).strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M")
