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

Every failure is a `ConfigError` carrying a code, a Chinese and English message and, when known, the
1-based line.
"""

from __future__ import annotations

import codecs
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from steplab.errors import InputError
from steplab.fields import STEPLAB_ONLY, TRAINING_ARGUMENT_FIELDS
from steplab.i18n import Text, fmt_int, t
from steplab.profiles import PROFILES
from steplab.setup import DEFAULTS, setup_from_mapping

MAX_BYTES = 256 * 1024
MAX_DEPTH = 32
MAX_ALIASES = 100
MAX_NODES = 50_000

# libyaml's parser for the event scan when available (fast, so hostile input is rejected quickly); the
# document itself is built with `yaml.safe_load`.
_SCAN_LOADER = yaml.CSafeLoader if getattr(yaml, "__with_libyaml__", False) else yaml.SafeLoader

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
    """

    values: dict[str, Any]
    used: list[str]
    ignored: list[str]
    needs_num_samples: bool
    notes: list[Text] = field(default_factory=list)
    sample_lines: list[Text] = field(default_factory=list)
    flavour: str = "hf"
    sample_source: str = "missing"


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


def _decode(text: str | bytes) -> str:
    if isinstance(text, bytes | bytearray | memoryview):
        raw = bytes(text)
        if len(raw) > MAX_BYTES:
            raise ConfigError("too_large", Text(
                f"文件有 {fmt_int(len(raw))} 字节,超过上限 {fmt_int(MAX_BYTES)} 字节(256 KiB),未解析。训练配置通常只有几 KB。",
                f"The file is {fmt_int(len(raw))} bytes, over the {fmt_int(MAX_BYTES)}-byte (256 KiB) limit; "
                "it was not parsed. Training configs are a few kilobytes.",
            ))
        encoding = _encoding(raw)
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError as error:
            raise ConfigError("not_utf8", Text(
                f"这不是 UTF-8 或 UTF-16 文本(偏移 {fmt_int(error.start)} 处的字节无法解码),可能是二进制文件。请粘贴 YAML 文本。",
                f"This is not UTF-8 or UTF-16 text (the byte at offset {fmt_int(error.start)} cannot be decoded); "
                "it may be a binary file. Paste the YAML text instead.",
            )) from None
        return text[1:] if text.startswith("\ufeff") else text
    if not isinstance(text, str):
        raise ConfigError("not_text", Text("配置必须是文本。", "The config must be text."))
    if len(text) > MAX_BYTES:
        raise ConfigError("too_large", Text(
            f"文本有 {fmt_int(len(text))} 个字符,超过上限 {fmt_int(MAX_BYTES)} 字节(256 KiB),未解析。训练配置通常只有几 KB。",
            f"The text has {fmt_int(len(text))} characters, over the {fmt_int(MAX_BYTES)}-byte (256 KiB) "
            "limit; it was not parsed. Training configs are a few kilobytes.",
        ))
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        raise ConfigError("not_utf8", Text(
            "文本包含无法编码为 UTF-8 的字符。", "The text contains characters that cannot be encoded as UTF-8."
        )) from None
    if size > MAX_BYTES:
        raise ConfigError("too_large", Text(
            f"文本有 {fmt_int(size)} 字节,超过上限 {fmt_int(MAX_BYTES)} 字节(256 KiB),未解析。",
            f"The text is {fmt_int(size)} bytes, over the {fmt_int(MAX_BYTES)}-byte (256 KiB) limit; it was not parsed.",
        ))
    return text[1:] if text.startswith("\ufeff") else text


def _syntax_error(error: yaml.YAMLError, text: str) -> ConfigError:
    line, column = _line_of(error, text)
    problem = getattr(error, "problem", None) or getattr(error, "reason", None) or "invalid YAML"
    context = getattr(error, "context", None)
    if context and not isinstance(error, yaml.constructor.ConstructorError):
        problem = f"{context}; {problem}"
    if isinstance(error, yaml.constructor.ConstructorError) and "tag" in str(problem):
        return ConfigError("unsafe_tag", Text(
            f"第 {line} 行使用了不允许的 YAML 标签(例如 !!python/...)。只接受普通数据:数字、文本、列表和映射;未执行任何内容。",
            f"Line {line} uses a YAML tag that is not allowed (such as !!python/...). Only plain data is "
            "accepted: numbers, text, lists and mappings; nothing was executed.",
        ), line)
    where_en = f"line {line}, column {column}" if line is not None else "an unknown position"
    where_zh = f"第 {line} 行第 {column} 列" if line is not None else "未知位置"
    return ConfigError("syntax", Text(
        f"YAML 语法错误({where_zh}):{problem}",
        f"YAML syntax error at {where_en}: {problem}",
    ), line)


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
            raise ConfigError("too_many_nodes", Text(
                f"文档展开后超过 {fmt_int(MAX_NODES)} 个节点(在第 {line} 行附近,通常是别名炸弹 *alias)。训练配置不会这么大。",
                f"The document expands to more than {fmt_int(MAX_NODES)} nodes (near line {line}; usually an "
                "alias bomb built from *aliases). A training config is never that large.",
            ), line)

    for event in yaml.parse(text, Loader=loader):
        line = event.start_mark.line + 1 if event.start_mark is not None else None
        tag = getattr(event, "tag", None)
        if isinstance(tag, str) and tag.startswith(("tag:yaml.org,2002:python/", "!!python/")):
            tag = tag.replace("tag:yaml.org,2002:", "!!")
            raise ConfigError("unsafe_tag", Text(
                f"第 {line} 行使用了不允许的 YAML 标签 {tag}。只接受普通数据;未执行任何内容。",
                f"Line {line} uses the YAML tag {tag}, which is not allowed. Only plain data is accepted; "
                "nothing was executed.",
            ), line)
        if isinstance(event, yaml.MappingStartEvent | yaml.SequenceStartEvent):
            if len(stack) >= MAX_DEPTH:
                raise ConfigError("too_deep", Text(
                    f"第 {line} 行嵌套超过 {MAX_DEPTH} 层。训练配置只有几层。",
                    f"Nesting deeper than {MAX_DEPTH} levels at line {line}. A training config has only a few levels.",
                ), line)
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
                raise ConfigError("too_many_aliases", Text(
                    f"文档使用了超过 {MAX_ALIASES} 个别名(*alias,第 {line} 行)。训练配置用不到这么多。",
                    f"The document uses more than {MAX_ALIASES} aliases (*alias, line {line}). A training "
                    "config does not need that many.",
                ), line)
            if event.anchor in open_anchors:
                raise ConfigError("recursive_alias", Text(
                    f"第 {line} 行的别名 *{event.anchor} 指向包含它自己的节点(自引用),不支持。",
                    f"The alias *{event.anchor} at line {line} points into the node that contains it "
                    "(a self-reference); that is not supported.",
                ), line)
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
        raise ConfigError("bad_value", Text(
            f"YAML 中有无法读取的值({detail})。",
            f"The YAML contains a value that cannot be read ({detail}).",
        )) from None
    if document is None:
        raise ConfigError("empty", Text("配置是空的:没有任何键。", "The config is empty: it has no keys."))
    if not isinstance(document, dict):
        kind = type(document).__name__
        names = {"list": ("列表", "a list"), "str": ("一段文本", "a text value")}
        zh, en = names.get(kind, (kind, f"a {kind}"))
        raise ConfigError("not_mapping", Text(
            f"配置的顶层必须是“键: 值”映射,而这里是{zh}。",
            f"The top level of the config must be a mapping of `key: value` lines; this is {en}.",
        ), 1)
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


def _bad(key: str, value: Any, en: str, zh: str, line: int | None) -> ConfigError:
    shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
    return ConfigError("bad_value", Text(f"{key}: 收到 {shown};{zh}", f"{key}: got {shown}; {en}"), line)


def _number(key: str, value: Any, line: int | None) -> int | float:
    """A YAML number; numeric text is read as a float like the command line would."""
    if isinstance(value, bool) or value is None:
        raise _bad(key, value, "expected a number.", "需要一个数字。", line)
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise _bad(key, value, "expected a number.", "需要一个数字。", line) from None
    if not isinstance(value, int | float) or not math.isfinite(value):
        raise _bad(key, value, "expected a number.", "需要一个数字。", line)
    return value


def _whole(key: str, value: Any, low: int, line: int | None) -> int:
    number = _number(key, value, line)
    if number != int(number) or number < low:
        raise _bad(key, value, f"expected a whole number of at least {low}.", f"需要不小于 {low} 的整数。", line)
    return int(number)


def _flag(key: str, value: Any, line: int | None) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise _bad(key, value, "expected true or false.", "需要 true 或 false。", line)


def _names(value: Any, line: int | None) -> list[str]:
    """`dataset:` as LLaMA-Factory splits it: comma-separated, each name stripped."""
    if isinstance(value, str):
        return [name.strip() for name in value.split(",") if name.strip()]
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return [name.strip() for name in value if name.strip()]
    raise _bad("dataset", value, "expected dataset names separated by commas.", "需要以逗号分隔的数据集名称。", line)


@dataclass
class _Count:
    n: int | None = None
    lines: list[Text] = field(default_factory=list)
    notes: list[Text] = field(default_factory=list)
    used: set[str] = field(default_factory=set)


def _val_split(n: int, val_size: int | float, line: int | None) -> tuple[int, Text]:
    """`split_dataset` + `datasets.train_test_split`: (training rows, worked line)."""
    if val_size > 1:
        n_val = int(val_size)
        if n_val >= n:
            raise ConfigError("val_size_too_large", Text(
                f"val_size {val_size} 作为绝对数量({n_val} 行)不小于总行数 {fmt_int(n)};datasets 会报 ValueError。",
                f"val_size {val_size} as an absolute count ({n_val} rows) is not smaller than the {fmt_int(n)} rows; "
                f"datasets raises ValueError: test_size={n_val} should be either positive and smaller than the "
                f"number of samples {n} or a float in the (0, 1) range",
            ), line)
        return n - n_val, Text(
            f"val_size {val_size}(大于 1,按绝对数量)→ {fmt_int(n_val)} 行用于验证 → {fmt_int(n)} − {fmt_int(n_val)} = "
            f"{fmt_int(n - n_val)} 行用于训练",
            f"val_size {val_size} (> 1, an absolute count) → {fmt_int(n_val)} rows for validation → "
            f"{fmt_int(n)} − {fmt_int(n_val)} = {fmt_int(n - n_val)} for training",
        )
    if isinstance(val_size, int):  # exactly 1: not > 1, so it reaches train_test_split as the int 1
        if n <= 1:
            raise ConfigError("val_size_too_large", Text(
                f"val_size 1 需要至少 2 行数据,这里只有 {n} 行。",
                f"val_size 1 needs at least 2 rows; there are {n}.",
            ), line)
        return n - 1, Text(
            f"val_size 1(整数,不大于 1,原样交给 train_test_split,整数按绝对数量)→ 1 行用于验证 → {fmt_int(n - 1)} 行用于训练",
            f"val_size 1 (an integer; not > 1, so it reaches train_test_split unchanged, where an integer is an "
            f"absolute count) → 1 row for validation → {fmt_int(n - 1)} for training",
        )
    n_val = math.ceil(val_size * n)
    n_train = n - n_val
    if n_train <= 0 or n_val <= 0:
        raise ConfigError("val_size_empty_train", Text(
            f"val_size {val_size} 用在 {fmt_int(n)} 行上会让训练集为空;datasets 会报 ValueError。",
            f"val_size {val_size} on {fmt_int(n)} rows leaves no training rows; datasets raises ValueError "
            f"(With n_samples={n}, test_size={val_size} and train_size=None, the resulting train set will be empty).",
        ), line)
    return n_train, Text(
        f"val_size {val_size} → ⌈{val_size} × {fmt_int(n)}⌉ = {fmt_int(n_val)} 行用于验证 → "
        f"{fmt_int(n)} − {fmt_int(n_val)} = {fmt_int(n_train)} 行用于训练",
        f"val_size {val_size} → ⌈{val_size} × {fmt_int(n)}⌉ = {fmt_int(n_val)} rows for validation → "
        f"{fmt_int(n)} − {fmt_int(n_val)} = {fmt_int(n_train)} for training",
    )


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
        raise ConfigError("val_size_with_eval_dataset", Text(
            "不能同时设置 val_size 和 eval_dataset(LLaMA-Factory:Cannot specify `val_size` if `eval_dataset` is not None.)",
            "val_size and eval_dataset cannot both be set (LLaMA-Factory: Cannot specify `val_size` if "
            "`eval_dataset` is not None.)",
        ), line("val_size"))
    if isinstance(val_size, float) and val_size == 1.0:
        raise ConfigError("val_size_one", Text(
            "val_size 1.0 是浮点数,LLaMA-Factory 把它当作比例交给 datasets 的 train_test_split,而比例必须在 (0, 1) 之间:"
            "ValueError(... or a float in the (0, 1) range)。要留出固定行数请写大于 1 的整数,例如 100。",
            "val_size 1.0 is a float, so LLaMA-Factory passes it to datasets' train_test_split as a fraction, "
            "which must lie in (0, 1): ValueError (... or a float in the (0, 1) range). For a fixed number of "
            "validation rows write an integer above 1, such as 100.",
        ), line("val_size"))

    streaming = _flag("streaming", doc.get("streaming"), line("streaming"))
    if streaming:
        if doc.get("max_samples") is not None:
            raise ConfigError("streaming_max_samples", Text(
                "streaming 模式不能和 max_samples 一起用(LLaMA-Factory:`max_samples` is incompatible with `streaming`.)",
                "streaming cannot be combined with max_samples (LLaMA-Factory: `max_samples` is incompatible "
                "with `streaming`.)",
            ), line("max_samples"))
        if splitting and val_size < 1:
            raise ConfigError("streaming_val_size", Text(
                "streaming 模式下 val_size 必须是整数(LLaMA-Factory:Streaming mode should have an integer val size.)",
                "In streaming mode val_size must be an integer (LLaMA-Factory: Streaming mode should have an "
                "integer val size.)",
            ), line("val_size"))
        max_steps = doc.get("max_steps")
        if max_steps is None or (isinstance(max_steps, int | float) and not isinstance(max_steps, bool)
                                 and max_steps <= 0):
            raise ConfigError("streaming_max_steps", Text(
                "streaming 模式下数据集没有长度,必须设置 max_steps(LLaMA-Factory:Please specify max_steps in streaming mode.)",
                "In streaming mode the dataset has no length, so max_steps is required (LLaMA-Factory: Please "
                "specify max_steps in streaming mode.)",
            ), line("streaming"))
        out.notes.append(Text(
            "streaming:数据集没有长度,训练步数只由 max_steps 决定;样本数只影响显示的 epoch。",
            "streaming: the dataset has no length, so max_steps alone sets the number of steps; the sample "
            "count only affects the epoch shown.",
        ))
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
            out.notes.append(Text(
                "已给出样本数:按打包(packing)之后的训练行数理解。",
                "A sample count was given: it is taken as the number of training rows after packing.",
            ))
        return out

    if doc.get("tokenized_path") is not None:
        out.notes.append(Text(
            "tokenized_path:LLaMA-Factory 直接读取已分词的数据,忽略其他数据参数;请填写训练样本数。",
            "tokenized_path: LLaMA-Factory loads the tokenized data from disk and ignores the other data keys; "
            "enter the number of training samples.",
        ))
        return out
    if doc.get("dataset") is None:
        return out
    names = _names(doc["dataset"], line("dataset"))
    if not names:
        return out
    mix = str(doc.get("mix_strategy") or "concat")
    if len(names) > 1 and mix.startswith("interleave"):
        out.notes.append(Text(
            f"mix_strategy {mix}:交错采样的行数取决于概率和随机种子,无法推算;请填写训练样本数。",
            f"mix_strategy {mix}: the number of interleaved rows depends on the probabilities and the seed and "
            "cannot be worked out; enter the number of training samples.",
        ))
        return out

    max_samples = None
    if doc.get("max_samples") is not None:
        max_samples = _whole("max_samples", doc["max_samples"], 0, line("max_samples"))
    given = dict(dataset_rows or {})
    for name, rows in given.items():
        if isinstance(rows, bool) or not isinstance(rows, int) or rows < 0:
            raise ConfigError("bad_dataset_rows", Text(
                f"数据集 {name} 的行数必须是非负整数,收到 {rows!r}。",
                f"The row count of dataset {name} must be a whole number of at least 0; got {rows!r}.",
            ))
    missing = [name for name in names if name not in given and name not in KNOWN_DATASET_ROWS]
    if missing:
        listed = ", ".join(missing)
        out.notes.append(Text(
            f"不知道这些数据集的行数:{listed}。请填写它们的行数或直接填写训练样本数。",
            f"Row counts unknown for: {listed}. Enter their row counts, or the number of training samples.",
        ))
        return out

    builtin = [name for name in names if name not in given]
    total = 0
    counts: list[int] = []
    for name in names:
        rows = given[name] if name in given else KNOWN_DATASET_ROWS[name]
        tag_en = " (built-in demo size)" if name in builtin else ""
        tag_zh = "(内置演示数据集大小)" if name in builtin else ""
        if max_samples is None:
            kept = rows
            out.lines.append(Text(f"{name}:{fmt_int(rows)} 行{tag_zh}", f"{name}: {fmt_int(rows)} rows{tag_en}"))
        else:
            kept = min(max_samples, rows)
            out.lines.append(Text(
                f"{name}:min({fmt_int(rows)}, max_samples {fmt_int(max_samples)}) = {fmt_int(kept)} 行{tag_zh}",
                f"{name}: min({fmt_int(rows)}, max_samples {fmt_int(max_samples)}) = {fmt_int(kept)} rows{tag_en}",
            ))
        counts.append(kept)
        total += kept
    if len(counts) > 1:
        terms = " + ".join(fmt_int(c) for c in counts) if len(counts) <= 6 else f"{len(counts)} datasets"
        terms_zh = " + ".join(fmt_int(c) for c in counts) if len(counts) <= 6 else f"{len(counts)} 个数据集"
        out.lines.append(Text(f"合计:{terms_zh} = {fmt_int(total)} 行", f"total: {terms} = {fmt_int(total)} rows"))
    if builtin:
        out.notes.append(Text(
            "使用了 LLaMA-Factory 内置演示数据集的行数(" + ", ".join(f"{n} {KNOWN_DATASET_ROWS[n]}" for n in builtin)
            + ",LLaMA-Factory @ ff6d4d12e);如果你的数据不同,请填写实际行数。",
            "Built-in sizes of LLaMA-Factory's demo datasets were used ("
            + ", ".join(f"{n} {KNOWN_DATASET_ROWS[n]}" for n in builtin)
            + ", LLaMA-Factory @ ff6d4d12e); enter your own counts if your copies differ.",
        ))

    n = total
    if splitting:
        if n == 0:
            raise ConfigError("val_size_empty_train", Text(
                "没有数据行可供划分验证集。", "There are no rows to split a validation set from."
            ), line("val_size"))
        n, text = _val_split(n, val_size, line("val_size"))
        out.lines.append(text)
        if isinstance(val_size, int) and val_size == 1:
            out.notes.append(Text(
                "val_size: 1(整数)留出 1 行验证;写成 1.0(浮点数)则 LLaMA-Factory 报错。这是阅读代码得出的结论。",
                "val_size: 1 (an integer) holds out 1 validation row; written as 1.0 (a float) LLaMA-Factory "
                "raises an error. This follows from reading the code.",
            ))

    if packing_on:
        cutoff = _whole("cutoff_len", doc.get("cutoff_len", 2048), 2, line("cutoff_len"))
        if avg_tokens is None:
            out.notes.append(Text(
                f"打包(packing,stage {stage})会把多行拼成长度约 {fmt_int(cutoff)} 的训练行,实际样本数会变少;"
                "这里仍用未打包的行数。给出每行平均 token 数(avg_tokens_per_sample)可得到估算值。",
                f"Packing (stage {stage}) joins rows into training rows of about {fmt_int(cutoff)} tokens, so the "
                "real sample count is smaller; the unpacked count is kept here. Give the average tokens per row "
                "(avg_tokens_per_sample) for an estimate.",
            ))
        else:
            batch = _whole("preprocessing_batch_size", doc.get("preprocessing_batch_size", 1000), 1,
                           line("preprocessing_batch_size"))
            packed = packed_samples_estimate(n, avg_tokens, cutoff, stage, packing_in_yaml,
                                             preprocessing_batch_size=batch)
            if stage == "pt":
                block = cutoff - 1 if packing_in_yaml else cutoff
                out.lines.append(Text(
                    f"打包(pt,块长 {fmt_int(block)}):每 {fmt_int(batch)} 行一批,Σ ⌊批内 token 数 / {fmt_int(block)}⌋,"
                    f"每行约 {avg_tokens:g} token → 约 {fmt_int(packed)} 个训练样本(估算)",
                    f"packing (pt, blocks of {fmt_int(block)}): map batches of {fmt_int(batch)} rows, "
                    f"Σ ⌊tokens in batch / {fmt_int(block)}⌋ at {avg_tokens:g} tokens per row → about "
                    f"{fmt_int(packed)} training samples (estimate)",
                ))
            else:
                out.lines.append(Text(
                    f"打包(sft,容量 {fmt_int(cutoff - 1)}):每 {fmt_int(batch)} 行一批,Σ ⌈批内 token 数 / {fmt_int(cutoff - 1)}⌉,"
                    f"每行约 {avg_tokens:g} token → 至少约 {fmt_int(packed)} 个训练样本(估算,下界)",
                    f"packing (sft, capacity {fmt_int(cutoff - 1)}): map batches of {fmt_int(batch)} rows, "
                    f"Σ ⌈tokens in batch / {fmt_int(cutoff - 1)}⌉ at {avg_tokens:g} tokens per row → at least about "
                    f"{fmt_int(packed)} training samples (estimate, lower bound)",
                ))
            out.notes.append(Text(
                "打包后的样本数是估算值:假设每行 token 数相同、单个预处理进程;实际值取决于真实长度和 preprocessing_num_workers。",
                "The packed sample count is an estimate: it assumes every row has the same number of tokens and "
                "one preprocessing worker; the real value depends on the actual lengths and "
                "preprocessing_num_workers.",
            ))
            n = packed
    out.lines.append(Text(
        f"N = {fmt_int(n)} 个训练样本(假设预处理没有丢弃任何行)",
        f"N = {fmt_int(n)} training samples (assuming preprocessing drops no rows)",
    ))
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


def _notes_for_keys(doc: Mapping[Any, Any], text: str) -> list[Text]:
    notes: list[Text] = []
    if doc.get("deepspeed"):
        notes.append(Text(
            "未读取 deepspeed 配置文件;在 HF Trainer 下其中的 \"auto\" 批大小由 TrainingArguments 填入,步数不变。",
            "The deepspeed config file was not read; under the HF Trainer its \"auto\" batch values are filled "
            "from TrainingArguments, so the step count does not change.",
        ))
    if "per_device_eval_batch_size" in doc:
        notes.append(Text(
            "per_device_eval_batch_size 不影响训练步数。", "per_device_eval_batch_size does not affect training steps."
        ))
    if "evaluation_strategy" in doc:
        extra_en = " Both were given; eval_strategy was used." if "eval_strategy" in doc else ""
        extra_zh = " 两者都给出了,采用 eval_strategy。" if "eval_strategy" in doc else ""
        notes.append(Text(
            "evaluation_strategy 是 eval_strategy 的旧名(transformers 4.46 起删除,新版本会拒绝)。" + extra_zh,
            "evaluation_strategy is the old name of eval_strategy (removed in transformers 4.46; newer "
            "versions reject it)." + extra_en,
        ))
    active_eval = any(key in doc for key in ("val_size", "eval_strategy", "evaluation_strategy", "eval_dataset"))
    if not active_eval and _COMMENTED_EVAL.search(text):
        notes.append(Text(
            "评估部分被注释掉了(LLaMA-Factory 的示例都是如此):不会有评估步。",
            "Evaluation is commented out (as in all of LLaMA-Factory's examples): there are no eval steps.",
        ))
    big = [key for key in _PARALLEL_KEYS
           if isinstance(doc.get(key), int) and not isinstance(doc.get(key), bool) and doc[key] > 1]
    if big:
        notes.append(Text(
            f"{', '.join(big)} > 1:StepLab 的 world_size 指数据并行进程数 = GPU 数 ÷ 模型并行规模;Megatron 路径的步数算法也不同(参考 §3.5)。",
            f"{', '.join(big)} > 1: StepLab's world_size means data-parallel processes = GPUs ÷ model-parallel "
            "size; the Megatron paths also size the run differently (reference §3.5).",
        ))
    if str(doc.get("stage") or "") == "ppo":
        notes.append(Text(
            "stage ppo:一步是 b·g·ppo_buffer_size·world_size 个提示词,与普通 Trainer 的公式不同。",
            "stage ppo: one step is b·g·ppo_buffer_size·world_size prompts, not the plain Trainer formula.",
        ))
    if doc.get("auto_find_batch_size"):
        notes.append(Text(
            "auto_find_batch_size:显存不足时 Trainer 会减半批大小,步数随之改变。",
            "auto_find_batch_size: on out-of-memory the Trainer halves the batch size, which changes the steps.",
        ))
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
    notes: list[Text] = []

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
        notes.append(Text(
            "world_size 取自 ray_num_workers(LLaMA-Factory 用 Ray 启动时每个 worker 一张 GPU,需 USE_RAY=1)。",
            "world_size was taken from ray_num_workers (with LLaMA-Factory's Ray launcher each worker drives "
            "one GPU; requires USE_RAY=1).",
        ))
    elif "world_size" not in values:
        notes.append(Text(
            "YAML 里没有 GPU 数:world_size 由启动方式决定(torchrun --nproc_per_node、CUDA_VISIBLE_DEVICES),请自行设置。",
            "The YAML does not say how many GPUs: world_size comes from the launcher (torchrun "
            "--nproc_per_node, CUDA_VISIBLE_DEVICES); set it yourself.",
        ))

    avg_tokens = avg_tokens_per_sample
    if avg_tokens is None and doc.get("avg_tokens_per_sample") is not None:
        avg_tokens = _number("avg_tokens_per_sample", doc["avg_tokens_per_sample"], key_lines.get("avg_tokens_per_sample"))
    if avg_tokens is not None:
        avg_tokens = float(_number("avg_tokens_per_sample", avg_tokens, key_lines.get("avg_tokens_per_sample")))
        if avg_tokens <= 0:
            raise _bad("avg_tokens_per_sample", avg_tokens, "expected a number above 0.", "需要大于 0 的数字。",
                       key_lines.get("avg_tokens_per_sample"))

    if "num_samples" in doc:
        used.add("num_samples")
    if num_samples is not None:
        sample_source, n_value = "argument", num_samples
    elif "num_samples" in doc:
        sample_source, n_value = "yaml", doc["num_samples"]
        if flavour == "llamafactory":
            notes.append(Text(
                "num_samples 是 StepLab 的键,LLaMA-Factory 不认识它;训练前请删掉(StepLab 导出时把它写成注释)。",
                "num_samples is StepLab's key, unknown to LLaMA-Factory; remove it before training (StepLab "
                "writes it as a comment when exporting).",
            ))
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
            notes.append(Text(
                "样本数已直接给出,没有用 dataset / max_samples / val_size 推算。",
                "The sample count was given directly; dataset / max_samples / val_size were not used to count it.",
            ))
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
