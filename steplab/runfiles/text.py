"""A run file's bytes as text: the encoding told as a YAML or JSON file's is, binaries refused, the lines counted
as `grep -n` counts them (tqdm's carriage returns stay inside their line)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from steplab.io.safe_yaml import _encoding
from steplab.runfiles.errors import RunFileError
from steplab.runfiles.limits import MAX_LINES

SNIFF = 64 * 1024  # bytes looked at to tell a binary
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def decode_text(data: bytes, path: str) -> str:
    """UTF-8 (or UTF-16/32 with a byte-order mark or the NULs of an ASCII start), else `runfiles.binary`.

    A file with NUL bytes in UTF-8, or whose start is mostly not UTF-8, is a binary (weights, a pickle, an image).
    """
    codec = _encoding(data[:4])
    head = data[:SNIFF]
    if codec.startswith("utf-8"):
        if b"\0" in head or _mostly_not_utf8(head):
            raise RunFileError("runfiles.binary", path=path)
        return data.decode(codec, errors="replace")
    try:
        text = data.decode(codec)
    except UnicodeDecodeError:
        raise RunFileError("runfiles.binary", path=path) from None
    if "\0" in text[:SNIFF]:  # zeros, or another binary that happens to decode
        raise RunFileError("runfiles.binary", path=path)
    return text


def _mostly_not_utf8(head: bytes) -> bool:
    """More than one byte in a hundred undecodable (a cut multi-byte character at the end is forgiven)."""
    text = head.decode("utf-8", errors="replace")
    return text.count("\ufffd") > max(2, len(head) // 100)


def split_lines(text: str, path: str) -> list[str]:
    """The text's lines (`\\n`, `\\r\\n`), at most `MAX_LINES`, else `runfiles.too_many_lines`."""
    count = text.count("\n") + 1
    if count > MAX_LINES:
        raise RunFileError("runfiles.too_many_lines", path=path, lines=count, limit=MAX_LINES)
    return text.split("\n")


def iter_lines(text: str, path: str) -> Iterator[str]:
    """The text's lines one by one (`\n`; a `\r\n` line keeps its `\r`, as `split_lines` does), at most
    `MAX_LINES` (checked first, else `runfiles.too_many_lines`), without a list of them all."""
    count = text.count("\n") + 1
    if count > MAX_LINES:
        raise RunFileError("runfiles.too_many_lines", path=path, lines=count, limit=MAX_LINES)
    start = 0
    while True:
        end = text.find("\n", start)
        if end < 0:
            yield text[start:]
            return
        yield text[start:end]
        start = end + 1


def screen_parts(line: str) -> list[str]:
    """What a terminal shows of one line: its carriage-return parts (tqdm redraws), escape codes removed."""
    if "\x1b" in line:
        line = ANSI.sub("", line)
    if "\r" not in line:
        return [line] if line.strip() else []
    return [part for part in line.split("\r") if part.strip()]
