"""Lessons as data: load and validate `lessons/*.yaml`, and fill their `{scenario.quantity}` placeholders.

A lesson is a title, goals and an ordered list of blocks. Block kinds:

- `text`: Markdown in `zh` and `en`;
- `aside`: Markdown in `zh` and `en` under a `title`, folded away until the learner opens it ("going further");
- `widget`: a live widget by reference (`calculator`, `compare`, `schedule`, `animation`, `lab`) on a scenario,
  `roll` on a ROLL RLVR scenario, or `grpo` on a GRPO scenario;
- `predict`: the learner enters a guess of a quantity before the answer and its arithmetic are revealed (of a
  plan, of a ROLL RLVR scenario or of a GRPO scenario); what follows it stays hidden until then (`visible_blocks`);
- `check`: the self-check: `count` questions drawn from `lessons/questions.yaml` for this lesson's number;
- `funnel`: LLaMA-Factory's dataset funnel, live: it starts from a `llamafactory` scenario naming one or two
  datasets StepLab knows the rows of, and the learner changes the rows, `max_samples` and `val_size`.

Numbers in the text are never typed (tests/test_prose.py checks): `{course.max_steps}` is the engine's value for
the lesson's scenario `course`, `{course.setup.warmup_steps}` the value the scenario sets,
`{course.trainer_release}` / `{course.trainer_matched}` its Trainer profile's releases, `{course.loss_scaling}` how
that release scales each micro-batch's loss, `{lesson.several_gpus}`
the number of another lesson (by its file name), and `{measured.v100_batch4_acc8.seconds}` a figure measured in
the course. A `llamafactory` scenario also has `{capped.yaml.max_samples}` (a value its YAML sets) and
`{capped.funnel.train_examples}` / `{capped.funnel.eval_examples}` (its dataset funnel on the known row counts) and
`{capped.data.sequence_cap}` (a data setting as LLaMA-Factory reads it). A `grpo` scenario (setup fields and TRL's
GRPO fields, planned by `steplab.trl` through `steplab.teaching.grpo_counting`) has `{run.<quantity>}` for the
quantities and inputs `grpo_counting.grpo_quantity` names, and a `rlvr` scenario those of `rl_pipeline`; `{llamafactory.version}` and
`{llamafactory.transformers}` name the LLaMA-Factory release and the transformers releases it accepts, and
`{releases.<behaviour>}` the transformers releases whose profile row has that behaviour (`releases_with`).
Placeholders are those of the locale files (`{name}`, `{name:spec}`), filled by `steplab.i18n.fill`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from steplab.dataset.catalog import KNOWN_DATASET_ROWS
from steplab.dataset.funnel import Funnel
from steplab.dataset.load import funnel_from_rows, known_rows
from steplab.dataset.settings import data_settings
from steplab.errors import InputError, SetupError, TrainerRefusal
from steplab.i18n import LANGUAGES, Text, fill, msg, whole
from steplab.io.config_read import read_config
from steplab.teaching.grpo_counting import GrpoSetup, grpo_plan, grpo_quantity, grpo_setup
from steplab.teaching.grpo_counting import is_quantity as is_grpo_quantity
from steplab.teaching.measurements import measurements
from steplab.teaching.presets import presets
from steplab.teaching.rl_pipeline import RlvrSetup, rlvr_quantities
from steplab.trainer.plan import Plan, make_plan
from steplab.trainer.profiles import LLAMA_FACTORY_TRANSFORMERS, LLAMA_FACTORY_VERSION, PROFILES
from steplab.trainer.quantities import is_quantity, quantity
from steplab.trainer.setup import TrainingSetup, setup_from_mapping

LESSONS_DIR = Path(__file__).resolve().parents[2] / "lessons"
WIDGETS = ("calculator", "compare", "schedule", "animation", "lab", "roll", "grpo")
OWN_WIDGETS = {"rlvr": "roll", "grpo": "grpo"}
"""The widget each scenario kind of its own is drawn by (the other widgets take a Trainer setup)."""
LABS = ("accumulation", "token_weighting", "overfitting", "memory")
BLOCK_KEYS = {
    "text": {"kind", "zh", "en"},
    "aside": {"kind", "title", "zh", "en"},
    "widget": {"kind", "widget", "scenario", "scenarios", "lab", "caption"},
    "predict": {"kind", "scenario", "quantity", "prompt", "reveal", "tolerance"},
    "check": {"kind", "count"},
    "funnel": {"kind", "scenario", "caption"},
}
FUNNEL_DATASETS = (1, 2)
"""How many datasets a funnel block's scenario may name: one, or two to show that `max_samples` cuts each."""


class LessonError(ValueError):
    """An author's mistake in a lesson file: which file, where, and what is wrong."""

    def __init__(self, source: str, where: str, problem: str):
        super().__init__(f"{source}: {where}: {problem}")
        self.source, self.where, self.problem = source, where, problem


@dataclass(frozen=True)
class Block:
    kind: str
    data: dict[str, Any]

    def text(self, name: str) -> Text:
        value = self.data[name]
        return Text(value["zh"], value["en"])


@dataclass(frozen=True)
class Lesson:
    id: str
    number: int
    title: Text
    goals: tuple[Text, ...]
    scenarios: dict[str, TrainingSetup | RlvrSetup | GrpoSetup] = field(repr=False)
    blocks: tuple[Block, ...] = ()
    source: str = ""
    llamafactory: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)
    """The YAML keys of each `llamafactory` scenario, as the lesson writes them (the dataset funnel reads them)."""
    aliases: tuple[str, ...] = ()
    """Ids this lesson had before (a split lesson keeps its old links working: `/lessons?lesson=<alias>`)."""

    def visible_blocks(self, revealed: Any) -> int:
        """How many blocks to draw: up to and including the first predict not yet revealed (`revealed(index)`),
        so nothing after a question gives its answer away before the learner has answered."""
        for index, block in enumerate(self.blocks):
            if block.kind == "predict" and not revealed(index):
                return index + 1
        return len(self.blocks)

    def answer(self, block: Block) -> Any:
        """The engine's answer to a predict block."""
        return self.value(f"{block.data['scenario']}.{block.data['quantity']}")

    def plan(self, scenario: str) -> Plan:
        return make_plan(self.scenarios[scenario])

    def funnel(self, scenario: str, rows: dict[str, int] | None = None, **changes: Any) -> Funnel:
        """The dataset funnel of a `llamafactory` scenario: its datasets' rows (the known demo sizes unless
        given), its YAML with `changes` (a change to `None` removes the key). Raises `InputError` (every kind)."""
        values = {**self.llamafactory[scenario], **changes}
        values = {name: value for name, value in values.items() if value is not None}
        return funnel_from_rows(values, rows if rows is not None else known_rows(values))

    def fill(self, template: str, lang: str = "zh") -> str:
        """Replace every `{scenario.quantity}` / `{measured.name.figure}` with the engine's value.

        A placeholder that does not resolve raises `KeyError` with its name."""
        return fill(template, self._lookup, lang)

    def _lookup(self, reference: str) -> Any:
        try:
            return self.value(reference)
        except (KeyError, ValueError, TypeError, ZeroDivisionError, AttributeError):
            raise KeyError(reference) from None

    def value(self, reference: str) -> Any:
        """What a placeholder names: `measured.<run>.<figure>`, `lesson.<file name>` (another lesson's number),
        or `<scenario>.<quantity>` / `<scenario>.setup.<field>` / `<scenario>.trainer_release|trainer_matched`."""
        head, _, rest = reference.partition(".")
        if head == "llamafactory":  # {llamafactory.version}, {llamafactory.transformers}: the release it pins
            return {"version": LLAMA_FACTORY_VERSION, "transformers": " – ".join(LLAMA_FACTORY_TRANSFORMERS)}[rest]
        if head == "releases":  # {releases.final_eval}: the transformers releases whose profile row has it
            return releases_with(rest)
        if head == "measured":
            name, _, figure = rest.partition(".")
            return measurements()[name][figure]
        if head == "lesson":  # {lesson.several_gpus}: the number of lessons/NN_several_gpus.yaml
            return lesson_numbers_by_name()[rest]
        scenario = self.scenarios[head]
        if isinstance(scenario, RlvrSetup):  # a ROLL RLVR run
            return rlvr_quantities(scenario)[rest]
        if isinstance(scenario, GrpoSetup):  # a TRL GRPOTrainer run
            return grpo_quantity(grpo_plan(scenario), rest)
        if rest.startswith("yaml."):  # a value the scenario's LLaMA-Factory YAML sets, e.g. {x.yaml.val_size} = 0.1
            return self.llamafactory[head][rest.removeprefix("yaml.")]
        if rest.startswith("data."):  # a data setting as LLaMA-Factory reads it, e.g. {x.data.sequence_cap}
            return getattr(data_settings(self.llamafactory[head]), rest.removeprefix("data."))
        if rest in ("funnel.train_examples", "funnel.eval_examples"):  # its dataset funnel
            return getattr(self.funnel(head), rest.removeprefix("funnel."))
        if rest in ("funnel.fewest", "funnel.fewest_steps"):  # the low end of an estimate (packing, no tokens)
            fewest = self.funnel(head).estimate.train[0]
            return fewest if rest == "funnel.fewest" else make_plan(scenario.replace(num_samples=fewest)).max_steps
        if rest.startswith("setup."):  # the configured value, e.g. {x.setup.warmup_steps} = 0.1
            return getattr(scenario, rest.removeprefix("setup."))
        if rest in ("trainer_release", "trainer_matched"):  # "4.47 – 4.51", "transformers 4.51.3"
            profile = PROFILES[scenario.trainer]
            return profile.releases if rest == "trainer_release" else profile.matched
        if rest == "loss_scaling":  # how its release scales each micro-batch's loss (a sentence of the catalogue)
            profile = PROFILES[scenario.trainer]
            return msg(f"loss_scaling.{profile.loss_scaling}", releases=profile.releases)
        return quantity(self.plan(head), rest)

    def say(self, text: Text, lang: str) -> str:
        """The text in `lang`, numbers filled in; a Chinese line break inside a paragraph joins without the
        space Markdown would put there."""
        said = self.fill(text.get(lang), lang)
        return _CJK_BREAK.sub("", said) if lang == "zh" else said


_CJK_BREAK = re.compile(r"(?<=[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef])\n(?=[\u4e00-\u9fff\uff00-\uffef])")


def _release_key(release: str) -> tuple[float, ...]:
    """A release number for ordering: "5.15" → (5, 15), "5.x" after every 5.n."""
    return tuple(float("inf") if part == "x" else float(part) for part in release.split("."))


def releases_with(behaviour: str) -> str:
    """The transformers releases whose profile row has `behaviour` (a true field of `TrainerProfile`, e.g.
    `final_eval`), as one range "first – last" read off the rows' own `releases`: what a lesson writes as
    `{releases.final_eval}`, so the sentence follows the rows. Raises `ValueError` for a field no row has, or
    rows that do not make one unbroken range."""
    rows = sorted((profile for profile in PROFILES.values() if profile.framework == "transformers"),
                  key=lambda profile: _release_key(profile.releases.split(" – ")[0]))
    having = [index for index, profile in enumerate(rows) if getattr(profile, behaviour) is True]
    if not having or having != list(range(having[0], having[-1] + 1)):
        raise ValueError(f"the rows with {behaviour} do not make one range of releases")
    first, last = rows[having[0]].releases.split(" – ")[0], rows[having[-1]].releases.split(" – ")[-1]
    return f"{first} – {last}"


def yaml_val_size(value: float) -> float | int:
    """`val_size` as a YAML would hold it when typed into a number box: a whole number is a YAML integer
    (`val_size: 1` holds out one row, `100` a hundred), anything else a fraction."""
    return whole(float(value))


def _bilingual(value: Any, source: str, where: str) -> Text:
    if not isinstance(value, dict) or set(value) != set(LANGUAGES):
        raise LessonError(source, where, "needs exactly the keys zh and en")
    if not all(isinstance(value[lang], str) and value[lang].strip() for lang in LANGUAGES):
        raise LessonError(source, where, "zh and en must both be non-empty text")
    return Text(value["zh"], value["en"])


def _scenario(spec: Any, source: str, name: str) -> TrainingSetup | RlvrSetup | GrpoSetup:
    """A lesson scenario: a preset and/or field values (planned by the engine), a LLaMA-Factory YAML's keys
    (read by `steplab.io.config_read`, so the sample count follows max_samples and val_size), a ROLL RLVR run, or
    a TRL `GRPOTrainer` run (setup fields and TRL's, planned by `steplab.trl`)."""
    where = f"scenarios.{name}"
    if not isinstance(spec, dict) or not (set(spec) <= {"preset", "set"}
                                          or set(spec) in ({"llamafactory"}, {"rlvr"}, {"grpo"})):
        raise LessonError(source, where, "write {preset: <id>} and/or {set: {...}}, or {llamafactory: {...}}, "
                                         "or {rlvr: {...}}, or {grpo: {...}}")
    if "grpo" in spec:
        if not isinstance(spec["grpo"], dict):
            raise LessonError(source, where, "grpo: takes setup and TRL fields, {num_samples: ..., num_generations: ...}")
        try:
            run = grpo_setup(spec["grpo"])
            grpo_plan(run)
        except InputError as error:
            raise LessonError(source, where, error.message('en')) from None
        except TrainerRefusal as error:
            raise LessonError(source, where, str(error)) from None
        return run
    if "rlvr" in spec:
        try:
            run = RlvrSetup(**spec["rlvr"])
            rlvr_quantities(run)
        except TypeError as error:
            raise LessonError(source, where, str(error)) from None
        except InputError as error:
            raise LessonError(source, where, error.message("en")) from None
        except TrainerRefusal as error:
            raise LessonError(source, where, f"ROLL refuses it: {error}") from None
        return run
    values: dict[str, Any] = {}
    if "llamafactory" in spec:
        try:
            imported = read_config(yaml.safe_dump(spec["llamafactory"]))
        except InputError as error:
            raise LessonError(source, where, error.message("en")) from None
        if imported.needs_num_samples:
            raise LessonError(source, where, "the YAML does not give the sample count (name datasets StepLab knows)")
        values.update(imported.values)
    if "preset" in spec:
        if spec["preset"] not in presets():
            raise LessonError(source, where, f"unknown preset {spec['preset']!r}")
        values.update(presets()[spec["preset"]].values)
    values.update(spec.get("set") or {})
    try:
        setup, unknown = setup_from_mapping(values)
        make_plan(setup)
    except (SetupError, TrainerRefusal) as error:
        raise LessonError(source, where, str(error)) from None
    if unknown:
        raise LessonError(source, where, f"unknown fields {unknown}")
    return setup


def _questions_per_lesson() -> dict[int, int]:
    path = LESSONS_DIR / "questions.yaml"
    if not path.exists():
        return {}
    items = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    if isinstance(items, dict):
        items = items.get("questions", [])
    counts: dict[int, int] = {}
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("lesson"), int):
            counts[item["lesson"]] = counts.get(item["lesson"], 0) + 1
    return counts


def _check_funnel(scenario: Any, lesson: Lesson, source: str, where: str) -> None:
    """A funnel block starts from a `llamafactory` scenario with one or two known datasets, and its funnel runs."""
    if scenario not in lesson.llamafactory:
        raise LessonError(source, where, f"a funnel block needs a llamafactory scenario; the lesson has "
                                         f"{sorted(lesson.llamafactory)}")
    try:
        names = data_settings(lesson.llamafactory[scenario]).datasets
    except InputError as error:
        raise LessonError(source, where, error.message("en")) from None
    if len(names) not in FUNNEL_DATASETS:
        raise LessonError(source, where, f"the funnel's scenario must name one or two datasets, not {len(names)}")
    unknown = [name for name in names if name not in KNOWN_DATASET_ROWS]
    if unknown:
        raise LessonError(source, where, f"StepLab does not know the rows of {unknown}; use {sorted(KNOWN_DATASET_ROWS)}")
    try:
        funnel = lesson.funnel(scenario)
    except InputError as error:
        raise LessonError(source, where, error.message("en")) from None
    if funnel.estimate is not None:
        raise LessonError(source, where, "a funnel block follows the row rules: packing and stage: pt need token "
                                         "lengths, which row counts cannot give (the count would be an estimate)")


def _check_block(raw: Any, index: int, lesson: Lesson, source: str) -> Block:
    where = f"blocks[{index}]"
    if not isinstance(raw, dict) or raw.get("kind") not in BLOCK_KEYS:
        raise LessonError(source, where, f"kind must be one of {sorted(BLOCK_KEYS)}")
    kind = raw["kind"]
    extra = set(raw) - BLOCK_KEYS[kind]
    if extra:
        raise LessonError(source, where, f"unknown keys {sorted(extra)} for a {kind} block")
    texts = ("zh", "en") if kind in ("text", "aside") else ()
    if texts:
        _bilingual({"zh": raw.get("zh"), "en": raw.get("en")}, source, where)
    if kind == "aside" and "title" not in raw:
        raise LessonError(source, where, "an aside needs a title (what the folded part is about)")
    for name in ("caption", "prompt", "reveal", "title"):
        if name in raw:
            _bilingual(raw[name], source, f"{where}.{name}")
    if kind == "widget":
        if raw.get("widget") not in WIDGETS:
            raise LessonError(source, where, f"widget must be one of {WIDGETS}")
        names = raw.get("scenarios") or ([raw["scenario"]] if "scenario" in raw else [])
        if not names:
            raise LessonError(source, where, "a widget needs a scenario (or scenarios for compare)")
        if raw["widget"] == "lab" and raw.get("lab") not in LABS:
            raise LessonError(source, where, f"a lab widget needs lab: one of {LABS}")
    elif kind == "predict":
        names = [raw.get("scenario")]
        scenario = lesson.scenarios.get(raw.get("scenario"))
        if isinstance(scenario, RlvrSetup):
            known = raw.get("quantity") in rlvr_quantities(RlvrSetup())
        elif isinstance(scenario, GrpoSetup):
            known = is_grpo_quantity(raw.get("quantity") or "")
        else:
            known = is_quantity(raw.get("quantity") or "")
        if not raw.get("quantity") or not known:
            raise LessonError(source, where, f"unknown quantity {raw.get('quantity')!r}")
        if "prompt" not in raw or "reveal" not in raw:
            raise LessonError(source, where, "a predict block needs a prompt and a reveal")
    elif kind == "funnel":
        names = [raw.get("scenario")]
        _check_funnel(raw.get("scenario"), lesson, source, where)
    elif kind == "check":
        names = []
        count = raw.get("count", 3)
        available = _questions_per_lesson().get(lesson.number, 0)
        if not isinstance(count, int) or not 1 <= count <= max(available, 1):
            raise LessonError(source, where, f"count must be 1..{available} (questions for lesson {lesson.number})")
    else:
        names = []
    for name in names:
        if name not in lesson.scenarios:
            raise LessonError(source, where, f"unknown scenario {name!r}; the lesson defines {sorted(lesson.scenarios)}")
        own = scenario_kind(lesson.scenarios[name])
        widget = raw.get("widget")
        if own and not (kind == "predict" or widget == OWN_WIDGETS[own]):
            raise LessonError(source, where, f"scenario {name!r} is a {own} run: use it in a {OWN_WIDGETS[own]} "
                                             "widget, a predict or text placeholders")
        if widget in OWN_WIDGETS.values() and (own is None or OWN_WIDGETS[own] != widget):
            wanted = next(kind for kind, drawn in OWN_WIDGETS.items() if drawn == widget)
            raise LessonError(source, where, f"a {widget} widget needs a {wanted} scenario, not {name!r}")
    block = Block(kind, dict(raw))
    for lang in LANGUAGES:  # every placeholder must resolve
        for text in [raw.get(k) for k in texts] + [raw.get(k, {}).get(lang)
                                                   for k in ("caption", "prompt", "reveal", "title")]:
            if isinstance(text, dict):
                text = text.get(lang)
            try:
                lesson.fill(text or "", lang)
            except KeyError as error:
                raise LessonError(source, where, f"placeholder {{{error.args[0]}}} does not resolve") from None
    return block


def parse_lesson(data: Any, source: str = "<lesson>") -> Lesson:
    """Validate one lesson document; raise `LessonError` naming the file, the place and the problem."""
    if not isinstance(data, dict):
        raise LessonError(source, "top level", "a lesson is a mapping with id, number, title, goals, blocks")
    missing = {"id", "number", "title", "goals", "blocks"} - set(data)
    if missing:
        raise LessonError(source, "top level", f"missing keys {sorted(missing)}")
    extra = set(data) - {"id", "number", "title", "goals", "scenarios", "blocks", "aliases"}
    if extra:
        raise LessonError(source, "top level", f"unknown keys {sorted(extra)}")
    if not isinstance(data["number"], int):
        raise LessonError(source, "number", "must be a whole number")
    reserved = {"measured", "lesson", "llamafactory", "releases"} & set(data.get("scenarios") or {})
    if reserved:
        raise LessonError(source, "scenarios", f"{sorted(reserved)} name placeholders of their own: rename it")
    scenarios = {name: _scenario(spec, source, name) for name, spec in (data.get("scenarios") or {}).items()}
    llamafactory = {name: dict(spec["llamafactory"]) for name, spec in (data.get("scenarios") or {}).items()
                    if "llamafactory" in spec}
    goals = data["goals"]
    if not isinstance(goals, list) or not goals:
        raise LessonError(source, "goals", "list at least one goal")
    aliases = data.get("aliases") or []
    if not isinstance(aliases, list) or not all(isinstance(alias, str) and alias for alias in aliases):
        raise LessonError(source, "aliases", "list the lesson's former ids as text")
    lesson = Lesson(
        id=str(data["id"]), number=data["number"], title=_bilingual(data["title"], source, "title"),
        goals=tuple(_bilingual(g, source, f"goals[{i}]") for i, g in enumerate(goals)),
        scenarios=scenarios, source=source, llamafactory=llamafactory, aliases=tuple(aliases),
    )
    if not isinstance(data["blocks"], list) or not data["blocks"]:
        raise LessonError(source, "blocks", "list at least one block")
    blocks = tuple(_check_block(raw, i, lesson, source) for i, raw in enumerate(data["blocks"]))
    if blocks[-1].kind != "check":
        raise LessonError(source, "blocks", "every lesson ends with a self-check (a check block)")
    return Lesson(lesson.id, lesson.number, lesson.title, lesson.goals, scenarios, blocks, source, llamafactory,
                  lesson.aliases)


def scenario_kind(scenario: TrainingSetup | RlvrSetup | GrpoSetup) -> str | None:
    """"rlvr" or "grpo" for a scenario of its own kind, None for a Trainer setup."""
    if isinstance(scenario, RlvrSetup):
        return "rlvr"
    return "grpo" if isinstance(scenario, GrpoSetup) else None


def lesson_number(path: Path) -> int:
    """A lesson's number, from its file name `NN_name.yaml`."""
    return int(path.name[:2])


@lru_cache(maxsize=1)
def lesson_numbers_by_name() -> dict[str, int]:
    """Each course lesson's number by its file name without the number (`several_gpus` → 7): what a lesson
    writes as `{lesson.several_gpus}` to name another lesson."""
    return {path.stem[3:]: lesson_number(path) for path in LESSONS_DIR.glob("[0-9][0-9]_*.yaml")}


@lru_cache(maxsize=1)
def lesson_numbers() -> tuple[int, ...]:
    """The numbers of the course's lessons, read off the file names (nothing is parsed): what the question
    bank and the progress codes may name."""
    return tuple(sorted(lesson_number(path) for path in LESSONS_DIR.glob("[0-9][0-9]_*.yaml")))


@lru_cache(maxsize=1)
def load_lessons(directory: str | None = None) -> tuple[Lesson, ...]:
    """Every lesson file, validated, in lesson order."""
    folder = Path(directory) if directory else LESSONS_DIR
    lessons = []
    for path in sorted(folder.glob("[0-9][0-9]_*.yaml")):
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except yaml.YAMLError as error:
            raise LessonError(path.name, "YAML", str(error)) from None
        lessons.append(parse_lesson(data, path.name))
    ids = [name for lesson in lessons for name in (lesson.id, *lesson.aliases)]
    if len(set(ids)) != len(ids):
        raise LessonError(str(folder), "ids", "two lessons share an id (or a former id)")
    return tuple(sorted(lessons, key=lambda lesson: lesson.number))
