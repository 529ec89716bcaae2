"""`steplab.teaching.rl_pipeline` held to ROLL's own arithmetic (alibaba/ROLL @ 8eb27cc2), one worked case per rule,
each citing the line it comes from. ROLL needs Ray and GPUs to run; these cases were computed by hand from the
cited lines (and, while writing them, by ROLL's own `get_seqlen_balanced_partitions` and `PPOConfig.set_max_steps`
on 22,680 setups: 5,652 accepted with the same counts, 17,028 refused with the same assertion text).
"""

from __future__ import annotations

import pytest

from steplab.errors import TrainerRefusal
from steplab.teaching.rl_pipeline import RlvrSetup, notes, refusal, rlvr_quantities, worked

# examples/qwen2.5-7B-rlvr_megatron/rlvr_config.yaml:32 max_steps 500, :39 rollout_batch_size 64,
# :43 num_return_sequences_in_group 8, :44 ppo_epochs 1, :104-105 batch 1 × accumulation 32, :134 16 GPUs (tp = pp = 1)
EXAMPLE = RlvrSetup(rollout_batch_size=64, num_return_sequences_in_group=8, ppo_epochs=1,
                    per_device_train_batch_size=1, gradient_accumulation_steps=32, dp=16, max_steps=500)


def test_the_example_config():
    q = rlvr_quantities(EXAMPLE)
    # generate_scheduler.py:653-661: a step collects batch_size × num_return_sequences samples: 64 × 8
    assert q["samples_per_pipeline_step"] == 512
    # functionals.py:1572-1574 equal parts over dp: 512 / 16
    assert q["samples_per_rank"] == 32
    # base_worker.py:104 and :111, backward_steps = 32 * 1 // (1 * 32)
    assert q["updates_per_pipeline_step"] == 1
    # rlvr_pipeline.py:483 `for global_step in range(max_steps)`
    assert q["pipeline_steps"] == 500 and q["actor_updates"] == 500
    # base_config.py:759-765 max(1, 500 * 64 * 8 * 1 // 32) = 8,000; megatron_strategy.py:1212-1214 // 16 = 500
    assert q["actor_schedule_horizon"] == 500


def test_ppo_epochs_multiply_the_updates_not_the_pipeline_steps():
    q = rlvr_quantities(EXAMPLE.__class__(**{**EXAMPLE.to_dict(), "ppo_epochs": 2}))
    # base_worker.py:95-100 make_iterator(epochs=ppo_epochs): the share twice, 32 * 2 // 32 = 2 (:111)
    assert q["updates_per_pipeline_step"] == 2 and q["pipeline_steps"] == 500 and q["actor_updates"] == 1000
    # base_config.py:763 multiplies by ppo_epochs: 500 * 512 * 2 // 32 = 16,000, // 16 = 1,000
    assert q["actor_schedule_horizon"] == 1000


def test_several_updates_per_step_and_the_horizon_at_their_product():
    setup = RlvrSetup(rollout_batch_size=128, num_return_sequences_in_group=16, ppo_epochs=3,
                      per_device_train_batch_size=2, gradient_accumulation_steps=8, dp=8, max_steps=7)
    q = rlvr_quantities(setup)
    # 2,048 samples, 256 a rank (functionals.py:1572-1574); 256 * 3 // 16 = 48 updates (base_worker.py:111)
    assert (q["samples_per_rank"], q["updates_per_pipeline_step"], q["actor_updates"]) == (256, 48, 336)
    # base_config.py:759-765: 7 * 128 * 16 * 3 // 16 = 2,688; // 8 (megatron_strategy.py:1212-1214) = 336
    assert q["actor_schedule_horizon"] == 336 == q["actor_updates"]


@pytest.mark.parametrize(("changes", "message", "cited"), [
    # functionals.py:1565-1566: at least one sample per rank
    ({"rollout_batch_size": 1, "num_return_sequences_in_group": 2, "dp": 3}, "number of items:[2] < k_partitions:[3]",
     "dp"),
    # functionals.py:1572-1574: equal_size=True (rlvr_pipeline.py:776 → batch_balance, functionals.py:1684-1686)
    ({"dp": 7}, "512 % 7 != 0", "dp"),
    # protocol.py:807, reached from base_worker.py:95: a rank's 32 samples in backward batches of 1 × 64
    ({"gradient_accumulation_steps": 64}, "32 % 64 != 0", "gradient_accumulation_steps"),
    # the same with 4 × 3 = 12: 32 is no multiple of 12
    ({"per_device_train_batch_size": 4, "gradient_accumulation_steps": 3}, "32 % 12 != 0",
     "gradient_accumulation_steps"),
])
def test_what_roll_asserts_is_refused_in_its_words(changes, message, cited):
    setup = RlvrSetup(**{**EXAMPLE.to_dict(), **changes})
    refused = refusal(setup)
    assert refused is not None and (refused.error_type, refused.message, refused.field) == ("AssertionError", message,
                                                                                            cited)
    assert refused.fix is not None and refused.fix.get("zh") and refused.fix.get("en")
    with pytest.raises(TrainerRefusal):
        rlvr_quantities(setup)


def test_the_worked_lines_are_the_counts_and_the_unmodelled_is_named():
    setup = RlvrSetup(**{**EXAMPLE.to_dict(), "ppo_epochs": 2})
    lines = {label.en: formula for label, formula in worked(setup)}
    assert lines["Samples per process"] == "512 ÷ 16 = 32"
    assert lines["Updates per pipeline step"] == "32 × 2 = 64 ; 64 ÷ 32 = 2"
    assert lines["Actor updates in all"] == "500 × 2 = 1,000"
    assert lines["Steps the actor's learning-rate schedule plans for"].endswith("= 1,000")
    said = " ".join(note.get("en") for note in notes(setup))
    assert "use_dynamic_batching_in_train" in said and "critic_warmup" in said


def test_lesson_11_and_its_question_count_pipeline_steps_where_roll_does():
    """ROLL writes `logger.info(f"pipeline step {global_step} start...")` (rlvr_pipeline.py:487) and
    `... finished` (:840); its only progress bars count one step's generated samples (generate_scheduler.py:653-657)
    and one step's updates (base_worker.py:102-104). The lesson and `l11-compare-logs` quote those log lines and
    never say a progress bar counts pipeline steps."""
    from steplab.teaching.lessons import load_lessons
    from steplab.teaching.quiz.bank import bank_by_id

    lesson = next(lesson for lesson in load_lessons() if lesson.number == 11)
    said = " ".join(block.data[lang] for block in lesson.blocks if block.kind in ("text", "aside")
                    for lang in ("zh", "en"))
    assert "`pipeline step N start...`" in said and "`pipeline step N finished`" in said
    spec = bank_by_id()["l11-compare-logs"]
    question = " ".join([spec.prompt.zh, spec.prompt.en, spec.explanation.zh, spec.explanation.en])
    assert "`pipeline step N finished`" in question
    for text in (said, question):
        assert "进度条数的是它" not in text and "progress bar also ends at step" not in text
        assert "on the progress bar count these" not in text


def _roll_dpo_pipeline_steps(num_train_epochs: int, batches_per_epoch: int, max_steps: int) -> int:
    """ROLL's DPO loop as `roll/pipeline/dpo/dpo_pipeline.py` @ 8eb27cc2 writes it, transcribed: `:133` asserts
    `max_steps > 0`; `:200` global_step = 0; `:203` for epoch in range(num_train_epochs); `:205` for each batch of
    the drop_last loader (`:161-168`; `:206-208` skip only what a resumed state already ran, `state.step` being -1
    on a fresh run, `roll/utils/worker_state.py:22`); one pipeline step; `:257` global_step += 1; `:258-262` break
    at max_steps."""
    assert max_steps > 0, "max_steps must be greater than 0"
    global_step = 0
    for _ in range(num_train_epochs):
        for _ in range(batches_per_epoch):
            global_step += 1
            if global_step >= max_steps:
                break
        if global_step >= max_steps:
            break
    return global_step


@pytest.mark.parametrize(("epochs", "batches", "max_steps"), [(3, 40, 500), (3, 40, 100), (1, 7, 7), (2, 5, 6)])
def test_lesson_11_says_roll_dpo_runs_the_smaller_of_its_epochs_and_max_steps(epochs, batches, max_steps):
    from steplab.teaching.lessons import load_lessons

    assert _roll_dpo_pipeline_steps(epochs, batches, max_steps) == min(epochs * batches, max_steps)
    with pytest.raises(AssertionError, match="max_steps must be greater than 0"):
        _roll_dpo_pipeline_steps(epochs, batches, 0)
    lesson = next(lesson for lesson in load_lessons() if lesson.number == 11)
    dpo = next(block for block in lesson.blocks if block.kind == "text" and "**DPO**" in block.data["zh"])
    zh, en = dpo.data["zh"], " ".join(dpo.data["en"].split())
    assert "两者中较小的那个" in zh and "the smaller of" in en
    assert "`max_steps` 为正" in zh and "`max_steps` to be positive" in en
