"""Self-study questions: the bank in `lessons/questions.yaml`, concrete questions drawn with a seed, grading.

Three kinds of question:

* `numeric` — a setup (a preset and/or field values) with some fields drawn from `params` lists by the seed;
  the answer is a named quantity (`steplab.quantities`) of the engine's plan, never a stored literal.
* `choice` — options with `correct: true` on the right ones and an `explanation`.
* `sliders` — the learner sets some fields (`controls`) so that `target` holds; graded by planning
  the learner's setup with the engine.

Text may hold placeholders, the locale files' `{name}` / `{name:spec}` filled by `steplab.i18n.fill`: `{field}`
or `{quantity}` of the question's own setup, `{alias.quantity}` of a named extra setup (`setups:`) or a preset id,
`{measured.<name>.<field>}` for the course's measured figures, and `{target}` (a sliders question's drawn target).
Feedback is a `Message` (catalogue keys `quiz.*`); the authored texts stay `Text`, filled. Responses are
untrusted: anything a browser, a test or a URL could send is graded (wrong, or "not a number"), never raised.
"""

from __future__ import annotations

import itertools
import math
import numbers
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from steplab.errors import SetupError, TrainerRefusal
from steplab.explain import Line, explain
from steplab.i18n import LANGUAGES, PLACEHOLDER, Joined, Message, Text, fill, joined, msg
from steplab.lessons import lesson_numbers
from steplab.measurements import measurements
from steplab.plan import Plan, make_plan
from steplab.presets import presets
from steplab.profiles import PROFILES
from steplab.quantities import PLAN_QUANTITIES, is_quantity, quantity
from steplab.setup import FIELD_NAMES, TrainingSetup, setup_from_mapping

BANK_FILE = Path(__file__).resolve().parents[1] / "lessons" / "questions.yaml"
KINDS = ("numeric", "choice", "sliders")
LESSONS = lesson_numbers()
MAX_RESPONSE_CHARS = 64
MAX_COMBINATIONS = 2_000  # parameter combinations checked one by one when a bank loads; beyond, a sample
MAX_GRID = 20_000  # slider settings searched for a solution
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
        got = _number_or_none(quantity(plan, self.quantity))
        if got is None:
            return False
        if self.op == "equals":
            return math.isclose(got, self.value, rel_tol=1e-9, abs_tol=1e-12)
        if self.op == "at_least":
            return got >= self.value - 1e-12
        return got <= self.value + 1e-12

    def describe(self) -> Message:
        sign = {"equals": "=", "at_least": "≥", "at_most": "≤"}[self.op]
        return msg("quiz.target", label=_quantity_label(self.quantity), sign=sign, value=_tidy(self.value))


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


# --------------------------------------------------------------------------- loading and validation


def _text(qid: str, where: str, value: Any) -> Text:
    if not isinstance(value, Mapping):
        raise QuizError(qid, f"{where} must be a mapping {{zh: ..., en: ...}}, got {type(value).__name__}")
    extra = set(value) - set(LANGUAGES)
    if extra:
        raise QuizError(qid, f"{where} has unknown language key(s) {sorted(map(str, extra))} (use zh and en)")
    for lang in LANGUAGES:
        text = value.get(lang)
        if not isinstance(text, str) or not text.strip():
            raise QuizError(qid, f"{where} is missing language {lang!r} (or it is empty)")
    return Text(value["zh"].strip(), value["en"].strip())


def _setup_values(qid: str, where: str, raw: Any) -> dict[str, Any]:
    """A setup mapping: an optional `preset` id plus field values, checked by the engine."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise QuizError(qid, f"{where} must be a mapping of setup fields")
    values = dict(raw)
    preset_id = values.pop("preset", None)
    base: dict[str, Any] = {}
    if preset_id is not None:
        if preset_id not in presets():
            raise QuizError(qid, f"{where} names unknown preset {preset_id!r} (known: {', '.join(presets())})")
        base = dict(presets()[preset_id].values)
    unknown = [str(k) for k in values if k not in FIELD_NAMES and k != "evaluation_strategy"]
    if unknown:
        raise QuizError(qid, f"{where} has unknown setup field(s) {unknown}")
    merged = {**base, **values}
    try:
        setup_from_mapping(merged)
    except SetupError as error:
        raise QuizError(qid, f"{where}: {error}") from None
    return merged


def _plan(qid: str, values: Mapping[str, Any], where: str) -> Plan:
    try:
        return make_plan(setup_from_mapping(values)[0])
    except SetupError as error:
        raise QuizError(qid, f"{where}: {error}") from None
    except TrainerRefusal as refusal:
        raise QuizError(qid, f"{where}: the Trainer refuses this setup ({refusal})") from None


def _float(qid: str, where: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise QuizError(qid, f"{where} must be a finite number, got {value!r}")
    return float(value)


def _quantity_name(qid: str, where: str, name: Any) -> str:
    if not isinstance(name, str) or not is_quantity(name):
        raise QuizError(qid, f"{where} names unknown quantity {name!r}")
    return name


def _parse(item: Any, index: int) -> QuestionSpec:
    if not isinstance(item, Mapping):
        raise QuizError(f"#{index + 1}", "each question must be a mapping")
    qid = item.get("id")
    if not isinstance(qid, str) or not re.fullmatch(r"[a-z0-9][a-z0-9_-]{0,63}", qid):
        raise QuizError(f"#{index + 1}", f"id must be a short lower-case name, got {qid!r}")
    allowed = {"id", "lesson", "kind", "prompt", "hint", "explanation", "setup", "params", "setups", "answer",
               "tolerance", "options", "shuffle", "controls", "target"}
    unknown = sorted(map(str, set(item) - allowed))
    if unknown:
        raise QuizError(qid, f"unknown key(s) {unknown}")
    lesson = item.get("lesson")
    if isinstance(lesson, bool) or lesson not in LESSONS:
        raise QuizError(qid, f"lesson must be a lesson number from {LESSONS[0]} to {LESSONS[-1]}, got {lesson!r}")
    kind = item.get("kind")
    if kind not in KINDS:
        raise QuizError(qid, f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    for key in ("prompt", "hint"):
        if key not in item:
            raise QuizError(qid, f"missing {key}")
    prompt = _text(qid, "prompt", item["prompt"])
    hint = _text(qid, "hint", item["hint"])
    explanation = _text(qid, "explanation", item["explanation"]) if "explanation" in item else None

    setup = _setup_values(qid, "setup", item.get("setup"))
    params: dict[str, tuple[Any, ...]] = {}
    raw_params = item.get("params") or {}
    if not isinstance(raw_params, Mapping):
        raise QuizError(qid, "params must map setup fields to lists of choices")
    for name, choices in raw_params.items():
        if name not in FIELD_NAMES:
            raise QuizError(qid, f"params names unknown setup field {name!r}")
        if not isinstance(choices, list) or not choices:
            raise QuizError(qid, f"params.{name} must be a non-empty list of choices")
        for choice in choices:
            try:
                setup_from_mapping({name: choice})
            except SetupError as error:
                raise QuizError(qid, f"params.{name}: {error}") from None
        params[name] = tuple(choices)
    setups: dict[str, dict[str, Any]] = {}
    raw_setups = item.get("setups") or {}
    if not isinstance(raw_setups, Mapping):
        raise QuizError(qid, "setups must map names to setups")
    for alias, raw in raw_setups.items():
        if not isinstance(alias, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", alias) or alias == "measured":
            raise QuizError(qid, f"setups: bad name {alias!r}")
        setups[alias] = _setup_values(qid, f"setups.{alias}", raw)
        _plan(qid, setups[alias], f"setups.{alias}")

    spec_args: dict[str, Any] = {}
    if kind == "numeric":
        spec_args["answer"] = _quantity_name(qid, "answer", item.get("answer"))
        if "tolerance" in item:
            spec_args["tolerance"] = _float(qid, "tolerance", item["tolerance"])
            if spec_args["tolerance"] < 0:
                raise QuizError(qid, "tolerance must not be negative")
    elif "answer" in item or "tolerance" in item:
        raise QuizError(qid, f"answer/tolerance belong to numeric questions, not {kind}")
    if kind == "choice":
        if explanation is None:
            raise QuizError(qid, "a choice question needs an explanation")
        raw_options = item.get("options")
        if not isinstance(raw_options, list) or len(raw_options) < 2:
            raise QuizError(qid, "options must be a list of at least two options")
        options = []
        for number, raw in enumerate(raw_options, 1):
            if not isinstance(raw, Mapping) or set(raw) - {"zh", "en", "correct"}:
                raise QuizError(qid, f"option {number} must be {{zh: ..., en: ..., correct: true}} (correct optional)")
            correct = raw.get("correct", False)
            if not isinstance(correct, bool):
                raise QuizError(qid, f"option {number}: correct must be true or false")
            options.append(Option(_text(qid, f"option {number}", {k: raw.get(k) for k in LANGUAGES}), correct))
        if not any(o.correct for o in options):
            raise QuizError(qid, "no correct option (mark the right ones with correct: true)")
        if all(o.correct for o in options):
            raise QuizError(qid, "every option is correct; add a wrong one")
        for lang in LANGUAGES:
            texts = [o.text.get(lang) for o in options]
            if len(set(texts)) != len(texts):
                raise QuizError(qid, f"two options have the same {lang} text")
        spec_args["options"] = tuple(options)
        shuffle = item.get("shuffle", True)
        if not isinstance(shuffle, bool):
            raise QuizError(qid, "shuffle must be true or false")
        spec_args["shuffle"] = shuffle
    elif "options" in item or "shuffle" in item:
        raise QuizError(qid, f"options belong to choice questions, not {kind}")
    if kind == "sliders":
        spec_args["controls"] = _controls(qid, item.get("controls"), setup, params)
        spec_args["targets"] = _targets(qid, item.get("target"))
        drawn = len(spec_args["targets"][0][2]) > 1
        if drawn and not all("target" in _names(prompt.get(lang)) for lang in LANGUAGES):
            raise QuizError(qid, "the target is drawn from a list, so the prompt must show it with {target}")
    elif "controls" in item or "target" in item:
        raise QuizError(qid, f"controls/target belong to sliders questions, not {kind}")
    if kind == "numeric" and not setup and not params:
        raise QuizError(qid, "a numeric question needs a setup (a preset and/or field values)")

    return QuestionSpec(
        id=qid, lesson=lesson, kind=kind, prompt=prompt, hint=hint, explanation=explanation,
        setup=tuple(setup.items()), params=tuple(params.items()),
        setups=tuple((alias, tuple(values.items())) for alias, values in setups.items()), **spec_args,
    )


def _controls(qid: str, raw: Any, setup: Mapping[str, Any], params: Mapping[str, Any]) -> tuple[Control, ...]:
    if not isinstance(raw, list) or not raw:
        raise QuizError(qid, "controls must be a non-empty list of {field, min, max}")
    controls = []
    for number, item in enumerate(raw, 1):
        where = f"controls[{number}]"
        if not isinstance(item, Mapping) or set(item) - {"field", "min", "max", "step", "start"}:
            raise QuizError(qid, f"{where} must be {{field, min, max}} with optional step and start")
        name = item.get("field")
        if name not in NUMERIC_FIELDS:
            raise QuizError(qid, f"{where} names {name!r}, not a numeric setup field")
        if name in params:
            raise QuizError(qid, f"{where}: {name} is both drawn by params and set by the learner")
        if any(c.field == name for c in controls):
            raise QuizError(qid, f"{where}: {name} appears twice")
        low = _float(qid, f"{where}.min", item.get("min"))
        high = _float(qid, f"{where}.max", item.get("max"))
        step = _float(qid, f"{where}.step", item.get("step", 1))
        if not low < high or step <= 0:
            raise QuizError(qid, f"{where} needs min < max and a positive step")
        start = _float(qid, f"{where}.start", item["start"]) if "start" in item else None
        control = Control(name, low, high, step, start)
        if len(control.values()) > 1_000:
            raise QuizError(qid, f"{where} has more than 1,000 positions")
        initial = start if start is not None else setup.get(name, getattr(TrainingSetup(), name))
        if initial is None or not _on_grid(control, initial):
            raise QuizError(qid, f"{where}: the start value {initial!r} is not one of the slider's positions")
        for value in (low, high):
            try:
                setup_from_mapping({name: int(value) if control.is_int else value})
            except SetupError as error:
                raise QuizError(qid, f"{where}: {error}") from None
        controls.append(control)
    grid = math.prod(len(c.values()) for c in controls)
    if grid > MAX_GRID:
        raise QuizError(qid, f"controls allow {grid:,} settings; keep it under {MAX_GRID:,}")
    return tuple(controls)


def _targets(qid: str, raw: Any) -> tuple[tuple[str, str, tuple[float, ...]], ...]:
    items = raw if isinstance(raw, list) else [raw]
    targets = []
    for number, item in enumerate(items, 1):
        where = f"target[{number}]"
        if not isinstance(item, Mapping) or "quantity" not in item:
            raise QuizError(qid, f"{where} must be {{quantity: ..., equals|at_least|at_most: ...}}")
        ops = [op for op in TARGET_OPS if op in item]
        if len(ops) != 1 or set(item) - {"quantity", *TARGET_OPS}:
            raise QuizError(qid, f"{where} needs exactly one of {', '.join(TARGET_OPS)}")
        name = _quantity_name(qid, f"{where}.quantity", item["quantity"])
        value = item[ops[0]]
        choices = value if isinstance(value, list) and value else [value]
        targets.append((name, ops[0], tuple(_float(qid, f"{where}.{ops[0]}", v) for v in choices)))
    return tuple(targets)


def _on_grid(control: Control, value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return False
    if not control.low - 1e-9 <= value <= control.high + 1e-9:
        return False
    position = (value - control.low) / control.step
    return abs(position - round(position)) < 1e-6


def _combinations(spec: QuestionSpec) -> list[int]:
    """Seeds that together cover every parameter draw (or a large sample of them)."""
    size = math.prod(len(c) for _, c in spec.params) * math.prod(len(v) for _, _, v in spec.targets)
    return list(range(min(max(size * 8, 16), MAX_COMBINATIONS)))


def _check(spec: QuestionSpec) -> None:
    """Draw the question with many seeds: every placeholder resolves, every answer is a number, every
    slider task is solvable and not already solved at the start."""
    for seed in _combinations(spec):
        question = generate(spec, seed)
        if spec.kind == "numeric" and spec.answer:
            if spec.answer in _names(spec.prompt.zh + spec.prompt.en):
                raise QuizError(spec.id, f"the prompt shows the answer ({{{spec.answer}}})")
        if spec.kind == "sliders" and not question.solution:
            values = dict(question.values)
            raise QuizError(spec.id, f"no slider setting reaches the target (drawn values {values})")


def parse_bank(data: Any) -> list[QuestionSpec]:
    """Validate a loaded bank (a list of questions) and return its specs."""
    if not isinstance(data, list):
        raise QuizError("-", "the bank must be a YAML list of questions")
    specs = [_parse(item, index) for index, item in enumerate(data)]
    seen: set[str] = set()
    for spec in specs:
        if spec.id in seen:
            raise QuizError(spec.id, "id used twice")
        seen.add(spec.id)
        _check(spec)
    return specs


def load_bank(path: str | Path | None = None) -> list[QuestionSpec]:
    """The question bank (`lessons/questions.yaml` by default), validated; raises `QuizError`."""
    path = Path(path) if path is not None else BANK_FILE
    try:
        stamp = path.stat().st_mtime_ns
    except OSError as error:
        raise QuizError("-", f"cannot read {path}: {error.strerror}") from None
    return list(_load_cached(str(path), stamp))


@lru_cache(maxsize=8)
def _load_cached(path: str, stamp: int) -> tuple[QuestionSpec, ...]:
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise QuizError("-", f"the YAML cannot be read{where}: {getattr(error, 'problem', error)}") from None
    return tuple(parse_bank(data))


def bank_by_id(path: str | Path | None = None) -> dict[str, QuestionSpec]:
    return {spec.id: spec for spec in load_bank(path)}


# --------------------------------------------------------------------------- generation


def _tidy(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def _number_or_none(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _quantity_label(name: str) -> Message | Joined:
    """How a quantity is called, said in the reader's language (a plain field name in code font)."""
    if name in PLAN_QUANTITIES:
        return _said(PLAN_QUANTITIES[name][0])
    return msg("quiz.field_label", name=name)


def _said(text: Message | Joined | Text) -> Message | Joined:
    """A sentence as a value of another message: a `Message` as it is, a `Text` (a label `steplab.quantities`
    still writes that way) wrapped so that `fill` says it in the same language."""
    return text if isinstance(text, Message | Joined) else joined([text])  # type: ignore[list-item]


def _names(template: str) -> set[str]:
    """The placeholder names a template uses."""
    return {match.group(1) for match in PLACEHOLDER.finditer(template)}


CODE_SPAN = re.compile(r"`[^`]*`")


def _fill(qid: str, text: Text, plan: Plan | None, extra: Mapping[str, Plan],
          literals: Mapping[str, Any] | None = None) -> Text:
    """Put the engine's numbers into a text's placeholders (`steplab.i18n.fill`); anything unresolved is a
    `QuizError` naming the placeholder."""

    def value(name: str) -> Any:
        if literals and name in literals:
            return literals[name]
        parts = name.split(".")
        if parts[0] == "measured" and len(parts) == 3:
            record = measurements().get(parts[1])
            if record is None or parts[2] not in record:
                raise QuizError(qid, f"placeholder {{{name}}} does not resolve (no such measurement)")
            return record[parts[2]]
        if len(parts) == 1:
            source, key = plan, parts[0]
            if source is None:
                raise QuizError(qid, f"placeholder {{{name}}} needs a setup (add setup: to the question)")
        elif len(parts) == 2:
            source, key = extra.get(parts[0]) or _preset_plan(qid, parts[0]), parts[1]
        else:
            raise QuizError(qid, f"placeholder {{{name}}} does not resolve")
        if key in ("trainer_release", "trainer_matched"):
            profile = PROFILES[source.setup.trainer]
            return profile.releases if key == "trainer_release" else profile.matched
        try:
            result = quantity(source, key)
        except KeyError:
            raise QuizError(qid, f"placeholder {{{name}}} names unknown quantity {key!r}") from None
        except (TypeError, ZeroDivisionError, ValueError):
            raise QuizError(qid, f"placeholder {{{name}}} has no value for this setup") from None
        if result is None:
            raise QuizError(qid, f"placeholder {{{name}}} has no value for this setup")
        return result

    def said(source: str, lang: str) -> str:
        try:
            out = fill(source, value, lang)
        except QuizError:
            raise
        except KeyError as error:
            raise QuizError(qid, f"placeholder {{{error.args[0]}}} does not resolve") from None
        except ValueError as error:  # a `{name:spec}` whose spec does not fit the value
            raise QuizError(qid, f"a placeholder's format spec does not fit its value: {error}") from None
        if "{" in CODE_SPAN.sub("", out) or "}" in CODE_SPAN.sub("", out):
            raise QuizError(qid, f"unbalanced placeholder braces in {source[:60]!r}")
        return out

    return Text(said(text.zh, "zh"), said(text.en, "en"))


@lru_cache(maxsize=32)
def _preset_plan_cached(preset_id: str) -> Plan:
    return make_plan(presets()[preset_id].setup())


def _preset_plan(qid: str, alias: str) -> Plan:
    if alias not in presets():
        raise QuizError(qid, f"placeholder names {alias!r}, neither one of the question's setups nor a preset")
    return _preset_plan_cached(alias)


def _rng(spec: QuestionSpec, seed: int) -> random.Random:
    return random.Random(f"{spec.id}:{seed}")


def generate(spec: QuestionSpec, seed: int) -> Question:
    """A concrete question: the seed draws the parameters (and shuffles options); the engine fills in numbers."""
    seed = int(seed)
    rng = _rng(spec, seed)
    values = {name: rng.choice(choices) for name, choices in spec.params}
    extra = {alias: _plan(spec.id, dict(setup), f"setups.{alias}") for alias, setup in spec.setups}
    setup = plan = None
    if spec.has_setup:
        merged = {**dict(spec.setup), **values}
        plan = _plan(spec.id, merged, f"setup with {values}" if values else "setup")
        setup = plan.setup
    targets = tuple(Target(name, op, rng.choice(choices)) for name, op, choices in spec.targets)
    literals = {"target": _tidy(targets[0].value)} if targets else {}
    say = lambda text: _fill(spec.id, text, plan, extra, literals)  # noqa: E731
    common = dict(spec=spec, seed=seed, prompt=say(spec.prompt), hint=say(spec.hint),
                  explanation=say(spec.explanation) if spec.explanation else None,
                  values=tuple(values.items()), setup=setup)
    if spec.kind == "numeric":
        try:
            answer = quantity(plan, spec.answer)
        except (TypeError, ZeroDivisionError, ValueError):
            answer = None
        if _number_or_none(answer) is None:
            raise QuizError(spec.id, f"answer {spec.answer} is not a number for the setup with {values} ({answer!r})")
        return Question(**common, answer=_tidy(answer) if isinstance(answer, float) else answer)
    if spec.kind == "choice":
        order = list(range(len(spec.options)))
        if spec.shuffle:
            rng.shuffle(order)
        options = tuple(say(spec.options[i].text) for i in order)
        correct = frozenset(shown for shown, i in enumerate(order) if spec.options[i].correct)
        return Question(**common, options=options, correct=correct)
    controls = tuple(
        Control(c.field, c.low, c.high, c.step,
                c.start if c.start is not None else _tidy(float(getattr(setup, c.field)))) for c in spec.controls
    )
    start = {c.field: c.start for c in controls}
    if _reaches(setup, start, targets, controls):
        raise QuizError(spec.id, f"the target is already reached at the start (drawn values {values})")
    return Question(**common, controls=controls, targets=targets,
                    solution=tuple(_solve(setup, controls, targets).items()))


def _reaches(setup: TrainingSetup, values: Mapping[str, Any], targets: tuple[Target, ...],
             controls: tuple[Control, ...]) -> bool:
    plan = _try_plan(setup, values, controls)
    return plan is not None and all(target.holds(plan) for target in targets)


def _try_plan(setup: TrainingSetup, values: Mapping[str, Any], controls: tuple[Control, ...]) -> Plan | None:
    changes = {c.field: int(values[c.field]) if c.is_int else values[c.field] for c in controls}
    try:
        return make_plan(setup.replace(**changes))
    except (SetupError, TrainerRefusal):
        return None


def _solve(setup: TrainingSetup, controls: tuple[Control, ...], targets: tuple[Target, ...]) -> dict[str, Any]:
    """The slider setting nearest the start that reaches every target ({} when none does)."""
    grids = [c.values() for c in controls]

    def distance(combo: tuple[float, ...]) -> tuple[float, ...]:
        moves = [abs(v - c.start) / (c.high - c.low) for v, c in zip(combo, controls, strict=True)]
        return (sum(m > 0 for m in moves), sum(moves))

    for combo in sorted(itertools.product(*grids), key=distance):
        values = {c.field: v for c, v in zip(controls, combo, strict=True)}
        if _reaches(setup, values, targets, controls):
            return values
    return {}


# --------------------------------------------------------------------------- grading


# What a Chinese input method types for a number: full-width digits, point, comma, signs, space, e and E.
FULLWIDTH_NUMBER = str.maketrans({**{chr(0xFF10 + i): str(i) for i in range(10)},
                                  "\uff0e": ".", "\uff0c": ",", "\uff0d": "-", "\uff0b": "+", "\u3000": " ",
                                  "\uff45": "e", "\uff25": "E"})
NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d{1,4})?")
GROUPED = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d*)?")


def parse_number(raw: Any) -> float | Message:
    """A response read as a finite number, or a `Message` saying why it is not one.

    Accepts ints, floats and short strings of ASCII digits (thousands separators `1,600` allowed; the
    full-width digits a Chinese input method types are read as the same digits). Rejects other scripts'
    digits, NaN, infinities, booleans, and anything longer than `MAX_RESPONSE_CHARS`.
    """
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return msg("quiz.empty")
    if isinstance(raw, bool):
        return msg("quiz.not_a_number")
    if isinstance(raw, numbers.Real):
        try:
            value = float(raw)
        except (OverflowError, ValueError, TypeError):
            return msg("quiz.too_large")
        if math.isnan(value):
            return msg("quiz.not_a_number")
        return value if math.isfinite(value) else msg("quiz.too_large")
    if not isinstance(raw, str):
        return msg("quiz.not_a_number")
    if len(raw) > MAX_RESPONSE_CHARS:
        return msg("quiz.too_long", limit=MAX_RESPONSE_CHARS)
    text = raw.translate(FULLWIDTH_NUMBER).strip().replace(" ", "").replace("_", "")
    if GROUPED.fullmatch(text):
        text = text.replace(",", "")
    if not text.isascii() or not NUMBER.fullmatch(text):
        return msg("quiz.not_a_number")
    value = float(text)
    return value if math.isfinite(value) else msg("quiz.too_large")


def _invalid(message: Message) -> Feedback:
    return Feedback(False, "invalid", message)


def _close(given: float, answer: float, tolerance: float | None) -> bool:
    if tolerance is not None:
        return abs(given - answer) <= tolerance + 1e-12 * max(1.0, abs(answer))
    if float(answer).is_integer():
        return given == answer
    if abs(answer) < 1e-3:
        return math.isclose(given, answer, rel_tol=5e-3)
    return abs(given - answer) <= 5e-4 * max(1.0, abs(answer))


def _worked(question: Question, plan: Plan | None = None) -> tuple[Line, ...]:
    plan = plan or (make_plan(question.setup) if question.setup is not None else None)
    if plan is None:
        return ()
    lines = explain(plan)
    wanted = WORKED_FOR.get(question.spec.answer or "") if question.kind == "numeric" else None
    return tuple(line for line in lines if wanted is None or line.key in wanted)


def grade(question: Question, response: Any) -> Feedback:
    """Grade an untrusted response: a number (numeric), an option index or indices (choice), or a mapping
    field -> value (sliders). Never raises for a bad response."""
    try:
        if question.kind == "numeric":
            return _grade_numeric(question, response)
        if question.kind == "choice":
            return _grade_choice(question, response)
        return _grade_sliders(question, response)
    except (SetupError, TrainerRefusal, OverflowError, ValueError, TypeError, RecursionError):
        return _invalid(msg("quiz.cannot_grade"))


def _grade_numeric(question: Question, response: Any) -> Feedback:
    given = parse_number(response)
    if isinstance(given, Message):
        return _invalid(given)
    answer = float(question.answer)
    label = _quantity_label(question.spec.answer)
    worked = _worked(question)
    if _close(given, answer, question.spec.tolerance):
        message = msg("quiz.numeric_right", value=question.answer, label=label)
        return Feedback(True, "correct", message, worked, explanation=question.explanation)
    direction = msg("quiz.too_high" if given > answer else "quiz.too_low")
    message = msg("quiz.numeric_wrong", value=_tidy(given) if abs(given) < 1e15 else given, label=label,
                  direction=direction)
    return Feedback(False, "wrong", message, worked, hint=question.hint, explanation=question.explanation)


def _grade_choice(question: Question, response: Any) -> Feedback:
    if response is None:
        return _invalid(msg("quiz.no_option"))
    if isinstance(response, list | tuple | set | frozenset):
        if len(response) > len(question.options):
            return _invalid(msg("quiz.bad_option"))
        picked = list(response)
    else:
        picked = [response]
    if not picked:
        return _invalid(msg("quiz.no_option"))
    for index in picked:
        if isinstance(index, bool) or not isinstance(index, numbers.Integral) or not 0 <= index < len(question.options):
            return _invalid(msg("quiz.bad_option"))
    chosen = frozenset(int(i) for i in picked)
    worked = _worked(question)
    if chosen == question.correct:
        return Feedback(True, "correct", msg("quiz.choice_right"), worked, explanation=question.explanation)
    key = "quiz.choice_partly" if question.multiple and chosen & question.correct else "quiz.choice_wrong"
    return Feedback(False, "wrong", msg(key), worked, hint=question.hint, explanation=question.explanation)


def _grade_sliders(question: Question, response: Any) -> Feedback:
    if not isinstance(response, Mapping):
        return _invalid(msg("quiz.sliders_missing"))
    fields_ = {c.field for c in question.controls}
    if set(response) - fields_ or fields_ - set(response):
        return _invalid(msg("quiz.sliders_missing"))
    values: dict[str, Any] = {}
    for control in question.controls:
        value = parse_number(response[control.field])
        if isinstance(value, Message):
            return _invalid(value)
        if not _on_grid(control, value):
            return _invalid(msg("quiz.slider_range", field=control.field, low=_tidy(control.low),
                                 high=_tidy(control.high)))
        values[control.field] = int(round(value)) if control.is_int else value
    try:
        plan = make_plan(question.setup.replace(**values))
    except SetupError as error:
        problem = _said(error.text)
        message = msg("quiz.field_problem", field=error.field, problem=problem) if error.field else problem
        return Feedback(False, "wrong", message, hint=question.hint)
    except TrainerRefusal as refusal:
        return Feedback(False, "wrong", msg("quiz.sliders_refused", error=f"{refusal.error_type}: {refusal.message}"),
                        hint=question.hint)
    results = []
    for target in question.targets:
        got = quantity(plan, target.quantity)
        results.append(msg("quiz.target_line", label=_quantity_label(target.quantity), value=got,
                           target=target.describe(), mark="✓" if target.holds(plan) else "✗"))
    worked = tuple(explain(plan))
    if all(target.holds(plan) for target in question.targets):
        return Feedback(True, "correct", msg("quiz.sliders_right"), worked, explanation=question.explanation,
                        extra=tuple(results))
    return Feedback(False, "wrong", msg("quiz.sliders_wrong"), worked, hint=question.hint,
                    explanation=question.explanation, extra=tuple(results))


def draw(specs: list[QuestionSpec], rng: random.Random, *, lessons: set[int] | None = None,
         avoid: str | None = None) -> Question | None:
    """A fresh question from `specs` (only `lessons` when given), not `avoid` when another is available."""
    pool = [s for s in specs if lessons is None or s.lesson in lessons]
    if not pool:
        return None
    others = [s for s in pool if s.id != avoid] or pool
    return generate(rng.choice(others), rng.randrange(2**31))
