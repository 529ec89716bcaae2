"""steplab.trainer.profiles: a release is one row, and what reads the row understands every value a row can hold."""

from __future__ import annotations

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
