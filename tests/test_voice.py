"""One voice: the engine writes no sentence of its own, and every catalogue key the code names exists."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from steplab.i18n import PLACEHOLDER, catalogue

ROOT = Path(__file__).resolve().parents[1]
CJK = re.compile(r"[\u3400-\u9fff\uff00-\uffef\u3000-\u303f]")
CODE = [path for folder in ("steplab", "steplab_ui", "app_pages") for path in sorted((ROOT / folder).rglob("*.py"))]
ERRORS = {"InputError", "SetupError", "ConfigError", "ProgressError", "LabInputError", "DatasetError", "ClassError", "PollError", "PollAnswerError"}


def test_no_engine_module_holds_a_chinese_sentence():
    found = {str(p.relative_to(ROOT)): CJK.findall(p.read_text(encoding="utf-8"))[:3]
             for p in sorted((ROOT / "steplab").rglob("*.py")) if CJK.search(p.read_text(encoding="utf-8"))}
    assert found == {}


def _named_keys(path: Path) -> list[tuple[str, int]]:
    """Literal catalogue keys: msg("k"), t(lang, "k"), SomeError("k", ...)."""
    keys = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
        position = {"msg": 0, "t": 1, **dict.fromkeys(ERRORS, 0)}.get(name)
        if position is None or len(node.args) <= position:
            continue
        argument = node.args[position]
        if isinstance(argument, ast.Constant) and isinstance(argument.value, str) and "." in argument.value:
            keys.append((argument.value, node.lineno))
    return keys


def test_detector_finds_keys():
    keys = {key for key, _ in _named_keys(ROOT / "steplab" / "dataset" / "split.py")}
    assert {"dataset.val_too_big", "dataset.val_fraction"} <= keys


@pytest.mark.parametrize("path", CODE, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_key_the_code_names_is_in_both_catalogues(path):
    missing = [(key, line) for key, line in _named_keys(path)
               for lang in ("zh", "en") if key not in catalogue(lang)]
    assert missing == []


def _names(entry: object) -> set[str]:
    texts = entry.values() if isinstance(entry, dict) else [entry]
    return {m.group(1) for text in texts for m in PLACEHOLDER.finditer(str(text))}


# Where one language says with a word what the other says with a value, and why that is right.
SAID_IN_WORDS = {
    "config_io.bad_dataset_rows": "English names the lowest count; Chinese says 'non-negative'",
    "events.rhythm.twice_per_epoch": "English says 'twice'; Chinese writes the count",
    "explain.max_steps.overrides": "Chinese writes the zero of 'max_steps > 0'; English says 'positive'",
}


def test_both_languages_fill_the_same_placeholders():
    zh, en = catalogue("zh"), catalogue("en")
    differ = {key for key in en if key in zh and _names(zh[key]) != _names(en[key])}
    assert differ == set(SAID_IN_WORDS)
