"""`steplab.trl` on the worked examples TRL's own source gives (fast; the rules themselves are held to real TRL
runs in `tests/test_trl_vs_steplab.py`)."""

from __future__ import annotations

import pytest

from steplab.errors import TrainerRefusal
from steplab.trainer.setup import setup_from_mapping
from steplab.trl.grpo import plan_grpo
from steplab.trl.packing import packed_examples


@pytest.mark.parametrize(("strategy", "packed"), [("bfd", 3), ("bfd_split", 3), ("wrapped", 3)])
def test_pack_dataset_docstring_example(strategy, packed):
    """`trl/data_utils.py` `pack_dataset`'s example: sequences of 5, 2, 3 and 1 tokens at `seq_length` 4."""
    assert packed_examples([5, 2, 3, 1], 4, strategy) == packed


def test_bfd_fits_the_fullest_bin_first():
    # 6 and 4 open two bins of 8 (room 2 and 4); 2 goes into the one with room 2, then 3 into room 4
    assert packed_examples([6, 4, 2, 3], 8, "bfd") == 2
    assert packed_examples([20, 1], 8, "bfd") == 2  # 20 is cut to 8
    assert packed_examples([20, 1], 8, "bfd_split") == 3  # 8, 8, 4 + 1


def test_grpo_sampler_figure():
    """`grpo_trainer.py`'s figure: 2 processes, B 3, G 2, GA 2, S 4: a round is prompts 0 to 11, made again at the
    fifth micro-batch (step 4), two updates per round."""
    setup = setup_from_mapping({"num_samples": 48, "per_device_train_batch_size": 3, "world_size": 2,
                                "gradient_accumulation_steps": 2, "num_train_epochs": 1, "trainer": "hf-5",
                                "trainer_class": "GRPOTrainer", "num_generations": 2, "steps_per_generation": 4})[0]
    plan = plan_grpo(setup)
    assert (plan.generation_batch_size, plan.unique_prompts_per_round, plan.rounds_per_epoch) == (24, 12, 4)
    assert plan.generation_micro_batches().tolist()[:2] == [0, 4]
    assert plan.trainer.max_steps == 8
    first, last, reused = plan.update_rounds()
    assert first.tolist() == [0, 0, 1, 1, 2, 2, 3, 3] and not reused.any()


def test_generation_batch_and_steps_together_are_refused():
    setup = setup_from_mapping({"num_samples": 48, "per_device_train_batch_size": 4, "steps_per_generation": 2,
                                "generation_batch_size": 8})[0]
    with pytest.raises(TrainerRefusal, match="can not be both configured"):
        plan_grpo(setup)


@pytest.mark.parametrize(("values", "said"), [
    ({"num_generations": 6}, "2, 4, 8"),  # Gb = 8 (B 4 × GA 2): the values of G that divide it
    ({"num_generations": 1}, "`2`"),
    ({"num_generations": 0}, "`2`"),
    ({"generation_batch_size": 6}, "4"),
    ({"generation_batch_size": 16, "steps_per_generation": 2}, "steps_per_generation"),
])
def test_every_grpo_refusal_says_what_to_change_in_both_languages(values, said):
    setup = setup_from_mapping({"num_samples": 100, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 2,
                                **values})[0]
    with pytest.raises(TrainerRefusal) as refusal:
        plan_grpo(setup)
    fix = refusal.value.fix
    assert said in fix.get("zh") and said in fix.get("en") and fix.get("zh") != fix.get("en")
