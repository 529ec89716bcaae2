"""Coded warnings for every edge case that bites, each with what happens and what to change.

Each warning's words are the catalogue entries `warn.<code>.text` and `warn.<code>.fix`
(`locales/<lang>/engine/warnings.yaml`); this module only decides which apply and with which numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from steplab.i18n import Message, code, fmt_float, msg
from steplab.trainer.arguments import WARMUP_RATIO_REMOVED
from steplab.trainer.events import events, interval
from steplab.trainer.plan import Plan
from steplab.trainer.profiles import (
    LLAMA_FACTORY_TRANSFORMERS,
    LLAMA_FACTORY_VERSION,
    PROFILES,
    WARMUP_RATIO_ALIAS,
    release_range,
    span,
)


def _releases(profile_id: str) -> tuple[str, str]:
    """The first and the last release a profile stands for: ("4.47", "4.51") for hf-4.51."""
    return release_range(PROFILES[profile_id])


def _series(profile_id: str) -> str:
    """The major series of a profile's releases: "4.x", "5.x"."""
    return _releases(profile_id)[0].split(".")[0] + ".x"


EPOCH_END_STEP_FROM = _releases("hf-4.51")[0]  # the first release that steps at every epoch end (4.47)
LAST_CHUNK_BUG = (_releases("hf-4.46")[1], _releases("hf-4.51")[1])  # last group sized by samples % GA (4.46–4.51)
ROUNDING_BUG = _releases("hf-4.51")  # updates per epoch rounded down (4.47–4.51)
FIXED_IN = _releases("hf-4.57")[0]  # the release that fixed both (4.52)
OLD_SERIES, NEW_SERIES = _series("hf-4.57"), _series("hf-5")  # "4.x", "5.x"
FINAL_EVAL_FROM = span([p for p in PROFILES.values() if p.final_eval])[0] + "+"  # evaluates at the last step: "5.4+"
WARMUP_RATIO_GONE = _releases("hf-5")[0]  # the first release that refuses it (5.15)
LAST_CHUNK_ISSUE = 37777  # transformers issue: micro-batches never drawn
ROUNDING_ISSUE = 36297  # transformers issue: training stops before the last epoch ends
WARMUP_RATIO_REFUSAL = f"TypeError: {WARMUP_RATIO_REMOVED}"  # 5.15 and later, word for word
EXAMPLE_RATIO = 0.1  # the ratio the fixes suggest


@dataclass(frozen=True)
class Warning:
    """One edge case this plan runs into."""

    code: str
    text: Message  # what happens, with this plan's numbers
    fix: Message  # what to change

    def message(self, lang: str) -> str:
        return self.text.get(lang)


def _warning(code: str, text: dict[str, Any] | None = None, fix: dict[str, Any] | None = None) -> Warning:
    """The warning `code`, its text and fix filled with these values."""
    return Warning(code, msg(f"warn.{code}.text", **(text or {})), msg(f"warn.{code}.fix", **(fix or {})))


def _partial_group(plan: Plan) -> list[Warning]:
    ga = plan.setup.gradient_accumulation_steps
    length = plan.micro_batches_per_epoch
    rest = plan.last_group_size
    if rest == ga or plan.profile.running_count or plan.optimizer_steps == 0:
        return []
    return [_warning("partial_accumulation_group",
                     {"length": length, "ga": ga, "rest": rest, "whole": length // ga, "count": rest})]


def _straddling(plan: Plan) -> list[Warning]:
    ga = plan.setup.gradient_accumulation_steps
    if not plan.profile.running_count or plan.last_group_size == ga or plan.micro_batches_per_epoch <= ga:
        return []
    return [_warning("groups_straddle_epochs", {"ga": ga}, {"release": EPOCH_END_STEP_FROM})]


def _skipped(plan: Plan) -> list[Warning]:
    missing = plan.micro_batches_per_epoch - plan.fetched_per_epoch
    if missing <= 0:
        return []
    ga = plan.setup.gradient_accumulation_steps
    return [_warning(
        "micro_batches_never_drawn", {"samples": plan.setup.num_samples, "ga": ga, "missing": missing, "count": missing},
        {"first": LAST_CHUNK_BUG[0], "last": LAST_CHUNK_BUG[1], "issue": LAST_CHUNK_ISSUE, "fixed": FIXED_IN},
    )]


def _oversized(plan: Plan) -> list[Warning]:
    ga = plan.setup.gradient_accumulation_steps
    biggest = plan.largest_step
    if biggest <= ga:
        return []
    return [_warning("update_larger_than_accumulation", {"biggest": biggest, "ga": ga}, {"fixed": FIXED_IN})]


def _no_updates(plan: Plan) -> list[Warning]:
    if plan.optimizer_steps > 0 or plan.max_steps == 0:
        return []
    return [_warning("no_updates", {"max_steps": plan.max_steps}, {"fixed": FIXED_IN})]


def _stops_early(plan: Plan) -> list[Warning]:
    wanted = plan.setup.num_train_epochs
    if plan.setup.uses_max_steps or plan.optimizer_steps == 0 or plan.final_epoch >= wanted - 1e-9:
        return []
    return [_warning(
        "stops_before_last_epoch_ends",
        {"per_epoch": plan.num_update_steps_per_epoch, "epoch": fmt_float(plan.final_epoch, 3),
         "max_steps": plan.max_steps, "wanted": fmt_float(wanted), "count": plan.num_update_steps_per_epoch},
        {"first": ROUNDING_BUG[0], "last": ROUNDING_BUG[1], "issue": ROUNDING_ISSUE, "fixed": FIXED_IN},
    )] if plan.setup.num_train_epochs == int(plan.setup.num_train_epochs) else []


def _max_steps(plan: Plan) -> list[Warning]:
    if not plan.setup.uses_max_steps or plan.optimizer_steps == 0 or plan.setup.streaming:  # a stream has no epochs
        return []
    epochs = plan.setup.num_train_epochs
    reached = plan.final_epoch
    values = {"max_steps": plan.max_steps, "epoch": fmt_float(reached, 3), "epochs": fmt_float(epochs)}
    if reached < epochs - 1e-9:
        return [_warning("max_steps_cuts_epochs", values, {"unset": -1})]
    if reached > epochs + 1e-9:
        return [_warning("max_steps_extends_epochs", values, {"unset": -1})]
    return []


def _data_loss(plan: Plan) -> list[Warning]:
    found: list[Warning] = []
    epoch = plan.epoch
    setup = plan.setup
    if epoch.micro_batches == 0:
        found.append(_warning("empty_dataloader", {"samples": setup.num_samples, "micro_batches": epoch.micro_batches,
                                                   "count": setup.num_samples}))
    elif epoch.dropped:
        found.append(_warning("samples_dropped", {"dropped": epoch.dropped, "count": epoch.dropped}))
    if epoch.duplicated:
        found.append(_warning("samples_duplicated", {"world_size": setup.world_size, "duplicated": epoch.duplicated,
                                                     "draws": epoch.samples_used, "samples": setup.num_samples}))
    if 0 < setup.num_samples < setup.per_device_train_batch_size * setup.world_size:
        found.append(_warning("batch_larger_than_dataset",
                              {"batch": setup.per_device_train_batch_size * setup.world_size, "samples": setup.num_samples}))
    if epoch.limited_from is not None:
        found.append(_warning("limit_train_batches", {"limited_from": epoch.limited_from, "micro_batches": epoch.micro_batches}))
    return found


def _warmup(plan: Plan) -> list[Warning]:
    found: list[Warning] = []
    setup = plan.setup
    if plan.warmup_steps >= plan.max_steps > 0 and setup.lr_scheduler_type != "constant":
        found.append(_warning("warmup_longer_than_run", {"warmup": plan.warmup_steps, "max_steps": plan.max_steps,
                                                         "count": plan.warmup_steps},
                              {"ratio": EXAMPLE_RATIO, "new": NEW_SERIES, "old": OLD_SERIES}))
    if setup.lr_scheduler_type == "constant" and plan.warmup_steps > 0:
        found.append(_warning("constant_ignores_warmup", {"warmup": plan.warmup_steps}))
    if plan.profile.warmup_ratio == "alias" and setup.warmup_ratio is not None and plan.profile.framework == "transformers":
        pin = {"first": WARMUP_RATIO_ALIAS[0], "last": WARMUP_RATIO_ALIAS[1]}
        found.append(_warning("warmup_ratio_deprecated", {
            **pin, "lf": LLAMA_FACTORY_VERSION, "lf_first": LLAMA_FACTORY_TRANSFORMERS[0],
            "lf_last": LLAMA_FACTORY_TRANSFORMERS[1], "removed": WARMUP_RATIO_GONE, "error": code(WARMUP_RATIO_REFUSAL)},
            {"ratio": fmt_float(setup.warmup_ratio), "one": 1}))
        if setup.warmup_steps:
            found.append(_warning("warmup_ratio_overrides_steps", {**pin, "steps": fmt_float(setup.warmup_steps)}))
    if not plan.profile.warmup_steps_ratio and setup.warmup_steps and setup.warmup_ratio:
        found.append(_warning("warmup_steps_override_ratio", {"series": OLD_SERIES, "steps": int(setup.warmup_steps)}))
    value = setup.warmup_ratio if setup.warmup_ratio is not None else setup.warmup_steps
    if plan.profile.warmup_steps_ratio and value == 1:
        found.append(_warning("warmup_one_is_one_step", {"series": NEW_SERIES, "one": 1, "percent": 100},
                              {"one": 1, "ratio": EXAMPLE_RATIO}))
    return found


def _intervals(plan: Plan) -> list[Warning]:
    found: list[Warning] = []
    if plan.profile.framework != "transformers" or plan.optimizer_steps == 0:
        return found
    for kind in ("eval", "save", "log"):
        setting = "logging" if kind == "log" else kind
        if getattr(plan.setup, f"{setting}_strategy") != "steps":
            continue
        every = interval(plan, kind)
        if not every or every <= plan.optimizer_steps:
            continue
        code = f"{kind}_interval_longer_than_run"
        happened = events(plan, kind).steps()
        after = msg(f"warn.{code}.only_last", step=happened[-1]) if happened else msg(f"warn.{code}.never")
        found.append(_warning(code, {"every": every, "steps": plan.optimizer_steps, "after": after},
                              {"ratio": EXAMPLE_RATIO}))
    if (plan.setup.eval_strategy == "steps" and not plan.profile.final_eval and plan.optimizer_steps == plan.max_steps
            and (every := interval(plan, "eval")) and plan.max_steps % every and every <= plan.max_steps):
        found.append(_warning("last_step_not_evaluated",
                              {"max_steps": plan.max_steps, "every": every, "series": FINAL_EVAL_FROM}))
    saves = events(plan, "save")
    if saves.depends_on_metric:
        metric = plan.setup.metric_for_best_model or "loss"
        found.append(_warning("save_best_depends_on_metric", {
            "metric": metric, "count": saves.count(), "steps": saves.preview(8) or "—"}))
    return found


def _framework(plan: Plan) -> list[Warning]:
    if plan.profile.framework == "lightning":
        return [_warning("lightning_events_not_modelled")]
    if plan.setup.lr_scheduler_type == "reduce_lr_on_plateau":
        return [_warning("metric_driven_schedule")]
    return []


CHECKS = (_data_loss, _partial_group, _straddling, _skipped, _oversized, _no_updates, _stops_early, _max_steps,
          _warmup, _intervals, _framework)


def plan_warnings(plan: Plan) -> list[Warning]:
    """Every warning that applies to this plan, in a stable order."""
    return [warning for check in CHECKS for warning in check(plan)]
