"""LlamaBoard's Train tab (llamafactory 0.9.5) as data, and what its "Preview command" button would show.

The fields, their labels (zh, en), defaults and slider ranges are facts read from the wheel's web UI code and
kept in `llamaboard.yaml` beside this module, each with its source line. This module is the small engine over
them, pure (no Streamlit): the form's values → the training arguments `webui/runner.py` `_parse_train_args`
builds → the command `webui/common.py` `gen_cmd` previews and the YAML `save_cmd` writes for
`llamafactory-cli train` (`webui/runner.py:378`) → a StepLab `TrainingSetup` by the usual YAML road
(`steplab.io.config_read.read_config`), so the steps that run would take can be shown.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from steplab.errors import InputError, SetupError
from steplab.i18n import Message, whole
from steplab.io.config_read import ConfigImport, read_config
from steplab.trainer.setup import TrainingSetup, setup_from_mapping

DATA_FILE = Path(__file__).with_name("llamaboard.yaml")
DEFAULT_CACHE_DIR = "llamaboard_cache"  # webui/common.py:39
DEFAULT_SAVE_DIR = "saves"  # webui/common.py:42
NO_SKIP_KEYS = ("packing", "enable_thinking", "use_reentrant_gc", "double_quantization", "freeze_vision_tower",
                "freeze_multi_modal_projector")
"""Keys `_clean_cmd` keeps even when False (webui/common.py:171-178)."""
TEXT_NUMBERS = {"learning_rate": float, "num_train_epochs": float, "max_grad_norm": float, "max_samples": int}
"""The Textboxes `_parse_train_args` turns into numbers, and how (webui/runner.py:147-149, 153)."""


class LlamaBoardError(InputError):
    """A form LlamaBoard would not preview (its own alert, `llamaboard.err_*`) or a value it cannot read."""


@dataclass(frozen=True)
class BoardField:
    """One widget of the Train tab: kind, LlamaBoard's default, range, words, and where they come from."""

    name: str
    widget: str
    default: Any
    start: Any  # where StepLab's form starts: LlamaBoard's default, or `steplab_default` (with `why`)
    label: dict[str, str]
    info: dict[str, str]
    row: str
    accordion: str | None
    arg: str | None
    source: str
    minimum: float | None = None
    maximum: float | None = None
    step: float | None = None
    choices: tuple[str, ...] = ()
    scale: int = 1  # Gradio's relative width in its row
    why: str | None = None
    facts: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def label_in(self, lang: str) -> str:
        return self.label.get(lang) or self.label.get("en") or self.name

    def info_in(self, lang: str) -> str:
        return self.info.get(lang) or self.info.get("en") or ""


@dataclass(frozen=True)
class Board:
    """The whole tab: fields by name, their rows in screen order, the accordions and the preview button."""

    release: str
    fields: dict[str, BoardField]
    rows: tuple[tuple[str | None, tuple[str, ...]], ...]  # (accordion or None, field names), top to bottom
    accordions: dict[str, dict[str, Any]]
    preview_button: dict[str, Any]


@lru_cache(maxsize=1)
def board() -> Board:
    """The Train tab as the data file describes it (read once)."""
    data = yaml.safe_load(DATA_FILE.read_text(encoding="utf-8"))
    fields: dict[str, BoardField] = {}
    rows: dict[str, list[str]] = {}
    accordion_of_row: dict[str, str | None] = {}
    for name, facts in data["fields"].items():
        start = facts.get("steplab_default", facts.get("default"))
        fields[name] = BoardField(
            name=name, widget=facts["widget"], default=facts.get("default"), start=start,
            label=dict(facts.get("label") or {}), info=dict(facts.get("info") or {}), row=facts["row"],
            accordion=facts.get("accordion"), arg=facts.get("arg"), source=facts["source"],
            minimum=facts.get("minimum"), maximum=facts.get("maximum"), step=facts.get("step"),
            choices=tuple(facts.get("choices") or ()), scale=int(facts.get("scale", 1)), why=facts.get("steplab_default_why"), facts=facts,
        )
        rows.setdefault(facts["row"], []).append(name)
        accordion_of_row[facts["row"]] = facts.get("accordion")
    return Board(
        release=str(data["release"]), fields=fields,
        rows=tuple((accordion_of_row[row], tuple(rows[row])) for row in sorted(rows, key=_screen_order)),
        accordions=data["accordions"], preview_button=data["preview_button"],
    )


def _screen_order(row: str) -> tuple[int, int]:
    """`webui/components/top.py:34` before `train.py:41`, then by line: the order LlamaBoard draws its rows."""
    path, line = row.rsplit(":", 1)
    return (0 if path.endswith("top.py") else 1, int(line))


def default_form() -> dict[str, Any]:
    """The form as StepLab opens it: LlamaBoard's defaults, and the course model, LLaMA-Factory's example
    datasets, an example output folder and one device where LlamaBoard starts empty (`BoardField.why`)."""
    return {name: (list(f.start) if isinstance(f.start, list) else f.start) for name, f in board().fields.items()}


def stage_of(form: Mapping[str, Any]) -> str:
    """The training stage's short name (`sft`, `pt`, ...), as `TRAINING_STAGES` maps the dropdown's label."""
    stages = board().fields["training_stage"].facts["stages"]
    label = form.get("training_stage")
    if label not in stages:
        raise LlamaBoardError("llamaboard.bad_choice", field="training_stage", value=str(label),
                              choices=", ".join(stages))
    return stages[label]


def _sent(name: str, value: Any) -> Any:
    """A slider's value as the browser sends it: a JSON number, so a whole number arrives as an int."""
    f = board().fields[name]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise LlamaBoardError("llamaboard.not_a_number", field=name, value=str(value))
    if f.minimum is not None and not f.minimum <= value <= f.maximum:
        raise LlamaBoardError("llamaboard.out_of_range", field=name, value=value, low=f.minimum, high=f.maximum)
    return whole(float(value))


def _number_text(name: str, value: Any) -> int | float:
    """A Textbox LlamaBoard reads with `float()` or `int()` (webui/runner.py:147-153)."""
    convert = TEXT_NUMBERS[name]
    try:
        return convert(str(value).strip())
    except ValueError:
        code = "llamaboard.not_whole" if convert is int else "llamaboard.not_a_number"
        raise LlamaBoardError(code, field=name, value=str(value)[:40]) from None


def _save_dir(*paths: str) -> str:
    """`get_save_dir` (webui/common.py:59-66) on a POSIX machine."""
    if "/" in paths[-1]:
        return paths[-1]
    return posixpath.join(DEFAULT_SAVE_DIR, *(path.replace(" ", "").strip() for path in paths))


def _check(form: Mapping[str, Any], stage: str) -> dict[str, Any]:
    """LlamaBoard's own checks before a preview, in its order (`_initialize`, webui/runner.py:83-106)."""
    if not form.get("model_name"):
        raise LlamaBoardError("llamaboard.err_no_model", field="model_name")
    if not form.get("model_path"):
        raise LlamaBoardError("llamaboard.err_no_path", field="model_path")
    if not form.get("dataset"):
        raise LlamaBoardError("llamaboard.err_no_dataset", field="dataset")
    if not form.get("output_dir"):
        raise LlamaBoardError("llamaboard.err_no_output_dir", field="output_dir")
    try:
        extra = json.loads(form.get("extra_args") or "")
    except json.JSONDecodeError:
        raise LlamaBoardError("llamaboard.err_json_schema", field="extra_args") from None
    if stage == "ppo":  # StepLab offers no reward model to pick
        raise LlamaBoardError("llamaboard.err_no_reward_model", field="training_stage")
    if not isinstance(extra, dict):  # LlamaBoard would fail on args.update (webui/runner.py:179)
        raise LlamaBoardError("llamaboard.extra_args_not_object", field="extra_args")
    return extra


def train_args(form: Mapping[str, Any]) -> dict[str, Any]:
    """The training arguments `_parse_train_args` (webui/runner.py:126-290) builds from this form, in its order.

    The top bar's other controls are at their defaults (no checkpoint, no quantization, rope scaling none,
    booster auto: webui/components/top.py:44-51), there is no user config (`cache_dir` None), and the model
    is treated as text-only (no multimodal keys). Raises `LlamaBoardError` for what LlamaBoard would refuse.
    """
    merged = {**default_form(), **form}
    if isinstance(merged.get("dataset"), str):  # one name typed instead of the multiselect's list
        merged["dataset"] = [merged["dataset"]]
    get = merged.get
    stage = stage_of(merged)
    extra = _check(merged, stage)
    finetuning_type = str(get("finetuning_type"))
    sent = {name: _sent(name, get(name)) for name, f in board().fields.items() if f.widget == "slider"}
    numbers = {name: _number_text(name, get(name)) for name in TEXT_NUMBERS}
    compute = get("compute_type")
    args: dict[str, Any] = dict(
        stage=stage,
        do_train=True,
        model_name_or_path=get("model_path"),
        cache_dir=None,
        preprocessing_num_workers=16,
        finetuning_type=finetuning_type,
        template=get("template"),
        rope_scaling=None,
        flash_attn="auto",
        use_unsloth=False,
        enable_liger_kernel=False,
        dataset_dir=get("dataset_dir"),
        dataset=",".join(get("dataset")),
        cutoff_len=sent["cutoff_len"],
        learning_rate=numbers["learning_rate"],
        num_train_epochs=numbers["num_train_epochs"],
        max_samples=numbers["max_samples"],
        per_device_train_batch_size=sent["batch_size"],
        gradient_accumulation_steps=sent["gradient_accumulation_steps"],
        lr_scheduler_type=get("lr_scheduler_type"),
        max_grad_norm=numbers["max_grad_norm"],
        logging_steps=sent["logging_steps"],
        save_steps=sent["save_steps"],
        warmup_steps=sent["warmup_steps"],
        neftune_noise_alpha=sent["neftune_alpha"] or None,
        packing=bool(get("packing")) or bool(get("neat_packing")),
        neat_packing=bool(get("neat_packing")),
        train_on_prompt=bool(get("train_on_prompt")),
        mask_history=bool(get("mask_history")),
        resize_vocab=bool(get("resize_vocab")),
        use_llama_pro=bool(get("use_llama_pro")),
        enable_thinking=bool(get("enable_thinking")),
        report_to=get("report_to"),
        use_galore=False,
        use_apollo=False,
        use_badam=False,
        use_swanlab=False,
        output_dir=_save_dir(str(get("model_name")), finetuning_type, str(get("output_dir"))),
        fp16=compute == "fp16",
        bf16=compute == "bf16",
        pure_bf16=compute == "pure_bf16",
        plot_loss=True,
        trust_remote_code=True,
        ddp_timeout=180000000,
        include_num_input_tokens_seen=True,
    )
    args.update(extra)
    if args["finetuning_type"] == "freeze":
        args["freeze_trainable_layers"] = sent["freeze_trainable_layers"]
        args["freeze_trainable_modules"] = get("freeze_trainable_modules")
        args["freeze_extra_modules"] = get("freeze_extra_modules") or None
    if args["finetuning_type"] == "lora":
        args["lora_rank"] = sent["lora_rank"]
        args["lora_alpha"] = sent["lora_alpha"]
        args["lora_dropout"] = sent["lora_dropout"]
        args["loraplus_lr_ratio"] = sent["loraplus_lr_ratio"] or None
        args["create_new_adapter"] = bool(get("create_new_adapter"))
        args["use_rslora"] = bool(get("use_rslora"))
        args["use_dora"] = bool(get("use_dora"))
        args["pissa_init"] = bool(get("use_pissa"))
        args["pissa_convert"] = bool(get("use_pissa"))
        args["lora_target"] = get("lora_target") or "all"
        args["additional_target"] = get("additional_target") or None
        if args["use_llama_pro"]:
            args["freeze_trainable_layers"] = sent["freeze_trainable_layers"]
    if args["stage"] in ("dpo", "kto"):
        args["pref_beta"] = sent["pref_beta"]
        args["pref_ftx"] = sent["pref_ftx"]
        args["pref_loss"] = get("pref_loss")
    if sent["val_size"] > 1e-6 and args["stage"] != "ppo":
        args["val_size"] = sent["val_size"]
        args["eval_strategy"] = "steps"
        args["eval_steps"] = args["save_steps"]
        args["per_device_eval_batch_size"] = args["per_device_train_batch_size"]
    if get("ds_stage") != "none":
        offload = "offload_" if get("ds_offload") else ""
        args["deepspeed"] = posixpath.join(DEFAULT_CACHE_DIR, f"ds_z{get('ds_stage')}_{offload}config.json")
    return args


def clean_args(args: Mapping[str, Any]) -> dict[str, Any]:
    """`_clean_cmd` (webui/common.py:169-179): None, False and "" left out, except the keys it always keeps."""
    return {k: v for k, v in args.items() if (k in NO_SKIP_KEYS) or (v is not None and v is not False and v != "")}


def preview_command(args: Mapping[str, Any]) -> str:
    """The command LlamaBoard's "Preview command" shows (`gen_cmd`, webui/common.py:182-199, POSIX), without
    the Markdown fence it wraps it in."""
    lines = ["llamafactory-cli train "]
    for k, v in clean_args(args).items():
        if isinstance(v, dict):
            lines.append(f"    --{k} {json.dumps(v, ensure_ascii=False)} ")
        elif isinstance(v, list):
            lines.append(f"    --{k} {' '.join(map(str, v))} ")
        else:
            lines.append(f"    --{k} {v!s} ")
    return "\\\n".join(lines)


def training_yaml(args: Mapping[str, Any]) -> str:
    """The `training_args.yaml` LlamaBoard writes into the output folder and runs with
    `llamafactory-cli train` when Start is pressed (`save_cmd`, webui/common.py:202-209: `safe_dump`, keys sorted)."""
    return yaml.safe_dump(clean_args(args))


@dataclass(frozen=True)
class BoardRun:
    """What the form gives: LlamaBoard's args, its preview command and YAML, StepLab's reading of that YAML, and
    the setup (None when the sample count cannot be known; `problem` then or when StepLab cannot plan it)."""

    args: dict[str, Any]
    command: str
    yaml_text: str
    imported: ConfigImport
    setup: TrainingSetup | None
    problem: InputError | None = None

    @property
    def notes(self) -> list[Message]:
        """The import's notes, less "the YAML does not say how many GPUs": the form's device count says it."""
        return [note for note in self.imported.notes
                if not (isinstance(note, Message) and note.key == "config_io.note.no_world_size")]


def board_run(form: Mapping[str, Any], dataset_rows: Mapping[str, int] | None = None,
              num_samples: int | None = None) -> BoardRun:
    """The form → LlamaBoard's args → its YAML → `read_config` (row counts: `dataset_rows`, else the
    catalogue's demo sizes; `num_samples` instead when given) → a `TrainingSetup` with `world_size` = the
    device count.

    Raises `LlamaBoardError` for a form LlamaBoard would refuse and `ConfigError` for a YAML StepLab cannot read;
    a setup StepLab cannot plan is returned as `problem` (so the command and YAML are still shown).
    """
    args = train_args(form)
    text = training_yaml(args)
    imported = read_config(text, dataset_rows=dict(dataset_rows or {}), num_samples=num_samples)
    devices = form.get("device_count", default_form()["device_count"])
    values = {**imported.values, "world_size": devices}
    setup: TrainingSetup | None = None
    problem: InputError | None = None
    if not imported.needs_num_samples:
        try:
            setup = setup_from_mapping(values)[0]
        except SetupError as error:
            problem = error
    return BoardRun(args, preview_command(args), text, imported, setup, problem)
