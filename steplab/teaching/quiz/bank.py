"""Loading the question bank (`lessons/questions.yaml`) and checking every question before a learner sees it."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from steplab.errors import InputError, SetupError
from steplab.i18n import LANGUAGES, Text
from steplab.teaching import grpo_counting
from steplab.teaching.presets import presets
from steplab.teaching.quiz.generate import generate
from steplab.teaching.quiz.schema import (
    BANK_FILE,
    KINDS,
    LESSONS,
    MAX_COMBINATIONS,
    MAX_GRID,
    NUMERIC_FIELDS,
    TARGET_OPS,
    Control,
    Option,
    QuestionSpec,
    QuizError,
    on_grid,
    placeholder_names,
    plan_values,
)
from steplab.trainer.quantities import is_quantity
from steplab.trainer.setup import FIELD_NAMES, TrainingSetup, setup_from_mapping

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

    grpo = kind == "grpo"
    setup = _grpo_values(qid, "setup", item.get("setup")) if grpo else _setup_values(qid, "setup", item.get("setup"))
    params: dict[str, tuple[Any, ...]] = {}
    raw_params = item.get("params") or {}
    if not isinstance(raw_params, Mapping):
        raise QuizError(qid, "params must map setup fields to lists of choices")
    for name, choices in raw_params.items():
        if name not in FIELD_NAMES and not (grpo and name in grpo_counting.TRL_NAMES):
            raise QuizError(qid, f"params names unknown setup field {name!r}")
        if not isinstance(choices, list) or not choices:
            raise QuizError(qid, f"params.{name} must be a non-empty list of choices")
        for choice in choices:
            try:
                grpo_counting.grpo_setup({name: choice}) if grpo else setup_from_mapping({name: choice})
            except SetupError as error:
                raise QuizError(qid, f"params.{name}: {error}") from None
        params[name] = tuple(choices)
    setups: dict[str, dict[str, Any]] = {}
    raw_setups = item.get("setups") or {}
    if grpo and raw_setups:
        raise QuizError(qid, "a grpo question says its own run's numbers; setups: belongs to numeric questions")
    if not isinstance(raw_setups, Mapping):
        raise QuizError(qid, "setups must map names to setups")
    for alias, raw in raw_setups.items():
        if not isinstance(alias, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", alias) or alias == "measured":
            raise QuizError(qid, f"setups: bad name {alias!r}")
        setups[alias] = _setup_values(qid, f"setups.{alias}", raw)
        plan_values(qid, setups[alias], f"setups.{alias}")

    spec_args: dict[str, Any] = {}
    if kind in ("numeric", "grpo"):
        spec_args["answer"] = (_grpo_quantity_name(qid, item.get("answer")) if grpo
                               else _quantity_name(qid, "answer", item.get("answer")))
        if "tolerance" in item:
            spec_args["tolerance"] = _float(qid, "tolerance", item["tolerance"])
            if spec_args["tolerance"] < 0:
                raise QuizError(qid, "tolerance must not be negative")
    elif "answer" in item or "tolerance" in item:
        raise QuizError(qid, f"answer/tolerance belong to numeric and grpo questions, not {kind}")
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
        if drawn and not all("target" in placeholder_names(prompt.get(lang)) for lang in LANGUAGES):
            raise QuizError(qid, "the target is drawn from a list, so the prompt must show it with {target}")
    elif "controls" in item or "target" in item:
        raise QuizError(qid, f"controls/target belong to sliders questions, not {kind}")
    if kind in ("numeric", "grpo") and not setup and not params:
        raise QuizError(qid, f"a {kind} question needs a setup (a preset and/or field values)")

    return QuestionSpec(
        id=qid, lesson=lesson, kind=kind, prompt=prompt, hint=hint, explanation=explanation,
        setup=tuple(setup.items()), params=tuple(params.items()),
        setups=tuple((alias, tuple(values.items())) for alias, values in setups.items()), **spec_args,
    )


def _grpo_values(qid: str, where: str, raw: Any) -> dict[str, Any]:
    """A grpo question's run: setup fields and TRL's GRPO fields (no preset: the run is written out), checked by
    `steplab.teaching.grpo_counting.grpo_setup`."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping) or "preset" in raw:
        raise QuizError(qid, f"{where} must be a mapping of setup and TRL fields (no preset)")
    unknown = [str(k) for k in raw if k not in FIELD_NAMES and k not in grpo_counting.TRL_NAMES]
    if unknown:
        raise QuizError(qid, f"{where} has unknown field(s) {unknown}")
    try:
        grpo_counting.grpo_setup(raw)
    except InputError as error:
        raise QuizError(qid, f"{where}: {error}") from None
    return dict(raw)


def _grpo_quantity_name(qid: str, name: Any) -> str:
    if not isinstance(name, str) or name not in grpo_counting.QUANTITIES:
        raise QuizError(qid, f"answer names unknown GRPO quantity {name!r} (one of {', '.join(grpo_counting.QUANTITIES)})")
    return name


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
        if initial is None or not on_grid(control, initial):
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


def _combinations(spec: QuestionSpec) -> list[int]:
    """Seeds that together cover every parameter draw (or a large sample of them)."""
    size = math.prod(len(c) for _, c in spec.params) * math.prod(len(v) for _, _, v in spec.targets)
    return list(range(min(max(size * 8, 16), MAX_COMBINATIONS)))


def _check(spec: QuestionSpec) -> None:
    """Draw the question with many seeds: every placeholder resolves, every answer is a number, every
    slider task is solvable and not already solved at the start."""
    for seed in _combinations(spec):
        question = generate(spec, seed)
        if spec.kind in ("numeric", "grpo") and spec.answer:
            if spec.answer in placeholder_names(spec.prompt.zh + spec.prompt.en):
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


