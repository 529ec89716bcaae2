"""`SFTTrainer` packing: how many examples `pack_dataset` makes of examples with known token lengths.

TRL 1.16.0, `trl/data_utils.py`: packing runs as `dataset.map(..., batched=True)`, so it packs each batch of
`datasets`' default 1,000 examples on its own (`pack_dataset`, lines 837-925; `SFTTrainer._prepare_dataset` passes
no batch size, `trainer/sft_trainer.py:1480`), after an optional shuffle (`shuffle_dataset`, default False, line 1476).
- `bfd` (`_pack_bfd`, lines 730-817): empty examples are dropped, each is cut to `max_length`, then best-fit
  decreasing: longest first, each goes into the open bin with the least room that still holds it, else a new bin.
- `bfd_split`: the same, but an example longer than `max_length` is split into pieces of `max_length` (the last
  one shorter) instead of cut.
- `wrapped` (`_pack_wrapped`, lines 820-834): a batch's tokens end to end, cut every `max_length`: ⌈tokens / L⌉.

The lengths are those of the tokenized examples (a text example's with the EOS token `SFTTrainer` appends). TRL
0.24.0 (LLaMA-Factory 0.9.5's pin) packs `bfd` and `wrapped` the same way and has no `bfd_split`. Not modelled:
`shuffle_dataset=True` (which examples share a batch then depends on the permutation) and `dataset_num_proc`
(each worker's shard packs on its own).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence

MAP_BATCH = 1000
"""`datasets.Dataset.map`'s default `batch_size`: packing never crosses these batches."""


def _best_fit_bins(lengths: Sequence[int], capacity: int) -> int:
    """Bins best-fit decreasing makes: each length into the bin with the least room ≥ it, else a new bin."""
    rooms: list[int] = []  # the room left in each open bin with room, kept sorted
    bins = 0
    for length in sorted(lengths, reverse=True):
        at = bisect.bisect_left(rooms, length)
        if at < len(rooms) and rooms[at] < capacity:
            room = rooms.pop(at)
        else:
            bins += 1
            room = capacity
        room -= length
        if room > 0:
            bisect.insort(rooms, room)
    return bins


def _pieces(length: int, capacity: int) -> list[int]:
    whole, rest = divmod(length, capacity)
    return [capacity] * whole + ([rest] if rest else [])


def packed_batch(lengths: Sequence[int], max_length: int, strategy: str) -> int:
    """Examples one map batch packs into."""
    if strategy == "wrapped":
        return math.ceil(sum(lengths) / max_length)
    kept = [length for length in lengths if length > 0]
    if strategy == "bfd":
        return _best_fit_bins([min(length, max_length) for length in kept], max_length)
    return _best_fit_bins([piece for length in kept for piece in _pieces(length, max_length)], max_length)


def packed_examples(lengths: Sequence[int], max_length: int, strategy: str = "bfd") -> int:
    """Examples the Trainer sees after packing examples of these token lengths (in the dataset's order)."""
    return sum(packed_batch(lengths[start:start + MAP_BATCH], max_length, strategy)
               for start in range(0, len(lengths), MAP_BATCH))
