"""Every setup field, declared once: its kind, its range, its default and whether the Trainer knows it.

`FIELDS` are the setup the Trainer plans (sidebar, URL, YAML, CLI `--set`), with TRL's trainer class and the fields
of its configs that change the count as rows of the same table (`trainer_classes` names who reads them);
`DATA_FIELDS` are LLaMA-Factory's data settings the dataset stage reads from a YAML (`steplab.dataset.settings`),
checked by the same rules.

The validator (`steplab.trainer.setup`), the URL check and the controls of the sidebar and of the compare page
(`steplab_ui`), the YAML reader and writer (`steplab.io`) and the CLI's `--set` all read this table, so a value
one of them accepts, every other accepts too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from steplab.trainer.profiles import LLAMA_FACTORY_PROFILE, PROFILES
from steplab.trainer.schedules import SCHEDULER_NAMES

Kind = Literal["int", "float", "interval", "choice", "bool", "kwargs", "limit"]

STRATEGIES = ("no", "steps", "epoch")
SAVE_STRATEGIES = (*STRATEGIES, "best")  # "best": a checkpoint at an evaluation that improves the metric (4.47+)
MAX_SAMPLES = 10**12
MAX_STEPS_LIMIT = 10**9
MAX_COUNT = 10**6  # batch size, accumulation steps, devices, epochs
TRAINER_CLASSES = ("Trainer", "SFTTrainer", "DPOTrainer", "GRPOTrainer")
TRL_CLASSES = TRAINER_CLASSES[1:]
PACKING_STRATEGIES = ("bfd", "bfd_split", "wrapped")


@dataclass(frozen=True)
class Field:
    """One setup field.

    `kind`: "int" and "float" are plain numbers in [low, high]; "interval" is a number of steps in [low, high]
    that the Trainer reads as a ratio of the run when it is below 1 (`eval_steps=0.25`); "limit" is
    Lightning's `limit_train_batches` (a fraction up to 1, else a count); "choice" is one of `choices`.
    `default` is the Trainer's own (`TrainingArguments` of transformers 5.x), or StepLab's for its own fields.
    `optional`: None means "not set". `trainer_argument`: False for StepLab's own fields, which a YAML export
    writes as comments. `open`: a name outside `choices` is not StepLab's to reject: it goes to the engine,
    which refuses it in the Trainer's own words (`lr_scheduler_type: foo` → "foo is not a valid SchedulerType").
    The controls still offer `choices` only.
    `trainer_classes`: the TRL trainer classes whose config has the field and counts with it (`GRPOConfig`'s
    `num_generations`, …); empty for `TrainingArguments`' own fields and StepLab's, which every class reads. Such a
    field is neither a LLaMA-Factory YAML key nor a sidebar control: the URL, the CLI and its own page carry it,
    and its default is TRL's, so a setup that leaves it out is the plain Trainer's as before.
    """

    name: str
    kind: Kind
    default: Any
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    optional: bool = False
    trainer_argument: bool = True
    open: bool = False
    trainer_classes: tuple[str, ...] = ()

    @property
    def is_number(self) -> bool:
        return self.kind in ("int", "float", "interval", "limit")

    @property
    def whole(self) -> bool:
        """Only whole numbers are allowed (a control steps by 1 and shows no decimals)."""
        return self.kind == "int"


FIELDS: dict[str, Field] = {field.name: field for field in (
    Field("num_samples", "int", 1600, 0, MAX_SAMPLES, trainer_argument=False),
    Field("per_device_train_batch_size", "int", 8, 1, MAX_COUNT),
    Field("gradient_accumulation_steps", "int", 1, 1, MAX_COUNT),
    Field("world_size", "int", 1, 1, MAX_COUNT, trainer_argument=False),
    Field("num_train_epochs", "float", 3.0, 0, MAX_COUNT),
    Field("max_steps", "int", -1, -MAX_STEPS_LIMIT, MAX_STEPS_LIMIT),  # 0 or less: train by epochs
    Field("learning_rate", "float", 5e-5, 0, 1e6),
    Field("lr_scheduler_type", "choice", "linear", choices=SCHEDULER_NAMES, open=True),
    Field("lr_scheduler_kwargs", "kwargs", ()),
    Field("warmup_steps", "interval", 0, -MAX_STEPS_LIMIT, MAX_STEPS_LIMIT),  # below 0: the Trainer refuses it
    Field("warmup_ratio", "float", None, 0, MAX_COUNT, optional=True),
    Field("eval_strategy", "choice", "no", choices=STRATEGIES),
    Field("eval_steps", "interval", None, 0, MAX_STEPS_LIMIT, optional=True),
    Field("save_strategy", "choice", "steps", choices=SAVE_STRATEGIES),
    Field("save_steps", "interval", 500, 0, MAX_STEPS_LIMIT),
    Field("logging_strategy", "choice", "steps", choices=STRATEGIES),
    Field("logging_steps", "interval", 500, 0, MAX_STEPS_LIMIT),
    Field("logging_first_step", "bool", False),
    Field("eval_on_start", "bool", False),
    Field("eval_delay", "float", 0.0, -MAX_STEPS_LIMIT, MAX_STEPS_LIMIT),  # steps, or epochs by "epoch"
    Field("load_best_model_at_end", "bool", False),
    Field("metric_for_best_model", "choice", None, choices=("loss", "eval_loss"), optional=True, open=True),
    Field("has_eval_dataset", "bool", True, trainer_argument=False),  # the Trainer is given an evaluation set
    Field("streaming", "bool", False, trainer_argument=False),  # a dataset with no length (LLaMA-Factory's stream)
    Field("per_device_eval_batch_size", "int", 8, 1, MAX_COUNT),  # counts nothing the Trainer trains; GRPO checks it
    Field("auto_find_batch_size", "bool", False),  # halves the batch on out-of-memory only; GRPO refuses it
    Field("dataloader_drop_last", "bool", False),
    Field("limit_train_batches", "limit", None, 0, MAX_SAMPLES, optional=True, trainer_argument=False),
    Field("trainer", "choice", LLAMA_FACTORY_PROFILE, choices=tuple(PROFILES), trainer_argument=False),
    # TRL 1.16.0: which trainer runs the setup (what picks a TRL config), then its configs' fields that count
    Field("trainer_class", "choice", "Trainer", choices=TRAINER_CLASSES, trainer_argument=False,
          trainer_classes=TRL_CLASSES),
    Field("num_generations", "int", 8, 0, MAX_COUNT,  # below 2: GRPOConfig refuses it in its own words
          trainer_classes=("GRPOTrainer",)),
    Field("steps_per_generation", "int", None, 1, MAX_COUNT, optional=True, trainer_classes=("GRPOTrainer",)),
    Field("generation_batch_size", "int", None, 1, MAX_SAMPLES, optional=True, trainer_classes=("GRPOTrainer",)),
    Field("num_iterations", "int", 1, 1, MAX_COUNT, trainer_classes=("GRPOTrainer",)),
    Field("num_generations_eval", "int", None, 1, MAX_COUNT, optional=True, trainer_classes=("GRPOTrainer",)),
    Field("padding_free", "bool", False, trainer_classes=("SFTTrainer",)),
    Field("packing", "bool", False, trainer_classes=("SFTTrainer",)),
    Field("packing_strategy", "choice", "bfd", choices=PACKING_STRATEGIES, trainer_classes=("SFTTrainer",)),
    Field("max_length", "int", 1024, 1, 10**9, trainer_classes=("SFTTrainer",)),
)}

FIELD_NAMES: tuple[str, ...] = tuple(FIELDS)
TRL_FIELD_NAMES: tuple[str, ...] = tuple(name for name, f in FIELDS.items() if f.trainer_classes)
"""The trainer class and TRL's count fields: what the Trainer alone never reads."""
TRAINING_ARGUMENT_FIELDS: tuple[str, ...] = tuple(name for name, f in FIELDS.items()
                                                  if f.trainer_argument and not f.trainer_classes)
STEPLAB_ONLY: tuple[str, ...] = tuple(name for name, f in FIELDS.items()
                                      if not f.trainer_argument and not f.trainer_classes)
PROFILE_IDS: tuple[str, ...] = FIELDS["trainer"].choices


DATA_FIELDS: dict[str, Field] = {field.name: field for field in (
    Field("cutoff_len", "int", 2048, 1, 10**9),
    Field("max_samples", "int", None, 1, 10**12, optional=True),
    Field("val_size", "float", 0.0, 0, 10**12),
    Field("packing", "bool", None, optional=True),
    Field("neat_packing", "bool", False),
    Field("preprocessing_batch_size", "int", 1000, 1, 10**9),
    Field("preprocessing_num_workers", "int", None, 1, 1024, optional=True),
    Field("streaming", "bool", False),
    Field("mask_history", "bool", False),
    Field("seed", "int", 42, 0, 2**32 - 1),
    Field("eval_on_each_dataset", "bool", False),
    Field("enable_thinking", "bool", True, optional=True),
    Field("preserve_thinking", "bool", False),
    Field("train_on_prompt", "bool", False),
)}
"""LLaMA-Factory's own data fields: kind, range and default (`hparams/data_args.py`, 0.9.5)."""
