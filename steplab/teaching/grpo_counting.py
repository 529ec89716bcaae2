"""GRPO's count as the course teaches it: a `GRPOTrainer` setup planned by `steplab.trl`, its numbers by name.

One door for lessons (`grpo:` scenarios and predicts), the self-check's `grpo` questions, the class polls and the
lesson's live widget: `grpo_setup` reads a flat mapping (the setup's fields and TRL's, as a YAML or a question
writes them), `grpo_plan` plans it with `steplab.trl.plan.plan_trl` (the rules and TRL's source lines are in
`steplab.trl.grpo`), `grpo_quantity` names its numbers, `worked` gives the arithmetic from the inputs to each one
and `notes` what to know about them. Everything here is computed by the engine: nothing is typed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from steplab.errors import SetupError, TrainerRefusal
from steplab.i18n import Message, code, fmt_int, msg, whole
from steplab.teaching.explain import Line, explain
from steplab.trainer.fields import TRL_FIELD_NAMES
from steplab.trainer.setup import TrainingSetup, setup_from_mapping
from steplab.trl.grpo import GrpoPlan, generation_sizes
from steplab.trl.plan import plan_trl

TRAINER_CLASS = "GRPOTrainer"
INPUTS = ("num_samples", "per_device_train_batch_size", "world_size", "gradient_accumulation_steps",
          "num_generations", "num_iterations", "steps_per_generation", "num_train_epochs")
"""The numbers a GRPO count starts from (N, B, P, GA, G, μ, S, epochs): what the widget's sliders set."""


TRL_NAMES = tuple(TRL_FIELD_NAMES)  # the setup's rows TRL's configs read (`FIELDS` rows with `trainer_classes`)


@dataclass(frozen=True)
class GrpoSetup:
    """A GRPO run's inputs: a setup whose trainer class is `GRPOTrainer` (N = `num_samples` prompts; GRPOConfig's
    fields are the setup's own rows). A type of its own, so that a lesson tells its scenarios apart."""

    setup: TrainingSetup

    def value(self, name: str) -> Any:
        """A field's value, the setup's or TRL's (`steps_per_generation` unset is None: S = GA)."""
        return getattr(self.setup, name)

    def values(self) -> dict[str, Any]:
        """The run as the flat mapping `grpo_setup` reads (TRL's unset sizes left out)."""
        return {name: value for name, value in self.setup.to_dict().items()
                if not (name in TRL_NAMES and value is None)}


def grpo_setup(values: Mapping[str, Any]) -> GrpoSetup:
    """A flat mapping of setup and TRL fields as a `GRPOTrainer` run; raises `SetupError` on a bad or unknown
    field (the trainer class is GRPO's whatever the mapping says)."""
    setup, unknown = setup_from_mapping({**values, "trainer_class": TRAINER_CLASS})
    if unknown:
        raise SetupError("grpo.unknown_field", field=str(unknown[0]))
    return GrpoSetup(setup)


@lru_cache(maxsize=256)
def grpo_plan(run: GrpoSetup) -> GrpoPlan:
    """The run planned by `steplab.trl` (raises `TrainerRefusal` in TRL's words, `SetupError`)."""
    plan = plan_trl(run.setup)
    assert isinstance(plan, GrpoPlan)
    return plan


def plan_of(values: Mapping[str, Any]) -> GrpoPlan:
    return grpo_plan(grpo_setup(values))


QUANTITIES: dict[str, Callable[[GrpoPlan], Any]] = {
    "generation_batch_size": lambda p: p.generation_batch_size,
    "steps_per_generation_used": lambda p: p.steps_per_generation,
    "unique_prompts_per_round": lambda p: p.unique_prompts_per_round,
    "rounds_per_epoch": lambda p: p.rounds_per_epoch,
    "prompts_dropped_per_epoch": lambda p: p.prompts_dropped_per_epoch,
    "micro_batches_per_round": lambda p: p.micro_batches_per_round,
    "micro_batches_per_epoch": lambda p: p.trainer.micro_batches_per_epoch,
    "num_update_steps_per_epoch": lambda p: p.trainer.num_update_steps_per_epoch,
    "max_steps": lambda p: p.trainer.max_steps,
    "optimizer_steps": lambda p: p.trainer.optimizer_steps,
    "generation_rounds": lambda p: p.generation_rounds,
    "completions_per_update": lambda p: p.completions_per_update,
    "num_examples": lambda p: p.num_examples,
    "completions_per_epoch": lambda p: p.rounds_per_epoch * p.generation_batch_size,
}
"""name -> how to read it off a GRPO plan (labels: `grpo.quantity.<name>`)."""

RESULTS = ("generation_batch_size", "unique_prompts_per_round", "rounds_per_epoch", "micro_batches_per_epoch",
           "num_update_steps_per_epoch", "max_steps", "generation_rounds")
"""What the widget shows, in reading order."""


def is_quantity(name: str) -> bool:
    return name in QUANTITIES or name in INPUTS


def grpo_quantity(plan: GrpoPlan, name: str) -> Any:
    """A named number of the run: a quantity of `QUANTITIES` or one of its inputs (`KeyError` for another name)."""
    if name in QUANTITIES:
        return QUANTITIES[name](plan)
    if name == "steps_per_generation":  # as the run uses it: unset means S = GA
        return plan.steps_per_generation
    if name in INPUTS:
        return GrpoSetup(plan.setup).value(name)
    raise KeyError(name)


def label(name: str) -> Message:
    """How a quantity or an input is called in a sentence."""
    return msg(f"grpo.quantity.{name}")


def _division(a: int, b: int) -> str:
    if a % b == 0:
        return f"{fmt_int(a)} ÷ {fmt_int(b)} = {fmt_int(a // b)}"
    return f"⌊{fmt_int(a)} ÷ {fmt_int(b)}⌋ = {fmt_int(a // b)}"


def worked(plan: GrpoPlan) -> tuple[Line, ...]:
    """The arithmetic from the inputs to the updates, one `Line` per quantity (the Trainer's own lines for the
    updates per epoch, the total and the updates that run, over the micro-batches GRPO's sampler makes)."""
    s = g = plan.setup  # the setup holds GRPOConfig's fields too
    batch, processes, steps = s.per_device_train_batch_size, s.world_size, plan.steps_per_generation
    if g.generation_batch_size is not None:  # given: S follows from it
        size = f"generation_batch_size = {fmt_int(plan.generation_batch_size)}"
        size_note = msg("grpo.worked.generation_batch_size_given", formula=f"{fmt_int(plan.generation_batch_size)} ÷ "
                        f"({fmt_int(batch)} × {fmt_int(processes)}) = {fmt_int(steps)}")
    else:
        size = f"{fmt_int(batch)} × {fmt_int(processes)} × {fmt_int(steps)} = {fmt_int(plan.generation_batch_size)}"
        size_note = msg("grpo.worked.generation_batch_size")
    rounds, per_round = plan.rounds_per_epoch, plan.micro_batches_per_round
    lines = [
        Line("generation_batch_size", label("generation_batch_size"), size, size_note),
        Line("unique_prompts_per_round", label("unique_prompts_per_round"),
             _division(plan.generation_batch_size, g.num_generations)),
        Line("rounds_per_epoch", label("rounds_per_epoch"), _division(s.num_samples, plan.unique_prompts_per_round),
             msg("grpo.worked.dropped", count=plan.prompts_dropped_per_epoch) if plan.prompts_dropped_per_epoch else None),
        Line("micro_batches_per_epoch", label("micro_batches_per_epoch"),
             f"{fmt_int(rounds)} × {fmt_int(g.num_iterations)} × {fmt_int(steps)} = {fmt_int(rounds * per_round)}",
             msg("grpo.worked.micro_batches")),
    ]
    trainer = {line.key: line for line in explain(plan.trainer)}
    lines += [trainer[key] for key in ("num_update_steps_per_epoch", "max_steps", "optimizer_steps")]
    lines.append(Line("generation_rounds", label("generation_rounds"),
                      f"⌈{fmt_int(plan.micro_batches_run)} ÷ {fmt_int(per_round)}⌉ = {fmt_int(plan.generation_rounds)}",
                      msg("grpo.worked.generation_rounds")))
    lines.append(Line("completions_per_update", label("completions_per_update"),
                      f"{fmt_int(batch)} × {fmt_int(s.gradient_accumulation_steps)} × {fmt_int(processes)} = "
                      f"{fmt_int(plan.completions_per_update)}"))
    return tuple(lines)


WORKED_FOR: dict[str, tuple[str, ...]] = {
    "generation_batch_size": ("generation_batch_size",),
    "unique_prompts_per_round": ("generation_batch_size", "unique_prompts_per_round"),
    "rounds_per_epoch": ("generation_batch_size", "unique_prompts_per_round", "rounds_per_epoch"),
    "prompts_dropped_per_epoch": ("generation_batch_size", "unique_prompts_per_round", "rounds_per_epoch"),
    "micro_batches_per_epoch": ("generation_batch_size", "unique_prompts_per_round", "rounds_per_epoch",
                                "micro_batches_per_epoch"),
    "num_update_steps_per_epoch": ("generation_batch_size", "unique_prompts_per_round", "rounds_per_epoch",
                                   "micro_batches_per_epoch", "num_update_steps_per_epoch"),
    "max_steps": ("generation_batch_size", "unique_prompts_per_round", "rounds_per_epoch", "micro_batches_per_epoch",
                  "num_update_steps_per_epoch", "max_steps"),
    "optimizer_steps": ("generation_batch_size", "unique_prompts_per_round", "rounds_per_epoch",
                        "micro_batches_per_epoch", "num_update_steps_per_epoch", "max_steps", "optimizer_steps"),
    "generation_rounds": ("generation_batch_size", "unique_prompts_per_round", "rounds_per_epoch",
                          "micro_batches_per_epoch", "num_update_steps_per_epoch", "max_steps", "optimizer_steps",
                          "generation_rounds"),
    "completions_per_update": ("completions_per_update",),
}
"""Which lines of `worked` lead to each answer (all of them for a name not listed)."""


def worked_for(plan: GrpoPlan, name: str) -> tuple[Line, ...]:
    wanted = WORKED_FOR.get(name)
    return tuple(line for line in worked(plan) if wanted is None or line.key in wanted)


def notes(plan: GrpoPlan) -> list[Message]:
    """What to know about these numbers: prompts the sampler leaves out (or no round at all), rounds reused (μ > 1),
    a generation that feeds several updates or an update that spans several generations (S·μ ≠ GA)."""
    s = g = plan.setup  # the setup holds GRPOConfig's fields too
    found = []
    if plan.rounds_per_epoch == 0:
        found.append(msg("grpo.note.no_round", prompts=s.num_samples, per_round=plan.unique_prompts_per_round))
    elif plan.prompts_dropped_per_epoch:
        found.append(msg("grpo.note.dropped", count=plan.prompts_dropped_per_epoch,
                         per_round=plan.unique_prompts_per_round))
    if g.num_iterations > 1:
        found.append(msg("grpo.note.reused", mu=g.num_iterations))
    ga, per_round = s.gradient_accumulation_steps, plan.micro_batches_per_round
    if per_round != ga:
        key = "grpo.note.round_feeds_updates" if per_round > ga else "grpo.note.update_spans_rounds"
        found.append(msg(key, per_round=per_round, ga=ga, ratio=_ratio(per_round, ga)))
    return found


def _ratio(a: int, b: int) -> str:
    high, low = max(a, b), min(a, b)
    return fmt_int(high // low) if high % low == 0 else f"{high / low:.2f}".rstrip("0").rstrip(".")


@dataclass(frozen=True)
class Trap:
    """A common wrong answer to "how many steps?": its value and the wrong rule behind it."""

    value: float
    why: Message


def _steps(values: Mapping[str, Any]) -> int | None:
    try:
        return plan_of(values).trainer.max_steps
    except (SetupError, TrainerRefusal):  # a wrong rule TRL refuses gives no trap
        return None


def traps(plan: GrpoPlan) -> list[Trap]:
    """The wrong rules people use for a GRPO run's steps (trl #3165, #3204, #3442; open-r1 #483), each worked
    out by the engine: steps = the prompts; the Trainer's count with B counting prompts; μ or S forgotten."""
    from steplab.trainer.plan import make_plan

    s = g = plan.setup  # the setup holds GRPOConfig's fields too
    found = [Trap(float(s.num_samples), msg("grpo.trap.dataset_size", value=s.num_samples))]
    as_prompts = make_plan(s).max_steps
    found.append(Trap(float(as_prompts), msg("grpo.trap.batch_of_prompts", value=as_prompts,
                                             effective=s.per_device_train_batch_size * s.gradient_accumulation_steps
                                             * s.world_size)))
    base = GrpoSetup(s).values()
    if g.num_iterations > 1 and (value := _steps({**base, "num_iterations": 1})) is not None:
        found.append(Trap(float(value), msg("grpo.trap.forgot_iterations", value=value, mu=g.num_iterations)))
    if s.world_size > 1 and (value := _steps({**base, "world_size": 1})) is not None:
        found.append(Trap(float(value), msg("grpo.trap.forgot_processes", value=value, processes=s.world_size)))
    times_g = math.ceil(s.num_samples * g.num_generations * s.num_train_epochs / plan.completions_per_update)
    found.append(Trap(float(times_g), msg("grpo.trap.one_division", value=times_g, prompts=s.num_samples,
                                          generations=g.num_generations, epochs=whole(s.num_train_epochs),
                                          effective=plan.completions_per_update)))
    return found


RANGES: dict[str, tuple[int, int]] = {
    "num_samples": (1, 100_000), "per_device_train_batch_size": (1, 64), "world_size": (1, 64),
    "gradient_accumulation_steps": (1, 64), "num_generations": (1, 64), "num_iterations": (1, 8),
    "steps_per_generation": (1, 64),
}
"""The lesson widget's controls (N, B, P, GA, G, μ, S): the scale of a course's runs; G = 1 is offered so that
TRL's refusal of it can be seen."""


@dataclass(frozen=True)
class WidgetView:
    """What the lesson's GRPO widget shows for the learner's numbers: the results (label, value) in reading order,
    the notes, the arithmetic, or why TRL refuses the run (then nothing else)."""

    results: tuple[tuple[Message, int], ...] = ()
    notes: tuple[Message, ...] = ()
    worked: tuple[Line, ...] = ()
    refusal: Message | None = None
    fix: Message | None = None  # with a refusal: why, in the reader's language, and what TRL allows (as /grpo says)


def widget_view(values: Mapping[str, Any]) -> WidgetView:
    """The widget's numbers for a run's values (the setup's and TRL's fields), as plain data."""
    try:
        plan = plan_of(values)
    except TrainerRefusal as refusal:
        return WidgetView(notes=_why_refused(values), refusal=msg(
            "grpo.widget_refused", error=code(f"{refusal.error_type}: {refusal.message}")), fix=refusal.fix)
    except SetupError as error:
        return WidgetView(refusal=msg("grpo.bad_input", problem=error.text))
    results = tuple((label(name), grpo_quantity(plan, name)) for name in RESULTS)
    return WidgetView(results, tuple(notes(plan)), worked(plan))


def _why_refused(values: Mapping[str, Any]) -> tuple[Message, ...]:
    """Why a run TRL's sizes accept is refused all the same: fewer prompts than one round takes leave the Trainer
    an empty dataloader (and no `max_steps` to go by)."""
    try:
        run = grpo_setup(values)
        _, size = generation_sizes(run.setup)
    except (SetupError, TrainerRefusal):
        return ()
    per_round = size // run.setup.num_generations
    if run.setup.num_samples < per_round:
        return (msg("grpo.note.no_round", prompts=run.setup.num_samples, per_round=per_round),)
    return ()
