"""Lab B: with variable-length sequences, accumulation is not one big batch, unless the loss is normalised
by the label tokens of the whole accumulation group (the HF Trainer's 2024 fix, transformers 4.46).

A tiny causal next-token model sees the same sequences three ways:

- `full`: one batch, the loss averaged over all label tokens (what GA = 1 computes);
- `per_micro_batch`: each micro-batch's loss averaged over its own label tokens, divided by GA and
  accumulated (the Trainer before 4.46): a token in micro-batch j weighs 1/(GA·n_j) instead of 1/N;
- `group_tokens`: each micro-batch's summed token loss divided by N, the label tokens of the whole
  accumulation group (`num_items_in_batch`, transformers ≥ 4.46): every token weighs 1/N again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import torch
from torch import nn

from steplab.errors import InputError
from steplab.labs.torchkit import seeded

VOCAB, WIDTH = 48, 16
IGNORE = -100  # the label of a padding position, as in Hugging Face
MAX_SEQUENCES, MAX_LENGTH = 32, 256
EXAMPLES = {"unequal": "3, 40, 9, 16, 60, 5, 25, 2", "equal": "20, 20, 20, 20, 20, 20, 20, 20"}


class LabInputError(InputError):
    """Lengths the lab cannot use, and why."""


def parse_lengths(text: str, batch_size: int) -> list[int]:
    """'3, 40, 9, 16' → [3, 40, 9, 16]: label tokens per sequence, filled into micro-batches of `batch_size`."""
    parts = [p for p in re.split(r"[\s,\uff0c\u3001;\uff1b]+", text.strip()) if p]  # and Chinese , and ;
    if not parts:
        raise LabInputError("lab_input.empty")
    if not all(p.isdigit() for p in parts):
        raise LabInputError("lab_input.not_whole")
    lengths = [int(p) for p in parts]
    if not all(1 <= n <= MAX_LENGTH for n in lengths):
        raise LabInputError("lab_input.length_range", low=1, high=MAX_LENGTH)
    if len(lengths) > MAX_SEQUENCES:
        raise LabInputError("lab_input.too_many", limit=MAX_SEQUENCES)
    if len(lengths) % batch_size:
        raise LabInputError("lab_input.not_multiple", count=len(lengths), batch_size=batch_size)
    return lengths


class TinyCausalLM(nn.Module):
    """Token embedding plus the running mean of the embeddings so far → tanh layer → vocabulary logits.

    Causal: position t sees tokens ≤ t only, so right padding never changes a real token's loss.
    """

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.hidden = nn.Linear(2 * WIDTH, WIDTH)
        self.head = nn.Linear(WIDTH, VOCAB)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        e = self.embed(ids)
        positions = torch.arange(1, ids.shape[1] + 1, dtype=e.dtype).view(1, -1, 1)
        context = e.cumsum(dim=1) / positions
        return self.head(torch.tanh(self.hidden(torch.cat([e, context], dim=-1))))


@dataclass(frozen=True)
class TokenWeightingResult:
    lengths: tuple[int, ...]
    batch_size: int
    accumulation: int
    tokens_per_micro_batch: tuple[int, ...]  # n_j, label tokens of micro-batch j
    total_tokens: int  # N = Σ n_j (`num_items_in_batch`)
    grad_max_abs: float  # the full batch's largest gradient entry, for scale
    per_micro_batch_max_abs_diff: float  # old averaging against the full batch
    per_micro_batch_relative_diff: float  # ‖g_old − g_full‖ / ‖g_full‖
    group_tokens_max_abs_diff: float  # the fix against the full batch
    group_tokens_relative_diff: float
    loss_full: float  # the token mean over the group
    loss_per_micro_batch: float  # the mean of micro-batch means (what the old loss reported)

    def token_weight(self, j: int, fixed: bool) -> float:
        """How much one label token of micro-batch j counts in the update: 1/N, or 1/(GA·n_j) before the fix."""
        return 1 / self.total_tokens if fixed else 1 / (self.accumulation * self.tokens_per_micro_batch[j])


def _batch(sequences: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-pad token sequences into (input ids, labels); labels are the next tokens, IGNORE on padding."""
    width = max(len(s) for s in sequences) - 1
    ids = torch.zeros(len(sequences), width, dtype=torch.long)
    labels = torch.full((len(sequences), width), IGNORE, dtype=torch.long)
    for i, s in enumerate(sequences):
        ids[i, : len(s) - 1] = s[:-1]
        labels[i, : len(s) - 1] = s[1:]
    return ids, labels


def _token_loss_sum(model: nn.Module, ids: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    logits = model(ids)
    return nn.functional.cross_entropy(logits.reshape(-1, VOCAB), labels.reshape(-1), ignore_index=IGNORE,
                                       reduction="sum")


def _gradient(model: nn.Module) -> torch.Tensor:
    grad = torch.cat([p.grad.reshape(-1) for p in model.parameters()]).clone()
    model.zero_grad(set_to_none=True)
    return grad


def run(lengths: tuple[int, ...] | list[int], batch_size: int = 1, seed: int = 0) -> TokenWeightingResult:
    """Lab B for sequences with `lengths` label tokens, `batch_size` per micro-batch, in float64."""
    lengths = tuple(lengths)
    parse_lengths(",".join(map(str, lengths)), batch_size)  # the same checks as typed input
    accumulation = len(lengths) // batch_size
    with seeded(seed) as generator:
        model = TinyCausalLM().double()
        sequences = [torch.randint(0, VOCAB, (n + 1,), generator=generator) for n in lengths]
        groups = [sequences[j * batch_size:(j + 1) * batch_size] for j in range(accumulation)]
        counts = [sum(lengths[j * batch_size:(j + 1) * batch_size]) for j in range(accumulation)]
        total = sum(counts)

        full_loss = _token_loss_sum(model, *_batch(sequences)) / total
        full_loss.backward()
        full = _gradient(model)

        old_loss = 0.0
        for group, n in zip(groups, counts, strict=True):
            loss = _token_loss_sum(model, *_batch(group)) / n
            old_loss += float(loss.detach()) / accumulation
            (loss / accumulation).backward()
        old = _gradient(model)

        for group in groups:
            (_token_loss_sum(model, *_batch(group)) / total).backward()
        fixed = _gradient(model)

    return TokenWeightingResult(
        lengths=lengths, batch_size=batch_size, accumulation=accumulation, tokens_per_micro_batch=tuple(counts),
        total_tokens=total, grad_max_abs=float(full.abs().max()),
        per_micro_batch_max_abs_diff=float((old - full).abs().max()),
        per_micro_batch_relative_diff=float((old - full).norm() / full.norm()),
        group_tokens_max_abs_diff=float((fixed - full).abs().max()),
        group_tokens_relative_diff=float((fixed - full).norm() / full.norm()),
        loss_full=float(full_loss.detach()), loss_per_micro_batch=old_loss,
    )
