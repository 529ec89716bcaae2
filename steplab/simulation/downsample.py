"""A long curve as at most `cap` points that keep its shape: every peak, trough and restart stays visible.

`downsample` keeps the minimum and the maximum of each bucket of consecutive points, plus exact points where the eye
looks (given by the caller: the end of warmup, epoch boundaries, the last update). Every kept index is a point of
the input: nothing is interpolated.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def downsample(values: np.ndarray, cap: int, keep: Iterable[int] = ()) -> np.ndarray:
    """Sorted indices of at most `cap` points of `values` that keep the curve's shape.

    A curve of at most `cap` points is kept whole. Otherwise the first and last points and the `keep`
    indices stay (an evenly spaced share of them if they would take more than half the budget: K points in
    all), and the rest of the budget goes to buckets of `size = ⌈n / ⌊(cap − K) / 2⌋⌉` consecutive points
    (`values[i·size:(i+1)·size]`), each keeping the index of its minimum and of its maximum (the first one on
    ties; NaN is passed over unless a whole bucket is NaN).
    """
    if cap < 4:
        raise ValueError(f"cap must be at least 4, got {cap}")
    values = np.asarray(values, dtype=np.float64)
    n = len(values)
    if n <= cap:
        return np.arange(n)
    kept = np.asarray(list(keep), dtype=np.int64)
    kept = np.unique(np.concatenate([[0, n - 1], kept[(kept >= 0) & (kept < n)]]))
    if len(kept) > cap // 2:
        pick = np.linspace(0, len(kept) - 1, cap // 2 - 2).round().astype(np.int64)
        kept = np.unique(np.concatenate([[0, n - 1], kept[pick]]))
    buckets = max(1, (cap - len(kept)) // 2)
    size = -(-n // buckets)
    buckets = -(-n // size)
    padded = np.full(buckets * size, values[-1])
    padded[:n] = values
    grid = padded.reshape(buckets, size)
    base = np.arange(buckets, dtype=np.int64) * size
    if np.isnan(values).any():  # NaN only where the real scheduler would raise: pass it over
        missing = np.isnan(grid)
        low = base + np.argmin(np.where(missing, np.inf, grid), axis=1)
        high = base + np.argmax(np.where(missing, -np.inf, grid), axis=1)
    else:
        low, high = base + np.argmin(grid, axis=1), base + np.argmax(grid, axis=1)
    return np.unique(np.concatenate([kept, np.minimum(low, n - 1), np.minimum(high, n - 1)]))
