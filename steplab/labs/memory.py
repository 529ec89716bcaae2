"""Lab D: memory and time against micro-batch size.

Three layers, kept apart on screen (the first two are torch-free, in `steplab.labs.chapter_memory`, and
re-exported here):

1. measured: the chapter's two V100 runs (Qwen/Qwen3-0.6B, course data, 50 steps each);
2. a stated model: peak = F + A × micro-batch, where F (weights, gradients, optimizer states and whatever
   else does not grow with the batch) and A (activations of one sample at the course's sequence lengths)
   are the line through the two measurements. Two points fix a line exactly, so the model only
   extrapolates; it is labelled as such;
3. measured here: the activation memory of a tiny transformer on this CPU, as the bytes of the distinct
   tensors autograd saves for the backward pass (`torch.autograd.graph.saved_tensors_hooks`), parameters
   excluded, for several micro-batch sizes and sequence lengths.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import torch
from torch import nn

from steplab.labs.chapter_memory import (  # noqa: F401  (lab D's public names, re-exported)
    CHAPTER_RUNS,
    FP32_ADAMW_BYTES,
    GIB,
    QWEN3_PARAMETERS,
    V100_GIB,
    V100Run,
    chapter_line,
    full_training_states_gib,
    predicted_peak_gib,
)
from steplab.labs.torchkit import seeded

# --- the CPU measurement -------------------------------------------------------------------------------

VOCAB, WIDTH, HEADS, LAYERS = 256, 64, 4, 2
BATCH_SIZES = (1, 2, 4, 8, 16)
SEQUENCE_LENGTHS = (32, 64, 128, 256)
FIXED_LENGTH, FIXED_BATCH = 128, 4


class Block(nn.Module):
    """A pre-norm transformer block with plain (materialised) causal attention and a 4× GELU MLP."""

    def __init__(self) -> None:
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(WIDTH), nn.LayerNorm(WIDTH)
        self.qkv = nn.Linear(WIDTH, 3 * WIDTH)
        self.out = nn.Linear(WIDTH, WIDTH)
        self.mlp = nn.Sequential(nn.Linear(WIDTH, 4 * WIDTH), nn.GELU(), nn.Linear(4 * WIDTH, WIDTH))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, _ = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, s, 3, HEADS, WIDTH // HEADS).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-2, -1) / (WIDTH // HEADS) ** 0.5
        causal = torch.ones(s, s, dtype=torch.bool).triu(1)
        attention = scores.masked_fill(causal, float("-inf")).softmax(dim=-1)
        x = x + self.out((attention @ v).transpose(1, 2).reshape(b, s, WIDTH))
        return x + self.mlp(self.norm2(x))


class TinyTransformer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.position = nn.Embedding(max(SEQUENCE_LENGTHS), WIDTH)
        self.blocks = nn.Sequential(*(Block() for _ in range(LAYERS)))
        self.norm = nn.LayerNorm(WIDTH)
        self.head = nn.Linear(WIDTH, VOCAB)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.embed(ids) + self.position(torch.arange(ids.shape[1]))
        return self.head(self.norm(self.blocks(x)))


@dataclass(frozen=True)
class ActivationPoint:
    batch_size: int
    sequence_length: int
    saved_bytes: int  # distinct storages autograd keeps for backward, parameters excluded
    saved_tensors: int

    @property
    def bytes_per_token(self) -> float:
        return self.saved_bytes / (self.batch_size * self.sequence_length)


@dataclass(frozen=True)
class ActivationMeasurement:
    parameters: int
    parameter_bytes: int
    by_batch: tuple[ActivationPoint, ...]  # sequence length FIXED_LENGTH
    by_length: tuple[ActivationPoint, ...]  # micro-batch FIXED_BATCH

    def batch_line(self) -> tuple[float, float]:
        """(intercept, bytes per sample) of the least-squares line through the by-batch points."""
        xs = [p.batch_size for p in self.by_batch]
        ys = [p.saved_bytes for p in self.by_batch]
        n = len(xs)
        mean_x, mean_y = sum(xs) / n, sum(ys) / n
        slope = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / sum(
            (x - mean_x) ** 2 for x in xs)
        return mean_y - slope * mean_x, slope


def saved_tensor_bytes(compute: Callable[[], torch.Tensor], parameters: Iterable[torch.Tensor]) -> tuple[int, int]:
    """Bytes and count of the distinct storages autograd saves for backward while `compute()` runs.

    A saved tensor is counted by its storage, once, however many views of it are saved; the storages of
    `parameters` are left out (they exist with or without a forward pass). The result of `compute` (and so
    the graph holding every saved storage) stays alive until the count is done, so no address is reused.
    """
    excluded = {p.untyped_storage().data_ptr() for p in parameters}
    storages: dict[int, int] = {}

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        storage = tensor.untyped_storage()
        pointer = storage.data_ptr()
        if pointer not in excluded:
            storages.setdefault(pointer, storage.nbytes())
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        result = compute()
    size, count = sum(storages.values()), len(storages)
    del result
    return size, count


def next_token_loss(model: nn.Module, ids: torch.Tensor) -> torch.Tensor:
    logits = model(ids[:, :-1])
    return nn.functional.cross_entropy(logits.reshape(-1, VOCAB), ids[:, 1:].reshape(-1))


def measure_activations(seed: int = 0) -> ActivationMeasurement:
    """Saved-activation bytes of the tiny transformer for each micro-batch size and each sequence length."""
    with seeded(seed) as generator:
        model = TinyTransformer()

        def point(batch: int, length: int) -> ActivationPoint:
            ids = torch.randint(0, VOCAB, (batch, length + 1), generator=generator)
            size, count = saved_tensor_bytes(lambda: next_token_loss(model, ids), model.parameters())
            return ActivationPoint(batch, length, size, count)

        by_batch = tuple(point(b, FIXED_LENGTH) for b in BATCH_SIZES)
        by_length = tuple(point(FIXED_BATCH, s) for s in SEQUENCE_LENGTHS)
        parameters = sum(p.numel() for p in model.parameters())
        parameter_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    return ActivationMeasurement(parameters, parameter_bytes, by_batch, by_length)
