"""What a class poll asks, how an answer is checked, and what the reveal shows. Pure: no database, no Streamlit.

Three kinds of poll, each serialisable as a small JSON-safe dict (`Poll.to_dict` / `Poll.from_dict`, the form the
store keeps in its `polls.spec` column):

* `setup`  — "predict the total steps (`max_steps`) for this setup": the instructor's current setup.
* `change` — "this setup, but `field` becomes `value`: how many total steps now?" (e.g. accumulation doubles).
* `bank`   — one question of the self-check bank (`numeric`, `grpo` or single-answer `choice` kinds; `sliders`
  questions are not offered in class), drawn with a seed so every student sees the same numbers. A `grpo`
  question's reveal shows GRPO's arithmetic and, for its steps, GRPO's own wrong rules (the prompts taken as steps,
  the batch taken as prompts ...: `steplab.teaching.grpo_counting.traps`). Its stored form is any bank poll's.

A student's response is untrusted text (or an option index for choice): `check` turns it into the value to
store, or raises `PollAnswerError` with a catalogue message. `reveal` gives the engine's answer, its worked
arithmetic (`steplab.teaching.explain.Line`s) and the common wrong answers, each computed by the engine from a
named wrong rule (forgot accumulation, forgot the GPUs, one epoch only, the micro-batches of one epoch, one big
division instead of per-epoch rounding, samples instead of updates ...), kept only when its value differs from the
right one and from every rule before it. `wrong_answers` matches the answers a room gave to those rules.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any, Literal

from steplab.errors import InputError, SetupError, TrainerRefusal
from steplab.i18n import LANGUAGES, PLACEHOLDER, Message, Text, code, msg, t, whole
from steplab.teaching import grpo_counting
from steplab.teaching.explain import Line, explain
from steplab.teaching.quiz import QuizError, bank_by_id, generate, grade, parse_number
from steplab.teaching.quiz.grade import FULLWIDTH_NUMBER, numbers_match, worked_for
from steplab.teaching.quiz.schema import NUMERIC_KINDS, WORKED_FOR, Question
from steplab.trainer.events import events, interval
from steplab.trainer.fields import FIELD_NAMES, FIELDS
from steplab.trainer.plan import Plan, make_plan
from steplab.trainer.profiles import PROFILES
from steplab.trainer.query import plain_value
from steplab.trainer.setup import DEFAULTS, TrainingSetup, setup_from_mapping
from steplab.trl.grpo import GrpoPlan

PollKind = Literal["setup", "change", "bank"]
KINDS: tuple[str, ...] = ("setup", "change", "bank")
MAX_TEXT_CHARS = 64  # a response longer than this is refused before parsing
MAX_ANSWER = 10**9  # a numeric answer above this is refused (unless the engine's answer is larger)
MAX_SEED = 2**31 - 1
MAX_VALUE_CHARS = 300  # the longest text value a stored setup may hold (a `lr_scheduler_kwargs` JSON)
# The changes `change_choices` offers: field -> how the new value follows from the old one.
CHANGES: dict[str, tuple[str, int]] = {
    "gradient_accumulation_steps": ("times", 2),
    "world_size": ("times", 2),
    "per_device_train_batch_size": ("times", 2),
    "num_train_epochs": ("plus", 1),
    "num_samples": ("times", 2),
}
DIVISORS = ("gradient_accumulation_steps", "world_size", "per_device_train_batch_size")  # more of it: fewer steps
# The fields a setup poll's lines show always, and those shown only when they differ from the default.
SHOWN_FIELDS = ("num_samples", "per_device_train_batch_size", "gradient_accumulation_steps", "world_size",
                "num_train_epochs")
SHOWN_IF_SET = ("max_steps", "dataloader_drop_last", "limit_train_batches", "trainer")
TOTAL_LINES = WORKED_FOR["max_steps"]
MARKDOWN_MARKS = re.compile(r"`|\*\*")  # code and bold marks, dropped where text is shown plain
CLOSE_SHARE = Fraction(1, 10)  # a wrong answer within this share of the answer is close ("almost")
# The unit a student may type after a number, by the quantity asked (words: `poll.unit.<unit>`, both languages
# accepted on either page); setup and change polls ask steps.
UNIT_OF: dict[str, str] = {
    "max_steps": "steps", "optimizer_steps": "steps", "num_update_steps_per_epoch": "steps", "warmup_steps": "steps",
    "first_epoch_end_step": "steps", "micro_batches_per_epoch": "micro_batches",
    "last_group_micro_batches": "micro_batches", "total_train_batch_size": "samples",
    "samples_duplicated_per_epoch": "samples", "save_count": "checkpoints", "eval_every_epochs": "epochs",
    "final_epoch": "epochs", "unique_prompts_per_round": "prompts", "generation_batch_size": "completions",
}


class PollError(InputError):
    """A poll that cannot be built or read back (unknown question, a bad setup, a malformed stored spec).

    Codes: `poll.malformed`, `poll.cannot_plan` (`problem`), `poll.refused` (`error`: the Trainer's words),
    `poll.unknown_question`, `poll.not_offered`, `poll.bad_seed`, `poll.bad_change`, `poll.no_change`."""


class PollAnswerError(InputError):
    """A student's response that cannot be stored: empty, not a number, out of the question's range, too long,
    not one of the options. Codes: the self-check's `quiz.*` (`quiz.empty`, `quiz.not_a_number`, `quiz.too_large`,
    `quiz.too_long`, `quiz.no_option`, `quiz.bad_option`), `poll.out_of_range` (`low`, `high`), and
    `poll.whole_steps` / `poll.whole_number` (`value`: a fraction where a whole number is asked)."""


@dataclass(frozen=True)
class Poll:
    """One question put to the class.

    `setup` holds the setup's non-default fields as plain JSON values (`steplab.trainer.query.plain_value`: a
    link's values);
    `change` is `(field, new value)` for a `change` poll; `question_id`/`seed` name a bank question.
    """

    kind: PollKind
    setup: tuple[tuple[str, Any], ...] = ()
    change: tuple[str, Any] | None = None
    question_id: str | None = None
    seed: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe, round-trips through `from_dict`."""
        if self.kind == "bank":
            return {"kind": "bank", "question": self.question_id, "seed": self.seed}
        data: dict[str, Any] = {"kind": self.kind, "setup": dict(self.setup)}
        if self.kind == "change" and self.change is not None:
            data["change"] = [self.change[0], self.change[1]]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Poll:
        """Read a stored spec back; anything malformed raises `PollError` (never KeyError/TypeError)."""
        try:
            return _read(data)
        except PollError:
            raise
        except (InputError, TrainerRefusal, QuizError, KeyError, TypeError, ValueError, AttributeError,
                OverflowError, RecursionError, ZeroDivisionError):
            raise PollError("poll.malformed") from None


@dataclass(frozen=True)
class Trap:
    """A common wrong answer: its value and why someone gets it (a `Message` naming the wrong rule)."""

    value: float
    why: Message


@dataclass(frozen=True)
class Reveal:
    """What the projector and each student see after Reveal."""

    answer: float | None  # numeric polls: the engine's answer
    correct_options: frozenset[int]  # choice polls: indices of the right options
    worked: tuple[Line, ...]  # the engine's arithmetic for this setup
    traps: tuple[Trap, ...]  # numeric polls only; empty for choice
    explanation: Text | None  # a bank question's own explanation, if it has one


# --------------------------------------------------------------------------- reading a stored spec


def _is_scalar(value: Any) -> bool:
    if value is None or isinstance(value, bool | int):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, str) and len(value) <= MAX_VALUE_CHARS


def _stored_setup(raw: Any) -> TrainingSetup:
    """A stored `setup` mapping as a validated setup (unknown keys and non-scalar values are malformed)."""
    if not isinstance(raw, Mapping) or len(raw) > len(FIELD_NAMES):
        raise PollError("poll.malformed")
    if not all(isinstance(key, str) and key in FIELDS and _is_scalar(value) for key, value in raw.items()):
        raise PollError("poll.malformed")
    try:
        setup, unknown = setup_from_mapping(dict(raw))
    except SetupError as error:
        raise PollError("poll.cannot_plan", problem=error.text) from None
    if unknown:
        raise PollError("poll.malformed")
    return setup


def _read(data: Any) -> Poll:
    if not isinstance(data, Mapping):
        raise PollError("poll.malformed")
    kind = data.get("kind")
    wanted = {"setup": {"kind", "setup"}, "change": {"kind", "setup", "change"},
              "bank": {"kind", "question", "seed"}}.get(kind) if isinstance(kind, str) else None
    if wanted is None or set(data) != wanted:
        raise PollError("poll.malformed")
    if kind == "bank":
        return poll_from_bank(data["question"], data["seed"])
    setup = _stored_setup(data["setup"])
    if kind == "setup":
        return poll_from_setup(setup)
    change = data["change"]
    if not isinstance(change, list | tuple) or len(change) != 2 or not isinstance(change[0], str):
        raise PollError("poll.malformed")
    if not _is_scalar(change[1]):
        raise PollError("poll.malformed")
    return poll_from_change(setup, change[0], change[1])


# --------------------------------------------------------------------------- building polls


def setup_values(setup: TrainingSetup) -> tuple[tuple[str, Any], ...]:
    """A setup's non-default fields, in the field table's order, as plain JSON values."""
    return tuple((name, plain_value(name, getattr(setup, name))) for name in FIELD_NAMES
                 if getattr(setup, name) != FIELDS[name].default)


def _plan(setup: TrainingSetup) -> Plan:
    """The engine's plan, or `PollError` (a setup it cannot plan, or one the real Trainer refuses)."""
    try:
        return make_plan(setup)
    except SetupError as error:
        raise PollError("poll.cannot_plan", problem=error.text) from None
    except TrainerRefusal as refusal:
        raise PollError("poll.refused", error=code(f"{refusal.error_type}: {refusal.message}")) from None


def poll_from_setup(setup: TrainingSetup) -> Poll:
    """'Predict the total steps for this setup.' Raises `PollError` when the engine cannot plan the setup."""
    _plan(setup)
    return Poll("setup", setup=setup_values(setup))


def _changed(setup: TrainingSetup, field: str, value: Any) -> TrainingSetup:
    if not isinstance(field, str) or field not in FIELDS or field == "lr_scheduler_kwargs":
        raise PollError("poll.bad_change", name=str(field)[:40])
    try:
        return setup.replace(**{field: value})
    except SetupError as error:
        raise PollError("poll.cannot_plan", problem=error.text) from None


def poll_from_change(setup: TrainingSetup, field: str, value: Any) -> Poll:
    """'What happens to the total steps if `field` becomes `value`?' (both setups must plan)."""
    _plan(setup)
    new = _changed(setup, field, value)
    if getattr(new, field) == getattr(setup, field):
        raise PollError("poll.no_change", name=field)
    _plan(new)
    return Poll("change", setup=setup_values(setup), change=(field, plain_value(field, getattr(new, field))))


def change_choices(setup: TrainingSetup) -> tuple[tuple[str, Any], ...]:
    """The setup changes offered to the instructor, e.g. accumulation ×2, GPUs ×2, batch ×2, epochs +1, samples
    ×2, each as (field, new value) valid for this setup."""
    offered = []
    for field, (how, amount) in CHANGES.items():
        old = getattr(setup, field)
        new = plain_value(field, old * amount if how == "times" else old + amount)
        rule = FIELDS[field]
        if new == old or not rule.low <= new <= rule.high:
            continue
        try:
            poll_from_change(setup, field, new)
        except PollError:
            continue
        offered.append((field, new))
    return tuple(offered)


def _offered(question_id: str) -> bool:
    spec = bank_by_id().get(question_id)
    return spec is not None and (spec.kind in NUMERIC_KINDS or (spec.kind == "choice" and not spec.multiple))


def bank_choices() -> tuple[str, ...]:
    """Ids of the bank questions a class can be asked (numeric, grpo and single-answer choice kinds: a student
    sends one number or one option)."""
    return tuple(qid for qid in bank_by_id() if _offered(qid))


def bank_prompt(question_id: str) -> Text:
    """A bank question as the instructor's chooser lists it: its prompt in plain text (no Markdown: an option
    shows its text as typed), the same whatever the seed: a number the seed draws is "…" (the preview below the
    chooser shows the drawn question), so the list never disagrees with the preview."""
    spec = bank_by_id()[question_id]
    if spec.params:
        said = Text(*(PLACEHOLDER.sub("…", spec.prompt.get(lang)) for lang in ("zh", "en")))
    else:
        said = _question_cached(question_id, 0).prompt
    return Text(*(MARKDOWN_MARKS.sub("", said.get(lang)) for lang in ("zh", "en")))


def bank_lesson(question_id: str) -> int:
    """The lesson a bank question belongs to."""
    return bank_by_id()[question_id].lesson


def poll_from_bank(question_id: str, seed: int) -> Poll:
    """One bank question with a fixed seed. Raises `PollError` for an unknown id, a sliders question or a choice
    question with several right options (a poll takes one option)."""
    if not isinstance(question_id, str) or question_id not in bank_by_id():
        raise PollError("poll.unknown_question", question=str(question_id)[:40])
    if not _offered(question_id):
        raise PollError("poll.not_offered", question=question_id)
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or not 0 <= seed <= MAX_SEED:
        raise PollError("poll.bad_seed", low=0, high=MAX_SEED)
    poll = Poll("bank", question_id=question_id, seed=int(seed))
    try:
        _question(poll)
    except QuizError:
        raise PollError("poll.malformed") from None
    return poll


# --------------------------------------------------------------------------- what a poll is about


@lru_cache(maxsize=512)
def _setup_of(values: tuple[tuple[str, Any], ...]) -> TrainingSetup:
    try:
        return setup_from_mapping(dict(values))[0]
    except SetupError as error:
        raise PollError("poll.cannot_plan", problem=error.text) from None


def _old_setup(poll: Poll) -> TrainingSetup:
    return _setup_of(poll.setup)


def _asked_setup(poll: Poll) -> TrainingSetup:
    """The setup whose total is asked: the setup itself, or the changed one for a change poll."""
    setup = _old_setup(poll)
    if poll.kind == "change":
        if poll.change is None:
            raise PollError("poll.malformed")
        return _changed(setup, *poll.change)
    return setup


@lru_cache(maxsize=256)
def _question_cached(question_id: str, seed: int) -> Question:
    return generate(bank_by_id()[question_id], seed)


def _question(poll: Poll) -> Question:
    if poll.question_id is None or poll.question_id not in bank_by_id():
        raise PollError("poll.unknown_question", question=str(poll.question_id)[:40])
    return _question_cached(poll.question_id, poll.seed)


def is_numeric(poll: Poll) -> bool:
    """A number is asked for (setup, change, numeric bank question); else options are offered."""
    if poll.kind != "bank":
        return True
    spec = bank_by_id().get(poll.question_id or "")
    return spec is not None and spec.kind in NUMERIC_KINDS


def _answer(poll: Poll) -> float | None:
    if poll.kind == "bank":
        question = _question(poll)
        return float(question.answer) if question.numeric else None
    return float(_plan(_asked_setup(poll)).max_steps)


def change_said(poll: Poll) -> Message:
    """'`gradient_accumulation_steps` goes from 8 to 16' (the field's own wording for the offered changes)."""
    field, value = poll.change  # type: ignore[misc]
    before = plain_value(field, getattr(_old_setup(poll), field))
    after = plain_value(field, getattr(_asked_setup(poll), field))
    key = f"poll.change.{field}" if field in CHANGES else "poll.change.other"
    return msg(key, name=field, before=before, after=after, count=after)


def prompt(poll: Poll) -> Message | Text:
    """The question as students read it (say it with `.get(lang)`), the setup's numbers filled in."""
    if poll.kind == "bank":
        return _question(poll).prompt
    setup = _old_setup(poll)
    numbers_ = dict(samples=setup.num_samples, batch=setup.per_device_train_batch_size,
                    ga=setup.gradient_accumulation_steps, gpus=setup.world_size,
                    epochs=whole(setup.num_train_epochs), count=setup.num_samples)
    if poll.kind == "setup":
        return msg("poll.prompt.setup", **numbers_)
    old = _plan(setup).max_steps
    return msg("poll.prompt.change", old=old, change=change_said(poll), count=old)


def _line(setup: TrainingSetup, name: str) -> Message:
    value = getattr(setup, name)
    if name == "trainer":
        value = PROFILES[value].matched
    return msg(f"poll.line.{name}", value=plain_value(name, value), count=plain_value(name, value))


def setup_lines(poll: Poll) -> tuple[Message, ...]:
    """The setup the question is about, one short line per field that matters (samples, batch, accumulation,
    GPUs, epochs, and the change for a change poll), for the projector and the phone. A bank question's prompt
    says its own setup: none."""
    if poll.kind == "bank":
        return ()
    setup = _old_setup(poll)
    names = [*SHOWN_FIELDS, *(n for n in SHOWN_IF_SET if getattr(setup, n) != FIELDS[n].default)]
    lines = [_line(setup, name) for name in names]
    if poll.kind == "change":
        lines.append(msg("poll.line.change", change=change_said(poll)))
    return tuple(lines)


def options(poll: Poll) -> tuple[Text, ...]:
    """A choice poll's options in the order shown (empty for numeric polls)."""
    if is_numeric(poll):
        return ()
    return _question(poll).options


def whole_answer(poll: Poll) -> bool:
    """The answer is a whole number (steps, micro-batches, samples), so a fraction is refused rather than stored
    as a wrong answer: every setup and change poll, and a bank question whose answer the self-check takes whole."""
    if poll.kind != "bank":
        return True
    return is_numeric(poll) and _question(poll).spec.whole_answer


def answer_range(poll: Poll) -> tuple[float, float]:
    """The range a numeric answer must fall in to be stored (0 ≤ answer ≤ 10^9, widened to hold the engine's
    answer); a choice poll's is (0, number of options - 1)."""
    if not is_numeric(poll):
        return 0.0, float(len(options(poll)) - 1)
    answer = _answer(poll) or 0.0
    return min(0.0, answer), max(float(MAX_ANSWER), answer)


# --------------------------------------------------------------------------- answers


def _refuse(message: Message) -> PollAnswerError:
    return PollAnswerError(message.key, **dict(message.values))


def _option_index(response: Any, count: int) -> int:
    if response is None or (isinstance(response, str) and not response.strip()):
        raise PollAnswerError("quiz.no_option")
    if isinstance(response, str):
        if len(response) > MAX_TEXT_CHARS:
            raise PollAnswerError("quiz.too_long", limit=MAX_TEXT_CHARS)
        text = response.translate(FULLWIDTH_NUMBER).strip()
        if not (text.isascii() and text.isdigit() and len(text) <= 6):
            raise PollAnswerError("quiz.bad_option")
        index = int(text)
    elif isinstance(response, bool) or not isinstance(response, numbers.Real):
        raise PollAnswerError("quiz.bad_option")
    elif isinstance(response, numbers.Integral):
        index = int(response)
    else:
        value = float(response)
        if not (math.isfinite(value) and value.is_integer()):
            raise PollAnswerError("quiz.bad_option")
        index = int(value)
    if not 0 <= index < count:
        raise PollAnswerError("quiz.bad_option")
    return index


def unit(poll: Poll) -> str | None:
    """The unit of what a numeric poll asks (`UNIT_OF`'s: steps, micro-batches, samples ...), None when it has
    none a student would type."""
    if poll.kind != "bank":
        return "steps"
    if not is_numeric(poll):
        return None
    return UNIT_OF.get(_question(poll).spec.answer or "")


@lru_cache(maxsize=16)
def unit_words(name: str) -> tuple[str, ...]:
    """The words of unit `name` a student may type, in either language, longest first (a measure word with its noun
    before the measure word alone)."""
    words = {word.strip() for lang in LANGUAGES for word in t(lang, f"poll.unit.{name}").split("/")}
    return tuple(sorted((word for word in words if word), key=len, reverse=True))


def without_unit(poll: Poll, text: str) -> str:
    """A typed answer without the one trailing unit the question asks for: "75 steps", and the same with the Chinese
    word for steps or samples right after the number, read as the number; another word is left for the number reader
    to refuse."""
    name = unit(poll)
    stripped = text.strip()
    if name is None:
        return text
    folded = stripped.casefold()
    for word in unit_words(name):
        if folded.endswith(word.casefold()) and (number := stripped[: len(stripped) - len(word)].strip()):
            return number
    return text


def check(poll: Poll, response: Any) -> float:
    """The response as the number to store (a choice: the option index), or `PollAnswerError`.

    Reads numbers as the self-check does (`steplab.teaching.quiz.parse_number`: `1,600`, full-width digits);
    never raises anything but `PollAnswerError` for any input a browser could send.
    """
    if not is_numeric(poll):
        return float(_option_index(response, len(options(poll))))
    if isinstance(response, str) and len(response) > MAX_TEXT_CHARS:
        raise PollAnswerError("quiz.too_long", limit=MAX_TEXT_CHARS)
    if isinstance(response, str):
        response = without_unit(poll, response)
    value = parse_number(response)
    if isinstance(value, Message):
        raise _refuse(value)
    if whole_answer(poll) and not value.is_integer():
        raise PollAnswerError("poll.whole_steps" if poll.kind != "bank" else "poll.whole_number", value=whole(value))
    low, high = answer_range(poll)
    if not low <= value <= high:
        raise PollAnswerError("poll.out_of_range", low=whole(low), high=whole(high))
    return value + 0.0  # -0.0 is stored as 0.0


def _finite(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def is_correct(poll: Poll, value: float) -> bool:
    """Whether a stored value is right (numeric answers compared as the self-check's grading does; a bank
    question is graded by the self-check itself)."""
    number = _finite(value)
    if number is None:
        return False
    if poll.kind == "bank":
        question = _question(poll)
        if question.kind == "choice":
            return number.is_integer() and grade(question, int(number)).correct
        return grade(question, number).correct
    answer = _answer(poll)
    return answer is not None and numbers_match(number, answer, None)


# --------------------------------------------------------------------------- the reveal and its traps


def _total_lines(plan: Plan) -> tuple[Line, ...]:
    return tuple(line for line in explain(plan) if line.key in TOTAL_LINES)


def _total_or_none(setup: TrainingSetup, **changes: Any) -> int | None:
    try:
        return make_plan(setup.replace(**changes)).max_steps
    except (SetupError, TrainerRefusal):
        return None


def _setup_traps(plan: Plan) -> list[Trap]:
    """The wrong rules people use for a setup's total, each worked out with its numbers."""
    s = plan.setup
    if s.uses_max_steps:
        by_epochs = _total_or_none(s, max_steps=-1)
        if by_epochs is None:
            return []
        return [Trap(float(by_epochs), msg("poll.trap.ignored_max_steps", value=by_epochs, max_steps=s.max_steps,
                                           epochs=whole(s.num_train_epochs)))]
    epochs, ga, gpus, batch = whole(s.num_train_epochs), s.gradient_accumulation_steps, s.world_size, \
        s.per_device_train_batch_size
    micro, per_epoch = plan.micro_batches_per_epoch, plan.num_update_steps_per_epoch
    traps = []
    if ga > 1 and (value := _total_or_none(s, gradient_accumulation_steps=1)) is not None:
        traps.append(Trap(float(value), msg("poll.trap.forgot_accumulation", value=value, micro=micro,
                                            epochs=epochs, ga=ga, count=ga)))
    if gpus > 1 and (value := _total_or_none(s, world_size=1)) is not None:
        traps.append(Trap(float(value), msg("poll.trap.forgot_gpus", value=value, gpus=gpus, micro=micro,
                                            count=gpus)))
    if s.num_train_epochs != 1:
        traps.append(Trap(float(per_epoch), msg("poll.trap.one_epoch", value=per_epoch, epochs=epochs,
                                                count=per_epoch)))
    traps.append(Trap(float(micro), msg("poll.trap.micro_batches", value=micro, ga=ga, epochs=epochs, count=micro)))
    big = math.ceil(Fraction(s.num_samples) * Fraction(s.num_train_epochs) / (batch * ga * gpus))
    traps.append(Trap(float(big), msg("poll.trap.one_division", value=big, samples=s.num_samples, epochs=epochs,
                                      batch=batch, ga=ga, gpus=gpus, per_epoch=per_epoch)))
    if ga > 1:
        times = math.ceil(Fraction(s.num_train_epochs) * micro * ga)
        traps.append(Trap(float(times), msg("poll.trap.times_accumulation", value=times, micro=micro, ga=ga,
                                            epochs=epochs)))
    if batch > 1 and (value := _total_or_none(s, per_device_train_batch_size=1)) is not None:
        traps.append(Trap(float(value), msg("poll.trap.forgot_batch", value=value, batch=batch, count=batch)))
    seen = Fraction(s.num_samples) * Fraction(s.num_train_epochs)
    if seen.denominator == 1:  # a fraction of a sample is no one's answer (and a fraction is refused anyway)
        traps.append(Trap(float(seen), msg("poll.trap.samples_seen", value=int(seen), samples=s.num_samples,
                                           epochs=epochs, effective=plan.total_train_batch_size,
                                           count=plan.total_train_batch_size)))
    return traps


def _replanned(setup: TrainingSetup, **changes: Any) -> Plan | None:
    """The plan of `setup` with `changes`, or None when the Trainer (or StepLab) refuses it."""
    try:
        return make_plan(setup.replace(**changes))
    except (SetupError, TrainerRefusal):
        return None


def _epoch_traps(plan: Plan, asked: str) -> list[Trap]:
    """The wrong rules for a question about one epoch or one update (the lessons before the total): the
    micro-batches taken for updates or the other way round, the GPUs or the accumulation forgotten, the samples
    divided once and rounded the other way. Each value is the engine's for the changed setup."""
    s = plan.setup
    batch, ga, gpus = s.per_device_train_batch_size, s.gradient_accumulation_steps, s.world_size
    micro, per_epoch = plan.micro_batches_per_epoch, plan.num_update_steps_per_epoch
    traps: list[Trap] = []

    if asked in ("num_update_steps_per_epoch", "first_epoch_end_step"):  # the first epoch ends at its last update
        if ga > 1:
            traps.append(Trap(float(micro), msg("poll.trap.epoch_micro_as_updates", value=micro, ga=ga, count=micro)))
        if gpus > 1 and (one := _replanned(s, world_size=1)) is not None:
            traps.append(Trap(float(one.num_update_steps_per_epoch), msg(
                "poll.trap.epoch_forgot_gpus", value=one.num_update_steps_per_epoch, gpus=gpus, micro=micro,
                count=gpus)))
        rounded = s.num_samples // (batch * ga * gpus)
        traps.append(Trap(float(rounded), msg("poll.trap.epoch_rounded_down", value=rounded, samples=s.num_samples,
                                              batch=batch, ga=ga, gpus=gpus, micro=micro, per_epoch=per_epoch)))
    elif asked == "micro_batches_per_epoch":
        if ga > 1:
            traps.append(Trap(float(per_epoch), msg("poll.trap.epoch_updates_as_micro", value=per_epoch, ga=ga,
                                                    count=per_epoch)))
        if (flipped := _replanned(s, dataloader_drop_last=not s.dataloader_drop_last)) is not None:
            value = flipped.micro_batches_per_epoch
            key = "poll.trap.epoch_kept_last" if s.dataloader_drop_last else "poll.trap.epoch_dropped_last"
            traps.append(Trap(float(value), msg(key, value=value, count=value)))
        if gpus > 1 and (one := _replanned(s, world_size=1)) is not None:
            traps.append(Trap(float(one.micro_batches_per_epoch), msg(
                "poll.trap.epoch_forgot_gpus_micro", value=one.micro_batches_per_epoch, gpus=gpus, count=gpus)))
    elif asked == "total_train_batch_size":
        if gpus > 1:
            traps.append(Trap(float(batch * ga), msg("poll.trap.batch_forgot_gpus", value=batch * ga, batch=batch,
                                                     ga=ga, gpus=gpus, count=gpus)))
        if ga > 1:
            traps.append(Trap(float(batch * gpus), msg("poll.trap.batch_forgot_accumulation", value=batch * gpus,
                                                       batch=batch, gpus=gpus, ga=ga, count=ga)))
        traps.append(Trap(float(batch), msg("poll.trap.batch_one_micro_batch", value=batch, count=batch)))
    return traps


def _quantity_traps(plan: Plan, asked: str) -> list[Trap]:
    """The wrong rules for the questions of lessons 4 – 8 and 10 that ask for one quantity besides the steps: how far
    apart evaluations are, the checkpoints saved, the epoch the run ends at, the warmup steps, the samples reused, the
    last accumulation group. Each value is the engine's, for a changed setup or a quantity of the plan taken for
    another (the micro-batches for the updates, one epoch for all, the rounding the other way)."""
    s = plan.setup
    ga, micro, per_epoch = s.gradient_accumulation_steps, plan.micro_batches_per_epoch, plan.num_update_steps_per_epoch
    epochs = whole(s.num_train_epochs)
    traps: list[Trap] = []

    if asked == "eval_every_epochs" and (every := interval(plan, "eval")):
        if micro != per_epoch:
            value = Fraction(every, micro)
            traps.append(Trap(float(value), msg("poll.trap.eval_micro_as_steps", value=_exact(value), every=every,
                                                micro=micro, per_epoch=per_epoch)))
        traps.append(Trap(float(Fraction(per_epoch, every)), msg(
            "poll.trap.eval_per_epoch", value=_exact(Fraction(per_epoch, every)), every=every, per_epoch=per_epoch)))
        traps.append(Trap(float(every), msg("poll.trap.eval_steps_as_epochs", value=every, every=every)))
    elif asked == "save_count" and (every := interval(plan, "save")):
        saves = events(plan, "save")
        ends = plan.epoch_end_steps(1)
        if s.num_train_epochs > 1 and ends:
            first = sum(1 for step in saves.steps() if step <= ends[0])
            traps.append(Trap(float(first), msg("poll.trap.saves_one_epoch", value=first, epochs=epochs,
                                                per_epoch=per_epoch)))
        multiples = plan.max_steps // every
        if multiples != saves.count():
            traps.append(Trap(float(multiples), msg("poll.trap.saves_multiples_only", value=multiples,
                                                    total=plan.max_steps, every=every)))
        elif plan.max_steps % every:
            traps.append(Trap(float(multiples + 1), msg("poll.trap.saves_last_added", value=multiples + 1,
                                                        total=plan.max_steps, every=every)))
        if micro != per_epoch:
            value = int(Fraction(micro) * Fraction(s.num_train_epochs) // every)
            traps.append(Trap(float(value), msg("poll.trap.saves_micro_as_steps", value=value, micro=micro,
                                                epochs=epochs, every=every)))
    elif asked == "final_epoch":
        if plan.final_epoch != s.num_train_epochs:
            traps.append(Trap(float(s.num_train_epochs), msg("poll.trap.final_epoch_as_set", value=epochs,
                                                             steps=plan.optimizer_steps)))
        if micro != per_epoch:
            value = Fraction(plan.optimizer_steps, micro)
            traps.append(Trap(float(value), msg("poll.trap.final_epoch_micro", value=_exact(value),
                                                steps=plan.optimizer_steps, micro=micro)))
        if s.trainer != DEFAULTS.trainer and (newer := _replanned(s, trainer=DEFAULTS.trainer)) is not None:
            traps.append(Trap(float(newer.final_epoch), msg("poll.trap.final_epoch_other_release",
                                                            value=_exact(newer.final_epoch), release=DEFAULTS.trainer)))
    elif asked == "warmup_steps" and s.warmup_ratio and not s.warmup_steps:
        ratio = Fraction(str(s.warmup_ratio))  # the decimal the learner reads, not the float the Trainer multiplies
        exact = math.ceil(plan.max_steps * ratio)
        traps.append(Trap(float(exact), msg("poll.trap.warmup_exact_product", value=exact, total=plan.max_steps,
                                            ratio=s.warmup_ratio)))
        down = math.floor(plan.max_steps * ratio)
        traps.append(Trap(float(down), msg("poll.trap.warmup_rounded_down", value=down, total=plan.max_steps,
                                           ratio=s.warmup_ratio)))
        if micro != per_epoch:
            value = math.ceil(Fraction(micro) * Fraction(s.num_train_epochs) * ratio)
            traps.append(Trap(float(value), msg("poll.trap.warmup_micro", value=value, micro=micro, epochs=epochs,
                                                ratio=s.warmup_ratio, total=plan.max_steps)))
        if s.num_train_epochs != 1:
            one = math.ceil(per_epoch * ratio)
            traps.append(Trap(float(one), msg("poll.trap.warmup_one_epoch", value=one, per_epoch=per_epoch,
                                              ratio=s.warmup_ratio, total=plan.max_steps)))
    elif asked == "samples_duplicated_per_epoch":
        if s.world_size > 1 and (one := _replanned(s, world_size=1)) is not None:
            traps.append(Trap(float(one.epoch.duplicated), msg("poll.trap.duplicated_one_gpu",
                                                               value=one.epoch.duplicated, gpus=s.world_size)))
        if (dropping := _replanned(s, dataloader_drop_last=True)) is not None and dropping.epoch.dropped:
            traps.append(Trap(float(dropping.epoch.dropped), msg("poll.trap.duplicated_as_dropped",
                                                                 value=dropping.epoch.dropped)))
    elif asked == "last_group_micro_batches":
        from_samples = s.num_samples % ga or ga
        traps.append(Trap(float(from_samples), msg("poll.trap.last_group_from_samples", value=from_samples,
                                                   samples=s.num_samples, ga=ga, micro=micro)))
        traps.append(Trap(float(ga), msg("poll.trap.last_group_full", value=ga, micro=micro, ga=ga)))
        if micro % ga == 0:
            traps.append(Trap(0.0, msg("poll.trap.last_group_zero", value=0, micro=micro, ga=ga)))
    return traps


def _exact(value: Fraction | float) -> str:
    """A decimal as a sentence says it, to six significant digits (0.0625, not 0.062)."""
    return f"{float(value):.6g}"


QUANTITY_TRAPS = ("eval_every_epochs", "save_count", "final_epoch", "warmup_steps", "samples_duplicated_per_epoch",
                  "last_group_micro_batches")
"""The questions `_quantity_traps` knows the wrong rules of."""


def _grpo_traps(plan: GrpoPlan, asked: str | None) -> list[Trap]:
    """The wrong rules for a GRPO question, each worked out by the engine. For its steps: GRPO's own
    (`grpo_counting.traps`: the prompts as steps, B as prompts, μ or the processes forgotten, one big division),
    then the Trainer's that lesson 11 names or the earlier lessons teach: the prompts times the epochs, one epoch
    only, every micro-batch an update, the completions trained, the generation rounds (ROLL's step). For the
    prompts of a round: the round's completions, not divided by G."""
    s, trainer = plan.setup, plan.trainer
    epochs, ga = whole(s.num_train_epochs), s.gradient_accumulation_steps
    if asked == "unique_prompts_per_round":
        return [Trap(float(plan.generation_batch_size), msg(
            "poll.trap.grpo_round_completions", value=plan.generation_batch_size, generations=s.num_generations,
            batch=s.per_device_train_batch_size, processes=s.world_size, steps=plan.steps_per_generation,
            count=plan.generation_batch_size))]
    if asked not in ("max_steps", "optimizer_steps"):
        return []
    found = [Trap(trap.value, trap.why) for trap in grpo_counting.traps(plan)]
    whole_epochs = float(s.num_train_epochs).is_integer()
    if whole_epochs and s.num_train_epochs != 1:
        value = s.num_samples * int(epochs)
        found.append(Trap(float(value), msg("poll.trap.grpo_prompts_epochs", value=value, prompts=s.num_samples,
                                            epochs=epochs, effective=plan.completions_per_update,
                                            count=plan.completions_per_update)))
        per_epoch = trainer.num_update_steps_per_epoch
        found.append(Trap(float(per_epoch), msg("poll.trap.one_epoch", value=per_epoch, epochs=epochs,
                                                count=per_epoch)))
    micro = trainer.micro_batches_per_epoch
    if whole_epochs and ga > 1:
        value = micro * int(epochs)
        found.append(Trap(float(value), msg("poll.trap.forgot_accumulation", value=value, micro=micro,
                                            epochs=epochs, ga=ga, count=ga)))
    if whole_epochs:
        value = s.num_samples * s.num_generations * int(epochs)
        found.append(Trap(float(value), msg("poll.trap.grpo_completions", value=value, prompts=s.num_samples,
                                            generations=s.num_generations, epochs=epochs,
                                            effective=plan.completions_per_update,
                                            count=plan.completions_per_update)))
    rounds = plan.generation_rounds
    found.append(Trap(float(rounds), msg("poll.trap.grpo_rounds", value=rounds, per_round=plan.micro_batches_per_round,
                                         ga=ga, count=rounds)))
    return found


def _change_traps(poll: Poll, old: Plan) -> list[Trap]:
    """The wrong rules for a change: nothing changes; the total scaled the wrong way by the change's factor."""
    field = poll.change[0]  # type: ignore[index]
    before = getattr(old.setup, field)
    after = getattr(_asked_setup(poll), field)
    change = change_said(poll)
    traps = [Trap(float(old.max_steps), msg("poll.trap.unchanged", value=old.max_steps, change=change))]
    if field in CHANGES and before and after > before and float(after / before).is_integer() and \
            not old.setup.uses_max_steps:
        factor = int(after // before)
        if field in DIVISORS:
            value = old.max_steps * factor
            traps.append(Trap(float(value), msg("poll.trap.wrong_way_up", value=value, old=old.max_steps,
                                                factor=factor, name=field)))
        elif field == "num_samples" and old.max_steps % factor == 0:
            value = old.max_steps // factor
            traps.append(Trap(float(value), msg("poll.trap.wrong_way_down", value=value, old=old.max_steps,
                                                factor=factor, name=field)))
    return traps


def _kept(answer: float | None, traps: list[Trap]) -> tuple[Trap, ...]:
    """Traps whose value differs from the answer and from every trap before it."""
    kept: list[Trap] = []
    for trap in traps:
        if answer is not None and numbers_match(trap.value, answer, None):
            continue
        if any(numbers_match(trap.value, other.value, None) for other in kept):
            continue
        kept.append(trap)
    return tuple(kept)


@lru_cache(maxsize=256)
def _reveal_cached(poll: Poll) -> Reveal:
    if poll.kind == "bank":
        question = _question(poll)
        answer = float(question.answer) if question.numeric else None
        traps: list[Trap] = []
        if question.kind == "numeric" and question.setup is not None:
            if question.spec.answer == "max_steps":
                traps = _setup_traps(make_plan(question.setup))
            elif question.spec.answer in QUANTITY_TRAPS:
                traps = _quantity_traps(make_plan(question.setup), question.spec.answer)
            else:
                traps = _epoch_traps(make_plan(question.setup), question.spec.answer or "")
        if question.run is not None:
            traps = _grpo_traps(grpo_counting.grpo_plan(question.run), question.spec.answer)
        return Reveal(answer, question.correct, worked_for(question), _kept(answer, traps), question.explanation)
    plan = _plan(_asked_setup(poll))
    traps = _change_traps(poll, _plan(_old_setup(poll))) if poll.kind == "change" else []
    traps += _setup_traps(plan)
    answer = float(plan.max_steps)
    return Reveal(answer, frozenset(), _total_lines(plan), _kept(answer, traps), None)


def reveal(poll: Poll) -> Reveal:
    """The engine's answer, the worked arithmetic and the common wrong answers for this poll."""
    return _reveal_cached(poll)


def trap_for(poll: Poll, value: float) -> Trap | None:
    """The named wrong rule that gives exactly `value`, if one does (a student's feedback after the reveal)."""
    number = _finite(value)
    if number is None:
        return None
    return next((trap for trap in reveal(poll).traps if numbers_match(number, trap.value, None)), None)


def is_close(poll: Poll, value: float) -> bool:
    """A wrong numeric answer close to the engine's: within `CLOSE_SHARE` of it, or one off a whole answer (a
    rounding slip). What earns "almost"; 4× off is not close. Choice polls are never close."""
    number = _finite(value)
    if number is None or not is_numeric(poll) or is_correct(poll, number):
        return False
    answer = _answer(poll)
    if answer is None:
        return False
    gap = abs(Fraction(number) - Fraction(answer))
    return gap <= CLOSE_SHARE * abs(Fraction(answer)) or (whole_answer(poll) and gap <= 1)


@dataclass(frozen=True)
class Given:
    """A wrong answer the room gave: the value, how many gave it, and the named wrong rule that produces it (None
    when no rule we know does)."""

    value: float
    count: int
    trap: Trap | None


def wrong_answers(poll: Poll, values: tuple[float, ...]) -> tuple[Given, ...]:
    """The wrong answers among `values` (a tally's), each once with its count, most frequent first (then the
    named rules before the unexplained, then by value), each matched to its trap. A choice poll's wrong options
    have no trap: its question's explanation covers them."""
    counts: dict[float, int] = {}
    for value in values:
        if not is_correct(poll, value):
            counts[value] = counts.get(value, 0) + 1
    numeric = is_numeric(poll)
    given = [Given(value, count, trap_for(poll, value) if numeric else None) for value, count in counts.items()]
    return tuple(sorted(given, key=lambda item: (-item.count, item.trap is None, item.value)))
