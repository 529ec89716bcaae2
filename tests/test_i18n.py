"""steplab.i18n's number helpers."""

from __future__ import annotations

import math

from steplab.i18n import fmt_number, whole


def test_whole_numbers_lose_their_point_and_nothing_else_changes():
    assert whole(8.0) == 8 and isinstance(whole(8.0), int)
    assert whole(-0.0) == 0 and isinstance(whole(-0.0), int)
    assert whole(2.5) == 2.5 and isinstance(whole(2.5), float)
    assert whole(7) == 7 and isinstance(whole(7), int)
    assert math.isinf(whole(math.inf)) and math.isnan(whole(math.nan))
    assert fmt_number(whole(1600.0)) == "1,600"
