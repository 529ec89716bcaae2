"""The number formatters that keep a measured figure's precision (`steplab/i18n.py` `fmt_fixed`,
`fmt_significant`, `fmt_exponent`, `fmt_percent`), against the format specs the views used to write inline."""

from __future__ import annotations

import random

from steplab.i18n import fmt_exponent, fmt_fixed, fmt_number, fmt_percent, fmt_significant


def test_each_formatter_writes_what_its_spec_wrote_below_a_thousand():
    rng = random.Random(31)
    for _ in range(3000):
        value = rng.choice((-1, 1)) * rng.random() * 10 ** rng.randint(-8, 2)
        for digits in (0, 1, 2, 3):
            assert fmt_fixed(value, digits) == f"{value:.{digits}f}"
        assert fmt_significant(value) == f"{value:g}" and fmt_significant(value, 3) == f"{value:.3g}"
        assert fmt_exponent(value) == f"{value:.1e}" and fmt_exponent(value, 2) == f"{value:.2e}"
        assert fmt_percent(value) == f"{value:.0%}" and fmt_percent(value, 1) == f"{value:.1%}"


def test_fixed_keeps_its_decimals_and_groups_thousands_as_fmt_number_does():
    assert fmt_fixed(9.8, 2) == "9.80" and fmt_number(9.8) == "9.8"  # a measurement keeps its precision
    assert fmt_fixed(27.916, 2) == "27.92" and fmt_fixed(0.69, 3) == "0.690"
    assert fmt_fixed(1024, 0) == "1,024" == fmt_number(1024) and fmt_fixed(12345.678, 1) == "12,345.7"
    assert fmt_significant(1e-12) == "1e-12" and fmt_significant(1024.0) == "1024"
    assert fmt_percent(0.25) == "25%" and fmt_exponent(4.2e-17) == "4.2e-17"
