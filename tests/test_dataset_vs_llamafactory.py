"""The dataset stage against LLaMA-Factory 0.9.5's own data pipeline, on generated datasets and data keys.

Each generated case (`tests/dataset_cases.py`) is written to a folder and run through both: StepLab's
`funnel_from_files` and LLaMA-Factory's own `get_dataset` (in its own environment, `tests/llamafactory_env.py`),
which builds the train and eval datasets `llamafactory-cli train` hands the Trainer. They must agree on the
train and eval example counts, and where LLaMA-Factory stops with an error, StepLab must refuse the setup too.

The examples are derandomised (the same cases on every run; `STEPLAB_LF_RANDOM=1` draws new ones) and their
number per family is `STEPLAB_LF_CASES` (default 60; five families: 300 cases).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from steplab.dataset.load import funnel_from_files
from steplab.errors import InputError
from tests.dataset_cases import Case, cases, tokenizer_folders, write_case
from tests.llamafactory_env import Oracle

CASES = int(os.environ.get("STEPLAB_LF_CASES", "60"))
PHASES = [Phase.explicit, Phase.generate] + ([] if os.environ.get("STEPLAB_LF_NO_SHRINK") else [Phase.shrink])
SETTINGS = settings(max_examples=CASES, deadline=None, derandomize=not os.environ.get("STEPLAB_LF_RANDOM"),
                    suppress_health_check=list(HealthCheck), database=None, phases=PHASES)


@pytest.fixture(scope="module")
def oracle(llamafactory_oracle):
    return llamafactory_oracle


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """The word-level and byte-level tokenizer folders every case of this process names (built once)."""
    return tokenizer_folders(tmp_path_factory.mktemp("tokenizers"))


def _steplab(config: dict, folder: Path) -> dict:
    try:
        funnel = funnel_from_files(config, folder)
    except InputError as error:
        return {"error": error.code, "message": error.message("en")}
    return {"train": funnel.train_examples, "eval": funnel.eval_examples}


def _llamafactory(oracle: Oracle, config: dict, folder: Path) -> dict:
    answer = oracle.run(config, folder)
    if "error" in answer:
        trace = answer["error"]["trace"] if os.environ.get("STEPLAB_LF_TRACE") else ""
        return {"error": answer["error"]["type"], "message": answer["error"]["message"], "trace": trace}
    evaluation = answer["eval"]
    if "by_dataset" in evaluation:
        count = sum(part["count"] for part in evaluation["by_dataset"].values())
    else:
        count = evaluation["count"]
    return {"train": answer["train"]["count"], "eval": count}


def check(oracle: Oracle, case: Case, models: dict[str, Path]) -> None:
    with tempfile.TemporaryDirectory(prefix="lf-case-") as scratch:
        folder = Path(scratch)
        config = write_case(case, folder, models)
        real = _llamafactory(oracle, config, folder)
        ours = _steplab(config, folder)
    context = f"\nLLaMA-Factory: {real}\nStepLab: {ours}\ncase:\n{case.describe()}"
    if "error" in real:
        assert "error" in ours, "LLaMA-Factory stops on this setup, StepLab planned it" + context
    else:
        assert "error" not in ours, "StepLab refused a setup LLaMA-Factory runs" + context
        assert (ours["train"], ours["eval"]) == (real["train"], real["eval"]), context


@SETTINGS
@given(case=cases(stages=("sft",), packing=False))
def test_sft_rows_match_llamafactory(oracle, models, case):
    check(oracle, case, models)


@SETTINGS
@given(case=cases(stages=("sft",), packing=True))
def test_sft_packing_matches_llamafactory(oracle, models, case):
    check(oracle, case, models)


@SETTINGS
@given(case=cases(stages=("rm", "dpo")))
def test_pairwise_rows_match_llamafactory(oracle, models, case):
    check(oracle, case, models)


@SETTINGS
@given(case=cases(stages=("pt",)))
def test_pretraining_blocks_match_llamafactory(oracle, models, case):
    check(oracle, case, models)


@SETTINGS
@given(case=cases())
def test_every_stage_matches_llamafactory(oracle, models, case):
    check(oracle, case, models)
