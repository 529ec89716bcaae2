"""The question bank's schema: what a question spec, a drawn question and its feedback hold."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from steplab.errors import SetupError, TrainerRefusal
from steplab.i18n import PLACEHOLDER, Joined, Message, Text, joined, msg, whole
from steplab.teaching import grpo_counting
from steplab.teaching.explain import Line
from steplab.teaching.grpo_counting import GrpoSetup
from steplab.teaching.lessons import lesson_numbers
from steplab.trainer.plan import Plan, make_plan
from steplab.trainer.quantities import PLAN_QUANTITIES, quantity
from steplab.trainer.setup import FIELD_NAMES, TrainingSetup, setup_from_mapping

BANK_FILE = Path(__file__).resolve().parents[3] / "lessons" / "questions.yaml"
KINDS = ("numeric", "choice", "sliders", "grpo")
NUMERIC_KINDS = ("numeric", "grpo")
"""The kinds whose answer is one number: a Trainer setup's quantity, or a TRL `GRPOTrainer` run's."""
LESSONS = lesson_numbers()
MAX_RESPONSE_CHARS = 64
MAX_COMBINATIONS = 2_000  # parameter combinations checked one by one when a bank loads; beyond, a sample
MAX_GRID = 20_000  # slider settings searched for a solution
# Numeric answers that take decimals (the others are counts: whole numbers); a question with a tolerance does too.
DECIMAL_ANSWERS = ("final_epoch", "eval_every_epochs", "first_lr", "last_lr", "num_train_epochs", "warmup_ratio")
NUMERIC_FIELDS = tuple(name for name in FIELD_NAMES if isinstance(getattr(TrainingSetup(), name), int | float)
                       and not isinstance(getattr(TrainingSetup(), name), bool)) + ("warmup_ratio", "eval_steps")
# Which lines of the worked arithmetic lead to each answer (all lines for anything not listed).
WORKED_FOR = {
    "micro_batches_per_epoch": ("micro_batches_per_epoch",),
    "samples_duplicated_per_epoch": ("micro_batches_per_epoch",),
    "samples_dropped_per_epoch": ("micro_batches_per_epoch",),
    "num_update_steps_per_epoch": ("micro_batches_per_epoch", "num_update_steps_per_epoch"),
    "last_group_micro_batches": ("micro_batches_per_epoch", "num_update_steps_per_epoch"),
    "max_steps": ("micro_batches_per_epoch", "num_update_steps_per_epoch", "max_steps"),
    "epochs_loop": ("micro_batches_per_epoch", "num_update_steps_per_epoch", "max_steps"),
    "total_train_batch_size": ("total_train_batch_size",),
    "warmup_steps": ("micro_batches_per_epoch", "num_update_steps_per_epoch", "max_steps", "warmup_steps"),
    "optimizer_steps": ("micro_batches_per_epoch", "num_update_steps_per_epoch", "max_steps", "optimizer_steps"),
    "final_epoch": ("micro_batches_per_epoch", "num_update_steps_per_epoch", "max_steps", "optimizer_steps"),
    "eval_interval": ("num_update_steps_per_epoch", "max_steps", "eval_at_steps"),
    "eval_every_epochs": ("micro_batches_per_epoch", "num_update_steps_per_epoch", "eval_at_steps"),
    "eval_count": ("num_update_steps_per_epoch", "max_steps", "eval_at_steps"),
}
TARGET_OPS = ("equals", "at_least", "at_most")


class QuizError(ValueError):
    """A mistake in the question bank: names the question and the problem (for authors, English only)."""

    def __init__(self, question_id: str, problem: str):
        super().__init__(f"question {question_id!r}: {problem}")
        self.question_id = question_id
        self.problem = problem


# --------------------------------------------------------------------------- the bank's schema


@dataclass(frozen=True)
class Option:
    text: Text
    correct: bool


@dataclass(frozen=True)
class Control:
    """A setup field the learner sets in a `sliders` question: a slider from `low` to `high` in `step`s."""

    field: str
    low: float
    high: float
    step: float
    start: float | None = None  # None: the setup's own value

    @property
    def is_int(self) -> bool:
        return all(float(v).is_integer() for v in (self.low, self.high, self.step))

    def values(self) -> list[float]:
        count = int(round((self.high - self.low) / self.step))
        values = [self.low + i * self.step for i in range(count + 1)]
        return [int(round(v)) for v in values] if self.is_int else [round(v, 10) for v in values]


@dataclass(frozen=True)
class Target:
    """What a `sliders` question asks for: `quantity` equals / is at least / is at most `value`."""

    quantity: str
    op: str
    value: float

    def holds(self, plan: Plan) -> bool:
        got = number_or_none(quantity(plan, self.quantity))
        if got is None:
            return False
        if self.op == "equals":
            return math.isclose(got, self.value, rel_tol=1e-9, abs_tol=1e-12)
        if self.op == "at_least":
            return got >= self.value - 1e-12
        return got <= self.value + 1e-12

    def describe(self) -> Message:
        sign = {"equals": "=", "at_least": "≥", "at_most": "≤"}[self.op]
        return msg("quiz.target", label=quantity_label(self.quantity), sign=sign, value=whole(self.value))


@dataclass(frozen=True)
class QuestionSpec:
    """One question of the bank, validated: a recipe for concrete questions."""

    id: str
    lesson: int
    kind: str
    prompt: Text
    hint: Text
    explanation: Text | None = None
    setup: tuple[tuple[str, Any], ...] = ()  # base field values (a preset already merged in)
    params: tuple[tuple[str, tuple[Any, ...]], ...] = ()  # field -> choices drawn by the seed
    setups: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = ()  # alias -> field values, for {alias.x}
    answer: str | None = None
    tolerance: float | None = None
    options: tuple[Option, ...] = ()
    shuffle: bool = True
    controls: tuple[Control, ...] = ()
    targets: tuple[tuple[str, str, tuple[float, ...]], ...] = ()  # (quantity, op, choices of value)

    @property
    def has_setup(self) -> bool:
        return bool(self.setup or self.params or self.controls)

    @property
    def whole_answer(self) -> bool:
        """A numeric question whose answer is a whole number (a count: steps, batches, samples), taken without
        decimals; a fraction of an epoch, a learning rate or a question with a tolerance takes decimals."""
        return self.kind in NUMERIC_KINDS and self.answer not in DECIMAL_ANSWERS and self.tolerance is None

    @property
    def multiple(self) -> bool:
        return sum(o.correct for o in self.options) > 1


# --------------------------------------------------------------------------- concrete questions and feedback


@dataclass(frozen=True)
class Question:
    """A concrete question: the spec's recipe with the seed's draw, its numbers filled in by the engine."""

    spec: QuestionSpec
    seed: int
    prompt: Text
    hint: Text
    explanation: Text | None
    values: tuple[tuple[str, Any], ...]  # the drawn parameter values
    setup: TrainingSetup | None
    answer: int | float | None = None  # numeric: what the engine computes
    options: tuple[Text, ...] = ()  # choice: in the order shown
    correct: frozenset[int] = frozenset()  # choice: indices (in the order shown) of the right options
    controls: tuple[Control, ...] = ()  # sliders: with their start values
    targets: tuple[Target, ...] = ()  # sliders: concrete targets
    solution: tuple[tuple[str, Any], ...] = ()  # sliders: one setting that reaches the target
    run: GrpoSetup | None = None  # grpo: the GRPOTrainer run (its `setup` is `run.setup`)

    @property
    def id(self) -> str:
        return self.spec.id

    @property
    def kind(self) -> str:
        return self.spec.kind

    @property
    def lesson(self) -> int:
        return self.spec.lesson

    @property
    def multiple(self) -> bool:
        return len(self.correct) > 1

    @property
    def numeric(self) -> bool:
        """One number is asked for (a `numeric` or a `grpo` question)."""
        return self.spec.kind in NUMERIC_KINDS

    @property
    def token(self) -> str:
        """Identifies this concrete question (question id and seed)."""
        return f"{self.spec.id}:{self.seed}"

    @property
    def is_float_answer(self) -> bool:
        return self.answer is not None and not float(self.answer).is_integer()


@dataclass(frozen=True)
class Feedback:
    """The grade of one response: right or not, a message, the worked arithmetic and (when wrong) the hint."""

    correct: bool
    status: str  # "correct", "wrong" or "invalid" (empty, not a number, not an option ...)
    message: Message
    worked: tuple[Line, ...] = ()
    hint: Text | None = None
    explanation: Text | None = None
    extra: tuple[Message, ...] = field(default=())  # further lines, e.g. the targets of a sliders question


# --------------------------------------------------------------------------- helpers shared by bank, generation and grading


def plan_values(qid: str, values: Mapping[str, Any], where: str) -> Plan:
    """The plan of a question's setup values; a setup the engine or the Trainer refuses is the author's mistake."""
    try:
        return make_plan(setup_from_mapping(values)[0])
    except SetupError as error:
        raise QuizError(qid, f"{where}: {error}") from None
    except TrainerRefusal as refusal:
        raise QuizError(qid, f"{where}: the Trainer refuses this setup ({refusal})") from None


def on_grid(control: Control, value: Any) -> bool:
    """A slider value the control can really take: a number in range, on its step grid."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return False
    if not control.low - 1e-9 <= value <= control.high + 1e-9:
        return False
    position = (value - control.low) / control.step
    return abs(position - round(position)) < 1e-6


def quantity_label(name: str, kind: str = "numeric") -> Message | Joined:
    """How a quantity is called, said in the reader's language (a plain field name in code font); a `grpo`
    question's quantities are GRPO's (`steplab.teaching.grpo_counting.label`)."""
    if kind == "grpo" and grpo_counting.is_quantity(name):
        return grpo_counting.label(name)
    if name in PLAN_QUANTITIES:
        return said(PLAN_QUANTITIES[name][0])
    return msg("quiz.field_label", name=name)


def said(text: Message | Joined | Text) -> Message | Joined:
    """A sentence as a value of another message: a `Message` as it is, a `Text` (a label `steplab.trainer.quantities`
    still writes that way) wrapped so that `fill` says it in the same language."""
    return text if isinstance(text, Message | Joined) else joined([text])  # type: ignore[list-item]


def placeholder_names(template: str) -> set[str]:
    """The placeholder names a template uses."""
    return {match.group(1) for match in PLACEHOLDER.finditer(template)}


def number_or_none(value: Any) -> float | None:
    """A finite real number as a float, anything else None."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    value = float(value)
    return value if math.isfinite(value) else None
