"""Runs inside LLaMA-Factory 0.9.5's own environment (`llamafactory_env.py`): its real data pipeline, case by case.

Reads one JSON request per line on stdin, `{"config": <the YAML mapping>, "dir": <the folder it runs from>}`,
and answers one JSON line: the example counts and token lengths of the train and eval datasets that
`llamafactory.data.get_dataset` builds (what `llamafactory-cli train` hands the Trainer), or the exception it
raised. `{"load": {"kind": "json" | "csv" | …, "path": …}}` answers the rows `datasets.load_dataset` reads. Everything LLaMA-Factory prints goes to stderr. Imports nothing of StepLab's.
"""

from __future__ import annotations

import importlib.machinery
import json
import logging
import os
import sys
import traceback
import types

# mm_plugin imports torchaudio at module level; text rows never use it, and no torchaudio wheel matches torch 2.13
_torchaudio = types.ModuleType("torchaudio")
_torchaudio.__spec__ = importlib.machinery.ModuleSpec("torchaudio", None)
sys.modules["torchaudio"] = _torchaudio
os.environ.update(DISABLE_VERSION_CHECK="1", HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
                  CUDA_VISIBLE_DEVICES="", TOKENIZERS_PARALLELISM="false", WANDB_DISABLED="true",
                  LLAMAFACTORY_VERBOSITY="ERROR")

answers = os.fdopen(os.dup(1), "w")  # the protocol's channel; fd 1 itself now goes to stderr
os.dup2(2, 1)
sys.stdout = sys.stderr

import datasets  # noqa: E402
import transformers  # noqa: E402
from llamafactory.data import get_dataset, get_template_and_fix_tokenizer  # noqa: E402
from llamafactory.hparams import get_train_args  # noqa: E402
from llamafactory.model import load_tokenizer  # noqa: E402

datasets.disable_progress_bars()
datasets.logging.set_verbosity_error()
transformers.logging.set_verbosity_error()
logging.disable(logging.WARNING)


def _lengths(dataset) -> list:
    """Tokens of each example: `input_ids`, or (chosen, rejected) for a pairwise example."""
    if "input_ids" in dataset.column_names:
        return [len(ids) for ids in dataset["input_ids"]]
    pairs = zip(dataset["chosen_input_ids"], dataset["rejected_input_ids"], strict=True)
    return [[len(chosen), len(rejected)] for chosen, rejected in pairs]


def _describe(dataset) -> dict:
    if dataset is None:
        return {"count": None}
    if isinstance(dataset, dict):  # eval_on_each_dataset
        return {"by_dataset": {name: _describe(part) for name, part in dataset.items()}}
    return {"count": len(dataset), "lengths": _lengths(dataset)}


def run(config: dict) -> dict:
    model_args, data_args, training_args, finetuning_args, _ = get_train_args(config)
    tokenizer_module = load_tokenizer(model_args)
    template = get_template_and_fix_tokenizer(tokenizer_module["tokenizer"], data_args)
    stage = {"dpo": "rm", "sft": "sft", "pt": "pt", "rm": "rm", "kto": "kto", "ppo": "ppo"}[finetuning_args.stage]
    module = get_dataset(template, model_args, data_args, training_args, stage=stage, **tokenizer_module)
    return {"train": _describe(module.get("train_dataset")), "eval": _describe(module.get("eval_dataset"))}


def load(request: dict) -> dict:
    """`datasets.load_dataset` of one file, as LLaMA-Factory calls it: its rows (values that are not JSON as text)."""
    table = datasets.load_dataset(request["kind"], data_files=[request["path"]], split="train",
                                  cache_dir=os.path.join(os.path.dirname(request["path"]), ".hf-cache"))
    return {"rows": json.loads(json.dumps(table.to_list(), default=str)),
            "types": {name: str(feature) for name, feature in table.features.items()}}


def answer_for(request: dict) -> dict:
    if "load" in request:
        return load(request["load"])
    os.chdir(request["dir"])
    config = dict(request["config"])
    config.setdefault("output_dir", os.path.join(request["dir"], "out"))
    return run(config)


for line in sys.stdin:
    request = json.loads(line)
    try:
        answer = answer_for(request)
    except BaseException as error:  # noqa: BLE001 - every refusal is an answer (SystemExit from argument checks too)
        answer = {"error": {"type": type(error).__name__, "message": str(error)[:2000],
                            "trace": traceback.format_exc()[-3000:]}}
    answers.write(json.dumps(answer) + "\n")
    answers.flush()
