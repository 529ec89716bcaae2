"""Runs inside LLaMA-Factory 0.9.5's own environment (`llamafactory_env.py`): its real data pipeline, case by case.

Reads one JSON request per line on stdin and answers one JSON line. Requests:
- `{"config": <the YAML mapping>, "dir": <the folder it runs from>}`: the example counts and token lengths of
  the train and eval datasets that `llamafactory.data.get_dataset` builds (what `llamafactory-cli train` hands
  the Trainer), or the exception it raised;
- `{"encode": {"folder", "data_args", "date", "cases"}}` (or a list of such, answered by a list): a tokenizer
  folder loaded by `load_tokenizer`, the template `get_template_and_fix_tokenizer` makes of `data_args`
  (template, tool_format, default_system, enable_thinking, preserve_thinking, mask_history), then per case
  (`messages`, `system`, `tools`, optional `cutoff_len`) the (source, target) lengths `encode_multiturn`
  returns (after a multimodal plugin's check of the media placeholders in the text) (`discarding_history_cot` as the supervised processor sets it), the supervised processor's example
  length at `cutoff_len` (templates without a multimodal plugin) and the tokens `PretrainDatasetProcessor`
  makes of the first message; or the exception each raised. `date` fixes the day LLaMA 3's tool prompt writes;
- `{"registry": true}`: every registered template's formatters and settings, as plain data;
- `{"load": {"kind": "json" | "csv" | …, "path": …}}`: the rows (and column types) `datasets.load_dataset` reads;
- `{"fields": ["module:Class", …]}`: the init fields of each named dataclass, as `dataclasses.fields` lists them
  (the census test: LLaMA-Factory's argument classes, its transformers' `TrainingArguments`, its TRL's configs).
Everything LLaMA-Factory prints goes to stderr. Imports nothing of StepLab's.
"""

from __future__ import annotations

import copy
import datetime as _datetime
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
from llamafactory.data import get_dataset, get_template_and_fix_tokenizer, tool_utils  # noqa: E402
from llamafactory.data import template as template_module  # noqa: E402
from llamafactory.data.mm_plugin import BasePlugin  # noqa: E402
from llamafactory.data.processor import PretrainDatasetProcessor, SupervisedDatasetProcessor  # noqa: E402
from llamafactory.hparams import DataArguments, ModelArguments, get_train_args  # noqa: E402
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


PRISTINE = copy.deepcopy(template_module.TEMPLATES)  # get_template_and_fix_tokenizer changes the one it returns


def _pristine(name) -> None:
    """The named template (and `empty`, which stands in when none is named) as registered: every request starts
    as a fresh `llamafactory-cli` run would, whatever an earlier request's options did to the shared object."""
    for key in {name or "empty", "empty"}:
        if isinstance(key, str) and key in PRISTINE:
            template_module.TEMPLATES[key] = copy.deepcopy(PRISTINE[key])


def _error(error: BaseException) -> dict:
    return {"error": {"type": type(error).__name__, "message": str(error)[:2000],
                      "trace": traceback.format_exc()[-3000:]}}


class _FixedDay(_datetime.datetime):
    day_text = "01 Jan 2026"

    @classmethod
    def now(cls, tz=None):
        return cls.strptime(cls.day_text, "%d %b %Y")


tool_utils.datetime = _FixedDay


def _supervised_length(template, tokenizer, data_args, case: dict) -> int:
    """The example length the real supervised processor makes at `cutoff_len` (its truncation loop)."""
    args = copy.copy(data_args)
    args.cutoff_len = case["cutoff_len"]
    processor = SupervisedDatasetProcessor(template=template, tokenizer=tokenizer, processor=None, data_args=args)
    messages = case["messages"]
    input_ids, _ = processor._encode_data_example(messages[:-1], messages[-1:], case.get("system"),
                                                  case.get("tools"), [], [], [])
    return len(input_ids)


def _pretrain_tokens(template, tokenizer, data_args, case: dict) -> int:
    """Tokens the pt processor makes of the first message: with packing and 1-token blocks, one block per token."""
    args = copy.copy(data_args)
    args.packing, args.cutoff_len = True, 1
    processor = PretrainDatasetProcessor(template=template, tokenizer=tokenizer, processor=None, data_args=args)
    return len(processor.preprocess_dataset({"_prompt": [case["messages"][:1]]})["input_ids"])


def _encode_case(template, tokenizer, data_args, case: dict) -> dict:
    answer: dict = {}
    messages = case["messages"]
    discarding = data_args.mask_history and not template.preserve_thinking
    try:
        if type(template.mm_plugin) is not BasePlugin:  # process_messages' check; its processor check needs a model
            template.mm_plugin._validate_messages(messages, [], [], [])
        pairs = template.encode_multiturn(tokenizer, messages, case.get("system"), case.get("tools"), discarding)
        answer["pairs"] = [[len(source), len(target)] for source, target in pairs]
    except BaseException as error:  # noqa: BLE001 - the refusal is the answer
        answer.update(_error(error))
        return answer
    if case.get("cutoff_len") and type(template.mm_plugin) is BasePlugin:
        answer["supervised_length"] = _supervised_length(template, tokenizer, data_args, case)
    answer["pretrain"] = _pretrain_tokens(template, tokenizer, data_args, case)
    return answer


def encode(request: dict) -> dict:
    _FixedDay.day_text = request.get("date") or _FixedDay.day_text
    data_args = DataArguments(**request["data_args"])
    _pristine(data_args.template)
    try:
        tokenizer = load_tokenizer(ModelArguments(model_name_or_path=request["folder"]))["tokenizer"]
        template = get_template_and_fix_tokenizer(tokenizer, data_args)
    except BaseException as error:  # noqa: BLE001 - the refusal is the answer
        return _error(error)
    return {"cases": [_encode_case(template, tokenizer, data_args, case) for case in request["cases"]]}


def _slots(formatter) -> list:
    return [{"set": sorted(slot)} if isinstance(slot, set) else slot for slot in formatter.slots]


def registry() -> dict:
    """Every registered template as data: slots (a set slot as {"set": [...]}), tool formats, settings."""
    out = {}
    for name, template in PRISTINE.items():
        formatters = {key: getattr(template, f"format_{key}") for key in
                      ("user", "assistant", "system", "function", "observation", "tools", "prefix")}
        out[name] = {
            "class": type(template).__name__, "mm_plugin": type(template.mm_plugin).__name__,
            **{key: {"type": type(formatter).__name__, "slots": _slots(formatter),
                     "tool_format": formatter.tool_format} for key, formatter in formatters.items()},
            **{key: getattr(template, key) for key in ("default_system", "stop_words", "thought_words",
                                                       "tool_call_words", "efficient_eos", "replace_eos",
                                                       "enable_thinking", "preserve_thinking")},
        }
    return out


def load(request: dict) -> dict:
    """`datasets.load_dataset` of one file, as LLaMA-Factory calls it: its rows (values that are not JSON as text)."""
    table = datasets.load_dataset(request["kind"], data_files=[request["path"]], split="train",
                                  cache_dir=os.path.join(os.path.dirname(request["path"]), ".hf-cache"))
    return {"rows": json.loads(json.dumps(table.to_list(), default=str)),
            "types": {name: str(feature) for name, feature in table.features.items()}}


def ppo_trainer() -> dict:
    """What LLaMA-Factory's PPO trainer does when it is made, in this environment: the exception it raises first
    (its TRL check comes before any argument is used, and transformers' `require_version` ignores
    DISABLE_VERSION_CHECK), or {"made": true}."""
    from llamafactory.train.ppo.trainer import CustomPPOTrainer

    nothing = dict.fromkeys(("model_args", "training_args", "finetuning_args", "generating_args", "callbacks", "model",
                             "reward_model", "ref_model", "tokenizer", "processor", "data_collator"))
    try:
        CustomPPOTrainer(**nothing)
    except BaseException as error:  # noqa: BLE001 - the refusal is the answer
        return _error(error)
    return {"made": True}


def fields(names: list) -> dict:
    """The init fields of each named dataclass (`module:Class`), in declaration order."""
    import dataclasses
    import importlib

    found = {}
    for name in names:
        module, _, attribute = name.partition(":")
        found[name] = [f.name for f in dataclasses.fields(getattr(importlib.import_module(module), attribute)) if f.init]
    return found


def requirements() -> list:
    """The package requirements `check_dependencies` checks, as it passes them to `check_version`."""
    from llamafactory.extras import misc

    asked = []
    original = misc.check_version
    misc.check_version = lambda requirement, *args, **kwargs: asked.append(requirement)
    try:
        misc.check_dependencies()
    finally:
        misc.check_version = original
    return asked


for line in sys.stdin:
    request = json.loads(line)
    if "fields" in request:
        answers.write(json.dumps(fields(request["fields"])) + "\n")
        answers.flush()
        continue
    if "ppo" in request or "requirements" in request:
        answers.write(json.dumps(ppo_trainer() if "ppo" in request else requirements()) + "\n")
        answers.flush()
        continue
    if "load" in request:
        try:
            loaded = load(request["load"])
        except BaseException as error:  # noqa: BLE001 - a file datasets refuses is an answer
            loaded = _error(error)
        answers.write(json.dumps(loaded) + "\n")
        answers.flush()
        continue
    if "encode" in request:
        asked = request["encode"]
        answer = [encode(one) for one in asked] if isinstance(asked, list) else encode(asked)
        answers.write(json.dumps(answer) + "\n")
        answers.flush()
        continue
    if "registry" in request:
        answers.write(json.dumps(registry()) + "\n")
        answers.flush()
        continue
    os.chdir(request["dir"])
    config = dict(request["config"])
    config.setdefault("output_dir", os.path.join(request["dir"], "out"))
    _pristine(config.get("template"))
    try:
        answer = run(config)
    except BaseException as error:  # noqa: BLE001 - every refusal is an answer (SystemExit from argument checks too)
        answer = _error(error)
    answers.write(json.dumps(answer) + "\n")
    answers.flush()
