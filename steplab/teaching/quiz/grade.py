"""Grading a learner's untrusted response: numbers as people type them, choices, slider settings planned."""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Mapping
from typing import Any

from steplab.errors import SetupError, TrainerRefusal
from steplab.i18n import Message, code, msg, whole
from steplab.teaching import grpo_counting
from steplab.teaching.explain import Line, explain
from steplab.teaching.quiz.schema import (
    MAX_RESPONSE_CHARS,
    WORKED_FOR,
    Feedback,
    Question,
    on_grid,
    quantity_label,
    said,
)
from steplab.trainer.plan import Plan, make_plan
from steplab.trainer.quantities import quantity

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


def numbers_match(given: float, answer: float, tolerance: float | None) -> bool:
    """Whether a given number counts as the answer: within `tolerance` if the question has one, else exactly for a
    whole answer and to about three significant digits for a fraction (the class polls compare the same way)."""
    if tolerance is not None:
        return abs(given - answer) <= tolerance + 1e-12 * max(1.0, abs(answer))
    if float(answer).is_integer():
        return given == answer
    if abs(answer) < 1e-3:
        return math.isclose(given, answer, rel_tol=5e-3)
    return abs(given - answer) <= 5e-4 * max(1.0, abs(answer))


def worked_for(question: Question, plan: Plan | None = None) -> tuple[Line, ...]:
    """The lines of the worked arithmetic that lead to a question's answer (all of them for a choice question)."""
    if question.run is not None:  # a grpo question: GRPO's arithmetic
        return grpo_counting.worked_for(grpo_counting.grpo_plan(question.run), question.spec.answer or "")
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
        if question.numeric:
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
    label = quantity_label(question.spec.answer, question.kind)
    worked = worked_for(question)
    if numbers_match(given, answer, question.spec.tolerance):
        message = msg("quiz.numeric_right", value=question.answer, label=label)
        return Feedback(True, "correct", message, worked, explanation=question.explanation)
    direction = msg("quiz.too_high" if given > answer else "quiz.too_low")
    message = msg("quiz.numeric_wrong", value=whole(given) if abs(given) < 1e15 else given, label=label,
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
    worked = worked_for(question)
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
        if not on_grid(control, value):
            return _invalid(msg("quiz.slider_range", field=control.field, low=whole(control.low),
                                 high=whole(control.high)))
        values[control.field] = int(round(value)) if control.is_int else value
    try:
        plan = make_plan(question.setup.replace(**values))
    except SetupError as error:
        problem = said(error.text)
        message = msg("quiz.field_problem", field=error.field, problem=problem) if error.field else problem
        return Feedback(False, "wrong", message, hint=question.hint)
    except TrainerRefusal as refusal:
        return Feedback(False, "wrong", msg("quiz.sliders_refused", error=code(f"{refusal.error_type}: {refusal.message}")),
                        hint=question.hint)
    results = []
    for target in question.targets:
        got = quantity(plan, target.quantity)
        results.append(msg("quiz.target_line", label=quantity_label(target.quantity), value=got,
                           target=target.describe(), mark="✓" if target.holds(plan) else "✗"))
    worked = tuple(explain(plan))
    if all(target.holds(plan) for target in question.targets):
        return Feedback(True, "correct", msg("quiz.sliders_right"), worked, explanation=question.explanation,
                        extra=tuple(results))
    return Feedback(False, "wrong", msg("quiz.sliders_wrong"), worked, hint=question.hint,
                    explanation=question.explanation, extra=tuple(results))


