"""Worked arithmetic and coded warnings: the user's numbers, the rounding made explicit, both languages."""

from __future__ import annotations

import pytest

from steplab.i18n import Message, catalogue
from steplab.simulation.logblock import PARAMETERS_NOTE, running_training_block
from steplab.teaching.compare import ROWS
from steplab.teaching.explain import explain
from steplab.teaching.presets import presets
from steplab.teaching.warnings import plan_warnings
from steplab.trainer.events import rhythm
from steplab.trainer.plan import make_plan
from steplab.trainer.setup import setup_from_mapping


def plan(**values):
    return make_plan(setup_from_mapping(values)[0])


def lines(p) -> dict[str, str]:
    return {line.key: line.formula for line in explain(p)}


COURSE = {"num_samples": 1600, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 8, "num_train_epochs": 3}


def test_course_arithmetic():
    worked = lines(plan(**COURSE, eval_strategy="steps", eval_steps=50))
    assert worked["micro_batches_per_epoch"] == "1,600 ÷ 4 = 400"
    assert worked["num_update_steps_per_epoch"] == "400 ÷ 8 = 50"
    assert worked["max_steps"] == "3 × 50 = 150"
    assert worked["total_train_batch_size"] == "4 × 8 × 1 = 32"
    assert worked["eval_at_steps"].startswith("eval_steps = 50 → 50, 100, 150")


def test_rounding_is_explicit():
    p = plan(num_samples=1000, per_device_train_batch_size=4, gradient_accumulation_steps=8, num_train_epochs=3)
    explained = {line.key: line for line in explain(p)}
    assert explained["num_update_steps_per_epoch"].formula == "⌈250 ÷ 8⌉ = 32"
    assert "2 micro-batches" in explained["num_update_steps_per_epoch"].note.get("en")
    assert "2 个小批次" in explained["num_update_steps_per_epoch"].note.get("zh")
    old = lines(plan(num_samples=1000, per_device_train_batch_size=4, gradient_accumulation_steps=8, trainer="hf-4.51"))
    assert old["num_update_steps_per_epoch"] == "⌊250 ÷ 8⌋ = 31"
    assert lines(plan(**{**COURSE, "num_train_epochs": 1.1}))["max_steps"] == "⌈1.1 × 50⌉ = ⌈55.00000000000001⌉ = 56"
    assert lines(plan(**COURSE, max_steps=100, warmup_steps=0.07))["warmup_steps"] == "⌈100 × 0.07⌉ = ⌈7.000000000000001⌉ = 8"
    # the float product is shown only where its last bits decide the result (lesson 9 showed ⌈22.200000000000003⌉)
    capped = plan(num_samples=591, per_device_train_batch_size=1, gradient_accumulation_steps=8, warmup_steps=0.1)
    assert lines(capped)["warmup_steps"] == "⌈222 × 0.1⌉ = 23" and 222 * 0.1 == 22.200000000000003
    assert lines(plan(num_samples=1001, per_device_train_batch_size=4, world_size=2))["micro_batches_per_epoch"] \
        == "⌈1,001 ÷ 4⌉ = 251 ; ⌈251 ÷ 2⌉ = 126"


WARNING_CASES = [
    ("partial_accumulation_group", {"num_samples": 1000, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 8}),
    ("samples_dropped", {"num_samples": 1001, "per_device_train_batch_size": 4, "dataloader_drop_last": True}),
    ("samples_duplicated", {"num_samples": 1001, "per_device_train_batch_size": 4, "world_size": 2}),
    ("batch_larger_than_dataset", {"num_samples": 3, "per_device_train_batch_size": 8}),
    ("empty_dataloader", {"num_samples": 3, "per_device_train_batch_size": 8, "dataloader_drop_last": True, "max_steps": 5}),
    ("max_steps_cuts_epochs", {**COURSE, "max_steps": 120}),
    ("max_steps_extends_epochs", {**COURSE, "num_train_epochs": 1, "max_steps": 120}),
    ("warmup_longer_than_run", {**COURSE, "warmup_steps": 200}),
    ("constant_ignores_warmup", {**COURSE, "lr_scheduler_type": "constant", "warmup_steps": 5}),
    ("eval_interval_longer_than_run", {**COURSE, "eval_strategy": "steps", "eval_steps": 500}),
    ("save_interval_longer_than_run", COURSE),
    ("log_interval_longer_than_run", COURSE),
    ("warmup_ratio_deprecated", {**COURSE, "warmup_ratio": 0.1}),
    ("warmup_one_is_one_step", {**COURSE, "warmup_steps": 1.0}),
    ("stops_before_last_epoch_ends", {"num_samples": 100, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 8, "trainer": "hf-4.51"}),
    ("no_updates", {"num_samples": 10, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 8, "trainer": "hf-4.51"}),
    ("micro_batches_never_drawn", {"num_samples": 1001, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 8, "trainer": "hf-4.51"}),
    ("update_larger_than_accumulation", {"num_samples": 1001, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 8, "trainer": "hf-4.51"}),
    ("groups_straddle_epochs", {"num_samples": 1000, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 8, "trainer": "hf-4.46"}),
    ("last_step_not_evaluated", {**COURSE, "eval_strategy": "steps", "eval_steps": 40, "trainer": "hf-4.57"}),
    ("warmup_steps_override_ratio", {**COURSE, "warmup_steps": 20, "warmup_ratio": 0.1, "trainer": "hf-4.57"}),
    ("limit_train_batches", {**COURSE, "limit_train_batches": 10, "trainer": "lightning-2"}),
    ("lightning_events_not_modelled", {**COURSE, "trainer": "lightning-2"}),
    ("metric_driven_schedule", {**COURSE, "lr_scheduler_type": "reduce_lr_on_plateau", "eval_strategy": "epoch"}),
]


@pytest.mark.parametrize(("code", "values"), WARNING_CASES, ids=[c for c, _ in WARNING_CASES])
def test_each_warning_fires_with_text_in_both_languages(code, values):
    warnings = {w.code: w for w in plan_warnings(plan(**values))}
    assert code in warnings
    warning = warnings[code]
    assert warning.text.zh and warning.text.en and warning.fix.zh and warning.fix.en
    assert warning.text.zh != warning.text.en


def test_a_clean_setup_has_no_warnings():
    assert plan_warnings(plan(**COURSE, eval_strategy="steps", eval_steps=50, save_steps=50, logging_steps=10)) == []


def test_warning_numbers_come_from_the_plan():
    p = plan(num_samples=1001, per_device_train_batch_size=4, world_size=2)
    duplicated = next(w for w in plan_warnings(p) if w.code == "samples_duplicated")
    assert f"{p.epoch.duplicated:,} more than there are" in duplicated.message("en") and p.epoch.duplicated == 7


def test_more_draws_than_samples_are_said_as_draws_not_as_samples_twice():
    """N=5, batch 4, 3 processes: 12 draws of 5 samples, 7 extra draws (no sample is 'drawn twice' 7 times)."""
    p = plan(num_samples=5, per_device_train_batch_size=4, world_size=3)
    text = next(w for w in plan_warnings(p) if w.code == "samples_duplicated").message("en")
    assert (p.epoch.samples_used, p.epoch.duplicated) == (12, 7)
    assert "12 draws from the 5 samples, 7 more" in text and "twice" not in text


@pytest.mark.parametrize(("trainer", "has_update_line"), [("hf-5", True), ("hf-4.57", False)])
def test_log_block(trainer, has_update_line):
    block = running_training_block(plan(num_samples=1090, per_device_train_batch_size=1, gradient_accumulation_steps=8,
                                        trainer=trainer))
    assert block.splitlines()[0] == "***** Running training *****"
    assert "  Num examples = 1,090" in block and "  Total optimization steps = 411" in block
    assert ("Num update steps per epoch = 137" in block) is has_update_line
    assert "  Total train batch size (w. parallel, distributed & accumulation) = 8" in block


def _keys(message) -> set[str]:
    """The catalogue keys a message (and the messages among its values) reads."""
    if isinstance(message, Message):
        return {message.key}.union(*(_keys(value) for _, value in message.values))
    return set()


def test_every_sentence_is_a_catalogue_entry_in_both_languages():
    plans = [plan(**values) for _, values in WARNING_CASES] + [plan(**COURSE, eval_strategy="steps", eval_steps=25)]
    used = {key for p in plans for w in plan_warnings(p) for key in _keys(w.text) | _keys(w.fix)}
    used |= {key for p in plans for line in explain(p) for key in _keys(line.label) | _keys(line.note)}
    used |= {key for p in plans for key in _keys(rhythm(p))}
    used |= {preset.title.key for preset in presets().values()} | {label.key for label, _ in ROWS}
    used |= {PARAMETERS_NOTE.key, "comparing.summary", "comparing.summary_eval", "comparing.row.error", "logblock.lightning"}
    for lang in ("zh", "en"):
        assert not used - set(catalogue(lang)), lang
    assert presets()["course_default"].title.en.startswith("Course default: Qwen3-0.6B, 1,600 samples")
