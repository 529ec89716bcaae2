"""The LLaMA-Factory settings the dataset stage reads from a YAML (`DataArguments` and a few others), checked once."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from steplab.dataset.catalog import dataset_names
from steplab.dataset.templates import TemplateOptions
from steplab.errors import SetupError
from steplab.trainer.fields import DATA_FIELDS

STAGES = {"sft": "supervised", "pt": "pretrain", "rm": "pairwise", "dpo": "pairwise"}
"""Training stages the dataset stage models, and the LLaMA-Factory processor each one runs."""
UNMODELLED_STAGES = ("ppo", "kto")

TEXT_FIELDS = ("stage", "dataset", "eval_dataset", "dataset_dir", "template", "model_name_or_path",
               "mix_strategy", "tokenized_path", "default_system", "tool_format")
MIX_STRATEGIES = {"concat": None, "interleave_under": "first_exhausted", "interleave_over": "all_exhausted",
                  "interleave_once": "all_exhausted_without_replacement"}
"""LLaMA-Factory's `mix_strategy` values and the `datasets.interleave_datasets` stopping strategy of each."""


@dataclass(frozen=True)
class DataSettings:
    """What decides the training example count, as LLaMA-Factory reads it from the YAML."""

    stage: str = "sft"
    datasets: tuple[str, ...] = ()
    eval_datasets: tuple[str, ...] = ()
    dataset_dir: str = "data"
    template: str | None = None
    model_name_or_path: str | None = None
    cutoff_len: int = DATA_FIELDS["cutoff_len"].default
    max_samples: int | None = DATA_FIELDS["max_samples"].default
    val_size: float = DATA_FIELDS["val_size"].default
    packing: bool | None = DATA_FIELDS["packing"].default
    neat_packing: bool = DATA_FIELDS["neat_packing"].default
    preprocessing_batch_size: int = DATA_FIELDS["preprocessing_batch_size"].default
    preprocessing_num_workers: int | None = DATA_FIELDS["preprocessing_num_workers"].default
    mix_strategy: str = "concat"
    streaming: bool = DATA_FIELDS["streaming"].default
    mask_history: bool = DATA_FIELDS["mask_history"].default
    tokenized_path: str | None = None
    seed: int = DATA_FIELDS["seed"].default
    interleave_probs: tuple[float, ...] | None = None
    eval_on_each_dataset: bool = DATA_FIELDS["eval_on_each_dataset"].default
    enable_thinking: bool | None = DATA_FIELDS["enable_thinking"].default
    preserve_thinking: bool = DATA_FIELDS["preserve_thinking"].default
    train_on_prompt: bool = DATA_FIELDS["train_on_prompt"].default
    default_system: str | None = None
    tool_format: str | None = None

    @property
    def template_options(self) -> TemplateOptions:
        """The keys that change how the chat template writes a row, as LLaMA-Factory reads them."""
        return TemplateOptions(enable_thinking=self.enable_thinking, preserve_thinking=self.preserve_thinking,
                               default_system=self.default_system, tool_format=self.tool_format,
                               mask_history=self.mask_history)

    @property
    def names(self) -> tuple[str, ...]:
        """Every dataset the YAML names, training ones first, each once."""
        return tuple(dict.fromkeys(self.datasets + self.eval_datasets))

    @property
    def processor(self) -> str:
        """The processor LLaMA-Factory runs: "supervised", "packed", "pretrain" or "pairwise"."""
        kind = STAGES[self.stage]
        return "packed" if kind == "supervised" and self.packs else kind

    @property
    def packs(self) -> bool:
        """Packing as LLaMA-Factory ends up with it: `neat_packing` turns it on; `stage: pt` defaults it on."""
        return bool(self.neat_packing or self.packing or (self.packing is None and self.stage == "pt"))

    @property
    def sequence_cap(self) -> int:
        """The token cap rows are cut to: `cutoff_len`, one less when the YAML turns packing on itself."""
        return self.cutoff_len - 1 if (self.packing or self.neat_packing) else self.cutoff_len

    @property
    def needs_tokens(self) -> bool:
        """Packing and pt blocks count tokens; `stage: pt` with `packing: false` keeps one example per row."""
        return self.processor == "packed" or (self.processor == "pretrain" and self.packs)


def data_settings(values: Mapping[str, Any]) -> DataSettings:
    """The dataset settings of a YAML mapping; a bad value raises `SetupError` naming the field."""
    from steplab.trainer.setup import check_field  # lazily: setup imports the schedules and profiles

    checked: dict[str, Any] = {}
    for name, field in DATA_FIELDS.items():
        if name in values and (values[name] is not None or field.optional):  # `enable_thinking: null` is a value
            checked[name] = check_field(field, values[name])
    raw_val = values.get("val_size")
    if "val_size" in checked and isinstance(raw_val, int) and not isinstance(raw_val, bool):
        checked["val_size"] = int(raw_val)  # a YAML integer stays one: `val_size: 1` holds out one row
    stage = str(values.get("stage") or "sft").strip().lower()
    if stage not in STAGES:
        raise SetupError("dataset.stage_unmodelled", field="stage", stage=stage, modelled=", ".join(STAGES))
    text = {name: str(values[name]).strip() for name in TEXT_FIELDS if values.get(name) not in (None, "")}
    if values.get("default_system") is not None:
        text["default_system"] = str(values["default_system"])  # kept as written ("" too): its spaces are tokens
    mix = text.get("mix_strategy", "concat")
    if mix not in MIX_STRATEGIES:
        raise SetupError("dataset.mix_unknown", field="mix_strategy", mix_strategy=mix,
                         known=", ".join(MIX_STRATEGIES))
    probs = _interleave_probs(values.get("interleave_probs"), mix)
    return DataSettings(
        stage=stage, datasets=tuple(dataset_names(values.get("dataset"))),
        eval_datasets=tuple(dataset_names(values.get("eval_dataset"))),
        dataset_dir=text.get("dataset_dir", "data"), template=text.get("template"),
        model_name_or_path=text.get("model_name_or_path"), mix_strategy=text.get("mix_strategy", "concat"),
        tokenized_path=text.get("tokenized_path"), interleave_probs=probs,
        default_system=text.get("default_system"), tool_format=text.get("tool_format"), **checked,
    )


def _interleave_probs(value: Any, mix: str) -> tuple[float, ...] | None:
    """`interleave_probs` as LLaMA-Factory reads it: comma-separated numbers, only with an interleaving strategy."""
    if value is None:
        return None
    if mix == "concat":
        raise SetupError("dataset.probs_with_concat", field="interleave_probs")
    items = value if isinstance(value, list) else str(value).split(",")
    try:
        probs = tuple(float(str(item).strip()) for item in items)
    except ValueError:
        raise SetupError("dataset.probs_bad", field="interleave_probs", value=str(value)[:80]) from None
    if any(p < 0 or p != p for p in probs) or not probs:
        raise SetupError("dataset.probs_bad", field="interleave_probs", value=str(value)[:80])
    return probs
