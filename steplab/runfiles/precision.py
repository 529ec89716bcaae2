"""Whether a run's value and StepLab's agree, at the precision the run wrote it."""

from __future__ import annotations

from typing import Any

import numpy as np

EXACT = 1e-9  # relative: float precision after a JSON round trip, with room for the schedule's own arithmetic


def close(a: Any, b: Any, digits: int | None = None, decimals: int | None = None) -> np.ndarray:
    """Which values agree at the precision the run wrote them: `digits` significant digits (5.x prints four),
    `decimals` decimals (4.x prints the epoch with two), else to float precision."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    difference = np.abs(a - b)
    if digits is not None:
        return difference <= 5 * 10.0 ** -digits * np.maximum(np.abs(a), np.abs(b)) + 1e-15
    if decimals is not None:
        return difference <= 0.5 * 10.0 ** -decimals + 1e-9
    return (difference <= EXACT * np.maximum(np.maximum(np.abs(a), np.abs(b)), 1e-300)) | (a == b)
