"""Keys the census calls irrelevant (`steplab/io/census.yaml`), drawn into the generated differential cases.

The Trainer's (`tests/test_oracle.py`), TRL's (`tests/trl_cases.py`) and LLaMA-Factory's dataset stage's
(`tests/dataset_cases.py`: its argument parser reads them too) generated setups set a few of them, each at
one of the values the census lists, in the real code only: StepLab plans the same setup without them, and the
comparison holds only if they change nothing it counts.
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import strategies as st

from steplab.io import census


def irrelevant_keys(trainer_class: str = "Trainer", llamafactory: bool = False) -> dict[str, tuple[Any, ...]]:
    """`TrainingArguments`' irrelevant keys that the trainer class's own config (or LLaMA-Factory's arguments) do not
    class otherwise."""
    families = census.families_for(trainer_class, llamafactory)
    return {key: values for key, values in census.irrelevant().items()
            if census.classify(key, families).status == "irrelevant"}


@st.composite
def census_keys(draw, trainer_class: str = "Trainer", most: int = 4, llamafactory: bool = False) -> dict[str, Any]:
    """Up to `most` irrelevant keys of the class, each at one of its listed values."""
    keys = irrelevant_keys(trainer_class, llamafactory)
    chosen = draw(st.lists(st.sampled_from(sorted(keys)), max_size=most, unique=True))
    return {key: draw(st.sampled_from(keys[key])) for key in chosen}


def seeded_census_keys(seed: str, trainer_class: str = "Trainer", most: int = 2,
                       llamafactory: bool = False) -> dict[str, Any]:
    """Up to `most` irrelevant keys picked by a generator seeded with `seed` (a case's own text), not by hypothesis:
    a strategy's draws stay what they were, so the generated cases a suite already ran keep coming, each with keys
    of the census beside it."""
    keys = irrelevant_keys(trainer_class, llamafactory)
    pick = random.Random(seed)
    chosen = pick.sample(sorted(keys), pick.randint(0, most))
    return {key: pick.choice(keys[key]) for key in chosen}
