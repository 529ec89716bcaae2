"""The plan's worked arithmetic: one line per step of the reasoning, with the user's numbers and the rounding."""

from __future__ import annotations

import math
from dataclasses import dataclass

from steplab.arguments import warmup_ratio_in_use
from steplab.events import events, interval, rhythm
from steplab.i18n import Text, fmt_float, fmt_int
from steplab.plan import Plan


@dataclass(frozen=True)
class Line:
    """One step of the reasoning: what is computed, the formula with the numbers put in, and the result."""

    key: str
    label: Text
    formula: str  # language-neutral arithmetic, e.g. "⌈1,001 ÷ 4⌉ = 251"
    note: Text | None = None


def _division(a: int, b: int, rounding: str) -> str:
    """'1,600 ÷ 4 = 400' when exact, else '⌈1,001 ÷ 4⌉ = 251' or '⌊1,001 ÷ 4⌋ = 250'."""
    if a % b == 0:
        return f"{fmt_int(a)} ÷ {fmt_int(b)} = {fmt_int(a // b)}"
    if rounding == "ceil":
        return f"⌈{fmt_int(a)} ÷ {fmt_int(b)}⌉ = {fmt_int(-(-a // b))}"
    return f"⌊{fmt_int(a)} ÷ {fmt_int(b)}⌋ = {fmt_int(a // b)}"


def _micro_batches(plan: Plan) -> Line:
    s = plan.setup
    rounding = "floor" if s.dataloader_drop_last else "ceil"
    epoch = plan.epoch
    if s.world_size == 1 or plan.profile.framework == "lightning" and s.world_size > 1:
        if plan.profile.framework == "lightning" and s.world_size > 1:
            per_rank = -(-s.num_samples // s.world_size)
            formula = (f"⌈{fmt_int(s.num_samples)} ÷ {s.world_size}⌉ = {fmt_int(per_rank)} ; "
                       + _division(per_rank, s.per_device_train_batch_size, rounding))
        else:
            formula = _division(s.num_samples, s.per_device_train_batch_size, rounding)
    else:
        batches = epoch.batches_total
        formula = (_division(s.num_samples, s.per_device_train_batch_size, rounding) + " ; "
                   + _division(batches, s.world_size, rounding))
    if epoch.limited_from is not None:
        formula += f" → limit_train_batches → {fmt_int(epoch.micro_batches)}"
    note = None
    if s.world_size == 1 and not s.dataloader_drop_last and epoch.last_batch != s.per_device_train_batch_size and epoch.micro_batches:
        samples = "sample" if epoch.last_batch == 1 else "samples"
        note = Text(f"最后一批只有 {fmt_int(epoch.last_batch)} 个样本。",
                    f"The last micro-batch holds only {fmt_int(epoch.last_batch)} {samples}.")
    return Line("micro_batches_per_epoch", Text("每轮小批次数(每张卡)", "Micro-batches per epoch (per device)"), formula, note)


def _updates_per_epoch(plan: Plan) -> Line:
    ga = plan.setup.gradient_accumulation_steps
    length = plan.micro_batches_per_epoch
    rounding = "ceil" if plan.profile.round_updates_up else "floor"
    formula = _division(length, ga, rounding) if length else f"0 → max_steps = {fmt_int(plan.num_update_steps_per_epoch)}"
    raw = -(-length // ga) if rounding == "ceil" else length // ga
    if length and raw < 1:
        formula += " → max(…, 1) = 1"
    rest = length % ga if length else 0
    note = None
    if rest and rounding == "ceil":
        note = Text(f"最后一次更新只用 {rest} 个小批次。", f"The last update of each epoch holds {rest} micro-batch{'es' if rest > 1 else ''}.")
    elif rest:
        note = Text(f"这个版本向下取整:余下的 {rest} 个小批次不计入每轮步数。",
                    f"This release rounds down: the {rest} leftover micro-batch{'es' if rest > 1 else ''} are not counted.")
    return Line("num_update_steps_per_epoch", Text("每轮更新步数", "Updates per epoch"), formula, note)


def _total(plan: Plan) -> Line:
    s = plan.setup
    label = Text("总步数 max_steps", "Total optimization steps (max_steps)")
    if s.uses_max_steps:
        return Line("max_steps", label, f"max_steps = {fmt_int(plan.max_steps)}",
                    Text("max_steps 大于 0 时优先于 num_train_epochs。", "A positive max_steps overrides num_train_epochs."))
    if plan.profile.framework == "lightning":
        return Line("max_steps", label, f"{fmt_int(plan.num_update_steps_per_epoch)} × {fmt_float(s.num_train_epochs)} = {fmt_int(plan.max_steps)}")
    product = s.num_train_epochs * plan.num_update_steps_per_epoch
    if product == plan.max_steps:
        formula = f"{fmt_float(s.num_train_epochs)} × {fmt_int(plan.num_update_steps_per_epoch)} = {fmt_int(plan.max_steps)}"
    else:
        formula = f"⌈{fmt_float(s.num_train_epochs)} × {fmt_int(plan.num_update_steps_per_epoch)}⌉ = ⌈{product!r}⌉ = {fmt_int(plan.max_steps)}"
    return Line("max_steps", label, formula)


def _effective_batch(plan: Plan) -> Line:
    s = plan.setup
    return Line(
        "total_train_batch_size", Text("有效批次(每次更新的样本数)", "Effective batch (samples per update)"),
        f"{fmt_int(s.per_device_train_batch_size)} × {fmt_int(s.gradient_accumulation_steps)} × {fmt_int(s.world_size)} = {fmt_int(plan.total_train_batch_size)}",
        Text("单卡批大小 × 梯度累积 × GPU 数", "per-device batch × accumulation × GPUs"),
    )


def _warmup(plan: Plan) -> Line:
    ratio = warmup_ratio_in_use(plan.setup, plan.profile)
    label = Text("预热步数", "Warmup steps")
    if ratio:
        product = plan.max_steps * ratio
        return Line("warmup_steps", label, f"⌈{fmt_int(plan.max_steps)} × {fmt_float(ratio)}⌉ = ⌈{product!r}⌉ = {fmt_int(plan.warmup_steps)}")
    return Line("warmup_steps", label, f"warmup_steps = {fmt_int(plan.warmup_steps)}")


def _actual(plan: Plan) -> Line:
    final = plan.final_epoch
    formula = f"{fmt_int(plan.optimizer_steps)} ; state.epoch = {fmt_float(final, 4)}"
    note = None
    if plan.optimizer_steps != plan.max_steps:
        note = Text(f"实际执行的更新次数与日志中的总步数 {fmt_int(plan.max_steps)} 不同。",
                    f"The updates that really run differ from the {fmt_int(plan.max_steps)} total the log prints.")
    elif not math.isclose(final, plan.setup.num_train_epochs) and not plan.setup.uses_max_steps:
        note = Text(f"在第 {fmt_float(final, 3)} 轮停止。", f"Stops at epoch {fmt_float(final, 3)}.")
    return Line("optimizer_steps", Text("实际更新次数与结束时的轮数", "Updates that run, and the epoch at the end"), formula, note)


def _eval(plan: Plan) -> list[Line]:
    if plan.setup.eval_strategy == "no" or plan.profile.framework != "transformers":
        return []
    steps = events(plan, "eval").steps(limit=6)
    shown = ", ".join(fmt_int(k) for k in steps) + (" …" if events(plan, "eval").count() > 6 else "")
    every = interval(plan, "eval") if plan.setup.eval_strategy == "steps" else None
    if every:
        formula = f"eval_steps = {fmt_int(every)} → {shown or '—'}"
        when = rhythm(plan)
        note = Text(f"每 {fmt_int(every)} 步评估一次 = {when.zh}。", f"every {fmt_int(every)} steps = {when.en}.")
    else:
        formula = f"eval_strategy = epoch → {shown or '—'}"
        note = None
    return [Line("eval_at_steps", Text("评估时机", "Evaluations"), formula, note)]


def explain(plan: Plan) -> list[Line]:
    """The worked arithmetic of a plan, in reading order."""
    return [_micro_batches(plan), _updates_per_epoch(plan), _total(plan), _effective_batch(plan), _warmup(plan),
            _actual(plan), *_eval(plan)]
