"""Several setups side by side: the rows of the comparison table, with the cells that differ from the first."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from steplab.errors import SetupError, TrainerRefusal
from steplab.i18n import Message, fmt_float, fmt_int, msg
from steplab.trainer.events import events, interval, rhythm
from steplab.trainer.plan import Plan, make_plan
from steplab.trainer.setup import setup_from_mapping

COMPARE_FIELDS = ("num_samples", "per_device_train_batch_size", "gradient_accumulation_steps", "world_size",
                  "num_train_epochs", "eval_steps", "trainer")


def column_of(setups: list[dict[str, Any]], values: dict[str, Any]) -> int | None:
    """The index of the first column holding `values` (compared on `COMPARE_FIELDS`, 3 the same as 3.0), or None."""
    def key(column: dict[str, Any]) -> tuple:
        return tuple(float(v) if isinstance(v, int | float) and not isinstance(v, bool) else v
                     for v in (column.get(field) for field in COMPARE_FIELDS))

    wanted = key(values)
    return next((index for index, column in enumerate(setups) if key(column) == wanted), None)


@dataclass(frozen=True)
class Row:
    label: str
    cells: list[str]
    differs: list[bool]


def _plan(values: dict[str, Any]) -> Plan | str:
    """Plan a column; evaluation by steps when the column gives an interval and no other strategy."""
    strategy = values.get("eval_strategy") or ("steps" if values.get("eval_steps") else "no")
    try:
        return make_plan(setup_from_mapping({**values, "eval_strategy": strategy})[0])
    except SetupError as error:
        return error.text.en
    except TrainerRefusal as refusal:
        return f"{refusal.error_type}: {refusal.message}"


ROWS: tuple[tuple[Message, Any], ...] = (
    (msg("comparing.row.micro_batches_per_epoch"), lambda p, lang: fmt_int(p.micro_batches_per_epoch)),
    (msg("comparing.row.updates_per_epoch"), lambda p, lang: fmt_int(p.num_update_steps_per_epoch)),
    (msg("comparing.row.total_steps"), lambda p, lang: fmt_int(p.max_steps)),
    (msg("comparing.row.effective_batch"), lambda p, lang: fmt_int(p.total_train_batch_size)),
    (msg("comparing.row.eval_interval_steps"),
     lambda p, lang: fmt_int(interval(p, "eval")) if p.setup.eval_strategy == "steps" else "—"),
    (msg("comparing.row.eval_interval_epochs"), lambda p, lang: rhythm(p).get(lang)),
    (msg("comparing.row.eval_at_steps"),
     lambda p, lang: events(p, "eval").preview(8) or "—"),
    (msg("comparing.row.final_epoch"), lambda p, lang: fmt_float(p.final_epoch, 3)),
)


def compare_rows(setups: list[dict[str, Any]], lang: str) -> tuple[list[Row], list[str]]:
    """The table (one row per quantity; a cell differs when its text differs from the first column's) and one
    sentence per column, which also serve as the table's plain-text summary."""
    plans = [_plan(values) for values in setups]
    rows = []
    for label, cell in ROWS:
        cells = [cell(p, lang) if isinstance(p, Plan) else "—" for p in plans]
        rows.append(Row(label.get(lang), cells, [i > 0 and c != cells[0] for i, c in enumerate(cells)]))
    if any(not isinstance(p, Plan) for p in plans):
        rows.append(Row(msg("comparing.row.error").get(lang), [p if isinstance(p, str) else "" for p in plans],
                        [isinstance(p, str) for p in plans]))
    return rows, [_summary(index, p, lang) for index, p in enumerate(plans) if isinstance(p, Plan)]


def _summary(index: int, p: Plan, lang: str) -> str:
    s = p.setup
    sentence = msg("comparing.summary", column=index + 1, batch=s.per_device_train_batch_size,
                   ga=s.gradient_accumulation_steps, gpus=s.world_size, count=s.world_size,
                   effective=p.total_train_batch_size, per_epoch=p.num_update_steps_per_epoch, total=p.max_steps).get(lang)
    if s.eval_strategy == "steps":
        sentence += msg("comparing.summary_eval", every=interval(p, "eval"), when=rhythm(p), count=interval(p, "eval")).get(lang)
    return sentence
