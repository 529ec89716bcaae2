"""`python -m steplab plan [CONFIG.yaml] [--set KEY=VALUE ...] [--dataset-rows NAME=ROWS ...] [--trainer PROFILE]
[--lr-per-step]`.

`--set trainer_class=GRPOTrainer` (or `DPOTrainer`, `SFTTrainer`) and TRL's fields (`num_generations`,
`steps_per_generation`, `generation_batch_size`, `num_iterations`: rows of `steplab.trainer.fields.FIELDS`) plan the
run as TRL does (`steplab.trl`): the JSON keeps every field and, for GRPO, counts completions and adds the rounds.

Prints one JSON object. Exit 0 on success, 2 for invalid input (one line on stderr naming the field, or the
dataset and its path; a `--set` key no family of the run has, with the key meant), 3 when the real Trainer would
refuse the configuration (`trainer_error` in the JSON); with `--strict`, 4 when the plan was printed but a key given
is not modelled (`not_modelled`: `{key, may_change, message}`, `steplab.io.census`) or unknown (`unknown_keys`).
A LLaMA-Factory YAML without `num_samples` is counted from its datasets, found from the current folder as
`llamafactory-cli` finds them (`dataset_dir`, `dataset_info.json`, the model's `tokenizer.json`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

import orjson

from steplab import explain_cli
from steplab.errors import SetupError, TrainerRefusal
from steplab.i18n import t
from steplab.teaching.warnings import plan_warnings
from steplab.trainer.events import events
from steplab.trainer.plan import Plan, make_plan
from steplab.trainer.profiles import LLAMA_FACTORY_PROFILE, PROFILES, span
from steplab.trainer.record import plan_record
from steplab.trainer.setup import TrainingSetup, setup_from_mapping
from steplab.trl.grpo import GrpoPlan
from steplab.trl.plan import grpo_record, plan_trl, trl_record
from steplab.trl.settings import names_trl, with_config_defaults

MAX_LISTED_RATES = 10_000_000
STRICT_EXIT = 4
"""`--strict`: the plan was printed, but a key given is one StepLab does not model or know."""


def plan_to_json(plan: Plan, lr_per_step: bool = False, unknown: list[str] | None = None) -> dict[str, Any]:
    """The plan as the CLI's stable JSON object (learning rates as a numpy array; `encode` writes it)."""
    result: dict[str, Any] = {
        "trainer": plan.profile.id,
        **plan_record(plan),
        "save_depends_on_metric": events(plan, "save").depends_on_metric,
        "world_size": plan.setup.world_size,
        **plan.draws_per_epoch(),
        "warnings": [{"code": w.code, "message": w.message("en")} for w in plan_warnings(plan)],
        "unknown_keys": unknown or [],
    }
    if lr_per_step:
        if plan.optimizer_steps > MAX_LISTED_RATES:
            raise SetupError("setup.too_many_rates", field="--lr-per-step", steps=plan.optimizer_steps,
                             limit=MAX_LISTED_RATES)
        result["learning_rates"] = plan.learning_rates()  # a float64 array: orjson writes it without a list
    return result


def grpo_to_json(plan: GrpoPlan, lr_per_step: bool = False, unknown: list[str] | None = None) -> dict[str, Any]:
    """A GRPO plan as the CLI's JSON: the plan's fields (over completions and rounds) and GRPO's own."""
    rounds = plan.rounds_per_epoch * plan.unique_prompts_per_round
    result: dict[str, Any] = {
        "trainer": plan.trainer.profile.id,
        **grpo_record(plan),
        "save_depends_on_metric": events(plan.trainer, "save").depends_on_metric,
        "world_size": plan.setup.world_size,
        "draws_per_epoch": rounds, "repeated_draws_per_epoch": 0, "never_drawn_per_epoch": plan.prompts_dropped_per_epoch,
        "warnings": [],
        "unknown_keys": unknown or [],
    }
    if lr_per_step:
        if plan.trainer.optimizer_steps > MAX_LISTED_RATES:
            raise SetupError("setup.too_many_rates", field="--lr-per-step", steps=plan.trainer.optimizer_steps,
                             limit=MAX_LISTED_RATES)
        result["learning_rates"] = plan.trainer.learning_rates()
    return result


def _plan_json(setup: TrainingSetup, trl: bool, lr_per_step: bool, unknown: list[str]) -> tuple[dict[str, Any], int]:
    """The JSON of a setup's plan (under its TRL trainer class when `trl`: TRL's fields were given) and its
    `max_steps`."""
    if not trl:
        plan = make_plan(setup)
        return plan_to_json(plan, lr_per_step, unknown), plan.max_steps
    planned = plan_trl(setup)
    if isinstance(planned, GrpoPlan):
        return grpo_to_json(planned, lr_per_step, unknown), planned.trainer.max_steps
    return {**plan_to_json(planned, lr_per_step, unknown), **trl_record(planned)}, planned.max_steps


def _parse_value(text: str) -> Any:
    """A --set value: JSON when it parses (numbers, true/false, {...}), else the plain string."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: `[[[[...` nested deeper than the parser goes
        return text


def _pairs(items: list[str] | None, option: str) -> list[tuple[str, str]]:
    """KEY=VALUE arguments of a repeatable option, split once."""
    pairs = []
    for item in items or []:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise SetupError("setup.set_syntax", field=option, value=repr(item))
        pairs.append((key.strip(), raw))
    return pairs


def _dataset_rows(items: list[str] | None) -> dict[str, int]:
    rows = {}
    for name, raw in _pairs(items, "--dataset-rows"):
        value = _parse_value(raw)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise SetupError("setup.not_int", field=f"--dataset-rows {name}", value=repr(raw))
        rows[name] = value
    return rows


DATA_KEYS_BYPASSED = ("dataset", "eval_dataset", "max_samples", "val_size", "packing", "neat_packing", "cutoff_len")


def _count_from_datasets(document: dict[str, Any], rows: dict[str, int], values: dict[str, Any]) -> dict[str, Any]:
    """The dataset stage for a YAML without `num_samples`: its files (or `--dataset-rows`) give N."""
    from steplab.dataset.errors import DatasetError
    from steplab.dataset.load import funnel_from_files, funnel_from_rows, known_rows

    if rows:
        funnel = funnel_from_rows(document, rows)
    else:
        try:
            funnel = funnel_from_files(document, Path.cwd())
        except DatasetError as error:
            from steplab.dataset.settings import data_settings

            builtin = known_rows(document)  # LLaMA-Factory's own demo datasets need no files
            if error.code != "dataset.no_info" or not builtin or set(builtin) != set(data_settings(document).names):
                raise
            funnel = funnel_from_rows(document, builtin)
    values["num_samples"] = funnel.train_examples
    count = {"num_samples_source": "dataset", "num_eval_samples": funnel.eval_examples,
             "dataset_stages": funnel.record(), "dataset_assumptions": [m.en for m in funnel.assumptions]}
    if funnel.estimate is not None:  # no tokenizer: the count is the upper end of a range
        count.update(num_samples_source="estimate", num_samples_range=list(funnel.estimate.train))
    return count


def _read_values(args: argparse.Namespace) -> tuple[dict[str, Any], list[str], dict[str, Any], Any]:
    """The setup values, the YAML keys that do not count, what the JSON says about the sample count, and the YAML's
    import (`config_read.ConfigImport`, or None)."""
    values: dict[str, Any] = {}
    ignored: list[str] = []
    document: dict[str, Any] = {}
    imported = None
    if args.config:
        from steplab.io.config_read import read_config

        imported = read_config(Path(args.config).read_bytes())
        values.update(imported.values)
        ignored = list(imported.ignored)
        document = imported.document
    settings = _pairs(args.set, "--set")
    for key, raw in settings:
        values[key] = _parse_value(raw)
    if args.trainer:
        values["trainer"] = args.trainer
    rows = _dataset_rows(args.dataset_rows)
    names_data = bool(document.get("dataset"))
    count: dict[str, Any] = {"num_samples_source": "given"}
    given = any(key == "num_samples" for key, _ in settings) or "num_samples" in document
    if names_data and not given and values.get("streaming"):  # no length: the plan counts max_steps × the batch
        count = {"num_samples_source": "streaming"}
    elif names_data and not given:
        count = _count_from_datasets(document, rows, values)
    elif given and (names_data or rows):
        count["bypassed_keys"] = [key for key in DATA_KEYS_BYPASSED if key in document] + (["--dataset-rows"]
                                                                                            if rows else [])
    count["world_size_source"] = "given" if "world_size" in values else "assumed"
    if document.get("deepspeed"):  # the JSON beside the YAML, found from the current folder as the Trainer finds it
        count["deepspeed"] = str(document["deepspeed"])
        count["arguments"] = {k: document[k] for k in ("max_grad_norm", "adam_beta1", "adam_beta2", "adam_epsilon",
                                                        "weight_decay", "fp16", "fp16_full_eval", "bf16",
                                                        "bf16_full_eval", "auto_find_batch_size") if k in document}
    resume = document.get("resume_from_checkpoint")
    if resume not in (None, False, ""):
        from steplab.io.checkpoint import read_checkpoint

        count["resume"] = read_checkpoint(resume, Path.cwd())
    if document:
        from steplab.io.config_read import packing_crash

        crash = packing_crash(document)
        if crash is not None:
            count["packing_crash"] = crash.en  # a warning in the JSON, taken out of the count's keys
    return values, ignored, count, imported


def _census(args: argparse.Namespace, values: dict[str, Any], imported: Any) -> dict[str, Any]:
    """What the census says of the keys given (`steplab.io.census`): a `--set` key no family of the run has is
    refused with the key meant (`SetupError`, exit 2); the YAML's and `--set`'s keys StepLab does not model are named
    with what they may change (`not_modelled`), the YAML's unknown keys get the key meant (warnings `unknown_key`),
    and the notes of the YAML's import (`notes`) join the JSON."""
    from steplab.io import census

    trainer_class = str(values.get("trainer_class") or "Trainer")
    llamafactory = imported is not None and imported.flavour == "llamafactory"
    families = census.families_for(trainer_class, llamafactory)
    set_keys = [key for key, _ in _pairs(args.set, "--set")]
    for key in set_keys:
        if census.classify(key, families) is None:
            meant = census.suggest(key, families)
            raise SetupError("census.set_unknown_meant" if meant else "census.set_unknown", field=f"--set {key}",
                             meant=meant)
    document = dict(imported.document) if imported is not None else {}
    deepspeed = _deepspeed_json(document.get("deepspeed"))
    checked = census.check({**document, **dict.fromkeys(set_keys)}, trainer_class, llamafactory, deepspeed)
    return {"not_modelled": [item.record("en") for item in checked.unmodelled],
            "unknown": [item.record("en") for item in checked.unknown if item.key in document],
            "notes": [{"code": getattr(note, "key", ""), "message": note.get("en")}
                      for note in (imported.notes if imported is not None else [])]}


def _deepspeed_json(value: Any) -> dict[str, Any] | None:
    """The DeepSpeed JSON a YAML's `deepspeed` names, when it is at hand from the current folder (else None)."""
    if isinstance(value, dict):
        return value
    if not isinstance(value, str) or not value.endswith(".json"):
        return None
    try:
        found = json.loads(Path(value).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def _deepspeed(result: dict[str, Any], setup: TrainingSetup, trl: bool, path: str, arguments: dict[str, Any]) -> None:
    """A YAML's `deepspeed:` JSON: its `auto` values as the Trainer fills them (`deepspeed_filled`), the Trainer's
    refusal of explicit values that disagree (a `TrainerRefusal`: exit 3), and a warning when its own optimizer or
    scheduler replaces the Trainer's learning rates, or when the file is not here to read."""
    from steplab.trainer.deepspeed import check_deepspeed, fill, scheduler_block

    try:
        config = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        config = None
    if not isinstance(config, dict) or trl:
        result["warnings"].append({"code": "deepspeed_not_read", "message": t("en", "config_io.deepspeed_not_read",
                                                                               path=path)})
        return
    plan = make_plan(setup)
    check_deepspeed(config, plan, arguments)
    result["deepspeed_filled"] = fill(config, plan, arguments)[0]
    if scheduler_block(config):
        result["warnings"].append({"code": "deepspeed_schedule", "message": t("en", "config_io.deepspeed_schedule",
                                                                               path=path)})


def _resume(result: dict[str, Any], setup: TrainingSetup, trl: bool, checkpoint: Any) -> None:
    """A YAML's `resume_from_checkpoint`: the events and updates of the part the resumed run trains, from the
    checkpoint's step (its `trainer_state.json`, else its folder name), or a warning naming what is not known."""
    from steplab.trainer.resumed import resumed_part

    part = None if checkpoint.step is None or trl else resumed_part(make_plan(setup), checkpoint.step,
                                                                    checkpoint.intervals)
    if part is None:
        key = "config_io.resume_unknown" if checkpoint.step is None else "config_io.resume_not_planned"
        restart = span([p for p in PROFILES.values() if p.resume_restarts_count])
        result["warnings"].append({"code": "resume_not_planned", "message": t(
            "en", key, value=checkpoint.value, step=checkpoint.step, profile=setup.trainer, first=restart[0],
            last=restart[1])})
        return
    result.update(part, resume_step_source=checkpoint.source)
    if checkpoint.source == "folder_name":  # the run takes the checkpoint's intervals, which only its state file holds
        result["warnings"].append({"code": "resume_intervals_assumed", "message": t(
            "en", "config_io.resume_intervals_assumed", value=checkpoint.value, step=checkpoint.step)})


def _trl_values(values: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
    """Whether TRL plans the run (any of its fields given: `trainer_class=GRPOTrainer`, `num_generations`, …), and
    the values with its config's defaults for the setup fields left out."""
    if not names_trl(values):
        return False, values
    return True, with_config_defaults(values)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m steplab", description="Plan a training run like the HF Trainer.")
    sub = parser.add_subparsers(dest="command", required=True)
    plan_cmd = sub.add_parser("plan", help="print the plan of a setup as JSON")
    plan_cmd.add_argument("config", nargs="?", help="a LLaMA-Factory or HF training YAML")
    plan_cmd.add_argument("--set", action="append", metavar="KEY=VALUE", help="set a field (repeatable)")
    plan_cmd.add_argument("--trainer", choices=sorted(PROFILES), help=f"Trainer profile (default {LLAMA_FACTORY_PROFILE})")
    plan_cmd.add_argument("--lr-per-step", action="store_true", help="include the learning rate of every step")
    plan_cmd.add_argument("--dataset-rows", action="append", metavar="NAME=ROWS",
                          help="a dataset's row count, when its files are not at hand (repeatable; row rules only)")
    plan_cmd.add_argument("--strict", action="store_true",
                          help="exit 4 when a key StepLab does not model (or does not know) was given")
    explain_cli.add_parser(sub)
    args = parser.parse_args(argv)
    if args.command == "explain":
        code, record = explain_cli.run(args)
        return code if record is None else _write(encode(record))
    try:
        values, _, count, imported = _read_values(args)
        named = _census(args, values, imported)
        if "num_samples" not in values:
            raise SetupError("setup.num_samples_required", field="num_samples")
        trl, values = _trl_values(values)
        setup, _ = setup_from_mapping(values)  # what the setup does not take, the census names (`named`)
        result, max_steps = _plan_json(setup, trl, args.lr_per_step, [item["key"] for item in named["unknown"]])
        result["warnings"].extend({"code": "unknown_key", **item} for item in named["unknown"])
        result.update(not_modelled=named["not_modelled"], notes=named["notes"])
        if args.config and count["world_size_source"] == "assumed":
            result["warnings"].append({"code": "world_size_assumed", "message": t(
                "en", "config_io.world_size_assumed", world_size=setup.world_size)})
        crash = count.pop("packing_crash", None)
        if crash is not None:  # a packed run the real LLaMA-Factory stops at its first step
            result["warnings"].append({"code": "packing_cutoff_not_multiple_of_8", "message": crash})
        bypassed = count.pop("bypassed_keys", [])
        if bypassed:
            result["warnings"].append({"code": "num_samples_bypasses_datasets", "message": t(
                "en", "dataset.bypassed", keys=", ".join(bypassed), num_samples=setup.num_samples)})
        if "num_samples_range" in count:
            fewest = setup.replace(num_samples=count["num_samples_range"][0])
            count["max_steps_range"] = [_plan_json(fewest, trl, False, [])[1], max_steps]
            result["warnings"].append({"code": "num_samples_estimated", "message": t(
                "en", "dataset.estimated", low=count["num_samples_range"][0], high=setup.num_samples,
                steps_low=count["max_steps_range"][0], steps_high=max_steps)})
        if count.get("deepspeed") is not None:
            _deepspeed(result, setup, trl, count.pop("deepspeed"), count.pop("arguments", {}))
        if count.get("resume") is not None:
            _resume(result, setup, trl, count.pop("resume"))
        rates = result.pop("learning_rates", None)  # kept last: the one big field
        samples = make_plan(setup).setup.num_samples if setup.streaming else setup.num_samples  # the stream's
        result.update({"num_samples": samples, "num_eval_samples": None, **count})
        if rates is not None:
            result["learning_rates"] = rates
    except TrainerRefusal as refusal:
        _write(encode({"trainer_error": refusal.as_dict()}))
        return 3
    except (SetupError, ValueError, OSError) as error:
        message = error.message("en") if hasattr(error, "message") and callable(error.message) else str(error)
        print(f"error: {message}".splitlines()[0], file=sys.stderr)
        return 2
    written = _write(encode(result))
    return STRICT_EXIT if written == 0 and args.strict and (result["not_modelled"] or named["unknown"]) else written


def encode(result: dict[str, Any]) -> bytes:
    """UTF-8 JSON and a newline. orjson writes a numpy array of a million learning rates about 20× faster than
    `json` writes the same list, with the same shortest round-trip digits (it reads back to the same floats)."""
    return orjson.dumps(result, option=orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_APPEND_NEWLINE)


def _write(data: bytes) -> int:
    """Write the JSON; a reader that stops early (`| head`) is no error of ours: exit quietly, as `cat` does."""
    try:
        sys.stdout.flush()
        view = memoryview(data)
        while view:  # a pipe takes big writes in parts, and reports a closed reader only on the next part
            view = view[sys.stdout.buffer.write(view):]
        sys.stdout.buffer.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error when Python exits
        return 141  # the shell's status for a process ended by SIGPIPE (128 + 13)
    return 0
