"""From dataset rows to the training examples the Trainer counts, stage by stage in LLaMA-Factory's order.

`llamafactory.data.loader.get_dataset` (0.9.5), for the training datasets and then the evaluation datasets:
1. per dataset: its rows; `num_samples` of its `dataset_info.json` entry resamples it (numpy's global generator,
   seeded with `seed` by `transformers.set_seed`); `max_samples` keeps its first rows; LLaMA-Factory's converter
   reads every kept row (`shapes`);
2. the datasets are merged by `mix_strategy` (`mixing`);
3. `val_size` holds out validation rows of the merged training rows (`split`), before any row is processed;
4. each side is processed in map batches of `preprocessing_batch_size` (per worker shard): rows the processor
   cannot use are dropped, and packing or `stage: pt` turn rows into sequences by token length.
Each stage says its numbers and what it assumed (`Message`s); `Funnel.train_examples` is the Trainer's N.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from steplab.dataset import encodable
from steplab.dataset.catalog import DatasetAttr
from steplab.dataset.errors import DatasetError
from steplab.dataset.examples import Unconvertible, pretrain_text
from steplab.dataset.files import DATASETS_RELEASE
from steplab.dataset.mixing import mix
from steplab.dataset.settings import MIX_STRATEGIES, DataSettings
from steplab.dataset.shapes import Shapes, aligned, examples, row_shapes
from steplab.dataset.split import held_out, split_order
from steplab.dataset.templates import Template
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
    `eval_by_dataset` holds each evaluation dataset's count when `eval_on_each_dataset` keeps them apart.
    """

    stages: tuple[Stage, ...]
    train_examples: int
    eval_examples: int | None
    assumptions: tuple[Message, ...] = ()
    estimate: Estimate | None = None
    eval_by_dataset: dict[str, int] = field(default_factory=dict)

    def record(self) -> list[dict[str, Any]]:
        """The stages as plain data (the CLI's `dataset_stages`): English notes."""
        return [{"stage": s.code, "dataset": s.dataset, "rows_in": s.rows_in, "rows_out": s.rows_out,
                 "note": s.note.en} for s in self.stages]


Table = Any
"""A dataset's rows as an Arrow table (`files`), a list of row dicts, or only how many rows there are (an int)."""


@dataclass
class _Part:
    """One dataset after its own stages: its selected rows and their shapes (None when only counted)."""

    name: str
    attr: DatasetAttr
    table: Any  # a pyarrow Table, or an int (a count)
    shapes: Shapes | None

    @property
    def rows(self) -> int:
        return self.table if isinstance(self.table, int) else self.table.num_rows


@dataclass
class _Side:
    """The rows of one side (train or eval) in processing order: which part, which row of it."""

    parts: list[_Part]
    sources: np.ndarray
    rows: np.ndarray

    def __len__(self) -> int:
        return len(self.rows)

    def take(self, index: np.ndarray) -> _Side:
        return _Side(self.parts, self.sources[index], self.rows[index])

    @property
    def counted_only(self) -> bool:
        return any(part.shapes is None for part in self.parts)

    def kept(self, processor: str) -> np.ndarray:
        """Which rows the processor keeps, in order."""
        out = np.ones(len(self), dtype=bool)
        for index, part in enumerate(self.parts):
            if part.shapes is not None:
                mine = self.sources == index
                out[mine] = part.shapes.kept(processor)[self.rows[mine]]
        return out

    def suspect(self) -> np.ndarray:
        """Which rows need their encoding checked one by one."""
        out = np.zeros(len(self), dtype=bool)
        for index, part in enumerate(self.parts):
            if part.shapes is not None:
                mine = self.sources == index
                out[mine] = part.shapes.suspect[self.rows[mine]]
        return out

    def fail(self, position: int, failure: Any) -> DatasetError:
        """A row at this position that stops LLaMA-Factory, said with its dataset and row number."""
        part = self.parts[int(self.sources[position])]
        return DatasetError("dataset.would_fail", dataset=part.name, row=int(self.rows[position]) + 1,
                            reason=msg(failure.code, **failure.values))

    def examples(self, positions: np.ndarray) -> list:
        """The converted examples at these positions, in order."""
        found: dict[int, Any] = {}
        for index, part in enumerate(self.parts):
            mine = positions[self.sources[positions] == index]
            for position, example in zip(mine, examples(part.table, part.attr, self.rows[mine]), strict=True):
                found[int(position)] = example
        return [found[int(position)] for position in positions]


def _as_table(table: Table) -> Any:
    if isinstance(table, int) or hasattr(table, "num_rows"):
        return table
    import pyarrow as pa

    return pa.Table.from_pylist(list(table))


def _select(name: str, attr: DatasetAttr, table: Table, settings: DataSettings, rng: np.random.RandomState,
            stages: list[Stage]) -> _Part:
    table = _as_table(table)
    rows = table if isinstance(table, int) else table.num_rows
    said = "dataset.stage.rows_given" if isinstance(table, int) else "dataset.stage.rows"
    stages.append(Stage("rows", rows, rows, msg(said, dataset=name, rows=rows), name))
    if attr.num_samples is not None:
        target = attr.num_samples
        index = rng.permutation(rows)[:target]  # every row once, then draws with replacement for the rest
        if target > len(index):
            index = np.concatenate((index, rng.choice(rows, target - len(index)))) if rows else index
        if len(index) != target:
            raise DatasetError("dataset.empty", dataset=name)
        if target != rows:
            stages.append(Stage("num_samples", rows, target, msg("dataset.stage.num_samples", dataset=name,
                                                                 rows=rows, target=target), name))
        table = target if isinstance(table, int) else table.take(index)
        rows = target
    if settings.max_samples is not None and settings.max_samples < rows:
        cut = settings.max_samples
        stages.append(Stage("max_samples", rows, cut, msg("dataset.stage.max_samples", dataset=name, rows=rows,
                                                         max_samples=cut), name))
        table = cut if isinstance(table, int) else table.slice(0, cut)
    if isinstance(table, int):
        return _Part(name, attr, table, None)
    shapes = row_shapes(table, attr)
    shards = _shards(table.num_rows, settings.preprocessing_num_workers)
    if len(shards) > 1:  # the converter's map runs in worker shards, joined as datasets are
        column = aligned([shapes.features_of(shard) for shard in shards])
        if column is not None:
            raise DatasetError("dataset.shards_differ", dataset=name, column=column, workers=len(shards))
    return _Part(name, attr, table, shapes)


def _merge(names: Sequence[str], attrs: Mapping[str, DatasetAttr], tables: Mapping[str, Table],
           settings: DataSettings, rng: np.random.RandomState, stages: list[Stage]) -> _Side:
    parts = [_select(name, attrs[name], tables[name], settings, rng, stages) for name in names]
    lengths = [part.rows for part in parts]
    known = [part for part in parts if part.shapes is not None]
    if len(parts) > 1 and len(known) == len(parts):
        column = aligned([part.shapes.features for part in known])
        if column is not None:
            raise DatasetError("dataset.features_differ", column=column,
                               datasets=", ".join(f"{p.name} ({p.shapes.features[column]})" for p in known))
    sources, rows = mix(lengths, MIX_STRATEGIES[settings.mix_strategy], settings.interleave_probs, settings.seed)
    if len(parts) > 1:
        total = len(rows)
        terms = " + ".join(fmt_int(n) for n in lengths)
        if MIX_STRATEGIES[settings.mix_strategy] is None:
            note = msg("dataset.stage.merge", datasets=len(parts), rows=total, terms=terms)
        elif settings.interleave_probs is None:
            note = msg(f"dataset.stage.{settings.mix_strategy}", datasets=len(parts), rows=total, terms=terms,
                       shortest=min(lengths), longest=max(lengths))
        else:
            under = MIX_STRATEGIES[settings.mix_strategy] == "first_exhausted"
            spread = (msg("dataset.stage.interleave_range", low=min(lengths), high=sum(lengths) - len(lengths) + 1)
                      if under else msg("dataset.stage.interleave_at_least", low=sum(lengths)))
            note = msg("dataset.stage.interleave_probs", datasets=len(parts), rows=total, terms=terms,
                       probs=", ".join(f"{p:g}" for p in settings.interleave_probs), seed=settings.seed,
                       mix_strategy=settings.mix_strategy, spread=spread)
        stages.append(Stage("merge", sum(lengths), total, note))
    return _Side(parts, sources, rows)


def _shards(count: int, workers: int | None) -> list[range]:
    """The contiguous row ranges `datasets.map(num_proc=workers)` hands its worker processes."""
    shards = max(1, min(workers or 1, count)) if count else 1
    div, mod = divmod(count, shards)
    starts = [div * index + min(index, mod) for index in range(shards)]
    return [range(start, start + div + (1 if index < mod else 0)) for index, start in enumerate(starts)]


def _shard_batches(shard: range, size: int) -> list[range]:
    return [range(begin, min(begin + size, shard.stop)) for begin in range(shard.start, shard.stop, size)]


def _batches(count: int, size: int, workers: int | None) -> list[range]:
    """The map batches `datasets` hands a processor: per contiguous worker shard, `size` rows at a time."""
    return [batch for shard in _shards(count, workers) for batch in _shard_batches(shard, size)]


def _token_bounds(side_name: str, side: _Side, valid: np.ndarray | None, settings: DataSettings,
                  stages: list[Stage]) -> tuple[int, int]:
    """Without a tokenizer: the fewest and the most sequences packing or pt blocks can make of these rows.

    Packing only merges examples, so it makes at most one sequence per example; at best `cap` one-token
    examples share one (the low end assumes none is longer than `cap`). A pt block takes `cap` tokens, and
    a byte-level tokenizer (Qwen, LLaMA 3, GPT) never makes more tokens than the text has UTF-8 bytes (plus
    the end-of-sequence token and a word-start marker), while each row adds at least its end-of-sequence token.
    """
    cap = settings.sequence_cap
    rows = len(side)
    low = high = 0
    for batch in _batches(rows, settings.preprocessing_batch_size, settings.preprocessing_num_workers):
        chosen = np.array([i for i in batch if valid is None or valid[i]], dtype=np.int64)
        if settings.processor == "pretrain":
            if side.counted_only:
                raise DatasetError("dataset.needs_tokens")
            texts = [pretrain_text_checked(example, side, int(i)) for example, i in zip(side.examples(chosen), chosen,
                                                                                          strict=True)]
            high += sum(len(text.encode("utf-8")) + 2 for text in texts) // cap
            low += len(texts) // cap
        else:
            high += len(chosen)
            low += -(-len(chosen) // cap)
    code = "pt_blocks" if settings.processor == "pretrain" else "packing"
    kept = rows - (int((~valid).sum()) if valid is not None else 0)
    note = msg(f"dataset.stage.{code}_estimate", side=msg(f"dataset.side.{side_name}"), rows=kept, low=low, high=high,
               cap=cap, batch=settings.preprocessing_batch_size)
    stages.append(Stage(code, kept, high, note, rows_out_low=low))
    return low, high


def pretrain_text_checked(example: Any, side: _Side, position: int) -> str:
    """A pt row's text; a row without one stops LLaMA-Factory, said with its dataset and row."""
    try:
        return pretrain_text(example)
    except Unconvertible as failure:
        raise side.fail(position, failure) from None


def _check_encodable(side: _Side, valid: np.ndarray, settings: DataSettings, template: Template | None) -> None:
    """Every kept row the column-wise count could not vouch for is written out once, as the processor would
    (every kept row under a multimodal template, which refuses text holding a media placeholder)."""
    everything = template is not None and template.multimodal is not None
    positions = np.flatnonzero(valid if everything else valid & side.suspect())
    for position, example in zip(positions, side.examples(positions), strict=True):
        try:
            encodable.check(example, settings.processor, template, settings.template_options)
        except Unconvertible as failure:
            raise side.fail(int(position), failure) from None


def _process(side_name: str, side: _Side, settings: DataSettings, tokenizer: Tokenizer | None,
             template: Template | None, stages: list[Stage]) -> tuple[int, int]:
    """Examples that come out of one side (train or eval), as (fewest, most): drops, then packing or pt blocks.

    The two are equal when the count is exact; they differ only when tokens are needed and there is no tokenizer.
    """
    rows = len(side)
    processor = settings.processor
    if side.counted_only:
        return _token_bounds(side_name, side, None, settings, stages) if settings.needs_tokens else (rows, rows)
    valid = side.kept(processor)
    dropped = int((~valid).sum())
    if dropped:
        kind = "supervised" if processor == "packed" else processor
        stages.append(Stage("invalid", rows, rows - dropped,
                            msg("dataset.stage.invalid", side=msg(f"dataset.side.{side_name}"), rows=rows,
                                dropped=dropped, kept=rows - dropped, processor=kind)))
    _check_encodable(side, valid, settings, template)
    if processor != "pretrain":
        _check_batches(side_name, valid, settings)
    if processor == "pretrain":  # every pt row needs its text, packed or not
        everything = np.arange(rows, dtype=np.int64)
        for position, example in zip(everything, side.examples(everything), strict=True):
            pretrain_text_checked(example, side, int(position))
    if not settings.needs_tokens:
        return rows - dropped, rows - dropped  # truncated to cutoff_len, never dropped for length
    if tokenizer is None:
        return _token_bounds(side_name, side, valid, settings, stages)
    cap = settings.sequence_cap
    out = 0
    too_long = 0
    for batch in _batches(rows, settings.preprocessing_batch_size, settings.preprocessing_num_workers):
        chosen = np.array([i for i in batch if valid[i]], dtype=np.int64)
        batch_examples = side.examples(chosen)
        if processor == "pretrain":
            out += sum(pretrain_tokens(tokenizer, example) for example in batch_examples) // cap
            continue
        lengths = [supervised_length(tokenizer.pairs(e), cap, tokenizer.template.efficient_eos, settings.mask_history)
                   for e in batch_examples]
        fitting = [length for length in lengths if length <= cap]
        too_long += len(lengths) - len(fitting)
        out += greedy_packs(fitting, cap)
    sequences_in = rows - dropped
    if processor == "pretrain":
        stages.append(Stage("pt_blocks", sequences_in, out, msg("dataset.stage.pt_blocks", side=msg(
            f"dataset.side.{side_name}"), rows=sequences_in, blocks=out, cutoff_len=cap,
            batch=settings.preprocessing_batch_size)))
    else:
        stages.append(Stage("packing", sequences_in, out, msg("dataset.stage.packing", side=msg(
            f"dataset.side.{side_name}"), rows=sequences_in, packs=out, cap=cap,
            too_long=msg("dataset.stage.packing_dropped", too_long=too_long) if too_long else "",
            batch=settings.preprocessing_batch_size)))
    return out, out


def _check_batches(side_name: str, valid: np.ndarray, settings: DataSettings) -> None:
    """In each worker's shard, every map batch must keep a row once one does: `datasets` 4.0 cannot write a batch
    the processor emptied after (or before) one it did not.

    The sft and pairwise processors return an empty mapping for a batch whose rows are all dropped, and the shard's
    `ArrowWriter.write_batch` then fails ("Schema and number of arrays unequal"). A shard with no example at all
    writes nothing and does no harm; when no shard has one, LLaMA-Factory says it found no valid sample.
    """
    number = 0
    for shard in _shards(len(valid), settings.preprocessing_num_workers):
        batches = _shard_batches(shard, settings.preprocessing_batch_size)
        if not valid[shard.start:shard.stop].any():
            number += len(batches)
            continue
        for batch in batches:
            number += 1
            if not valid[batch.start:batch.stop].any():
                raise DatasetError("dataset.empty_batch", side=msg(f"dataset.side.{side_name}"), batch=number,
                                   first=batch.start + 1, last=batch.stop, size=settings.preprocessing_batch_size,
                                   count=settings.preprocessing_batch_size, release=DATASETS_RELEASE)


def _refusals(settings: DataSettings) -> None:
    """What LLaMA-Factory refuses about the data settings before reading a row."""
    if not settings.datasets:
        raise DatasetError("dataset.none_named")
    if settings.streaming:
        raise DatasetError("dataset.streaming_unmodelled")
    if settings.eval_datasets and settings.val_size > 1e-6:
        raise DatasetError("dataset.val_and_eval")
    if settings.neat_packing and settings.stage != "sft":
        raise DatasetError("dataset.neat_packing_stage", stage=settings.stage)
    if (settings.mask_history or settings.train_on_prompt) and settings.stage != "sft":
        raise DatasetError("dataset.sft_only", stage=settings.stage)
    probs = settings.interleave_probs
    for names in (settings.datasets, settings.eval_datasets):
        if probs is not None and names and len(names) != len(probs):
            raise DatasetError("dataset.probs_count", datasets=len(names), probs=len(probs))


def dataset_funnel(settings: DataSettings, tables: Mapping[str, Table],
                   attrs: Mapping[str, DatasetAttr | None] | None = None,
                   tokenizer: Tokenizer | None = None, template: Template | None = None) -> Funnel:
    """Run the dataset stage: `tables` has the rows (or row counts) of every dataset the settings name.

    `template` is the chat template every kept row is written with (configured by the YAML's options); without
    it (nor a tokenizer) only the checks that hold for every template are made.
    """
    template = tokenizer.template if tokenizer is not None else template
    _refusals(settings)
    attrs = {name: (attrs or {}).get(name) or DatasetAttr(name, None) for name in settings.names}  # none: alpaca
    stages: list[Stage] = []
    assumptions: list[Message] = []
    rng = np.random.RandomState(settings.seed)  # transformers.set_seed seeds numpy's global generator
    merged = _merge(settings.datasets, attrs, tables, settings, rng, stages)
    evaluation: _Side | None = None
    eval_parts: list[tuple[str, _Side]] = []
    total = len(merged)
    n_test = held_out(settings.val_size, total) if total else 0
    train_side = merged
    if n_test:
        said = "dataset.stage.split_count" if settings.val_size > 1 or isinstance(settings.val_size, int) else (
            "dataset.stage.split")
        stages.append(Stage("split", total, total - n_test, msg(said, rows=total, held=n_test,
                                                                 train=total - n_test, val_size=settings.val_size)))
        train_index, eval_index = split_order(total, n_test, settings.seed)
        train_side, evaluation = merged.take(train_index), merged.take(eval_index)
        assumptions.append(msg("dataset.assume.split", seed=settings.seed))
    elif settings.eval_datasets and settings.eval_on_each_dataset:
        eval_parts = [(name, _merge((name,), attrs, tables, settings, rng, stages)) for name in settings.eval_datasets]
    elif settings.eval_datasets:
        evaluation = _merge(settings.eval_datasets, attrs, tables, settings, rng, stages)
    if train_side.counted_only:
        assumptions.append(msg("dataset.assume.rows_valid"))
    if any(attr.num_samples is not None for attr in attrs.values()):
        assumptions.append(msg("dataset.assume.resample", seed=settings.seed))
    train = _process("train", train_side, settings, tokenizer, template, stages)
    if train[1] == 0:
        raise DatasetError("dataset.no_examples")
    eval_counts = None if evaluation is None else _process("eval", evaluation, settings, tokenizer, template, stages)
    by_dataset = {name: _process("eval", side, settings, tokenizer, template, stages) for name, side in eval_parts}
    if eval_counts is not None and eval_counts[1] == 0 or any(high == 0 for _, high in by_dataset.values()):
        raise DatasetError("dataset.no_eval_examples")
    if by_dataset:
        eval_counts = (sum(low for low, _ in by_dataset.values()), sum(high for _, high in by_dataset.values()))
    estimate = None
    if train[0] != train[1] or (eval_counts is not None and eval_counts[0] != eval_counts[1]):
        estimate = Estimate(train, eval_counts, msg("dataset.assume.estimate", low=train[0], high=train[1],
                                                    processor=msg(f"dataset.processor.{settings.processor}")))
        assumptions.append(estimate.note)
    return Funnel(tuple(stages), train[1], None if eval_counts is None else eval_counts[1], tuple(assumptions),
                  estimate, {name: high for name, (_, high) in by_dataset.items()})
