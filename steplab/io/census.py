"""The census: every key the real software accepts is modelled, proven irrelevant, or named with what it may change.

`census.yaml` (beside this module) classes the keys StepLab does not model, family by family (transformers'
`TrainingArguments`, TRL's configs, LLaMA-Factory's argument classes, the DeepSpeed keys the Trainer reads).
*Modelled* is worked out from the code, never listed: a row of `trainer.fields.FIELDS` (TRL's rows for the classes
in their `trainer_classes`) or `DATA_FIELDS`, a key the YAML reader maps (`config_read.ALIASES`, `DATA_KEYS`,
`ray_num_workers`) or the dataset stage reads (`dataset.settings.TEXT_FIELDS`). A key that becomes a row is
modelled at once, whatever the file says.

`check(mapping, trainer_class, llamafactory)` names what a mapping holds that StepLab does not model (`Unmodelled`:
the key and what it may change) and the keys no family has (`Unknown`, with the key meant, by `difflib`);
`unmodelled(mapping, trainer_class)` is the first list alone (what /run and the pages call). The file is read once,
on first use. Pure: no Streamlit, no prose (sentences are `Message`s of `census.*`).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

from steplab.dataset.settings import TEXT_FIELDS
from steplab.i18n import Message, msg
from steplab.io.config_read import ALIASES, DATA_KEYS
from steplab.trainer.fields import DATA_FIELDS, FIELDS

CENSUS_FILE = Path(__file__).with_name("census.yaml")
Status = Literal["modelled", "irrelevant", "not_modelled"]
MAY_CHANGE = ("steps", "events", "learning_rates", "refusal", "batch_size", "processes", "resume", "examples",
              "tokens", "unchecked")
"""What a key StepLab does not model may change (`census.may_change.<code>` in the locales)."""
TRANSFORMERS = "training_arguments"
TRL_FAMILIES = {"GRPOTrainer": "grpo", "DPOTrainer": "dpo", "SFTTrainer": "sft", "KTOTrainer": "kto"}
LLAMAFACTORY = ("llamafactory_training", "llamafactory_model", "llamafactory_data", "llamafactory_finetuning",
                "llamafactory_generating")
DEEPSPEED = "deepspeed"
FAMILIES = (TRANSFORMERS, *TRL_FAMILIES.values(), *LLAMAFACTORY, DEEPSPEED)
STEPLAB_KEYS = ("ray_num_workers",)
"""Keys the YAML reader maps onto a setup field (`ray_num_workers` → `world_size`)."""
SUGGEST_CUTOFF = 0.8


@dataclass(frozen=True)
class Entry:
    """One key of one family as the census classes it."""

    key: str
    family: str
    status: Status
    may_change: str | None = None
    values: tuple[Any, ...] = ()
    """For an irrelevant key: the values its proof sets."""


@dataclass(frozen=True)
class Unmodelled:
    """A key a mapping sets that StepLab does not model, and what it may change."""

    key: str
    may_change: str

    def message(self) -> Message:
        return msg(f"census.may_change.{self.may_change}", key=self.key)

    def record(self, lang: str = "en") -> dict[str, str]:
        """The CLI's form: `{key, may_change, message}`."""
        return {"key": self.key, "may_change": self.may_change, "message": self.message().get(lang)}


@dataclass(frozen=True)
class Unknown:
    """A key no family of the trainer has; `meant` is the nearest key that is (or None)."""

    key: str
    meant: str | None

    def message(self) -> Message:
        if self.meant:
            return msg("census.unknown_meant", key=self.key, meant=self.meant)
        return msg("census.unknown", key=self.key)

    def record(self, lang: str = "en") -> dict[str, Any]:
        return {"key": self.key, "meant": self.meant, "message": self.message().get(lang)}


@dataclass(frozen=True)
class Checked:
    """What `check` found: keys not modelled (in the mapping's order) and keys unknown to every family."""

    unmodelled: tuple[Unmodelled, ...]
    unknown: tuple[Unknown, ...]


@cache
def entries() -> dict[str, dict[str, Entry]]:
    """The census file's classes, family → key → `Entry` (read once). Raises `ValueError` on a malformed file."""
    import yaml

    raw = yaml.safe_load(CENSUS_FILE.read_text(encoding="utf-8"))
    found: dict[str, dict[str, Entry]] = {}
    for family, sections in raw.items():
        if family not in FAMILIES:
            raise ValueError(f"census.yaml: unknown family {family!r}")
        listed: dict[str, Entry] = {}
        for key, values in (sections.get("irrelevant") or {}).items():
            listed[key] = Entry(key, family, "irrelevant", values=tuple(values))
        for code, keys in (sections.get("not_modelled") or {}).items():
            if code not in MAY_CHANGE:
                raise ValueError(f"census.yaml: {family}: unknown may_change code {code!r}")
            for key in keys:
                if key in listed:
                    raise ValueError(f"census.yaml: {family}: {key} is classed twice")
                listed[key] = Entry(key, family, "not_modelled", may_change=code)
        found[family] = listed
    return found


@cache
def modelled_keys(family: str) -> frozenset[str]:
    """The keys of `family` StepLab models, from the code (the field tables, the YAML reader, the dataset stage)."""
    if family == TRANSFORMERS:
        return (frozenset(name for name, row in FIELDS.items() if not row.trainer_classes) | frozenset(ALIASES)
                | {"trainer_class"})
    if family in TRL_FAMILIES.values():
        trainer_class = next(name for name, fam in TRL_FAMILIES.items() if fam == family)
        return frozenset(name for name, row in FIELDS.items() if trainer_class in row.trainer_classes)
    if family in LLAMAFACTORY:
        return frozenset(DATA_FIELDS) | frozenset(TEXT_FIELDS) | frozenset(DATA_KEYS) | {"interleave_probs",
                                                                                       *STEPLAB_KEYS}
    return frozenset()


def families_for(trainer_class: str = "Trainer", llamafactory: bool = False) -> tuple[str, ...]:
    """The families whose keys a run reads, the most specific first (its class wins over `TrainingArguments`)."""
    own = (TRL_FAMILIES[trainer_class],) if trainer_class in TRL_FAMILIES else ()
    return (*own, *(LLAMAFACTORY if llamafactory else ()), TRANSFORMERS)


def classify(key: str, families: tuple[str, ...]) -> Entry | None:
    """How the first family in `families` that knows `key` classes it (modelled before the file); None if none."""
    table = entries()
    for family in families:
        if key in modelled_keys(family):
            return Entry(key, family, "modelled")
        if key in table.get(family, {}):
            return table[family][key]
    if key in FIELDS:  # a TRL row under another class: StepLab's own setup field all the same
        return Entry(key, families[-1] if families else TRANSFORMERS, "modelled")
    return None


def deepspeed_entry(path: str) -> Entry:
    """A dotted key of a DeepSpeed JSON: the census's entry for it or for the nearest listed block holding it; a key
    the Trainer does not read is DeepSpeed's own (`unchecked`)."""
    table = entries()[DEEPSPEED]
    parts = path.split(".")
    for end in range(len(parts), 0, -1):
        found = table.get(".".join(parts[:end]))
        if found is not None:
            return found
    return Entry(path, DEEPSPEED, "not_modelled", may_change="unchecked")


def _deepspeed_paths(config: Mapping[str, Any], prefix: str = "") -> list[str]:
    paths: list[str] = []
    for key, value in config.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            paths.extend(_deepspeed_paths(value, f"{path}."))
        else:
            paths.append(path)
    return paths


def suggest(key: str, families: tuple[str, ...]) -> str | None:
    """The key meant by a misspelt `key`: the nearest key of `families` (modelled or listed), or None."""
    known: set[str] = set()
    for family in families:
        known |= modelled_keys(family) | set(entries().get(family, {}))
    close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=SUGGEST_CUTOFF)
    return close[0] if close else None


def check(mapping: Mapping[str, Any], trainer_class: str = "Trainer", llamafactory: bool = False,
          deepspeed: Mapping[str, Any] | None = None) -> Checked:
    """The keys of `mapping` StepLab does not model (with what each may change) and those no family of the run has
    (with the key meant). A `deepspeed` value that is a mapping (or the `deepspeed` argument: the JSON it names,
    read by the caller) is named key by key, dotted (`deepspeed.scheduler.type`)."""
    families = families_for(trainer_class, llamafactory)
    unmodelled: list[Unmodelled] = []
    unknown: list[Unknown] = []
    for raw in mapping:
        key = str(raw)
        entry = classify(key, families)
        if entry is None:
            unknown.append(Unknown(key, suggest(key, families)))
        elif entry.status == "not_modelled":
            unmodelled.append(Unmodelled(key, entry.may_change or "unchecked"))
    block = mapping.get("deepspeed") if deepspeed is None else deepspeed
    if isinstance(block, Mapping) and block:
        for path in _deepspeed_paths(block):
            entry = deepspeed_entry(path)
            if entry.status == "not_modelled":
                unmodelled.append(Unmodelled(f"deepspeed.{path}", entry.may_change or "unchecked"))
    return Checked(tuple(unmodelled), tuple(unknown))


def unmodelled(mapping: Mapping[str, Any], trainer_class: str = "Trainer",
               llamafactory: bool = False) -> list[Unmodelled]:
    """The keys of `mapping` StepLab does not model, each with what it may change (in the mapping's order)."""
    return list(check(mapping, trainer_class, llamafactory).unmodelled)


def irrelevant(family: str = TRANSFORMERS) -> dict[str, tuple[Any, ...]]:
    """The keys of `family` the census calls irrelevant (and not modelled since), with the values their proof sets."""
    return {key: entry.values for key, entry in entries().get(family, {}).items()
            if entry.status == "irrelevant" and key not in modelled_keys(family)}
