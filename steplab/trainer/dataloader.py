"""Micro-batches per epoch: what `len(train_dataloader)` is on each data-parallel process."""

from __future__ import annotations

from dataclasses import dataclass


def ceil_div(a: int, b: int) -> int:
    """⌈a / b⌉ for non-negative integers, without floats."""
    return -(-a // b)


@dataclass(frozen=True)
class EpochData:
    """One pass over the training samples, seen from one process."""

    micro_batches: int  # L: micro-batches each process runs per epoch
    batches_total: int  # batches the sampler cuts before sharding over processes
    samples_used: int  # samples that go through the model per epoch, all processes together
    duplicated: int  # samples drawn twice per epoch to fill the last batches of every process
    dropped: int  # samples skipped per epoch by dataloader_drop_last
    last_batch: int  # samples in the last micro-batch of a process (== batch size unless short)
    limited_from: int | None = None  # L before Lightning's limit_train_batches, when it cut


def hf_epoch(num_samples: int, batch: int, processes: int, drop_last: bool) -> EpochData:
    """HF Trainer + Accelerate: batches are cut first, then dealt out to processes (`BatchSamplerShard`).

    With several processes and no drop_last, the last round of batches is filled up by cycling
    back to the first samples of the epoch (`even_batches`), so every process runs the same count.
    """
    batches = num_samples // batch if drop_last else ceil_div(num_samples, batch)
    if processes == 1:
        per_process = batches
        used = per_process * batch if drop_last else num_samples
    else:
        per_process = batches // processes if drop_last else ceil_div(batches, processes)
        used = per_process * batch * processes if drop_last else max(num_samples, per_process * batch * processes)
    duplicated = max(0, used - num_samples)
    dropped = max(0, num_samples - used)
    if processes == 1 and not drop_last and per_process:
        last = num_samples - (per_process - 1) * batch
    else:
        last = batch if per_process else 0
    return EpochData(per_process, batches, used, duplicated, dropped, last)


def lightning_epoch(
    num_samples: int, batch: int, processes: int, drop_last: bool, limit: float | None = None
) -> EpochData:
    """Lightning: a `DistributedSampler` pads the samples to ⌈N / P⌉ per process, then each process batches.

    `limit_train_batches` then cuts the epoch: a whole number caps it, a fraction keeps int(L × limit).
    """
    per_rank = ceil_div(num_samples, processes)
    padded = per_rank * processes
    per_process = per_rank // batch if drop_last else ceil_div(per_rank, batch)
    used_per_rank = per_process * batch if drop_last else per_rank
    last = (per_rank - (per_process - 1) * batch) if (per_process and not drop_last) else (batch if per_process else 0)
    limited_from = None
    if limit is not None:
        limited = min(per_process, int(limit)) if isinstance(limit, int) and limit > 1 else int(per_process * limit)
        if limited != per_process:
            limited_from, per_process, last = per_process, limited, batch
            used_per_rank = min(used_per_rank, limited * batch)
    used = used_per_rank * processes
    duplicated = max(0, min(used, padded) - num_samples)
    dropped = max(0, num_samples - used)
    batches = ceil_div(num_samples, batch) if processes == 1 else per_process * processes
    return EpochData(per_process, batches, used, duplicated, dropped, last, limited_from)
