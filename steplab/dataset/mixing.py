"""Which rows of which dataset a mixed dataset holds, in order: `concat` and `datasets.interleave_datasets`.

LLaMA-Factory merges several datasets with `mix_strategy` (`data_utils.merge_dataset`): `concat` puts them one
after the other; `interleave_under` / `interleave_over` call `datasets.interleave_datasets` (4.0) with the
stopping strategy `first_exhausted` / `all_exhausted` and `interleave_probs`. Without probabilities that is a
fixed round: one row of each dataset in turn, until the first runs out (under) or every one has (over, the
shorter ones starting again). With probabilities each row's source is drawn by `numpy.random.default_rng(seed)`
in blocks of 1,000, which this module draws the same way. `interleave_once` is refused by `datasets` 4.0 for
map-style datasets. One dataset is returned as it is, whatever the strategy.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from steplab.dataset.errors import DatasetError
from steplab.dataset.files import DATASETS_RELEASE

Order = tuple[np.ndarray, np.ndarray]
"""(dataset index, row index) of each row of the mixed dataset."""


def concat(lengths: Sequence[int]) -> Order:
    sources = np.repeat(np.arange(len(lengths)), lengths)
    rows = np.concatenate([np.arange(n) for n in lengths]) if lengths else np.zeros(0, dtype=np.int64)
    return sources.astype(np.int64), rows.astype(np.int64)


def _round_robin(lengths: Sequence[int], oversampling: bool) -> Order:
    count = max(lengths) if oversampling else min(lengths)
    rows = np.arange(count).reshape(-1, 1)
    if oversampling:
        rows = np.mod(rows, np.array(lengths).reshape(1, -1))
    else:
        rows = np.broadcast_to(rows, (count, len(lengths)))
    sources = np.broadcast_to(np.arange(len(lengths)).reshape(1, -1), rows.shape)
    return sources.flatten().astype(np.int64), rows.flatten().astype(np.int64)


def _drawn(lengths: Sequence[int], probabilities: Sequence[float], seed: int | None, oversampling: bool,
           limit: int) -> Order:
    rng = np.random.default_rng(seed)
    exhausted = np.zeros(len(lengths), dtype=bool)
    stop = np.all if oversampling else np.any
    current = [0] * len(lengths)
    sources: list[int] = []
    rows: list[int] = []
    while True:
        try:
            block = rng.choice(len(lengths), size=1000, p=list(probabilities))
        except ValueError as error:
            raise DatasetError("dataset.probs_refused", reason=str(error)) from None
        for source in block.tolist():
            if stop(exhausted):
                return np.array(sources, dtype=np.int64), np.array(rows, dtype=np.int64)
            sources.append(source)
            rows.append(current[source])
            current[source] += 1
            if current[source] >= lengths[source]:
                exhausted[source] = True
                current[source] = 0
            if len(sources) > limit:
                raise DatasetError("dataset.interleave_too_long", limit=limit)


def mix(lengths: Sequence[int], strategy: str | None, probabilities: Sequence[float] | None, seed: int | None,
        limit: int = 10_000_000) -> Order:
    """The rows of the merged dataset; `strategy` is `datasets`' stopping strategy (None: concatenate)."""
    if len(lengths) == 1 or strategy is None:
        return concat(lengths)
    if strategy not in ("first_exhausted", "all_exhausted"):
        raise DatasetError("dataset.interleave_once", release=DATASETS_RELEASE)
    oversampling = strategy == "all_exhausted"
    if probabilities is None:
        return _round_robin(lengths, oversampling)
    return _drawn(lengths, probabilities, seed, oversampling, limit)
