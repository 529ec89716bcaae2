"""Issue 16, item 3: the course setup saves and logs as the chapter's run does, and opens without warnings.

The facts come from their sources, copied into tests/data: the chapter's sentence on its checkpoints and
LlamaBoard's Train tab (LLaMA-Factory 0.9.5, `webui/components/train.py:89`).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from steplab.teaching.presets import presets
from steplab.teaching.warnings import plan_warnings
from steplab.trainer.events import events
from steplab.trainer.plan import make_plan
from steplab.trainer.profiles import PROFILES

DATA = Path(__file__).parent / "data"
COURSE_PRESETS = ("course_default", "course_batch2_acc8", "course_batch2_acc16")


def chapter_saves() -> list[int]:
    """The steps the chapter's run saved at ("在第 50、100、150 步保存")."""
    sentence = (DATA / "course-chapter.md").read_text(encoding="utf-8")
    found = re.search(r"第\s*([\d、，, ]+)\s*步保存", sentence)
    assert found, sentence
    return [int(n) for n in re.split(r"[、，, ]+", found.group(1).strip())]


def llamaboard_default(name: str) -> int:
    """The `value=` of LlamaBoard's slider `name` (its Train tab's default)."""
    text = (DATA / "llamaboard" / "train_0.9.5_lines_86-91.txt").read_text(encoding="utf-8")
    found = re.search(rf"^\s*{name} = gr\.Slider\([^)]*\bvalue=(\d+)", text, re.MULTILINE)
    assert found, name
    return int(found.group(1))


def test_the_course_run_saves_where_the_chapters_run_saved():
    plan = make_plan(presets()["course_default"].setup())
    assert events(plan, "save").steps() == chapter_saves()
    assert len(chapter_saves()) > 1


@pytest.mark.parametrize("preset", COURSE_PRESETS)
def test_the_course_logs_as_llamaboard_does_by_default(preset):
    assert presets()[preset].values["logging_steps"] == llamaboard_default("logging_steps")
    plan = make_plan(presets()[preset].setup())
    logged = events(plan, "log").steps()
    assert logged and logged[0] == llamaboard_default("logging_steps")


@pytest.mark.parametrize("profile", [p for p in PROFILES if PROFILES[p].framework == "transformers"])
def test_the_course_default_opens_without_warnings_about_itself(profile):
    plan = make_plan(presets()["course_default"].setup(trainer=profile))
    codes = [w.code for w in plan_warnings(plan)]
    assert not [code for code in codes if code.endswith("_interval_longer_than_run")], codes
    if profile == "hf-5":
        assert codes == []


def test_no_logging_during_the_run_still_names_the_summary_at_the_end():
    plan = make_plan(presets()["course_default"].setup(logging_steps=10**6))
    warning = next(w for w in plan_warnings(plan) if w.code == "log_interval_longer_than_run")
    assert events(plan, "log").steps() == []
    assert "train_loss" in warning.text.en and "train_loss" in warning.text.zh
    assert "no logging at all" not in warning.text.en
