"""The validation split LLaMA-Factory asks `datasets` for (`data_utils.split_dataset` → `train_test_split`)."""

from __future__ import annotations

import math

import numpy as np

from steplab.dataset.errors import DatasetError


def held_out(val_size: float, rows: int) -> int:
    """Rows `train_test_split` holds out: a fraction rounds up (ceil), a whole number above 1 is that many.

    LLaMA-Factory passes `int(val_size)` when `val_size > 1` and the value as it is otherwise, so the integer
    1 of a YAML holds out one row while `1.0` is a fraction `datasets` refuses; `datasets` also refuses a
    count not below the rows and a split that leaves no training row.
    """
    if val_size <= 1e-6:
        return 0
    if val_size > 1 or (isinstance(val_size, int) and val_size == 1):
        count = int(val_size)
        if count >= rows:
            raise DatasetError("dataset.val_too_big", val_size=count, rows=rows)
    else:
        if val_size >= 1:
            raise DatasetError("dataset.val_fraction", val_size=str(val_size))
        count = math.ceil(val_size * rows)
    if rows - count <= 0:
        raise DatasetError("dataset.val_too_big", val_size=val_size, rows=rows)
    return count


def split_order(rows: int, n_test: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(train, eval) row indices in the order `datasets` keeps them: one permutation by `default_rng(seed)`."""
    permutation = np.random.default_rng(seed).permutation(rows)
    return permutation[n_test:], permutation[:n_test]
