"""`stage: ppo` against the real LLaMA-Factory 0.9.5 in its own environment (`tests/llamafactory_env.py`, with the
TRL release of the real runs): its PPO trainer refuses to be made, and StepLab refuses the YAML with the same
requirement, the releases it names read from the wheel itself.

A full `llamafactory-cli train` of a PPO YAML on the tiny model stops with the same ImportError (tried by hand:
`DISABLE_VERSION_CHECK=1` does not change it); making the trainer is the same first step without loading a model.
"""

from __future__ import annotations

import pytest

from steplab.dataset.catalog import LLAMAFACTORY_PPO_TRL, LLAMAFACTORY_RELEASE, LLAMAFACTORY_TRL
from steplab.io.config_read import read_config
from steplab.io.safe_yaml import ConfigError
from tests.llamafactory_env import Oracle

PPO_YAML = """\
model_name_or_path: Qwen/Qwen3-4B-Instruct-2507
stage: ppo
do_train: true
finetuning_type: lora
reward_model: saves/reward
dataset: identity
template: qwen3
per_device_train_batch_size: 2
gradient_accumulation_steps: 4
num_train_epochs: 1.0
"""


@pytest.fixture(scope="module")
def oracle(llamafactory_oracle):
    return llamafactory_oracle


def test_the_ppo_trainer_refuses_as_steplab_says(oracle: Oracle) -> None:
    made = oracle.ask({"ppo": True})
    assert "error" in made, made  # LLaMA-Factory made a PPO trainer: StepLab's refusal would be wrong
    error = made["error"]
    assert error["type"] == "ImportError"
    assert error["message"].startswith(f"trl{LLAMAFACTORY_PPO_TRL} is required for a normal functioning of this "
                                       "module, but found trl==")
    assert f"trl{LLAMAFACTORY_TRL}" in oracle.ask({"requirements": True})  # the TRL releases 0.9.5 accepts
    version = error["message"].split("found trl==", 1)[1].split()[0].rstrip(".")
    low, high = (part.lstrip("<>=") for part in LLAMAFACTORY_TRL.split(","))
    as_tuple = lambda text: tuple(int(x) for x in text.split("."))  # noqa: E731
    assert as_tuple(low) <= as_tuple(version) <= as_tuple(high)  # refused with a TRL 0.9.5 itself accepts


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_steplab_refuses_a_ppo_yaml_and_says_why(lang: str) -> None:
    with pytest.raises(ConfigError) as refused:
        read_config(PPO_YAML)
    assert refused.value.code == "config_io.ppo_refused"
    assert refused.value.line == PPO_YAML.splitlines().index("stage: ppo") + 1
    said = refused.value.message(lang)
    assert f"trl{LLAMAFACTORY_PPO_TRL} is required" in said and LLAMAFACTORY_RELEASE in said
