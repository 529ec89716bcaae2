"""Lab D's first two layers, torch-free: the chapter's V100 runs and the stated memory model.

1. measured: the chapter's two V100 runs (Qwen/Qwen3-0.6B, course data, 50 steps each);
2. a stated model: peak = F + A × micro-batch, where F (weights, gradients, optimizer states and whatever
   else does not grow with the batch) and A (activations of one sample at the course's sequence lengths)
   are the line through the two measurements. Two points fix a line exactly, so the model only
   extrapolates; it is labelled as such.

The CPU measurement (the third layer) needs torch and lives in `steplab.labs.memory`, which re-exports these.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from steplab.labs.readings import accumulation_for, effective_batch

GIB = 2**30
V100_GIB = 32  # the V100's memory
QWEN3_PARAMETERS = 0.6e9  # Qwen/Qwen3-0.6B, embeddings included
FP32_ADAMW_BYTES = {"weights": 4, "gradients": 4, "optimizer": 8}  # AdamW keeps two fp32 moments
MICRO_BATCHES = (1, 2, 4, 8, 16)  # the micro-batch sizes the model is read at (the page's choices)


@dataclass(frozen=True)
class V100Run:
    """One of the chapter's runs: same V100, model and data, 50 optimizer steps, effective batch 32."""

    batch_size: int
    accumulation: int
    peak_gib: float  # the highest sampled GPU memory, from loading to saving
    seconds: float  # the whole command, from loading to saving
    steps: int = 50

    @property
    def effective_batch(self) -> int:
        """Samples per optimizer step: micro-batch × accumulation."""
        return effective_batch(self.batch_size, self.accumulation)

    @property
    def seconds_per_step(self) -> float:
        """An upper bound: the command's time includes loading the model and saving it."""
        return self.seconds / self.steps

    @property
    def seconds_per_micro_batch(self) -> float:
        return self.seconds / (self.steps * self.accumulation)

    @property
    def seconds_per_sample(self) -> float:
        return self.seconds / (self.steps * self.accumulation * self.batch_size)


def _chapter_runs() -> tuple[V100Run, ...]:
    """The chapter's V100 runs from `steplab.teaching.measurements` (the project's one copy of measured figures),
    largest micro-batch first."""
    from steplab.teaching.measurements import measurements

    runs = [V100Run(m["per_device_train_batch_size"], m["gradient_accumulation_steps"], m["peak_memory_gib"],
                    m["seconds"], m["steps"]) for name, m in measurements().items() if name.startswith("v100_")]
    return tuple(sorted(runs, key=lambda r: -r.batch_size))


CHAPTER_RUNS = _chapter_runs()


def chapter_line() -> tuple[float, float]:
    """(F, A) in GiB: the line peak = F + A × micro-batch through the chapter's two measurements."""
    (b1, m1), (b2, m2) = ((r.batch_size, r.peak_gib) for r in CHAPTER_RUNS)
    per_sample = (m1 - m2) / (b1 - b2)
    return m1 - per_sample * b1, per_sample


def predicted_peak_gib(batch_size: int) -> float:
    """The model's peak memory for one micro-batch size: F + A × batch_size."""
    fixed, per_sample = chapter_line()
    return fixed + per_sample * batch_size


def full_training_states_gib(parameters: float = QWEN3_PARAMETERS) -> dict[str, float]:
    """Weights, gradients and AdamW states if every parameter is trained in fp32: 4 + 4 + 8 bytes each."""
    return {part: parameters * size / GIB for part, size in FP32_ADAMW_BYTES.items()}


# --- what the page reads off the runs and the model ----------------------------------------------------

def chapter_effective_batch(runs: Sequence[V100Run] = CHAPTER_RUNS) -> int:
    """The effective batch the chapter's runs share (they trade micro-batch for accumulation)."""
    sizes = {run.effective_batch for run in runs}
    if len(sizes) != 1:
        raise ValueError(f"the runs do not share one effective batch: {sorted(sizes)}")
    return sizes.pop()


def chapter_accumulation(batch_size: int) -> int:
    """The accumulation that keeps the chapter's effective batch at this micro-batch size."""
    return accumulation_for(batch_size, chapter_effective_batch())


def measured_run(batch_size: int, runs: Sequence[V100Run] = CHAPTER_RUNS) -> V100Run | None:
    """The chapter's run with this micro-batch size, or None when the course did not measure it."""
    return next((run for run in runs if run.batch_size == batch_size), None)


def fits_v100(peak_gib: float) -> bool:
    """Whether a peak of this many GiB fits into the V100's memory."""
    return peak_gib <= V100_GIB


def first_too_big(sizes: Sequence[int] = MICRO_BATCHES) -> int:
    """The smallest of `sizes` whose predicted peak exceeds the V100 (the largest size if none does)."""
    return next((size for size in sizes if not fits_v100(predicted_peak_gib(size))), sizes[-1])


@dataclass(frozen=True)
class MemoryBudget:
    """The model's F beside what full fp32 AdamW training of Qwen3-0.6B would need, in GiB."""

    fixed: float  # F
    per_sample: float  # A
    weights: float
    gradients: float
    optimizer: float
    billions: float  # the model's parameters, in billions

    @property
    def states(self) -> float:
        """Weights + gradients + optimizer states."""
        return self.weights + self.gradients + self.optimizer

    @property
    def rest(self) -> float:
        """The part of F the states do not explain (CUDA context, cached memory, buffers)."""
        return self.fixed - self.states


def memory_budget(parameters: float = QWEN3_PARAMETERS) -> MemoryBudget:
    """F and A of the chapter's line next to the fp32 training states of `parameters` parameters."""
    fixed, per_sample = chapter_line()
    states = full_training_states_gib(parameters)
    return MemoryBudget(fixed, per_sample, states["weights"], states["gradients"], states["optimizer"],
                        parameters / 1e9)
