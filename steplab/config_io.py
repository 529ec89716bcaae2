"""Config import and export: a LLaMA-Factory or Hugging Face training YAML in, a StepLab setup out, and back.

`read_config` turns YAML text into the values `steplab.setup.setup_from_mapping` takes, lists which
keys it used and which it ignored, and works out the training sample count N from LLaMA-Factory's
data keys when it can (reference `trainer-math.md` §3.1–3.3, edge case 20). `write_config` writes a
setup as YAML that LLaMA-Factory (or `HfArgumentParser`) loads; StepLab-only values go into comments.

The text is untrusted (users paste it), so it is read defensively:

* at most `MAX_BYTES` (256 KiB), checked before anything is decoded or parsed;
* bytes must be UTF-8 (a UTF-8 byte-order mark is allowed);
* the event stream is scanned first, without building any objects, and rejected when it nests deeper
  than `MAX_DEPTH`, uses more than `MAX_ALIASES` aliases, an alias refers to the node that contains it,
  or the document would expand to more than `MAX_NODES` nodes once aliases are followed (this is what
  defeats "billion laughs" alias bombs: their size is measured, not built);
* only then is it loaded with a safe loader (`yaml.safe_load` semantics: plain data only; Python object
  tags are refused, nothing is imported or executed);
* the top level must be a mapping.

Every failure is a `ConfigError` carrying a catalogue code (`config_io.*`, in
`locales/<lang>/engine/config_io.yaml`), its values and, when known, the 1-based line. Notes and the
worked sample count are `Message`s too: this module writes no prose.
"""

from __future__ import annotations

import codecs
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from steplab.dataset.errors import DatasetError
from steplab.dataset.split import held_out
from steplab.errors import InputError
from steplab.fields import STEPLAB_ONLY, TRAINING_ARGUMENT_FIELDS
from steplab.i18n import Message, fmt_int, msg, t
from steplab.profiles import PROFILES
from steplab.setup import DEFAULTS, setup_from_mapping

MAX_BYTES = 256 * 1024
MAX_DEPTH = 32
MAX_ALIASES = 100
MAX_NODES = 50_000

# libyaml's parser for the event scan when available (fast, so hostile input is rejected quickly); the
# document itself is built with `yaml.safe_load`.
_SCAN_LOADER = yaml.CSafeLoader if getattr(yaml, "__with_libyaml__", False) else yaml.SafeLoader

# The LLaMA-Factory commit the reference was read at (named in the note on built-in dataset sizes).
_LLAMAFACTORY_COMMIT = "ff6d4d12e"
# Row counts of LLaMA-Factory's bundled demo datasets, only those stated in the reference
# (trainer-math.md §3.6, LLaMA-Factory @ ff6d4d12e). Used when the caller gives no count for them.
KNOWN_DATASET_ROWS: dict[str, int] = {
    "identity": 91,
    "alpaca_en_demo": 999,
    "dpo_en_demo": 300,
    "c4_demo": 300,
}

CORE_FIELDS = (
    "per_device_train_batch_size",
    "gradient_accumulation_steps",
    "num_train_epochs",
    "learning_rate",
    "lr_scheduler_type",
)
ALIASES = {"evaluation_strategy": "eval_strategy"}

# LLaMA-Factory data keys StepLab reads to count samples.
DATA_KEYS = (
    "dataset",
    "max_samples",
    "val_size",
    "eval_dataset",
    "streaming",
    "packing",
    "neat_packing",
    "stage",
    "cutoff_len",
    "mix_strategy",
    "tokenized_path",
    "preprocessing_batch_size",
    "avg_tokens_per_sample",
)
# Keys only LLaMA-Factory has; any of them marks the file as a LLaMA-Factory config.
_LLAMAFACTORY_MARKERS = frozenset(
    {"stage", "finetuning_type", "dataset", "template", "cutoff_len", "max_samples", "val_size", "lora_rank",
     "lora_target", "packing", "plot_loss", "eval_dataset", "preprocessing_num_workers"}
)
_PARALLEL_KEYS = (
    "tensor_model_parallel_size",
    "pipeline_model_parallel_size",
    "context_parallel_size",
    "sequence_parallel_size",
)
_HEADER = re.compile(r"^#\s*(num_samples|world_size|trainer|limit_train_batches):\s*(\S+)\s+\(StepLab\b")
_COMMENTED_EVAL = re.compile(r"^\s*#\s*(val_size|eval_strategy|eval_steps|eval_dataset)\s*:", re.MULTILINE)


class ConfigError(InputError):
    """A config StepLab cannot read: a code, its values and the 1-based `line` if known."""


@dataclass
class ConfigImport:
    """What `read_config` made of a YAML file.

    values: setup fields for `setup_from_mapping`: every TrainingArguments field of the setup (the
        Trainer's default where the YAML is silent), `num_samples` when known, `world_size` and
        `trainer` only when the file states them.
    used: YAML keys that were read (in file order; `# key` for StepLab's comment lines).
    ignored: YAML keys that do not enter the step arithmetic (model, LoRA, precision, output ...).
    needs_num_samples: True when N could not be worked out; the caller must supply `num_samples`.
    notes: things the user should know about this import.
    sample_lines: the worked arithmetic of N, one step per line.
    flavour: "llamafactory" or "hf" (plain TrainingArguments YAML).
    sample_source: where N came from: "argument", "yaml", "comment", "datasets" or "missing".
    document: the YAML's own mapping (keys as text), for the dataset stage (`steplab.dataset`).
    """

    values: dict[str, Any]
    used: list[str]
    ignored: list[str]
    needs_num_samples: bool
    notes: list[Message] = field(default_factory=list)
    sample_lines: list[Message] = field(default_factory=list)
    flavour: str = "hf"
    sample_source: str = "missing"
    document: dict[str, Any] = field(default_factory=dict)


# --------------------------------------------------------------------------- safe loading


def _line_of(error: yaml.YAMLError, text: str) -> tuple[int | None, int | None]:
    """1-based line and column of a PyYAML error, from its problem mark (or reader position)."""
    mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
    if mark is not None:
        return mark.line + 1, mark.column + 1
    position = getattr(error, "position", None)
    if isinstance(position, int):
        return text.count("\n", 0, position) + 1, position - (text.rfind("\n", 0, position) + 1) + 1
    return None, None


def _encoding(raw: bytes) -> str:
    """UTF-8 unless the bytes say otherwise: a UTF-16 byte-order mark (what Windows editors write for
    "Unicode"), or ASCII text with a NUL byte beside every character (UTF-16 without a mark)."""
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    head = raw[:256]
    if len(head) >= 4 and len(raw) % 2 == 0:
        if head[1::2].count(0) == len(head[1::2]) and head[0::2].count(0) == 0:
            return "utf-16-le"
        if head[0::2].count(0) == len(head[0::2]) and head[1::2].count(0) == 0:
            return "utf-16-be"
    return "utf-8-sig"


def _too_large(what: str, size: int, *, hint: bool) -> ConfigError:
    """`config_io.too_large`: `what` (`file_bytes`, `text_characters`, `text_bytes`) is `size`, over `MAX_BYTES`."""
    return ConfigError("config_io.too_large", what=msg(f"config_io.too_large.{what}", size=size), limit=MAX_BYTES,
                       kib=MAX_BYTES // 1024, hint=msg("config_io.too_large.hint") if hint else "")


def _decode(text: str | bytes) -> str:
    if isinstance(text, bytes | bytearray | memoryview):
        raw = bytes(text)
        if len(raw) > MAX_BYTES:
            raise _too_large("file_bytes", len(raw), hint=True)
        encoding = _encoding(raw)
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError as error:
            raise ConfigError("config_io.not_utf8", problem=msg(
                "config_io.not_utf8.bytes", utf8="UTF-8", utf16="UTF-16", offset=error.start)) from None
        return text[1:] if text.startswith("\ufeff") else text
    if not isinstance(text, str):
        raise ConfigError("config_io.not_text")
    if len(text) > MAX_BYTES:
        raise _too_large("text_characters", len(text), hint=True)
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        raise ConfigError("config_io.not_utf8", problem=msg("config_io.not_utf8.characters", utf8="UTF-8")) from None
    if size > MAX_BYTES:
        raise _too_large("text_bytes", size, hint=False)
    return text[1:] if text.startswith("\ufeff") else text


def _syntax_error(error: yaml.YAMLError, text: str) -> ConfigError:
    line, column = _line_of(error, text)
    problem = getattr(error, "problem", None) or getattr(error, "reason", None) or "invalid YAML"
    context = getattr(error, "context", None)
    if context and not isinstance(error, yaml.constructor.ConstructorError):
        problem = f"{context}; {problem}"
    if isinstance(error, yaml.constructor.ConstructorError) and "tag" in str(problem) and line is not None:
        return ConfigError("config_io.unsafe_tag", line=line, problem=msg("config_io.unsafe_tag.any", line=line))
    where = (msg("config_io.syntax.position", line=line, column=column) if line is not None
             else msg("config_io.syntax.unknown_position"))
    return ConfigError("config_io.syntax", line=line, where=where, detail=problem)


def _scan(text: str) -> dict[str, int]:
    """Enforce StepLab's limits on the event stream; return top-level key → line.

    libyaml reads ahead of the events it hands over and has limits of its own (PyYAML 6.0.4's bundled
    libyaml stops at 1,000 levels of nesting). When it raises, the text is walked again with PyYAML's
    pure-Python parser, which reads no further than it must, so StepLab's own limit is the one reported
    (too deep, with its line) whichever layer noticed first; a real syntax error keeps libyaml's message.
    """
    try:
        return _walk(text, _SCAN_LOADER)
    except yaml.YAMLError as error:
        if _SCAN_LOADER is yaml.SafeLoader:
            raise _syntax_error(error, text) from None
        try:
            return _walk(text, yaml.SafeLoader)
        except yaml.YAMLError:
            raise _syntax_error(error, text) from None


def _walk(text: str, loader: type) -> dict[str, int]:
    """Walk the event stream without building objects, raising ConfigError at the first limit passed.

    The expanded size is measured as nodes after following aliases: a scalar counts 1, a collection
    1 + its children, an alias the size its anchor already had. That is linear in the text however
    large the expansion, so an alias bomb is measured, never built.
    """
    stack: list[list[Any]] = []  # [anchor, expanded size, child count, is a mapping]
    open_anchors: set[str] = set()
    done_anchors: dict[str, int] = {}
    aliases = 0
    key_lines: dict[str, int] = {}
    root_size = 0

    def add(size: int, line: int) -> None:
        nonlocal root_size
        if stack:
            frame = stack[-1]
            frame[1] += size
            frame[2] += 1
            total = frame[1]
        else:
            root_size += size
            total = root_size
        if total > MAX_NODES:
            raise ConfigError("config_io.too_many_nodes", line=line, limit=MAX_NODES)

    for event in yaml.parse(text, Loader=loader):
        line = event.start_mark.line + 1 if event.start_mark is not None else None
        tag = getattr(event, "tag", None)
        if isinstance(tag, str) and tag.startswith(("tag:yaml.org,2002:python/", "!!python/")):
            tag = tag.replace("tag:yaml.org,2002:", "!!")
            raise ConfigError("config_io.unsafe_tag", line=line,
                              problem=msg("config_io.unsafe_tag.named", line=line, tag=tag))
        if isinstance(event, yaml.MappingStartEvent | yaml.SequenceStartEvent):
            if len(stack) >= MAX_DEPTH:
                raise ConfigError("config_io.too_deep", line=line, limit=MAX_DEPTH)
            if event.anchor is not None:
                open_anchors.add(event.anchor)
            stack.append([event.anchor, 1, 0, isinstance(event, yaml.MappingStartEvent)])
        elif isinstance(event, yaml.MappingEndEvent | yaml.SequenceEndEvent):
            anchor, size, _, _ = stack.pop()
            if anchor is not None:
                open_anchors.discard(anchor)
                done_anchors[anchor] = size
            add(size, line)
        elif isinstance(event, yaml.ScalarEvent):
            if len(stack) == 1 and stack[0][3] and stack[0][2] % 2 == 0:
                key_lines.setdefault(event.value, line)
            if event.anchor is not None:
                done_anchors[event.anchor] = 1
            add(1, line)
        elif isinstance(event, yaml.AliasEvent):
            aliases += 1
            if aliases > MAX_ALIASES:
                raise ConfigError("config_io.too_many_aliases", line=line, limit=MAX_ALIASES)
            if event.anchor in open_anchors:
                raise ConfigError("config_io.recursive_alias", line=line, anchor=event.anchor)
            add(done_anchors.get(event.anchor, 1), line)
    return key_lines


def _load(text: str) -> tuple[dict[Any, Any], dict[str, int]]:
    key_lines = _scan(text)
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise _syntax_error(error, text) from None
    except (ValueError, TypeError, RecursionError, OverflowError) as error:
        # e.g. an integer with more digits than Python converts
        detail = f"{type(error).__name__}: {error}"
        detail = detail if len(detail) <= 120 else detail[:117] + "..."
        raise ConfigError("config_io.bad_value", problem=msg("config_io.bad_value.unreadable", detail=detail)) from None
    if document is None:
        raise ConfigError("config_io.empty")
    if not isinstance(document, dict):
        name = type(document).__name__
        kind = msg(f"config_io.kind.{name}") if name in ("list", "str") else msg("config_io.kind.other", name=name)
        raise ConfigError("config_io.not_mapping", line=1, kind=kind)
    return document, key_lines


# --------------------------------------------------------------------------- sample count


def packed_samples_estimate(
    rows: int,
    avg_tokens: float,
    cutoff_len: int,
    stage: str,
    packing_in_yaml: bool | None,
    *,
    preprocessing_batch_size: int = 1000,
) -> int:
    """Estimated training rows after LLaMA-Factory's packing (reference §3.3). An estimate, not a count.

    Assumptions: every row has exactly `avg_tokens` tokens after tokenisation (for `pt` including the
    EOS LLaMA-Factory appends); rows are cut into map batches of `preprocessing_batch_size` (default
    1000) and a single preprocessing worker (more workers split each batch further, so `pt` loses a
    little more to dropped tails: LLaMA-Factory issue #6133); no row is dropped for a bad format.

    `packing_in_yaml` is the YAML's `packing` value (`None` when absent; pass True for
    `neat_packing`, which switches packing on before `cutoff_len` is adjusted).

    * stage `pt`, packing not False: blocks of `cutoff_len` tokens when `packing` was left unset
      (`DataArguments.__post_init__` decrements `cutoff_len` only when packing is already true, and the
      pt default switches it on later), `cutoff_len - 1` when the YAML says `packing: true` (reading of
      the code, reference §3.3); the tail of each map batch shorter than a block is dropped:
      N = Σ over map batches ⌊batch_rows × avg_tokens / block⌋.
    * stage `sft` with packing on: capacity `cutoff_len - 1`; if rows are longer than that they are
      all dropped (N = 0); else N ≈ Σ over map batches ⌈batch_rows × avg_tokens / capacity⌉, a lower
      bound (greedy knapsack can open more bins).
    * anything else (packing off, other stages): rows are truncated, not packed, so N = rows.
    """
    if rows < 0 or avg_tokens <= 0 or cutoff_len < 2 or preprocessing_batch_size < 1:
        raise ValueError("rows >= 0, avg_tokens > 0, cutoff_len >= 2 and preprocessing_batch_size >= 1 are required")
    if stage == "pt" and packing_in_yaml is not False:
        block = cutoff_len - 1 if packing_in_yaml else cutoff_len
        rounding = math.floor
    elif stage == "sft" and packing_in_yaml:
        block = cutoff_len - 1
        if avg_tokens > block:
            return 0
        rounding = math.ceil
    else:
        return rows
    full, rest = divmod(rows, preprocessing_batch_size)
    total = full * rounding(preprocessing_batch_size * avg_tokens / block)
    if rest:
        total += rounding(rest * avg_tokens / block)
    return int(total)


def _bad(key: str, value: Any, expected: Message, line: int | None) -> ConfigError:
    """`config_io.bad_value` for YAML key `key`: the value it got (shortened) and what was `expected`."""
    shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
    return ConfigError("config_io.bad_value", line=line,
                       problem=msg("config_io.bad_value.key", key=key, shown=shown, expected=expected))


def _number(key: str, value: Any, line: int | None) -> int | float:
    """A YAML number; numeric text is read as a float like the command line would."""
    if isinstance(value, bool) or value is None:
        raise _bad(key, value, msg("config_io.expected.number"), line)
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise _bad(key, value, msg("config_io.expected.number"), line) from None
    if not isinstance(value, int | float) or not math.isfinite(value):
        raise _bad(key, value, msg("config_io.expected.number"), line)
    return value


def _whole(key: str, value: Any, low: int, line: int | None) -> int:
    number = _number(key, value, line)
    if number != int(number) or number < low:
        raise _bad(key, value, msg("config_io.expected.whole", low=low), line)
    return int(number)


def _flag(key: str, value: Any, line: int | None) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise _bad(key, value, msg("config_io.expected.flag"), line)


def _names(value: Any, line: int | None) -> list[str]:
    """`dataset:` as LLaMA-Factory splits it: comma-separated, each name stripped."""
    if isinstance(value, str):
        return [name.strip() for name in value.split(",") if name.strip()]
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return [name.strip() for name in value if name.strip()]
    raise _bad("dataset", value, msg("config_io.expected.dataset_names"), line)


@dataclass
class _Count:
    n: int | None = None
    lines: list[Message] = field(default_factory=list)
    notes: list[Message] = field(default_factory=list)
    used: set[str] = field(default_factory=set)


def _val_split(n: int, val_size: int | float, line: int | None) -> tuple[int, Message]:
    """`split_dataset` + `datasets.train_test_split`: (training rows, worked line); the count is `held_out`'s."""
    shown = str(val_size)  # the number as Python writes it (no thousands separators), as before
    try:
        n_val: int | None = held_out(val_size, n)
    except DatasetError:
        n_val = None
    if val_size > 1:
        if n_val is None:
            raise ConfigError("config_io.val_size_too_large", line=line, problem=msg(
                "config_io.val_size_too_large.count", val_size=shown, n_val=int(val_size), rows=n, interval="(0, 1)"))
        return n - n_val, msg("config_io.count.val_absolute", val_size=shown, limit=1, n_val=n_val, rows=n,
                              train=n - n_val)
    if isinstance(val_size, int):  # exactly 1: not > 1, so it reaches train_test_split as the int 1
        if n_val is None:
            raise ConfigError("config_io.val_size_too_large", line=line, problem=msg(
                "config_io.val_size_too_large.one", val_size=shown, need=2, rows=n))
        return n - 1, msg("config_io.count.val_one", whole=1, limit=1, train=n - 1)
    if n_val is None:
        raise ConfigError("config_io.val_size_empty_train", line=line, problem=msg(
            "config_io.val_size_empty_train.fraction", val_size=shown, rows=n))
    return n - n_val, msg("config_io.count.val_fraction", val_size=shown, rows=n, n_val=n_val, train=n - n_val)


def _count_samples(
    doc: Mapping[Any, Any],
    key_lines: Mapping[str, int],
    dataset_rows: Mapping[str, int] | None,
    avg_tokens: float | None,
    n_given: bool,
) -> _Count:
    """LLaMA-Factory's road from raw rows to N (reference §3.2), checks included.

    The checks LLaMA-Factory itself makes (eval_dataset with val_size, val_size 1.0, streaming rules)
    run even when N is supplied, because LLaMA-Factory would refuse the file either way.
    """
    out = _Count()
    present = {key for key in DATA_KEYS if key in doc}
    out.used |= present

    def line(key: str) -> int | None:
        return key_lines.get(key)

    val_size: int | float = 0
    if doc.get("val_size") is not None:
        val_size = _number("val_size", doc["val_size"], line("val_size"))
    splitting = val_size > 1e-6
    if splitting and doc.get("eval_dataset") is not None:
        raise ConfigError("config_io.val_size_with_eval_dataset", line=line("val_size"))
    if isinstance(val_size, float) and val_size == 1.0:
        raise ConfigError("config_io.val_size_one", line=line("val_size"), value="1.0", interval="(0, 1)", limit=1,
                          example=100)

    streaming = _flag("streaming", doc.get("streaming"), line("streaming"))
    if streaming:
        if doc.get("max_samples") is not None:
            raise ConfigError("config_io.streaming_max_samples", line=line("max_samples"))
        if splitting and val_size < 1:
            raise ConfigError("config_io.streaming_val_size", line=line("val_size"))
        max_steps = doc.get("max_steps")
        if max_steps is None or (isinstance(max_steps, int | float) and not isinstance(max_steps, bool)
                                 and max_steps <= 0):
            raise ConfigError("config_io.streaming_max_steps", line=line("streaming"))
        out.notes.append(msg("config_io.note.streaming"))
        return out

    stage = str(doc.get("stage") or "sft")
    packing = _flag("packing", doc.get("packing"), line("packing"))
    neat = _flag("neat_packing", doc.get("neat_packing"), line("neat_packing"))
    packing_in_yaml = True if neat else packing
    packing_on = (stage == "pt" and packing_in_yaml is not False) or (stage == "sft" and bool(packing_in_yaml))
    if packing_on and "preprocessing_num_workers" in doc:
        out.used.add("preprocessing_num_workers")

    if n_given:
        if packing_on:
            out.notes.append(msg("config_io.note.packed_count_given"))
        return out

    if doc.get("tokenized_path") is not None:
        out.notes.append(msg("config_io.note.tokenized_path"))
        return out
    if doc.get("dataset") is None:
        return out
    names = _names(doc["dataset"], line("dataset"))
    if not names:
        return out
    mix = str(doc.get("mix_strategy") or "concat")
    if len(names) > 1 and mix.startswith("interleave"):
        out.notes.append(msg("config_io.note.interleave", mix=mix))
        return out

    max_samples = None
    if doc.get("max_samples") is not None:
        max_samples = _whole("max_samples", doc["max_samples"], 0, line("max_samples"))
    given = dict(dataset_rows or {})
    for name, rows in given.items():
        if isinstance(rows, bool) or not isinstance(rows, int) or rows < 0:
            raise ConfigError("config_io.bad_dataset_rows", name=name, low=0, rows=repr(rows))
    missing = [name for name in names if name not in given and name not in KNOWN_DATASET_ROWS]
    if missing:
        out.notes.append(msg("config_io.note.unknown_rows", names=", ".join(missing)))
        return out

    builtin = [name for name in names if name not in given]
    total = 0
    counts: list[int] = []
    for name in names:
        rows = given[name] if name in given else KNOWN_DATASET_ROWS[name]
        tag = msg("config_io.count.builtin") if name in builtin else ""
        if max_samples is None:
            kept = rows
            out.lines.append(msg("config_io.count.dataset", name=name, rows=rows, builtin=tag))
        else:
            kept = min(max_samples, rows)
            out.lines.append(msg("config_io.count.dataset_capped", name=name, rows=rows, max_samples=max_samples,
                                 kept=kept, builtin=tag))
        counts.append(kept)
        total += kept
    if len(counts) > 1:
        terms: str | Message = (" + ".join(fmt_int(c) for c in counts) if len(counts) <= 6
                                else msg("config_io.count.datasets", count=len(counts)))
        out.lines.append(msg("config_io.count.total", terms=terms, total=total))
    if builtin:
        sizes = ", ".join(f"{name} {KNOWN_DATASET_ROWS[name]}" for name in builtin)
        out.notes.append(msg("config_io.note.builtin_sizes", sizes=sizes, commit=_LLAMAFACTORY_COMMIT))

    n = total
    if splitting:
        if n == 0:
            raise ConfigError("config_io.val_size_empty_train", line=line("val_size"),
                              problem=msg("config_io.val_size_empty_train.no_rows"))
        n, worked = _val_split(n, val_size, line("val_size"))
        out.lines.append(worked)
        if isinstance(val_size, int) and val_size == 1:
            out.notes.append(msg("config_io.note.val_size_one", whole=1, fraction="1.0"))

    if packing_on:
        cutoff = _whole("cutoff_len", doc.get("cutoff_len", 2048), 2, line("cutoff_len"))
        if avg_tokens is None:
            out.notes.append(msg("config_io.note.packing_unpacked", stage=stage, cutoff=cutoff))
        else:
            batch = _whole("preprocessing_batch_size", doc.get("preprocessing_batch_size", 1000), 1,
                           line("preprocessing_batch_size"))
            packed = packed_samples_estimate(n, avg_tokens, cutoff, stage, packing_in_yaml,
                                             preprocessing_batch_size=batch)
            if stage == "pt":
                block = cutoff - 1 if packing_in_yaml else cutoff
                out.lines.append(msg("config_io.count.packed_pt", block=block, batch=batch, avg_tokens=avg_tokens,
                                     packed=packed))
            else:
                out.lines.append(msg("config_io.count.packed_sft", capacity=cutoff - 1, batch=batch,
                                     avg_tokens=avg_tokens, packed=packed))
            out.notes.append(msg("config_io.note.packed_estimate"))
            n = packed
    out.lines.append(msg("config_io.count.n", n=n))
    out.n = n
    return out


# --------------------------------------------------------------------------- read


def _header_values(text: str) -> dict[str, Any]:
    """StepLab's own comment lines, e.g. `# num_samples: 1600  (StepLab: ...)`."""
    found: dict[str, Any] = {}
    for raw in text.splitlines():
        match = _HEADER.match(raw)
        if not match or match.group(1) in found:
            continue
        token = match.group(2)
        value: Any = token
        for convert in (int, float):
            try:
                value = convert(token)
                break
            except ValueError:
                continue
        found[match.group(1)] = value
    return found


def _notes_for_keys(doc: Mapping[Any, Any], text: str) -> list[Message]:
    """Notes on keys that do not change the count but that the user should know about."""
    notes: list[Message] = []
    if doc.get("deepspeed"):
        notes.append(msg("config_io.note.deepspeed"))
    if "per_device_eval_batch_size" in doc:
        notes.append(msg("config_io.note.eval_batch_size"))
    if "evaluation_strategy" in doc:
        both = msg("config_io.note.evaluation_strategy.both") if "eval_strategy" in doc else ""
        notes.append(msg("config_io.note.evaluation_strategy", both=both))
    active_eval = any(key in doc for key in ("val_size", "eval_strategy", "evaluation_strategy", "eval_dataset"))
    if not active_eval and _COMMENTED_EVAL.search(text):
        notes.append(msg("config_io.note.commented_eval"))
    big = [key for key in _PARALLEL_KEYS
           if isinstance(doc.get(key), int) and not isinstance(doc.get(key), bool) and doc[key] > 1]
    if big:
        notes.append(msg("config_io.note.model_parallel", keys=", ".join(big), limit=1, section="3.5"))
    if str(doc.get("stage") or "") == "ppo":
        notes.append(msg("config_io.note.ppo"))
    if doc.get("auto_find_batch_size"):
        notes.append(msg("config_io.note.auto_find_batch_size"))
    return notes


def read_config(
    text: str | bytes,
    *,
    dataset_rows: Mapping[str, int] | None = None,
    num_samples: int | None = None,
    avg_tokens_per_sample: float | None = None,
) -> ConfigImport:
    """Read a LLaMA-Factory or plain Hugging Face training YAML (untrusted text) into a `ConfigImport`.

    Sample count N, first that applies: the `num_samples` argument; a `num_samples` key in the YAML;
    StepLab's `# num_samples: ... (StepLab ...)` comment; LLaMA-Factory's data keys (`dataset` with row
    counts from `dataset_rows`, else `KNOWN_DATASET_ROWS`; `max_samples` per dataset; `val_size`;
    packing only as an estimate when `avg_tokens_per_sample` is given, as argument or YAML key).
    Otherwise `needs_num_samples` is True and `values` has no `num_samples`.

    Raises `ConfigError` for anything it cannot read. Field values are not validated here:
    `setup_from_mapping(result.values)` does that and raises `SetupError` naming the field.
    """
    source = _decode(text)
    doc, key_lines = _load(source)
    header = _header_values(source)
    keys = [str(key) for key in doc]
    doc = {str(key): value for key, value in doc.items()}

    flavour = "llamafactory" if any(key in _LLAMAFACTORY_MARKERS for key in doc) else "hf"
    defaults = DEFAULTS.to_dict()
    values: dict[str, Any] = {name: defaults[name] for name in TRAINING_ARGUMENT_FIELDS}
    used: set[str] = set()
    notes: list[Message] = []

    for name in TRAINING_ARGUMENT_FIELDS:
        if name in doc:
            values[name] = doc[name]
            used.add(name)
    for alias, name in ALIASES.items():
        if alias in doc:
            used.add(alias)
            if name not in doc:
                values[name] = doc[alias]

    # StepLab's own keys: a YAML key wins over StepLab's comment line.
    for name in ("world_size", "trainer", "limit_train_batches"):
        if name in doc:
            values[name] = doc[name]
            used.add(name)
        elif name in header:
            values[name] = header[name]
            used.add(f"# {name}")
    if "world_size" not in values and "ray_num_workers" in doc:
        values["world_size"] = doc["ray_num_workers"]
        used.add("ray_num_workers")
        notes.append(msg("config_io.note.ray_world_size", env="USE_RAY=1"))
    elif "world_size" not in values:
        notes.append(msg("config_io.note.no_world_size"))

    avg_tokens = avg_tokens_per_sample
    if avg_tokens is None and doc.get("avg_tokens_per_sample") is not None:
        avg_tokens = _number("avg_tokens_per_sample", doc["avg_tokens_per_sample"], key_lines.get("avg_tokens_per_sample"))
    if avg_tokens is not None:
        avg_tokens = float(_number("avg_tokens_per_sample", avg_tokens, key_lines.get("avg_tokens_per_sample")))
        if avg_tokens <= 0:
            raise _bad("avg_tokens_per_sample", avg_tokens, msg("config_io.expected.above", low=0),
                       key_lines.get("avg_tokens_per_sample"))

    if "num_samples" in doc:
        used.add("num_samples")
    if num_samples is not None:
        sample_source, n_value = "argument", num_samples
    elif "num_samples" in doc:
        sample_source, n_value = "yaml", doc["num_samples"]
        if flavour == "llamafactory":
            notes.append(msg("config_io.note.num_samples_key"))
    elif "num_samples" in header:
        sample_source, n_value = "comment", header["num_samples"]
        used.add("# num_samples")
    else:
        sample_source, n_value = "missing", None

    count = _count_samples(doc, key_lines, dataset_rows, avg_tokens, n_given=n_value is not None)
    used |= count.used
    sample_lines = count.lines
    if n_value is None and count.n is not None:
        sample_source, n_value = "datasets", count.n
    if n_value is not None:
        values["num_samples"] = n_value
        if sample_source != "datasets" and flavour == "llamafactory" and "dataset" in doc:
            notes.append(msg("config_io.note.count_given"))
    notes.extend(count.notes)
    notes.extend(_notes_for_keys(doc, source))

    ordered_used = [key for key in keys if key in used] + sorted(key for key in used if key.startswith("# "))
    ignored = [key for key in keys if key not in used]
    return ConfigImport(
        values=values,
        used=ordered_used,
        ignored=ignored,
        needs_num_samples=n_value is None,
        notes=notes,
        sample_lines=sample_lines,
        flavour=flavour,
        sample_source=sample_source,
        document=doc,
    )


# --------------------------------------------------------------------------- write

def _dump(name: str, value: Any) -> str:
    return yaml.safe_dump({name: value}, default_flow_style=False, sort_keys=False, allow_unicode=True)


def write_config(setup_values: Mapping[str, Any], *, flavour: str = "llamafactory", lang: str = "en") -> str:
    """YAML text of a setup that LLaMA-Factory (`flavour="llamafactory"`) or `HfArgumentParser` (`"hf"`) loads.

    The values are validated with `setup_from_mapping` first (so `SetupError` for bad input; keys it
    does not know are left out). Only TrainingArguments keys are written as YAML; StepLab's own
    `num_samples`, `world_size`, `trainer` (and `limit_train_batches` when set) become comment lines
    at the top, which `read_config` reads back. Keys equal to the Trainer's default are left out,
    except the core ones (batch size, accumulation, epochs, learning rate, scheduler, warmup);
    `max_steps` only when positive; `lr_scheduler_kwargs` only when not empty. Comments are in `lang`
    (the keys and values are the same in every language).
    """
    if flavour not in ("llamafactory", "hf"):
        raise ValueError(f"flavour must be 'llamafactory' or 'hf', got {flavour!r}")
    setup, _unknown = setup_from_mapping(setup_values)
    values = setup.to_dict()
    defaults = DEFAULTS.to_dict()

    def wanted(name: str) -> bool:
        value = values[name]
        if name in CORE_FIELDS:
            return True
        if name == "max_steps":
            return value > 0
        if name == "lr_scheduler_kwargs":
            return bool(value)
        if name == "warmup_steps":
            return values["warmup_ratio"] is None or value != defaults[name]
        if name == "warmup_ratio":
            return value is not None
        return value != defaults[name]

    if flavour == "llamafactory":
        sections = (
            ("### output", ("logging_strategy", "logging_steps", "save_strategy", "save_steps")),
            ("### train", ("per_device_train_batch_size", "gradient_accumulation_steps", "learning_rate",
                           "num_train_epochs", "max_steps", "lr_scheduler_type", "lr_scheduler_kwargs",
                           "warmup_ratio", "warmup_steps", "dataloader_drop_last")),
            ("### eval", ("eval_strategy", "eval_steps")),
        )
    else:
        sections = (("", TRAINING_ARGUMENT_FIELDS),)
    lines = [f"# {t(lang, f'export.{flavour}.title')}", f"# {t(lang, f'export.{flavour}.hint')}"]
    for name in STEPLAB_ONLY:
        value = values[name]
        if value is None:
            continue
        shown = repr(value) if isinstance(value, float) else str(value)
        note = t(lang, f"export.comment.{name}", release=PROFILES[value].matched if name == "trainer" else "")
        lines.append(f"# {name}: {shown}  (StepLab{t(lang, 'export.colon')}{note})")
    written = set()
    for title, names in sections:
        body = []
        for name in names:
            if not wanted(name):
                continue
            if name == "warmup_ratio":
                body.append(f"# warmup_ratio: {t(lang, 'export.warmup_ratio')}")
            body.append(_dump(name, values[name]).rstrip("\n"))
        written.update(names)
        if not body:
            continue
        lines.append("")
        if title:
            lines.append(title)
        lines.extend(body)
    missing = [name for name in TRAINING_ARGUMENT_FIELDS if name not in written and wanted(name)]
    if missing:  # a field added to the setup later still gets written
        lines.append("")
        lines.extend(_dump(name, values[name]).rstrip("\n") for name in missing)
    return "\n".join(lines) + "\n"
