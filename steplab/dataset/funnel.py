"""From dataset rows to the training examples the Trainer counts, stage by stage in LLaMA-Factory's order.

1. per dataset: the rows; `num_samples` of its `dataset_info.json` entry resamples it; `max_samples` cuts it;
2. the datasets are concatenated;
3. `val_size` holds out validation rows (`split`), before any row is processed;
4. each side is processed in map batches of `preprocessing_batch_size` (per worker shard): rows the
   processor cannot use are dropped, and packing or `stage: pt` turn rows into sequences by token length.
Each stage says its numbers and what it assumed (`Message`s); `Funnel.train_examples` is the Trainer's N.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from steplab.dataset.catalog import DatasetAttr
from steplab.dataset.errors import DatasetError
from steplab.dataset.examples import Example, convert, usable
from steplab.dataset.settings import DataSettings
from steplab.dataset.split import held_out, split_order
from steplab.dataset.tokens import Tokenizer, greedy_packs, pretrain_tokens, supervised_length
from steplab.i18n import Message, fmt_int, msg


@dataclass(frozen=True)
class Stage:
    """One step of the funnel: rows (or sequences) in and out, and what happened, said with these numbers."""

    code: str
    rows_in: int
    rows_out: int
    note: Message
    dataset: str | None = None
    rows_out_low: int | None = None  # an estimate: the fewest it can be (rows_out is the most)


@dataclass(frozen=True)
class Estimate:
    """Counts that could not be exact (tokens needed, no tokenizer): (fewest, most) examples on each side."""

    train: tuple[int, int]
    eval: tuple[int, int] | None
    note: Message


@dataclass(frozen=True)
class Funnel:
    """The dataset stage's result: every stage, the train and eval example counts, and what was assumed.

    With an `estimate` the counts are its upper ends: the most examples, hence the most steps, the run can have.
    """

    stages: tuple[Stage, ...]
    train_examples: int
    eval_examples: int | None
    assumptions: tuple[Message, ...] = ()
    estimate: Estimate | None = None

    def record(self) -> list[dict[str, Any]]:
        """The stages as plain data (the CLI's `dataset_stages`): English notes."""
        return [{"stage": s.code, "dataset": s.dataset, "rows_in": s.rows_in, "rows_out": s.rows_out,
                 "note": s.note.en} for s in self.stages]


Table = Sequence[Any] | int
"""A dataset's rows, or only how many there are (then the row rules cannot be checked)."""


def _batches(count: int, size: int, workers: int | None) -> list[range]:
    """The map batches `datasets` hands a processor: per contiguous worker shard, `size` rows at a time."""
    shards = max(1, min(workers or 1, count)) if count else 1
    div, mod = divmod(count, shards)
    out = []
    for index in range(shards):
        start = div * index + min(index, mod)
        end = start + div + (1 if index < mod else 0)
        out += [range(begin, min(begin + size, end)) for begin in range(start, end, size)]
    return out


def _per_dataset(name: str, attr: DatasetAttr | None, table: Table, settings: DataSettings,
                 stages: list[Stage]) -> Table:
    rows = table if isinstance(table, int) else len(table)
    said = "dataset.stage.rows_given" if isinstance(table, int) else "dataset.stage.rows"
    stages.append(Stage("rows", rows, rows, msg(said, dataset=name, rows=rows), name))
    if attr is not None and attr.num_samples is not None and attr.num_samples != rows:
        target = attr.num_samples
        stages.append(Stage("num_samples", rows, target, msg("dataset.stage.num_samples", dataset=name, rows=rows,
                                                            target=target), name))
        if not isinstance(table, int):
            table = [table[i % rows] for i in range(target)] if rows else []
        else:
            table = target
        rows = target
    if settings.max_samples is not None and settings.max_samples < rows:
        cut = settings.max_samples
        stages.append(Stage("max_samples", rows, cut, msg("dataset.stage.max_samples", dataset=name, rows=rows,
                                                         max_samples=cut), name))
        table = cut if isinstance(table, int) else table[:cut]
    return table


def _count(table: Table) -> int:
    return table if isinstance(table, int) else len(table)


def _token_bounds(side: str, table: Table, valid: list[bool] | None, attrs: Sequence[DatasetAttr | None],
                  settings: DataSettings, stages: list[Stage]) -> tuple[int, int]:
    """Without a tokenizer: the fewest and the most sequences packing or pt blocks can make of these rows.

    Packing only merges examples, so it makes at most one sequence per example; at best `cap` one-token
    examples share one (the low end assumes none is longer than `cap`). A pt block takes `cap` tokens, and
    a byte-level tokenizer (Qwen, LLaMA 3, GPT) never makes more tokens than the text has UTF-8 bytes (plus
    the end-of-sequence token and a word-start marker), while each row adds at least its end-of-sequence token.
    """
    cap = settings.sequence_cap
    rows = _count(table)
    low = high = 0
    for batch in _batches(rows, settings.preprocessing_batch_size, settings.preprocessing_num_workers):
        chosen = [i for i in batch if valid is None or valid[i]]
        if settings.processor == "pretrain":
            if isinstance(table, int):
                raise DatasetError("dataset.needs_tokens")
            texts = [convert(table[i], attrs[i]).prompt for i in chosen]
            high += sum(len(text[0][1].encode("utf-8")) + 2 if text else 0 for text in texts) // cap
            low += sum(1 for text in texts if text) // cap
        else:
            high += len(chosen)
            low += -(-len(chosen) // cap)
    code = "pt_blocks" if settings.processor == "pretrain" else "packing"
    kept = rows - (valid.count(False) if valid is not None else 0)
    note = msg(f"dataset.stage.{code}_estimate", side=msg(f"dataset.side.{side}"), rows=kept, low=low, high=high,
               cap=cap, batch=settings.preprocessing_batch_size)
    stages.append(Stage(code, kept, high, note, rows_out_low=low))
    return low, high


def _process(side: str, table: Table, attrs: Sequence[DatasetAttr | None], settings: DataSettings,
             tokenizer: Tokenizer | None, stages: list[Stage]) -> tuple[int, int]:
    """Examples that come out of one side (train or eval), as (fewest, most): drops, then packing or pt blocks.

    The two are equal when the count is exact; they differ only when tokens are needed and there is no tokenizer.
    """
    rows = _count(table)
    kind = "supervised" if settings.processor == "packed" else settings.processor  # whose row rules apply
    if isinstance(table, int):
        return _token_bounds(side, table, None, attrs, settings, stages) if settings.needs_tokens else (rows, rows)
    valid = [usable(row, attr, kind) for row, attr in zip(table, attrs, strict=True)]
    dropped = valid.count(False)
    if dropped:
        stages.append(Stage("invalid", rows, rows - dropped,
                            msg("dataset.stage.invalid", side=msg(f"dataset.side.{side}"), rows=rows,
                                dropped=dropped, kept=rows - dropped, processor=kind)))
    if not settings.needs_tokens:
        return rows - dropped, rows - dropped  # truncated to cutoff_len, never dropped for length
    if tokenizer is None:
        return _token_bounds(side, table, valid, attrs, settings, stages)
    cap = settings.sequence_cap
    out = 0
    too_long = 0
    for batch in _batches(rows, settings.preprocessing_batch_size, settings.preprocessing_num_workers):
        chosen: list[Example] = [convert(table[i], attrs[i]) for i in batch if valid[i]]
        if settings.processor == "pretrain":
            out += sum(pretrain_tokens(tokenizer, example) for example in chosen) // cap
            continue
        lengths = [supervised_length(tokenizer.pairs(e), cap, tokenizer.template.efficient_eos, settings.mask_history)
                   for e in chosen]
        fitting = [length for length in lengths if length <= cap]
        too_long += len(lengths) - len(fitting)
        out += greedy_packs(fitting, cap)
    sequences_in = rows - dropped
    if settings.processor == "pretrain":
        stages.append(Stage("pt_blocks", sequences_in, out, msg("dataset.stage.pt_blocks", side=msg(
            f"dataset.side.{side}"), rows=sequences_in, blocks=out, cutoff_len=cap,
            batch=settings.preprocessing_batch_size)))
    else:
        stages.append(Stage("packing", sequences_in, out, msg("dataset.stage.packing", side=msg(
            f"dataset.side.{side}"), rows=sequences_in, packs=out, cap=cap,
            too_long=msg("dataset.stage.packing_dropped", too_long=too_long) if too_long else "",
            batch=settings.preprocessing_batch_size)))
    return out, out


def _merged(names: Sequence[str], attrs: Mapping[str, DatasetAttr | None], tables: Mapping[str, Table],
            settings: DataSettings, stages: list[Stage]) -> tuple[Table, list[DatasetAttr | None]]:
    attrs = {name: attrs.get(name) or DatasetAttr(name, None) for name in names}  # no entry: alpaca defaults
    parts = [_per_dataset(name, attrs[name], tables[name], settings, stages) for name in names]
    owners: list[DatasetAttr | None] = []
    if any(isinstance(part, int) for part in parts):  # a count among them: the rows cannot be followed
        merged: Table = sum(_count(part) for part in parts)
    else:
        merged = [row for part in parts for row in part]  # type: ignore[union-attr]
        owners = [attrs[name] for name, part in zip(names, parts, strict=True) for _ in part]
    if len(parts) > 1:
        total = _count(merged)
        terms = " + ".join(fmt_int(_count(part)) for part in parts)
        stages.append(Stage("merge", total, total, msg("dataset.stage.merge", datasets=len(parts), rows=total,
                                                       terms=terms)))
    return merged, owners


def dataset_funnel(settings: DataSettings, tables: Mapping[str, Table],
                   attrs: Mapping[str, DatasetAttr | None] | None = None,
                   tokenizer: Tokenizer | None = None) -> Funnel:
    """Run the dataset stage: `tables` has the rows (or row counts) of every dataset the settings name."""
    attrs = attrs or {}
    if not settings.datasets:
        raise DatasetError("dataset.none_named")
    if settings.mix_strategy != "concat" and len(settings.datasets) > 1:  # one dataset is returned as it is
        raise DatasetError("dataset.mix_unmodelled", mix_strategy=settings.mix_strategy)
    if settings.streaming:
        raise DatasetError("dataset.streaming_unmodelled")
    if settings.eval_datasets and settings.val_size > 1e-6:
        raise DatasetError("dataset.val_and_eval")
    stages: list[Stage] = []
    assumptions: list[Message] = []
    merged, owners = _merged(settings.datasets, attrs, tables, settings, stages)
    total = _count(merged)
    n_test = held_out(settings.val_size, total)
    eval_table: Table | None = None
    eval_owners: list[DatasetAttr | None] = []
    train_table: Table = merged
    if n_test:
        said = "dataset.stage.split_count" if settings.val_size > 1 or isinstance(settings.val_size, int) else (
            "dataset.stage.split")
        stages.append(Stage("split", total, total - n_test, msg(said, rows=total, held=n_test,
                                                                 train=total - n_test, val_size=settings.val_size)))
        if isinstance(merged, int):
            train_table, eval_table = total - n_test, n_test
        else:
            train_index, eval_index = split_order(total, n_test, settings.seed)
            train_table, eval_table = [merged[i] for i in train_index], [merged[i] for i in eval_index]
            train_owners = [owners[i] for i in train_index]
            eval_owners = [owners[i] for i in eval_index]
            owners = train_owners
        assumptions.append(msg("dataset.assume.split", seed=settings.seed))
    elif settings.eval_datasets:
        eval_table, eval_owners = _merged(settings.eval_datasets, attrs, tables, settings, stages)
    if isinstance(merged, int):
        assumptions.append(msg("dataset.assume.rows_valid"))
    if any(attr is not None and attr.num_samples is not None for attr in attrs.values()):
        assumptions.append(msg("dataset.assume.resample"))
    train = _process("train", train_table, owners, settings, tokenizer, stages)
    evaluation = None if eval_table is None else _process("eval", eval_table, eval_owners, settings, tokenizer, stages)
    if train[1] == 0:
        raise DatasetError("dataset.no_examples")
    estimate = None
    if train[0] != train[1] or (evaluation is not None and evaluation[0] != evaluation[1]):
        estimate = Estimate(train, evaluation, msg("dataset.assume.estimate", low=train[0], high=train[1],
                                                   processor=msg(f"dataset.processor.{settings.processor}")))
        assumptions.append(estimate.note)
    return Funnel(tuple(stages), train[1], None if evaluation is None else evaluation[1], tuple(assumptions), estimate)
