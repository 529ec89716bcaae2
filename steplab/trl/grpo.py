"""TRL's `GRPOTrainer` counted: generation rounds, the micro-batches of each, and the Trainer's updates over them.

The rules, with the TRL 1.16.0 source they come from (TRL 0.24.0, LLaMA-Factory 0.9.5's pin, has the same ones
at the lines in brackets; `tests/test_trl_vs_steplab.py` holds both to real runs):

- `per_device_train_batch_size` B counts completions. `steps_per_generation` S defaults to
  `gradient_accumulation_steps` GA and `generation_batch_size` Gb to B·P·S (P processes); Gb given alone must divide
  by B·P and gives S = Gb / (B·P); both given is refused (`trainer/grpo_config.py:1096-1116` [646-666]).
- `auto_find_batch_size` is refused first (`grpo_config.py:1089`); an evaluating run's eval batch over all processes
  must divide by `num_generations_eval` (else G), checked after S and Gb and before G's own checks (1118-1127, not in
  0.24.0); evaluation changes no training count.
- Gb must divide by `num_generations` G, then G must be at least 2 (`grpo_config.py:1131-1141` [678-688]); the
  modulo comes first, so G = 0 fails on Python's own `integer modulo by zero`.
- A round takes U = Gb / G distinct prompts. `RepeatSampler` cuts the (shuffled) prompts into chunks of U, drops an
  incomplete last chunk, and yields each chunk μ·S times (μ = `num_iterations`), each prompt G times
  (`trainer/utils.py:930-952` [utils.py:1743-1765]; built in `grpo_trainer.py:1309-1316` [685-692]); the
  dataloader's batch is B·S per process (`grpo_trainer.py:1275` [640]). So each process's dataloader has
  ⌊N / U⌋ · μ · S batches (`dataloader_drop_last` changes nothing: the sampler's length is a multiple of Gb), and the
  Trainer counts each as one micro-batch: `training_step` runs once per batch and `_prepare_inputs` hands it one of
  the round's S slices of B completions.
- The Trainer's own rules over those micro-batches give `max_steps`, the updates, the final epoch and the learning
  rates (the release profile's plan).
- A generation happens at every micro-batch whose running count (`self._step`, never reset between epochs) is a
  multiple of S·μ (`grpo_trainer.py:1538-1546`, `_step` counted in `training_step`, 1513 [1001-1010, counted in
  `_prepare_inputs`]); the S slices of a round are used μ times each, in order.
- The Trainer logs "Num examples" = N prompts and "Total train batch size" = B·GA·P completions; with an empty
  dataloader (fewer than U prompts) and `max_steps`, B·GA·P × max_steps examples, as any Trainer run
  (transformers 5.24.0 `trainer.py:2531-2547`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from steplab.errors import SetupError, TrainerRefusal
from steplab.i18n import msg
from steplab.trainer.plan import Plan, make_plan
from steplab.trainer.profiles import PROFILES, release_key, release_range
from steplab.trainer.setup import TrainingSetup

TRL_MINIMUM_TRANSFORMERS = "4.56.2"
"""TRL 1.16.0 requires transformers 4.56.2 or newer (its package metadata)."""
TRL_PROFILES = tuple(profile.id for profile in PROFILES.values() if profile.framework == "transformers"
                     and release_key(release_range(profile)[1]) >= release_key(TRL_MINIMUM_TRANSFORMERS)[:2])
"""The release profiles TRL runs on: those whose newest release is TRL's minimum or newer (from the rows)."""


AUTO_FIND_BATCH_SIZE = ("auto_find_batch_size is not supported by GRPO, because the generation batch must contain full "
                        "prompt groups of num_generations completions, and reducing the batch size on out-of-memory "
                        "breaks this invariant. Set auto_find_batch_size=False and lower per_device_train_batch_size "
                        "instead.")
"""`GRPOConfig.__post_init__` (`grpo_config.py:1089-1094`), before the generation sizes are derived."""


def _divisors(number: int, smallest: int = 2, most: int = 6) -> str:
    """The first `most` divisors of `number` from `smallest` on, as a list to offer ("2, 4, 7, 8 …")."""
    found = [d for d in range(smallest, min(number, 10**6) + 1) if number % d == 0][:most + 1]
    return ", ".join(map(str, found[:most])) + (" …" if len(found) > most else "")


def generation_sizes(setup: TrainingSetup) -> tuple[int, int]:
    """(steps_per_generation S, generation_batch_size Gb) as `GRPOConfig.__post_init__` derives them, or its refusal
    (in TRL's words, with what to change in the reader's: `fix`)."""
    batch, processes = setup.per_device_train_batch_size, setup.world_size
    generations = setup.num_generations
    steps, size = setup.steps_per_generation, setup.generation_batch_size
    if setup.auto_find_batch_size:
        raise TrainerRefusal("ValueError", AUTO_FIND_BATCH_SIZE, "auto_find_batch_size", msg("trl.fix.auto_find_batch_size"))
    if size is None and steps is None:
        steps = setup.gradient_accumulation_steps
        size = batch * processes * steps
    elif size is not None and steps is None:
        if size % (batch * processes):
            raise TrainerRefusal("ValueError", f"generation_batch_size ({size}) must be divisible by the global batch "
                                 f"size ({batch * processes}).", "generation_batch_size",
                                 msg("trl.fix.global_batch", size=size, batch=batch, processes=processes, count=processes,
                                     global_batch=batch * processes))
        steps = size // (batch * processes)
    elif size is None and steps is not None:
        size = batch * processes * steps
    else:
        raise TrainerRefusal("ValueError", "'generation_batch_size' and 'steps_per_generation' can not be both "
                             "configured at the same time", "steps_per_generation", msg("trl.fix.both_set"))
    _check_eval_batch(setup)
    if generations == 0:
        raise TrainerRefusal("ZeroDivisionError", "integer modulo by zero", "num_generations",
                             msg("trl.fix.at_least_two", generations=generations))
    if size % generations:
        raise TrainerRefusal("ValueError", f"generation_batch_size ({size}) must be divisible by num_generations "
                             f"({generations}).", "num_generations",
                             msg("trl.fix.divisible", size=size, generations=generations, choices=_divisors(size)))
    if generations < 2:
        raise TrainerRefusal("ValueError", "GRPO requires at least 2 generations per prompt to calculate the "
                             f"advantages. You provided {generations}, which is less than the minimum required.",
                             "num_generations", msg("trl.fix.at_least_two", generations=generations))
    return steps, size


def _check_eval_batch(setup: TrainingSetup) -> None:
    """An evaluating run's eval batch over all processes must hold whole groups of `num_generations_eval` (else
    `num_generations`) completions (`grpo_config.py:1118-1127`): checked after the generation sizes, before the
    training batch's own divisibility."""
    if setup.eval_strategy == "no":  # `do_eval and eval_strategy != "no"`: TrainingArguments sets do_eval from it
        return
    generations = setup.num_generations_eval or setup.num_generations
    eval_batch = setup.per_device_eval_batch_size * setup.world_size
    if generations == 0:
        raise TrainerRefusal("ZeroDivisionError", "integer modulo by zero", "num_generations",
                             msg("trl.fix.at_least_two", generations=generations))
    if eval_batch % generations:
        raise TrainerRefusal("ValueError", f"The global eval batch size ({setup.per_device_eval_batch_size} * "
                             f"{setup.world_size}) must be divisible by the number of generations used for evaluation "
                             f"({generations}).", "per_device_eval_batch_size",
                             msg("trl.fix.eval_batch", generations=generations, choices=_multiples(generations)))


def _multiples(number: int, most: int = 4) -> str:
    """The first `most` multiples of `number`, to offer as an eval batch ("8, 16, 24, 32")."""
    return ", ".join(str(number * k) for k in range(1, most + 1))


@dataclass(frozen=True)
class GrpoPlan:
    """A GRPO run: its rounds of generation and the Trainer's plan over the micro-batches they make."""

    setup: TrainingSetup  # with GRPOConfig's fields: `num_generations` G, `num_iterations` μ, …
    steps_per_generation: int  # S
    generation_batch_size: int  # Gb, completions per round over all processes
    trainer: Plan  # the Trainer's plan over ⌊N / U⌋·μ·S micro-batches per epoch

    @property
    def unique_prompts_per_round(self) -> int:
        """U = Gb / G: distinct prompts each generation round draws."""
        return self.generation_batch_size // self.setup.num_generations

    @property
    def rounds_per_epoch(self) -> int:
        """Rounds a pass over the prompts makes: the sampler drops a last round of fewer than U prompts."""
        return self.setup.num_samples // self.unique_prompts_per_round

    @property
    def micro_batches_per_round(self) -> int:
        """S·μ: the micro-batches each process runs on one round's completions."""
        return self.steps_per_generation * self.setup.num_iterations

    @property
    def prompts_dropped_per_epoch(self) -> int:
        return self.setup.num_samples - self.rounds_per_epoch * self.unique_prompts_per_round

    @property
    def completions_per_update(self) -> int:
        """B·GA·P: the Trainer's "Total train batch size" counts completions."""
        s = self.setup
        return s.per_device_train_batch_size * s.gradient_accumulation_steps * s.world_size

    @property
    def num_examples(self) -> int:
        """The Trainer's "Num examples": the prompts, N (not N·G); with an empty dataloader, the Trainer's
        stand-in, total train batch size × max_steps (as `io.logblock` writes it)."""
        if not self.trainer.micro_batches_per_epoch:
            return self.completions_per_update * self.trainer.max_steps
        return self.setup.num_samples

    @cached_property
    def micro_batches_run(self) -> int:
        """Micro-batches each process runs in the whole run."""
        return sum(size * count for size, count in self.trainer.micro_batches_per_step_rle())

    @property
    def generation_rounds(self) -> int:
        """Generation calls per process: one at every S·μ-th micro-batch of the run."""
        return math.ceil(self.micro_batches_run / self.micro_batches_per_round)

    def generation_micro_batches(self) -> np.ndarray:
        """The micro-batch (from 0, counted over the whole run) each generation round comes before."""
        return np.arange(self.generation_rounds, dtype=np.int64) * self.micro_batches_per_round

    def update_rounds(self, first: int = 1, last: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For updates first..last: the first and last generation round (from 0) they learn from, and whether any
        of their micro-batches reuses a round's completions (a second or later of μ passes)."""
        last = self.trainer.optimizer_steps if last is None else last
        sizes = np.repeat(*np.array(self.trainer.micro_batches_per_step_rle() or [[0, 0]], dtype=np.int64).T)
        ends = np.cumsum(sizes)[first - 1:last]
        starts = ends - sizes[first - 1:last]
        per_round, steps = self.micro_batches_per_round, self.steps_per_generation
        residue = starts % per_round
        # the first micro-batch at or after `start` that is a second or later pass: itself, or the round's S-th
        reused = (residue >= steps) | (starts + (steps - residue) < ends) if per_round > steps else starts < 0
        return starts // per_round, (ends - 1) // per_round, reused


def plan_grpo(setup: TrainingSetup) -> GrpoPlan:
    """The GRPO run of `setup` (N = `num_samples` prompts); raises TRL's refusals as `TrainerRefusal`."""
    if setup.trainer not in TRL_PROFILES:
        raise SetupError("trl.profile", field="trainer", value=setup.trainer, allowed=", ".join(TRL_PROFILES),
                         minimum=TRL_MINIMUM_TRANSFORMERS)
    steps, size = generation_sizes(setup)
    prompts = size // setup.num_generations
    micro_batches = (setup.num_samples // prompts) * setup.num_iterations * steps
    # one sample per micro-batch on one process: the Trainer sees exactly this many batches per epoch
    try:
        trainer = make_plan(setup.replace(num_samples=micro_batches, per_device_train_batch_size=1, world_size=1,
                                          dataloader_drop_last=False), random_sampler=False)
    except TrainerRefusal as refusal:
        if micro_batches or refusal.fix is not None:
            raise
        # fewer prompts than a round: the dataloader is empty, and the Trainer asks for max_steps
        raise TrainerRefusal(refusal.error_type, refusal.message, "num_samples",
                             msg("trl.fix.no_round", prompts=prompts, n=setup.num_samples)) from None
    return GrpoPlan(setup, steps, size, trainer)
