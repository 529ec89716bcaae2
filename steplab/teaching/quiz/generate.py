"""Drawing a concrete question from a spec with a seed, its texts filled from the engine; the slider solver."""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from steplab.dataset.catalog import KNOWN_DATASET_ROWS
from steplab.errors import SetupError, TrainerRefusal
from steplab.i18n import Text, fill, whole
from steplab.teaching import grpo_counting
from steplab.teaching.measurements import measurements
from steplab.teaching.presets import presets
from steplab.teaching.quiz.schema import (
    Control,
    Question,
    QuestionSpec,
    QuizError,
    Target,
    number_or_none,
    plan_values,
)
from steplab.trainer.plan import Plan, make_plan
from steplab.trainer.profiles import LLAMA_FACTORY_TRANSFORMERS, LLAMA_FACTORY_VERSION, PROFILES
from steplab.trainer.quantities import quantity
from steplab.trainer.setup import TrainingSetup

# --------------------------------------------------------------------------- generation


CODE_SPAN = re.compile(r"`[^`]*`")


def _fill(qid: str, text: Text, plan: Plan | None, extra: Mapping[str, Plan],
          literals: Mapping[str, Any] | None = None) -> Text:
    """Put the engine's numbers into a text's placeholders (`steplab.i18n.fill`); anything unresolved is a
    `QuizError` naming the placeholder."""

    def value(name: str) -> Any:
        if literals and name in literals:
            return literals[name]
        parts = name.split(".")
        if parts[0] == "rows" and len(parts) == 2:  # a dataset's known row count: {rows.identity}
            if parts[1] not in KNOWN_DATASET_ROWS:
                raise QuizError(qid, f"placeholder {{{name}}} does not resolve (no known dataset {parts[1]!r})")
            return KNOWN_DATASET_ROWS[parts[1]]
        if parts[0] == "llamafactory" and len(parts) == 2 and parts[1] in ("version", "transformers"):
            # the LLaMA-Factory release the course pins and the transformers releases it accepts (as lessons say)
            return LLAMA_FACTORY_VERSION if parts[1] == "version" else " – ".join(LLAMA_FACTORY_TRANSFORMERS)
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
    extra = {alias: plan_values(spec.id, dict(setup), f"setups.{alias}") for alias, setup in spec.setups}
    if spec.kind == "grpo":
        return _generate_grpo(spec, seed, values, rng)
    setup = plan = None
    if spec.has_setup:
        merged = {**dict(spec.setup), **values}
        plan = plan_values(spec.id, merged, f"setup with {values}" if values else "setup")
        setup = plan.setup
    targets = tuple(Target(name, op, rng.choice(choices)) for name, op, choices in spec.targets)
    literals = {"target": whole(targets[0].value)} if targets else {}
    say = lambda text: _fill(spec.id, text, plan, extra, literals)  # noqa: E731
    common = dict(spec=spec, seed=seed, prompt=say(spec.prompt), hint=say(spec.hint),
                  explanation=say(spec.explanation) if spec.explanation else None,
                  values=tuple(values.items()), setup=setup)
    if spec.kind == "numeric":
        try:
            answer = quantity(plan, spec.answer)
        except (TypeError, ZeroDivisionError, ValueError):
            answer = None
        if number_or_none(answer) is None:
            raise QuizError(spec.id, f"answer {spec.answer} is not a number for the setup with {values} ({answer!r})")
        return Question(**common, answer=whole(answer) if isinstance(answer, float) else answer)
    if spec.kind == "choice":
        order = list(range(len(spec.options)))
        if spec.shuffle:
            rng.shuffle(order)
        options = tuple(say(spec.options[i].text) for i in order)
        correct = frozenset(shown for shown, i in enumerate(order) if spec.options[i].correct)
        return Question(**common, options=options, correct=correct)
    controls = tuple(
        Control(c.field, c.low, c.high, c.step,
                c.start if c.start is not None else whole(float(getattr(setup, c.field)))) for c in spec.controls
    )
    start = {c.field: c.start for c in controls}
    if _reaches(setup, start, targets, controls):
        raise QuizError(spec.id, f"the target is already reached at the start (drawn values {values})")
    return Question(**common, controls=controls, targets=targets,
                    solution=tuple(_solve(setup, controls, targets).items()))


def _generate_grpo(spec: QuestionSpec, seed: int, values: dict[str, Any], rng: random.Random) -> Question:
    """A `grpo` question: its run planned by `steplab.trl` (through `grpo_counting`), its texts' placeholders the
    run's quantities and inputs, its answer the engine's; a run TRL refuses is the author's mistake."""
    merged = {**dict(spec.setup), **values}
    try:
        run = grpo_counting.grpo_setup(merged)
        plan = grpo_counting.grpo_plan(run)
    except (SetupError, TrainerRefusal) as error:
        raise QuizError(spec.id, f"the run with {values} cannot be planned: {error}") from None
    names = (*grpo_counting.QUANTITIES, *grpo_counting.INPUTS)
    literals = {name: whole(value) if isinstance(value, float) else value
                for name in names if (value := grpo_counting.grpo_quantity(plan, name)) is not None}
    say = lambda text: _fill(spec.id, text, None, {}, literals)  # noqa: E731
    answer = grpo_counting.grpo_quantity(plan, spec.answer)
    if number_or_none(answer) is None:
        raise QuizError(spec.id, f"answer {spec.answer} is not a number for the run with {values} ({answer!r})")
    return Question(spec=spec, seed=seed, prompt=say(spec.prompt), hint=say(spec.hint),
                    explanation=say(spec.explanation) if spec.explanation else None, values=tuple(values.items()),
                    setup=run.setup, answer=whole(answer) if isinstance(answer, float) else answer, run=run)


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


def draw(specs: list[QuestionSpec], rng: random.Random, *, lessons: set[int] | None = None,
         avoid: str | None = None) -> Question | None:
    """A fresh question from `specs` (only `lessons` when given), not `avoid` when another is available."""
    pool = [s for s in specs if lessons is None or s.lesson in lessons]
    if not pool:
        return None
    others = [s for s in pool if s.id != avoid] or pool
    return generate(rng.choice(others), rng.randrange(MAX_SEED + 1))


MAX_SEED = 2**31 - 1  # `draw`'s seeds are 0 ..= MAX_SEED
TOKEN = re.compile(r"([A-Za-z0-9_-]{1,80}):([0-9]{1,10})")


def from_token(text: object, specs: Mapping[str, QuestionSpec]) -> tuple[str, int] | None:
    """A concrete question named by its token (`Question.token`, `<id>:<seed>`; e.g. kept in a page's address)
    read back as (id, seed) when it names a question of `specs` with a seed `draw` could give, else None."""
    match = TOKEN.fullmatch(text) if isinstance(text, str) else None
    if match is None or match.group(1) not in specs or int(match.group(2)) > MAX_SEED:
        return None
    return match.group(1), int(match.group(2))
