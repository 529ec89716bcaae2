"""steplab.trainer.profiles: a release is one row, and what reads the row understands every value a row can hold."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from steplab.i18n import catalogue
from steplab.trainer import schedules
from steplab.trainer.profiles import PROFILES, TrainerProfile


@pytest.mark.parametrize("profile", PROFILES.values(), ids=list(PROFILES))
def test_each_row_holds_values_its_readers_know(profile: TrainerProfile):
    assert profile.framework in {"transformers", "lightning"}
    assert profile.warmup_ratio in {"field", "alias", "refused"}
    assert profile.log_block in {"5", "4", "lightning"}
    assert profile.logged_rate in {"used", "next", "mixed"}
    for lang in ("zh", "en"):  # the schedule page's note on what the log shows
        assert f"schedule.note_log_{profile.logged_rate}" in catalogue(lang)
    assert schedules.available_schedulers(profile.id)[:2] == ("linear", "cosine")
    assert profile.logs_next_rate == (profile.logged_rate == "next")


def test_the_schedule_registry_reads_the_profile_table():
    assert schedules.PROFILES == tuple(PROFILES)
    for profile_id, profile in PROFILES.items():
        enum = schedules.known_schedulers(profile_id)
        assert ("greedy" in enum) == (profile.scheduler_release == "5")
        assert ("cosine_warmup_with_min_lr" in enum) == (profile.scheduler_release in {"5", "4.57"})


def test_only_lightning_takes_a_batch_limit():
    assert [p for p, row in PROFILES.items() if row.limit_train_batches] == \
        [p for p, row in PROFILES.items() if row.framework == "lightning"]


def _ids_in(node: ast.AST) -> list[str]:
    """Profile ids a comparison compares with, or a collection literal holds (as items or keys) itself."""
    if isinstance(node, ast.Compare):
        parts = [node.left, *node.comparators]
    elif isinstance(node, ast.Dict):
        parts = [key for key in node.keys if key is not None]
    elif isinstance(node, ast.Set | ast.List | ast.Tuple):
        parts = node.elts
    else:
        return []
    return [part.value for part in parts if isinstance(part, ast.Constant) and part.value in PROFILES]


def test_no_module_branches_on_a_profile_id():
    """What differs by release is read from the row: no comparison with a profile's id, and no set, list or dict
    of ids (the per-id tables this replaced) outside `profiles.py`. Quoting a row (`PROFILES["hf-4.51"].releases`)
    or a default argument is fine."""
    root = Path(__file__).resolve().parents[1]
    found = []
    for path in [*(root / "steplab").rglob("*.py"), *(root / "steplab_ui").rglob("*.py"),
                 *(root / "app_pages").rglob("*.py")]:
        if path.name == "profiles.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare | ast.Set | ast.List | ast.Tuple | ast.Dict) and _ids_in(node):
                found.append(f"{path.relative_to(root)}:{node.lineno}: {ast.unparse(node)[:80]}")
    assert found == []
