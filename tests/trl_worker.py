"""Runs inside a TRL environment (`trl_env.py`): real GRPO, DPO and SFT runs on CPU, many configurations per call.

Reads requests `{"cases": [case, ...]}` one JSON line each on stdin and answers each with one JSON line, the list
of results; or, given a file name as its argument (under torchrun, whose ranks have no stdin), reads one request
from that file and rank 0 prints the answer as one line on stdout.

A case: `{"trainer": "grpo" | "dpo" | "sft", "num_samples": N, "args": {<the config's fields>}}` (a GRPO case may
give `"eval_samples"`, the prompts of an evaluation set; an SFT case
gives `"lengths"`, the token length of each example, instead of `num_samples`: a tokenized dataset of
those lengths, which `SFTTrainer` packs as it is; `"eval_lengths": {name: lengths}` gives it evaluation sets, one
per name, as the Trainer's dict of eval datasets). The model is a one-layer Qwen2 of
width 8 and the tokenizer a word-level one of 40 words, both built here (no hub); GRPO generates 1 token per
completion (`max_completion_length` 1, `use_vllm` False, `beta` 0: no reference model) and every completion earns
reward 0. A result: `state.max_steps`, the optimizer steps, the final epoch, the micro-batches (`training_step`
calls) of each update, its learning rate, the generation calls (`_generate_and_score_completions`, wrapped) and
the micro-batch each one came before, per GRPO update the first and last round its micro-batches came from and
whether one of them was a slice `_prepare_inputs` had handed out before in that round (the same object: reused), "Num examples" and "Total train batch size" as the Trainer logs them, the
train dataset's size after packing; or the exception raised (type, message). Imports nothing of StepLab's.

A case with `"output_dir"` trains into that folder and keeps it (checkpoints and their `trainer_state.json`), with
the Trainer's INFO log on and tqdm's bars: the worker's stderr is then the run's console as a script would print
it (`scripts/record_trl_runs.py` runs one case per process for that), an exception's traceback included. With
`"stop_at": k` the run is stopped at step k (a `KeyboardInterrupt`, as Ctrl-C) and run again with
`resume_from_checkpoint=True`, the two consoles parted by `RESUMED_MARK`.
"""

from __future__ import annotations

import gc
import importlib
import json
import logging
import os
import re
import sys
import tempfile
import traceback
import warnings

os.environ.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1", CUDA_VISIBLE_DEVICES="",
                  TOKENIZERS_PARALLELISM="false", WANDB_DISABLED="true", ACCELERATE_USE_CPU="1")
answers = os.fdopen(os.dup(1), "w")  # the protocol's channel; fd 1 itself now goes to stderr
os.dup2(2, 1)
sys.stdout = sys.stderr

import datasets  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
import trl  # noqa: E402

# TRL 0.24 keeps `transformers.utils.import_utils._is_package_available(name)` as a flag, but transformers 5.x returns
# a tuple `(found, version)`, always true: 0.24 then imports mergekit and llm_blender, absent, and its GRPO and DPO
# trainers fail to import in LLaMA-Factory 0.9.5's own pins. Each flag is made what it meant.
_flags = importlib.import_module("trl.import_utils")
for _name, _value in list(vars(_flags).items()):
    if _name.endswith("_available") and isinstance(_value, tuple):
        setattr(_flags, _name, bool(_value[0]))
from tokenizers import Tokenizer, models, pre_tokenizers  # noqa: E402
from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM, TrainerCallback  # noqa: E402

datasets.disable_progress_bars()
datasets.logging.set_verbosity_error()
transformers.logging.set_verbosity_error()
warnings.filterwarnings("ignore")
torch.set_num_threads(1)
gc.freeze()  # the imported libraries: accelerate's `gc.collect()` at the end of every run skips them

WORDS = [f"w{i}" for i in range(36)]
RANK = int(os.environ.get("RANK", "0"))


def tokenizer() -> PreTrainedTokenizerFast:
    vocab = {"[PAD]": 0, "[UNK]": 1, "[EOS]": 2, "[BOS]": 3, **{word: i + 4 for i, word in enumerate(WORDS)}}
    model = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    model.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(tokenizer_object=model, pad_token="[PAD]", unk_token="[UNK]", eos_token="[EOS]",
                                   bos_token="[BOS]")


TOKENIZER = tokenizer()


def model() -> Qwen2ForCausalLM:
    torch.manual_seed(0)
    config = Qwen2Config(vocab_size=len(WORDS) + 4, hidden_size=8, intermediate_size=16, num_hidden_layers=1,
                         num_attention_heads=1, num_key_value_heads=1, max_position_embeddings=512,
                         pad_token_id=0, eos_token_id=2, bos_token_id=3, tie_word_embeddings=True)
    built = Qwen2ForCausalLM(config)
    if not hasattr(built, "warnings_issued"):  # TRL 0.24 writes to it; transformers 5 dropped the attribute
        built.warnings_issued = {}
    return built


def text(i: int, length: int = 2) -> str:
    return " ".join(WORDS[(i + k) % len(WORDS)] for k in range(length))


def zero_reward(completions, **kwargs):
    return [0.0] * len(completions)


class Recorder(TrainerCallback):
    def __init__(self, record: dict) -> None:
        self.record = record

    def on_optimizer_step(self, args, state, control, optimizer=None, **kwargs):
        self.record["sizes"].append(self.record.pop("pending", 0))
        used = self.record.pop("used", [])
        if used:  # GRPO: the rounds this update's micro-batches came from, and whether any reused a slice
            rounds = [which for which, _ in used]
            self.record["update_rounds"].append([min(rounds), max(rounds), any(again for _, again in used)])
        self.record["lrs"].append(optimizer.param_groups[0]["lr"] if optimizer is not None else None)

    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs and "loss" in logs:
            self.record["log"].append(state.global_step)

    def on_evaluate(self, args, state, control, **kwargs):
        self.record["eval"].append(state.global_step)


class LogLines(logging.Handler):
    """The Trainer's "***** Running training *****" block, as it logs it."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def logged(lines: list[str], label: str) -> int | None:
    for line in lines:
        found = re.match(rf"\s*{re.escape(label)} = ([\d,]+)", line)
        if found:
            return int(found.group(1).replace(",", ""))
    return None


def block(lines: list[str]) -> list[str]:
    """The "***** Running training *****" block as logged, one line per message, without the parameter count
    (the model's, not the plan's)."""
    start = next((i for i, line in enumerate(lines) if line.startswith("***** Running training")), None)
    if start is None:
        return []
    found = []
    for line in lines[start:]:
        if "Number of trainable parameters" in line:
            break
        found.append(line)
    return found


def build(case: dict, out: str):
    kind = case["trainer"]
    common = dict(output_dir=out, report_to="none", use_cpu=True, disable_tqdm=True, seed=0, save_strategy="no",
                  dataloader_num_workers=0)
    if not case.get("config_defaults") and not case.get("output_dir"):
        common["logging_steps"] = 10**6
    args = {**common, **case["args"]}
    if kind == "grpo":
        config = trl.GRPOConfig(**{"max_completion_length": 1, "use_vllm": False, "beta": 0.0, **args})
        data = datasets.Dataset.from_dict({"prompt": [text(i) for i in range(case["num_samples"])]})
        evaluation = None
        if case.get("eval_samples") is not None:  # an evaluation set of that many prompts
            evaluation = datasets.Dataset.from_dict({"prompt": [text(i + 50) for i in range(case["eval_samples"])]})
        trainer = trl.GRPOTrainer(model=model(), reward_funcs=zero_reward, args=config, train_dataset=data,
                                  eval_dataset=evaluation, processing_class=TOKENIZER)
    elif kind == "dpo":
        config = trl.DPOConfig(**{"max_length": 8, **args})
        n = case["num_samples"]
        data = datasets.Dataset.from_dict({"prompt": [text(i) for i in range(n)],
                                           "chosen": [text(i + 1, 1) for i in range(n)],
                                           "rejected": [text(i + 2, 1) for i in range(n)]})
        trainer = trl.DPOTrainer(model=model(), ref_model=model(), args=config, train_dataset=data,
                                 processing_class=TOKENIZER)
    else:
        config = trl.SFTConfig(**args)

        def tokens(lengths: list[int]) -> datasets.Dataset:
            return datasets.Dataset.from_dict({"input_ids": [[4 + (i + k) % len(WORDS) for k in range(n)]
                                                             for i, n in enumerate(lengths)]})

        evals = {name: tokens(lengths) for name, lengths in case.get("eval_lengths", {}).items()} or None
        trainer = trl.SFTTrainer(model=model(), args=config, train_dataset=tokens(case["lengths"]),
                                 eval_dataset=evals, processing_class=TOKENIZER)
    return trainer


def run(case: dict) -> dict:
    if case.get("output_dir"):
        return kept_run(case)
    record: dict = {"sizes": [], "lrs": [], "generations": [], "micro_batches": 0, "log": [], "update_rounds": [],
                    "seen": set(), "eval": []}
    handler = LogLines()
    trainer_logger = logging.getLogger("transformers.trainer")
    trainer_logger.addHandler(handler)
    previous = trainer_logger.level
    trainer_logger.setLevel(logging.INFO)
    try:
        with tempfile.TemporaryDirectory() as out:
            trainer = build(case, out)
            if case.get("build_only"):
                return {"status": "ok", "train_examples": len(trainer.train_dataset),
                        "lengths": [len(ids) for ids in trainer.train_dataset["input_ids"]]}
            trainer.add_callback(Recorder(record))
            step = trainer.training_step

            def counted_step(*args, **kwargs):
                done = step(*args, **kwargs)
                record["pending"] = record.get("pending", 0) + 1
                record["micro_batches"] += 1
                return done

            trainer.training_step = counted_step
            if hasattr(trainer, "_generate_and_score_completions"):
                generate = trainer._generate_and_score_completions

                def counted_generation(*args, **kwargs):
                    if trainer.model.training:
                        record["generations"].append(record["micro_batches"])
                        record["seen"] = set()
                    return generate(*args, **kwargs)

                prepare = trainer._prepare_inputs

                def watched_inputs(*args, **kwargs):
                    inputs = prepare(*args, **kwargs)
                    if trainer.model.training:  # a slice of the buffered round: handed out before in this round?
                        again = id(inputs) in record["seen"]
                        record["seen"].add(id(inputs))
                        record.setdefault("used", []).append([len(record["generations"]) - 1, again])
                    return inputs

                trainer._prepare_inputs = watched_inputs

                trainer._generate_and_score_completions = counted_generation
            trainer.train()
    except Exception as error:  # noqa: BLE001 - the oracle reports whatever TRL raised
        return {"status": "error", "error_type": type(error).__name__, "error": str(error),
                "trace": traceback.format_exc()[-3000:]}
    finally:
        trainer_logger.removeHandler(handler)
        trainer_logger.setLevel(previous)
    state = trainer.state
    return {
        "status": "ok",
        "state_max_steps": state.max_steps,
        "optimizer_steps": state.global_step,
        "final_epoch": state.epoch or 0,
        "sizes": record["sizes"],
        "lrs": record["lrs"],
        "generations": record["generations"],
        "log_at_steps": record["log"],
        "eval_at_steps": record["eval"],
        "update_rounds": record["update_rounds"],
        "micro_batches": record["micro_batches"],
        "num_examples": logged(handler.lines, "Num examples"),
        "block": block(handler.lines),
        "total_train_batch_size": logged(handler.lines, "Total train batch size (w. parallel, distributed & accumulation)"),
        "train_examples": len(trainer.train_dataset),
        "versions": {"trl": trl.__version__, "transformers": transformers.__version__},
    }


def kept_run(case: dict) -> dict:
    """Train into `case["output_dir"]` and keep it; the console (stderr) shows what a script's would."""
    transformers.logging.set_verbosity_info()
    transformers.logging.enable_default_handler()
    try:
        trainer = build({**case, "args": {"disable_tqdm": False, **case["args"]}}, case["output_dir"])
        rounds = []
        if hasattr(trainer, "_generate_and_score_completions"):  # GRPO: count the generation rounds of training
            generate = trainer._generate_and_score_completions

            def counted_generation(*args, **kwargs):
                if trainer.model.training:
                    rounds.append(1)
                return generate(*args, **kwargs)

            trainer._generate_and_score_completions = counted_generation
        if case.get("stop_at"):  # killed at that step (Ctrl-C), then run again from its last checkpoint
            trainer.add_callback(StopAt(case["stop_at"]))
            try:
                trainer.train()
            except KeyboardInterrupt:
                traceback.print_exc()
            sys.stderr.write(f"{RESUMED_MARK}\n")
            sys.stderr.flush()
            trainer = build({**case, "args": {"disable_tqdm": False, **case["args"]}}, case["output_dir"])
            trainer.train(resume_from_checkpoint=True)
        else:
            trainer.train()
    except Exception as error:  # noqa: BLE001 - the run failed as a script's would: its traceback on the console
        traceback.print_exc()
        return {"status": "error", "error_type": type(error).__name__, "error": str(error)}
    finally:
        sys.stderr.flush()
    return {"status": "ok", "optimizer_steps": trainer.state.global_step, "generation_rounds": len(rounds),
            "train_loss": trainer.state.log_history[-1].get("train_loss"),
            "versions": {"trl": trl.__version__, "transformers": transformers.__version__}}


RESUMED_MARK = "=== the run again, resumed from its last checkpoint ==="
"""Where a stopped case's console ends and its resumed run's begins (`kept_run` of `trl_env` splits it there)."""


class StopAt(TrainerCallback):
    """Stop the run at one step as Ctrl-C would: a `KeyboardInterrupt` out of `train()`."""

    def __init__(self, step: int) -> None:
        self.step = step

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step == self.step:
            raise KeyboardInterrupt


def answer(request: dict) -> list[dict]:
    return [run(case) for case in request["cases"]]


if len(sys.argv) > 1:  # torchrun: one request from a file, rank 0 answers
    with open(sys.argv[1], encoding="utf-8") as source:
        results = answer(json.loads(source.read()))
    if RANK == 0:
        answers.write(json.dumps(results) + "\n")
        answers.flush()
else:
    for line in sys.stdin:
        answers.write(json.dumps(answer(json.loads(line))) + "\n")
        answers.flush()
