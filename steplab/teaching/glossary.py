"""The course's vocabulary (`lessons/glossary.yaml`): one word per idea, and the spellings it replaces.

The lessons page lists the terms; `misspellings` finds the replaced spellings in a Chinese text (outside code
spans), which tests/test_glossary.py runs over the lessons, the question bank and every Chinese string.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

from steplab.i18n import PLACEHOLDER, Text

GLOSSARY_FILE = Path(__file__).resolve().parents[2] / "lessons" / "glossary.yaml"
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)


@dataclass(frozen=True)
class Term:
    id: str
    term: Text
    meaning: Text
    field: str | None = None
    label: str | None = None  # the sidebar's Chinese label for `field`
    avoid: tuple[re.Pattern[str], ...] = ()


@lru_cache(maxsize=1)
def glossary() -> tuple[Term, ...]:
    """Every term, in the file's order (`ValueError` naming the entry for a malformed one)."""
    entries = yaml.safe_load(GLOSSARY_FILE.read_text(encoding="utf-8"))
    terms = []
    for index, entry in enumerate(entries):
        where = f"{GLOSSARY_FILE.name}[{index}]"
        if not isinstance(entry, dict) or not {"id", "zh", "en", "meaning"} <= set(entry):
            raise ValueError(f"{where}: an entry needs id, zh, en and meaning")
        unknown = set(entry) - {"id", "zh", "en", "meaning", "field", "label", "avoid"}
        if unknown:
            raise ValueError(f"{where}: unknown keys {sorted(unknown)}")
        meaning = entry["meaning"]
        terms.append(Term(str(entry["id"]), Text(entry["zh"], entry["en"]), Text(meaning["zh"], meaning["en"]),
                          entry.get("field"), entry.get("label", entry["zh"] if entry.get("field") else None),
                          tuple(re.compile(pattern) for pattern in entry.get("avoid", ()))))
    if len({term.id for term in terms}) != len(terms):
        raise ValueError(f"{GLOSSARY_FILE.name}: two entries share an id")
    return tuple(terms)


def misspellings(text: str) -> list[tuple[str, str]]:
    """(the term meant, the spelling found) for every replaced spelling in a Chinese text, code spans and
    placeholders aside."""
    prose = PLACEHOLDER.sub(" ", CODE_SPAN.sub(" ", text))
    return [(term.term.zh, match.group(0)) for term in glossary() for pattern in term.avoid
            for match in pattern.finditer(prose)]
