"""English plurals (issue 16 item 10): a count that can be 1 reads "1 sample", never "1 samples".

An entry with `one`/`other` forms is chosen by the `count` value (`steplab.i18n.t`), so every caller of such an
entry must pass `count=`; a caller that forgets gets the plural form for 1 without any error.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from steplab.i18n import catalogue, t
from steplab.simulation import lr_curve
from steplab.teaching.explain import explain
from steplab.teaching.warnings import plan_warnings
from steplab.trainer.plan import make_plan
from steplab.trainer.setup import setup_from_mapping

ROOT = Path(__file__).resolve().parents[1]
PLURALS = {key for key, entry in catalogue("en").items() if isinstance(entry, dict)}
SOURCES = [path for folder in ("steplab", "steplab_ui", "app_pages") for path in (ROOT / folder).rglob("*.py")]


def _calls_naming_a_plural() -> list[tuple[str, str, bool]]:
    """(where, key, passes count) for every `t(lang, key, ...)`, `msg(key, ...)` and `_warning(code, {...})` call
    whose key is a plural entry."""
    found = []
    for path in SOURCES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            strings = [arg.value for arg in node.args if isinstance(arg, ast.Constant) and isinstance(arg.value, str)]
            if name == "_warning" and strings:
                key = f"warn.{strings[0]}.text"
                values = node.args[1] if len(node.args) > 1 else None
                passes = isinstance(values, ast.Dict) and any(
                    isinstance(k, ast.Constant) and k.value == "count" for k in values.keys)
                if key in PLURALS:
                    found.append((where, key, passes))
            elif name in ("t", "msg"):
                for key in strings:
                    if key in PLURALS:
                        passes = any(keyword.arg in ("count", None) for keyword in node.keywords)
                        found.append((where, key, passes))
    return found


def test_every_caller_of_a_plural_entry_passes_the_count():
    calls = _calls_naming_a_plural()
    assert len(calls) >= 15, calls  # the scan sees the callers (a broken scan would pass vacuously)
    assert [call for call in calls if not call[2]] == []


@pytest.mark.parametrize("key", sorted(PLURALS))
def test_the_singular_form_is_singular(key):
    """`one` forms do not count in plurals ("1 micro-batch are", "1 samples")."""
    one = catalogue("en")[key]["one"]
    assert not re.search(r"\{count(:[^}]*)?\} [a-z-]+s\b(?<!ss)", one), one
    assert " are never" not in one and " are not counted" not in one, one


def setup(**values):
    return make_plan(setup_from_mapping({"num_samples": 1600, "per_device_train_batch_size": 4,
                                         "gradient_accumulation_steps": 8, "num_train_epochs": 3, **values})[0])


def test_a_warmup_of_one_step_is_said_in_the_singular():
    plan = setup(warmup_steps=1)
    said = lr_curve.summary(lr_curve.curve(plan)).get("en")
    assert "warmup takes 1 step" in said and "1 steps" not in said, said
    assert t("en", "schedule.warmup_band", steps="1", count=1) == "warmup: 1 step"


def test_one_dropped_sample_is_said_in_the_singular():
    plan = setup(num_samples=1601, dataloader_drop_last=True)
    assert plan.epoch.dropped == 1
    texts = [warning.text.get("en") for warning in plan_warnings(plan)]
    dropped = [text for text in texts if text.startswith("dataloader_drop_last:")]
    assert dropped and "1 sample per epoch does not fill a batch" in dropped[0], texts


def test_evaluation_every_step_is_said_in_the_singular():
    plan = setup(num_samples=32, eval_strategy="steps", eval_steps=1)
    said = " ".join(line.note.get("en") for line in explain(plan) if line.note is not None)
    assert "every step" in said and "every 1 steps" not in said, said


def test_a_run_of_one_update_is_said_in_the_singular():
    from steplab_ui.widgets.charts import timeline_sentence

    plan = setup(max_steps=1)
    assert plan.optimizer_steps == 1
    said = timeline_sentence(plan, "en")
    assert said.startswith("1 update, ") and "1 updates" not in said, said
