"""Reading untrusted YAML text safely: size, encoding and alias limits, then a plain-data load.

The text is untrusted (users paste it), so it is read defensively:

* at most `MAX_BYTES` (1 MiB, also what the /config uploader takes), checked before anything is decoded or parsed;
* bytes are UTF-8, UTF-16 or UTF-32, told apart as the YAML spec does (section 5.2): by a byte-order mark, else
  by the NUL bytes beside an ASCII first character (a YAML file saved as "Unicode" by a Windows editor is read);
* the event stream is scanned first, without building any objects, and rejected when it nests deeper
  than `MAX_DEPTH`, uses more than `MAX_ALIASES` aliases, an alias refers to the node that contains it,
  or the document would expand to more than `MAX_NODES` nodes once aliases are followed (this is what
  defeats "billion laughs" alias bombs: their size is measured, not built);
* only then is it loaded with a safe loader (`yaml.safe_load` semantics: plain data only; Python object
  tags are refused, nothing is imported or executed), libyaml's `CSafeLoader` when PyYAML has it;
* the top level must be a mapping.

Every failure is a `ConfigError` carrying a catalogue code (`config_io.*`, in
`locales/<lang>/engine/config_io.yaml`), its values and, when known, the 1-based line.
"""

from __future__ import annotations

import codecs
from typing import Any

import yaml

from steplab.errors import InputError
from steplab.i18n import msg

MAX_BYTES = 1024 * 1024  # one limit for a pasted or uploaded config: the /config uploader's cap is this in MiB
MAX_DEPTH = 32
MAX_ALIASES = 100
MAX_NODES = 50_000

# libyaml's parser when available, for the event scan (so hostile input is rejected quickly) and for building
# the document with PyYAML's safe constructor (`yaml.safe_load`'s data, 5-9x faster on a 1 MiB config:
# benchmarks/bench_config_yaml.py).
_SCAN_LOADER = yaml.CSafeLoader if getattr(yaml, "__with_libyaml__", False) else yaml.SafeLoader


class ConfigError(InputError):
    """A config StepLab cannot read: a code, its values and the 1-based `line` if known."""


def _line_of(error: yaml.YAMLError, text: str) -> tuple[int | None, int | None]:
    """1-based line and column of a PyYAML error, from its problem mark (or reader position)."""
    mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
    if mark is not None:
        return mark.line + 1, mark.column + 1
    position = getattr(error, "position", None)
    if isinstance(position, int):
        return text.count("\n", 0, position) + 1, position - (text.rfind("\n", 0, position) + 1) + 1
    return None, None


# Byte-order marks, UTF-32's before UTF-16's (UTF-32LE's mark begins with UTF-16LE's).
_MARKS = ((codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
          (codecs.BOM_UTF16_BE, "utf-16"), (codecs.BOM_UTF16_LE, "utf-16"))
# Without a mark, the NUL bytes an ASCII first character leaves (YAML 1.2, section 5.2): `00 00 00 x`, `x 00 00 00`,
# `00 x`, `x 00`; anything else is UTF-8.
_NUL_PATTERNS = ((b"\0\0\0", 0, "utf-32-be"), (b"\0\0\0", 1, "utf-32-le"), (b"\0", 0, "utf-16-be"),
                 (b"\0", 1, "utf-16-le"))


def _encoding(raw: bytes) -> str:
    """The codec of a config's bytes, as the YAML spec detects it: a byte-order mark, else the NUL bytes around
    the first character (what UTF-16 and UTF-32 files saved without a mark, by Windows editors among others, hold)."""
    for mark, codec in _MARKS:
        if raw.startswith(mark):
            return codec
    for nuls, at, codec in _NUL_PATTERNS:
        if len(raw) > len(nuls) and raw[at:at + len(nuls)] == nuls:
            return codec
    return "utf-8"


def _family(codec: str) -> str:
    """How a message names a codec: `UTF-16` for `utf-16-le`, `UTF-8` for `utf-8-sig`."""
    return "-".join(codec.split("-")[:2]).upper()


def _too_large(what: str, size: int, *, hint: bool) -> ConfigError:
    """`config_io.too_large`: `what` (`file_bytes`, `text_characters`, `text_bytes`) is `size`, over `MAX_BYTES`."""
    return ConfigError("config_io.too_large", what=msg(f"config_io.too_large.{what}", size=size), limit=MAX_BYTES,
                       mb=MAX_BYTES / 2**20, hint=msg("config_io.too_large.hint") if hint else "")


def check_size(size: int) -> None:
    """Refuse a file of `size` bytes before it is read when it is over `MAX_BYTES` (what `decode` would say)."""
    if size > MAX_BYTES:
        raise _too_large("file_bytes", size, hint=True)


def decode(text: str | bytes) -> str:
    """Pasted text or uploaded bytes as a string within `MAX_BYTES`; bytes in UTF-8, UTF-16 or UTF-32 (`_encoding`),
    a byte-order mark dropped."""
    if isinstance(text, bytes | bytearray | memoryview):
        raw = bytes(text)
        check_size(len(raw))
        codec = _encoding(raw)
        try:
            text = raw.decode(codec)
        except UnicodeDecodeError as error:
            problem = (msg("config_io.not_utf8.bytes", utf8="UTF-8", utf16="UTF-16", utf32="UTF-32", gbk="GBK",
                           offset=error.start) if codec == "utf-8" else
                       msg("config_io.not_utf8.broken", encoding=_family(codec), utf8="UTF-8", offset=error.start))
            raise ConfigError("config_io.not_utf8", problem=problem) from None
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


def _scan(text: str) -> tuple[dict[str, int], type]:
    """Enforce StepLab's limits on the event stream; return top-level key → line, and the safe loader that read
    the stream (the document is built with the same one).

    libyaml reads ahead of the events it hands over and has limits of its own (PyYAML 6.0.4's bundled
    libyaml stops at 1,000 levels of nesting). When it raises, the text is walked again with PyYAML's
    pure-Python parser, which reads no further than it must, so StepLab's own limit is the one reported
    (too deep, with its line) whichever layer noticed first; a real syntax error keeps libyaml's message.
    """
    try:
        return _walk(text, _SCAN_LOADER), _SCAN_LOADER
    except yaml.YAMLError as error:
        if _SCAN_LOADER is yaml.SafeLoader:
            raise _syntax_error(error, text) from None
        try:
            return _walk(text, yaml.SafeLoader), yaml.SafeLoader
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


def load(text: str) -> tuple[dict[Any, Any], dict[str, int]]:
    """The document's top-level mapping (plain data) and the 1-based line of each top-level key."""
    key_lines, loader = _scan(text)
    try:
        document = yaml.load(text, Loader=loader)  # noqa: S506 - a safe loader, the one whose scan passed
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
