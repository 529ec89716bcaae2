"""The plan's worked arithmetic: one line per step of the reasoning, with the user's numbers and the rounding."""

from __future__ import annotations

import math
from dataclasses import dataclass

from steplab.i18n import Message, fmt_float, fmt_int, msg
from steplab.trainer.arguments import warmup_ratio_in_use
from steplab.trainer.events import events, interval, rhythm
from steplab.trainer.plan import Plan


@dataclass(frozen=True)
class Line:
    """One step of the reasoning: what is computed, the formula with the numbers put in, and the result."""

    key: str
    label: Message
    formula: str  # language-neutral arithmetic, e.g. "⌈1,001 ÷ 4⌉ = 251"
    note: Message | None = None


def _division(a: int, b: int, rounding: str) -> str:
    """'1,600 ÷ 4 = 400' when exact, else '⌈1,001 ÷ 4⌉ = 251' or '⌊1,001 ÷ 4⌋ = 250'."""
    if a % b == 0:
        return f"{fmt_int(a)} ÷ {fmt_int(b)} = {fmt_int(a // b)}"
    if rounding == "ceil":
        return f"⌈{fmt_int(a)} ÷ {fmt_int(b)}⌉ = {fmt_int(-(-a // b))}"
    return f"⌊{fmt_int(a)} ÷ {fmt_int(b)}⌋ = {fmt_int(a // b)}"


def _rounded_up_product(a: float, b: float, a_text: str, b_text: str, result: int) -> str:
    """`a × b` rounded up as the Trainer does it, in floats: `⌈222 × 0.1⌉ = 23`; the product itself only when the
    float arithmetic decides the result (`⌈100 × 0.07⌉ = ⌈7.000000000000001⌉ = 8`), and no brackets when exact."""
    product = a * b
    if product == result:
        return f"{a_text} × {b_text} = {fmt_int(result)}"
    if math.ceil(round(product, 9)) != result:  # the last bits of the float product add a step
        return f"⌈{a_text} × {b_text}⌉ = ⌈{product!r}⌉ = {fmt_int(result)}"
    return f"⌈{a_text} × {b_text}⌉ = {fmt_int(result)}"


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
        note = msg("explain.micro_batches_per_epoch.last_batch", last_batch=epoch.last_batch, count=epoch.last_batch)
    return Line("micro_batches_per_epoch", msg("explain.micro_batches_per_epoch.label"), formula, note)


def _updates_per_epoch(plan: Plan) -> Line:
    ga = plan.setup.gradient_accumulation_steps
    length = plan.micro_batches_per_epoch
    rounding = "ceil" if plan.profile.round_updates_up else "floor"
    formula = _division(length, ga, rounding) if length else f"0 → max_steps = {fmt_int(plan.num_update_steps_per_epoch)}"
    raw = -(-length // ga) if rounding == "ceil" else length // ga
    if length and raw < 1:
        formula += " → max(…, 1) = 1"
    rest = plan.last_group_size if plan.last_group_size < ga else 0
    note = None
    if rest and rounding == "ceil":
        note = msg("explain.num_update_steps_per_epoch.last_update", rest=rest, count=rest)
    elif rest:
        note = msg("explain.num_update_steps_per_epoch.rounded_down", rest=rest, count=rest)
    return Line("num_update_steps_per_epoch", msg("explain.num_update_steps_per_epoch.label"), formula, note)


def _total(plan: Plan) -> Line:
    s = plan.setup
    label = msg("explain.max_steps.label")
    if s.uses_max_steps:
        return Line("max_steps", label, f"max_steps = {fmt_int(plan.max_steps)}", msg("explain.max_steps.overrides", zero=0))
    if plan.profile.framework == "lightning":
        return Line("max_steps", label, f"{fmt_int(plan.num_update_steps_per_epoch)} × {fmt_float(s.num_train_epochs)} = {fmt_int(plan.max_steps)}")
    formula = _rounded_up_product(s.num_train_epochs, plan.num_update_steps_per_epoch, fmt_float(s.num_train_epochs),
                                  fmt_int(plan.num_update_steps_per_epoch), plan.max_steps)
    return Line("max_steps", label, formula)


def _effective_batch(plan: Plan) -> Line:
    s = plan.setup
    return Line(
        "total_train_batch_size", msg("explain.total_train_batch_size.label"),
        f"{fmt_int(s.per_device_train_batch_size)} × {fmt_int(s.gradient_accumulation_steps)} × {fmt_int(s.world_size)} = {fmt_int(plan.total_train_batch_size)}",
        msg("explain.total_train_batch_size.product"),
    )


def _warmup(plan: Plan) -> Line:
    ratio = warmup_ratio_in_use(plan.setup, plan.profile)
    label = msg("explain.warmup_steps.label")
    if ratio:
        formula = _rounded_up_product(plan.max_steps, ratio, fmt_int(plan.max_steps), fmt_float(ratio), plan.warmup_steps)
        return Line("warmup_steps", label, formula)
    return Line("warmup_steps", label, f"warmup_steps = {fmt_int(plan.warmup_steps)}")


def _actual(plan: Plan) -> Line:
    final = plan.final_epoch
    formula = f"{fmt_int(plan.optimizer_steps)} ; state.epoch = {fmt_float(final, 4)}"
    note = None
    if plan.optimizer_steps != plan.max_steps:
        note = msg("explain.optimizer_steps.differs", max_steps=plan.max_steps)
    elif not math.isclose(final, plan.setup.num_train_epochs) and not plan.setup.uses_max_steps:
        note = msg("explain.optimizer_steps.stops", epoch=fmt_float(final, 3))
    return Line("optimizer_steps", msg("explain.optimizer_steps.label"), formula, note)


def _eval(plan: Plan) -> list[Line]:
    if plan.setup.eval_strategy == "no" or plan.profile.framework != "transformers":
        return []
    shown = events(plan, "eval").preview(6)
    every = interval(plan, "eval") if plan.setup.eval_strategy == "steps" else None
    if every:
        formula = f"eval_steps = {fmt_int(every)} → {shown or '—'}"
        note = msg("explain.eval_at_steps.rhythm", every=every, when=rhythm(plan), count=every)
    else:
        formula = f"eval_strategy = epoch → {shown or '—'}"
        note = None
    return [Line("eval_at_steps", msg("explain.eval_at_steps.label"), formula, note)]


def explain(plan: Plan) -> list[Line]:
    """The worked arithmetic of a plan, in reading order."""
    return [_micro_batches(plan), _updates_per_epoch(plan), _total(plan), _effective_batch(plan), _warmup(plan),
            _actual(plan), *_eval(plan)]
