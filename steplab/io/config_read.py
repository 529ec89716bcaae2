"""A LLaMA-Factory or Hugging Face training YAML read into the values of a StepLab setup.

`read_config` turns YAML text (untrusted: read by `steplab.io.safe_yaml`) into the values
`steplab.trainer.setup.setup_from_mapping` takes, lists the keys it used and those it ignored, and works out the
training sample count N from LLaMA-Factory's data keys when the row counts are known, through the dataset
stage (`steplab.dataset`), the one home of those rules. It writes no prose: notes are `Message`s.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from steplab.dataset.catalog import (
    KNOWN_DATASET_ROWS,
    LLAMAFACTORY_COMMIT,
    LLAMAFACTORY_PPO_TRL,
    LLAMAFACTORY_RELEASE,
    LLAMAFACTORY_TRL,
)
from steplab.dataset.funnel import Funnel
from steplab.dataset.load import funnel_from_rows
from steplab.dataset.settings import data_settings
from steplab.errors import InputError
from steplab.i18n import Message, msg
from steplab.io.safe_yaml import ConfigError, decode, load
from steplab.trainer.fields import TRAINING_ARGUMENT_FIELDS
from steplab.trainer.setup import DEFAULTS

ALIASES = {"evaluation_strategy": "eval_strategy"}

DATA_KEYS = ("dataset", "max_samples", "val_size", "eval_dataset", "streaming", "packing", "neat_packing", "stage",
             "cutoff_len", "mix_strategy", "tokenized_path", "preprocessing_batch_size")
"""LLaMA-Factory data keys that decide the sample count (used, not ignored, when present)."""
_LLAMAFACTORY_MARKERS = frozenset(
    {"stage", "finetuning_type", "dataset", "template", "cutoff_len", "max_samples", "val_size", "lora_rank",
     "lora_target", "packing", "plot_loss", "eval_dataset", "preprocessing_num_workers"}
)
"""Keys only LLaMA-Factory has; any of them marks the file as a LLaMA-Factory config."""
_PARALLEL_KEYS = ("tensor_model_parallel_size", "pipeline_model_parallel_size", "context_parallel_size",
                  "sequence_parallel_size")
UNCOUNTABLE = ("dataset.needs_tokens",)
"""Dataset-stage codes that mean "row counts cannot give N" (a note, N must be given), not a refusal."""
_HEADER = re.compile(r"^#\s*(num_samples|world_size|trainer|limit_train_batches):\s*(\S+)\s+\(StepLab\b")
_COMMENTED_EVAL = re.compile(r"^\s*#\s*(val_size|eval_strategy|eval_steps|eval_dataset)\s*:", re.MULTILINE)


@dataclass
class ConfigImport:
    """What `read_config` made of a YAML file.

    values: setup fields for `setup_from_mapping`: every TrainingArguments field of the setup (the
        Trainer's default where the YAML is silent), `num_samples` when known, `world_size` and
        `trainer` only when the file states them.
    used: YAML keys that were read (in file order; `# key` for StepLab's comment lines).
    ignored: YAML keys that do not enter the step arithmetic (model, LoRA, precision, output ...).
    needs_num_samples: True when N could not be worked out; the caller must supply `num_samples`.
    notes: things the user should know about this import.
    sample_lines: the worked arithmetic of N, one stage per line (the dataset stage's own sentences).
    flavour: "llamafactory" or "hf" (plain TrainingArguments YAML).
    sample_source: where N came from: "argument", "yaml", "comment", "datasets", "streaming" (no length: the plan
        takes `max_steps` × the total batch) or "missing".
    document: the YAML's own mapping (keys as text), for the dataset stage (`steplab.dataset`).
    funnel: the dataset stage's result when N came from the datasets' row counts.
    """

    values: dict[str, Any]
    used: list[str]
    ignored: list[str]
    needs_num_samples: bool
    notes: list[Message] = field(default_factory=list)
    sample_lines: list[Message] = field(default_factory=list)
    flavour: str = "hf"
    sample_source: str = "missing"
    document: dict[str, Any] = field(default_factory=dict)
    funnel: Funnel | None = None


def _header_values(text: str) -> dict[str, Any]:
    """StepLab's own comment lines, e.g. `# num_samples: 1600  (StepLab: ...)`."""
    found: dict[str, Any] = {}
    for raw in text.splitlines():
        match = _HEADER.match(raw)
        if not match or match.group(1) in found:
            continue
        token = match.group(2)
        value: Any = token
        for convert in (int, float):
            try:
                value = convert(token)
                break
            except ValueError:
                continue
        found[match.group(1)] = value
    return found


PACKING_PAD = 8
"""LLaMA-Factory 0.9.5's SFT collator pads `input_ids` to a multiple of 8 when training (`train/sft/workflow.py:65`,
`pad_to_multiple_of=8`); the packed `position_ids` stay `cutoff_len` long (`data/processor/supervised.py:199-221`)."""


def packing_crash(doc: Mapping[str, Any]) -> Message | None:
    """The warning for a packed SFT run whose `cutoff_len` is not a multiple of 8: the real run stops at its first
    step, with the model's size mismatch (seen with the qwen, gemma, llama2 and mistral templates, on one and two
    processes, default attention on CPU; `tests/test_packing_crash.py` runs it)."""
    packs = doc.get("packing") is True or doc.get("neat_packing") is True
    cutoff = doc.get("cutoff_len", 2048)
    if (not packs or str(doc.get("stage") or "sft") != "sft" or doc.get("do_train") is False
            or not isinstance(cutoff, int) or isinstance(cutoff, bool) or cutoff < 1 or cutoff % PACKING_PAD == 0):
        return None
    padded = -(-cutoff // PACKING_PAD) * PACKING_PAD
    error = (f"RuntimeError: The size of tensor a ({padded}) must match the size of tensor b ({cutoff}) at "
             "non-singleton dimension 2")
    return msg("config_io.note.packing_cutoff", cutoff=cutoff, pad=PACKING_PAD, padded=padded, error=error,
               release=LLAMAFACTORY_RELEASE, lower=padded - PACKING_PAD if padded > PACKING_PAD else padded,
               upper=padded)


def _notes_for_keys(doc: Mapping[str, Any], text: str) -> list[Message]:
    """Notes on keys that do not change the count but that the user should know about."""
    notes: list[Message] = [note] if (note := packing_crash(doc)) is not None else []
    if doc.get("deepspeed"):
        notes.append(msg("config_io.note.deepspeed"))
    if "per_device_eval_batch_size" in doc:
        notes.append(msg("config_io.note.eval_batch_size"))
    if "evaluation_strategy" in doc:
        both = msg("config_io.note.evaluation_strategy.both") if "eval_strategy" in doc else ""
        notes.append(msg("config_io.note.evaluation_strategy", both=both))
    active_eval = any(key in doc for key in ("val_size", "eval_strategy", "evaluation_strategy", "eval_dataset"))
    if not active_eval and _COMMENTED_EVAL.search(text):
        notes.append(msg("config_io.note.commented_eval"))
    big = [key for key in _PARALLEL_KEYS
           if isinstance(doc.get(key), int) and not isinstance(doc.get(key), bool) and doc[key] > 1]
    if big:
        notes.append(msg("config_io.note.model_parallel", keys=", ".join(big), limit=1, section="3.5"))
    if doc.get("auto_find_batch_size"):
        notes.append(msg("config_io.note.auto_find_batch_size"))
    if doc.get("resume_from_checkpoint") not in (None, False, ""):
        notes.append(msg("config_io.note.resume", value=str(doc["resume_from_checkpoint"])))
    return notes


def _with_line(error: InputError, key_lines: Mapping[str, int]) -> ConfigError:
    """A data-key problem of the dataset stage, said as it is, with the line of the key it is about."""
    line = key_lines.get(error.field or "") or key_lines.get("val_size" if error.code.startswith(
        "dataset.val") else "dataset")
    return ConfigError("config_io.data_key", line=line, problem=error.text)


def _streaming_refusals(doc: Mapping[str, Any], key_lines: Mapping[str, int], val_size: float) -> None:
    """What LLaMA-Factory refuses in streaming mode, whatever the sample count."""
    if doc.get("max_samples") is not None:
        raise ConfigError("config_io.streaming_max_samples", line=key_lines.get("max_samples"))
    if 1e-6 < val_size < 1:
        raise ConfigError("config_io.streaming_val_size", line=key_lines.get("val_size"))
    max_steps = doc.get("max_steps")
    if max_steps is None or (isinstance(max_steps, int | float) and not isinstance(max_steps, bool) and max_steps <= 0):
        raise ConfigError("config_io.streaming_max_steps", line=key_lines.get("streaming"))


def _count(doc: Mapping[str, Any], key_lines: Mapping[str, int], dataset_rows: Mapping[str, int] | None,
           n_given: bool) -> tuple[Funnel | None, list[Message], bool]:
    """The dataset stage on the YAML's data keys and the known row counts: (funnel or None, notes, and
    whether token lengths matter, so `preprocessing_num_workers` shards the packing batches).

    LLaMA-Factory's own refusals (bad data values, `val_size` with `eval_dataset`, streaming rules) are
    raised even when N is given, because LLaMA-Factory would refuse the file either way.
    """
    if str(doc.get("stage") or "") == "ppo":
        raise ConfigError("config_io.ppo_refused", line=key_lines.get("stage"), release=LLAMAFACTORY_RELEASE,
                          ppo_trl=LLAMAFACTORY_PPO_TRL, trl=LLAMAFACTORY_TRL)
    try:
        settings = data_settings(doc)
    except InputError as error:
        if error.code == "dataset.stage_unmodelled":  # not a refusal: StepLab cannot count it, N must be given
            return None, [] if n_given else [error.text], False
        raise _with_line(error, key_lines) from None
    tokens = settings.needs_tokens
    if settings.val_size > 1e-6 and settings.eval_datasets:
        raise ConfigError("config_io.val_size_with_eval_dataset", line=key_lines.get("val_size"))
    if settings.streaming:
        _streaming_refusals(doc, key_lines, settings.val_size)
        notes = [msg("config_io.note.streaming")]
        if not doc.get("dataloader_num_workers"):  # `to_iterable_dataset(num_shards=0)` of a local file: no row
            notes.append(msg("config_io.note.streaming_workers", release=LLAMAFACTORY_RELEASE, zero=0, one=1))
        return None, notes, tokens
    if n_given:
        return None, [msg("config_io.note.packed_count_given")] if settings.packs else [], tokens
    if settings.tokenized_path:
        return None, [msg("config_io.note.tokenized_path")], tokens
    names = settings.names
    if not names:
        return None, [], tokens
    given = dict(dataset_rows or {})
    for name, rows in given.items():
        if isinstance(rows, bool) or not isinstance(rows, int) or rows < 0:
            raise ConfigError("config_io.bad_dataset_rows", name=name, low=0, rows=repr(rows))
    missing = [name for name in names if name not in given and name not in KNOWN_DATASET_ROWS]
    if missing:
        return None, [msg("config_io.note.unknown_rows", names=", ".join(missing))], tokens
    builtin = [name for name in names if name not in given]
    try:
        funnel = funnel_from_rows(doc, {name: given.get(name, KNOWN_DATASET_ROWS.get(name, 0)) for name in names})
    except InputError as error:
        if error.code in UNCOUNTABLE:
            return None, [error.text], tokens
        raise _with_line(error, key_lines) from None
    notes = list(funnel.assumptions)
    if builtin:
        sizes = ", ".join(f"{name} {KNOWN_DATASET_ROWS[name]}" for name in builtin)
        notes.append(msg("config_io.note.builtin_sizes", sizes=sizes, commit=LLAMAFACTORY_COMMIT))
    return funnel, notes, tokens


LLAMAFACTORY_NO_EVAL_SET = "Please make sure eval_dataset be provided or val_size >1e-6"
"""LLaMA-Factory 0.9.5's `get_train_args` (`hparams/parser.py`), before any data is read."""


def _evaluation_set(doc: Mapping[str, Any], key_lines: Mapping[str, int]) -> bool:
    """Whether LLaMA-Factory gives the Trainer an evaluation set (`eval_dataset`, or a `val_size` split above 1e-6);
    raise its own refusal when the run evaluates (`do_eval`, which any `eval_strategy` but `no` turns on,
    `do_predict`, `predict_with_generate`) without one."""
    val_size = doc.get("val_size") or 0
    has_set = doc.get("eval_dataset") is not None or (
        isinstance(val_size, int | float) and not isinstance(val_size, bool) and val_size >= 1e-6)
    strategy = str(doc.get("eval_strategy", doc.get("evaluation_strategy", "no")) or "no").strip().lower()
    evaluates = strategy != "no" or any(doc.get(key) is True for key in ("do_eval", "do_predict", "predict_with_generate"))
    if evaluates and not has_set:
        key = next((k for k in ("eval_strategy", "evaluation_strategy", "do_eval", "do_predict", "predict_with_generate")
                    if k in doc), "eval_strategy")
        raise ConfigError("config_io.no_evaluation_set", line=key_lines.get(key), error=LLAMAFACTORY_NO_EVAL_SET, example=0.1,
                          release=LLAMAFACTORY_RELEASE)
    return has_set


def read_config(text: str | bytes, *, dataset_rows: Mapping[str, int] | None = None,
                num_samples: int | None = None) -> ConfigImport:
    """Read a LLaMA-Factory or plain Hugging Face training YAML (untrusted text) into a `ConfigImport`.

    Sample count N, first that applies: the `num_samples` argument; a `num_samples` key in the YAML;
    StepLab's `# num_samples: ... (StepLab ...)` comment; the dataset stage on LLaMA-Factory's data keys,
    with row counts from `dataset_rows`, else `KNOWN_DATASET_ROWS` (packing or `stage: pt` give the upper
    end of a labelled estimate). Otherwise `needs_num_samples` is True and `values` has no `num_samples`.

    Raises `ConfigError` for anything it cannot read. Field values are not validated here:
    `setup_from_mapping(result.values)` does that and raises `SetupError` naming the field.
    """
    source = decode(text)
    raw, key_lines = load(source)
    header = _header_values(source)
    keys = [str(key) for key in raw]
    doc = {str(key): value for key, value in raw.items()}

    flavour = "llamafactory" if any(key in _LLAMAFACTORY_MARKERS for key in doc) else "hf"
    defaults = DEFAULTS.to_dict()
    values: dict[str, Any] = {name: defaults[name] for name in TRAINING_ARGUMENT_FIELDS}
    used: set[str] = {key for key in DATA_KEYS if key in doc}
    notes: list[Message] = []

    for name in TRAINING_ARGUMENT_FIELDS:
        if name in doc:
            values[name] = doc[name]
            used.add(name)
    for alias, name in ALIASES.items():
        if alias in doc:
            used.add(alias)
            if name not in doc:
                values[name] = doc[alias]

    # StepLab's own keys: a YAML key wins over StepLab's comment line.
    for name in ("world_size", "trainer", "limit_train_batches"):
        if name in doc:
            values[name] = doc[name]
            used.add(name)
        elif name in header:
            values[name] = header[name]
            used.add(f"# {name}")
    if "world_size" not in values and "ray_num_workers" in doc:
        values["world_size"] = doc["ray_num_workers"]
        used.add("ray_num_workers")
        notes.append(msg("config_io.note.ray_world_size", env="USE_RAY=1"))
    elif "world_size" not in values:
        notes.append(msg("config_io.note.no_world_size"))

    if "num_samples" in doc:
        used.add("num_samples")
    if num_samples is not None:
        sample_source, n_value = "argument", num_samples
    elif "num_samples" in doc:
        sample_source, n_value = "yaml", doc["num_samples"]
        if flavour == "llamafactory":
            notes.append(msg("config_io.note.num_samples_key"))
    elif "num_samples" in header:
        sample_source, n_value = "comment", header["num_samples"]
        used.add("# num_samples")
    else:
        sample_source, n_value = "missing", None

    if flavour == "llamafactory":
        values["has_eval_dataset"] = _evaluation_set(doc, key_lines)
    funnel, count_notes, tokens = _count(doc, key_lines, dataset_rows, n_given=n_value is not None)
    if tokens and "preprocessing_num_workers" in doc:
        used.add("preprocessing_num_workers")
    sample_lines = [stage.note for stage in funnel.stages] if funnel is not None else []
    if funnel is not None:
        sample_source, n_value = "datasets", funnel.train_examples
        sample_lines.append(msg("config_io.count.n_estimate" if funnel.estimate else "config_io.count.n",
                                n=funnel.train_examples))
    if doc.get("streaming") is True and flavour == "llamafactory":  # no length: max_steps × the batch (the plan)
        values["streaming"] = True
        if n_value is None:
            sample_source, n_value = "streaming", 0
    if n_value is not None:
        values["num_samples"] = n_value
        if sample_source != "datasets" and flavour == "llamafactory" and "dataset" in doc:
            notes.append(msg("config_io.note.count_given"))
    notes.extend(count_notes)
    notes.extend(_notes_for_keys(doc, source))

    ordered_used = [key for key in keys if key in used] + sorted(key for key in used if key.startswith("# "))
    return ConfigImport(
        values=values, used=ordered_used, ignored=[key for key in keys if key not in used],
        needs_num_samples=n_value is None, notes=notes, sample_lines=sample_lines, flavour=flavour,
        sample_source=sample_source, document=doc, funnel=funnel,
    )
