"""The files of a run, from uploads, pasted text, folders or zips, read within the caps (`limits`).

Every source becomes a list of `Entry`s (a path, the size it declares, a way to open it); `gather` decides by name
what to read, reads it through a counting reader (a zip member that expands past what is left of the caps is
stopped there, whatever its header declared), and says why anything was not read.
"""

from __future__ import annotations

import io
import os
import zipfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from steplab.i18n import Message, msg
from steplab.runfiles import kinds
from steplab.runfiles.limits import MAX_ENTRIES, MAX_FILE_BYTES, MAX_FILES, MAX_TOTAL_BYTES

CHUNK = 1024 * 1024
ZIP_MAGIC = b"PK\x03\x04"
EMPTY_ZIP = b"PK\x05\x06"


@dataclass(frozen=True)
class Entry:
    """One file offered: its path (`/`-separated, as the user named it), its declared size and how to open it."""

    path: str
    size: int
    open: Callable[[], BinaryIO]


@dataclass(frozen=True)
class RunFile:
    """A file read: its path, its kind (`kinds`), its bytes, and the checkpoint folder it sits in."""

    path: str
    kind: str
    data: bytes

    @property
    def checkpoint(self) -> int | None:
        return kinds.checkpoint_of(self.path)

    @property
    def name(self) -> str:
        return PurePosixPath(self.path).name


@dataclass
class Gathered:
    """What was read, what was not (with why), and the problems of the whole set (caps, archives)."""

    files: list[RunFile] = field(default_factory=list)
    skipped: list[tuple[str, Message]] = field(default_factory=list)
    problems: list[Message] = field(default_factory=list)
    read_bytes: int = 0

    def of_kind(self, kind: str) -> list[RunFile]:
        return [f for f in self.files if f.kind == kind]


def clean_path(name: str) -> str:
    """A name as a relative `/` path: backslashes, drive letters, leading slashes and `..` parts dropped."""
    parts = name.replace("\\", "/").split("/")
    kept = [p for p in parts if p not in ("", ".", "..")]
    if kept and len(kept[0]) == 2 and kept[0][1] == ":":
        kept = kept[1:]
    return "/".join(kept) or "unnamed"


# --------------------------------------------------------------------------- sources of entries


def _bytes_entry(path: str, data: bytes) -> Entry:
    return Entry(path, len(data), lambda: io.BytesIO(data))


def is_zip(name: str, head: bytes) -> bool:
    return name.lower().endswith(kinds.ARCHIVE_SUFFIXES) or head.startswith((ZIP_MAGIC, EMPTY_ZIP))


def _zip_entries(archive: zipfile.ZipFile, label: str, problems: list[Message]) -> Iterator[Entry]:
    for info in archive.infolist():
        if info.is_dir():
            continue
        if info.flag_bits & 0x1:
            problems.append(msg("runfiles.zip_encrypted", archive=label, path=clean_path(info.filename)))
            continue
        yield Entry(clean_path(info.filename), info.file_size, lambda info=info: archive.open(info))


def _count_zip_names(stream: BinaryIO) -> int | None:
    """How many names a zip's directory declares, read from its end record before `zipfile` lists them all."""
    record = zipfile._EndRecData(stream)  # noqa: SLF001 - the stdlib's own reader of the end record (zip64 too)
    return None if record is None else record[zipfile._ECD_ENTRIES_TOTAL]  # noqa: SLF001


def open_zip(stream: BinaryIO, label: str, problems: list[Message]) -> list[Entry]:
    """The entries of a zip, or none (and a problem) when it is not one, is broken or lists too many names."""
    try:
        names = _count_zip_names(stream)
        if names is None:
            problems.append(msg("runfiles.zip_broken", archive=label))
            return []
        if names > MAX_ENTRIES:
            problems.append(msg("runfiles.zip_too_many", archive=label, names=names, limit=MAX_ENTRIES))
            return []
        archive = zipfile.ZipFile(stream)
        return list(_zip_entries(archive, label, problems))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError, NotImplementedError):
        problems.append(msg("runfiles.zip_broken", archive=label))
        return []


def upload_entries(uploads: Iterable[tuple[str, bytes]], problems: list[Message]) -> list[Entry]:
    """Uploaded files by name; a zip becomes its members (nested paths kept, `out/checkpoint-50/...`)."""
    entries: list[Entry] = []
    for name, data in uploads:
        path = clean_path(name)
        if is_zip(path, data[:4]):
            entries += open_zip(io.BytesIO(data), path, problems)
        else:
            entries.append(_bytes_entry(path, data))
    return entries


def text_entry(name: str, text: str) -> Entry:
    """Pasted text, as a file named `name`."""
    return _bytes_entry(name, text.encode("utf-8"))


def path_entries(paths: Iterable[str | Path], problems: list[Message]) -> list[Entry]:
    """Files, folders (walked, paths relative to the folder's parent) and zips named on the command line."""
    entries: list[Entry] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            entries += _walk(path, problems, MAX_ENTRIES - len(entries))
        elif path.is_file():
            with path.open("rb") as stream:
                head = stream.read(4)
            label = clean_path(path.name)
            if is_zip(label, head):
                entries += open_zip(path.open("rb"), label, problems)
            else:
                entries.append(Entry(label, path.stat().st_size, lambda p=path: p.open("rb")))
        elif path.exists():  # a FIFO, a device (`/dev/zero`), a socket: never read
            problems.append(msg("runfiles.not_regular", path=str(given)))
        else:
            problems.append(msg("runfiles.no_such_path", path=str(given)))
    return entries


def read_regular(path: Path, limit: int) -> bytes:
    """A regular file's bytes, at most `limit` (read in chunks, stopped there); raises `RunFileError`
    (`runfiles.not_regular`, `runfiles.no_such_path`, `runfiles.skipped.file_cap`) otherwise."""
    from steplab.runfiles.errors import RunFileError

    if not path.exists():
        raise RunFileError("runfiles.no_such_path", path=str(path))
    if not path.is_file():
        raise RunFileError("runfiles.not_regular", path=str(path))
    with path.open("rb") as stream:
        data = stream.read(limit + 1)
    if len(data) > limit:
        raise RunFileError("runfiles.too_big_config", path=str(path), limit_kb=limit // 1024)
    return data


def _walk(folder: Path, problems: list[Message], room: int) -> list[Entry]:
    base = folder.resolve().parent
    entries: list[Entry] = []
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            if len(entries) >= room:
                problems.append(msg("runfiles.folder_too_many", folder=str(folder), limit=MAX_ENTRIES))
                return entries
            path = Path(root) / name
            if path.is_symlink():
                continue
            if not path.is_file():
                problems.append(msg("runfiles.not_regular", path=str(path)))
                continue
            relative = clean_path(path.resolve().relative_to(base).as_posix()) if path.resolve().is_relative_to(
                base) else clean_path(path.name)
            entries.append(Entry(relative, path.stat().st_size, lambda p=path: p.open("rb")))
    return entries


# --------------------------------------------------------------------------- reading within the caps


def _read_capped(entry: Entry, limit: int) -> bytes | None:
    """At most `limit` bytes of an entry; None when it holds more (a zip bomb stops here, whatever it declared)."""
    chunks, size = [], 0
    with entry.open() as stream:
        while True:
            chunk = stream.read(min(CHUNK, limit + 1 - size))
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                return None


INFO_BYTES = 1024 * 1024
"""What of a `dataset_info.json` is read to learn the dataset files it names (a bigger one names them all the same
to the dataset stage, which reads it whole within the caps)."""


def _dataset_files(info: Entry) -> set[str]:
    """The base names of the files a `dataset_info.json` names (`file_name`), read within `INFO_BYTES`."""
    import json

    try:
        data = _read_capped(info, INFO_BYTES)
        document = json.loads(data) if data else None
    except (ValueError, OSError, zipfile.BadZipFile, EOFError, RuntimeError):
        return set()
    if not isinstance(document, dict):
        return set()
    return {PurePosixPath(str(spec["file_name"]).replace("\\", "/")).name for spec in document.values()
            if isinstance(spec, dict) and isinstance(spec.get("file_name"), str)}


def _wanted(entries: list[Entry]) -> list[tuple[Entry, str]]:
    """The entries worth reading, with their kinds: run files, configs, consoles, and what the dataset stage
    needs (dataset files only when a `dataset_info.json` is among the entries; one tokenizer, the shallowest)."""
    chosen: list[tuple[Entry, str]] = []
    infos = [e for e in entries if kinds.kind_of(e.path) == kinds.DATASET_INFO]
    has_info = bool(infos)
    named = _dataset_files(infos[0]) if infos else set()
    tokenizers: dict[str, Entry] = {}
    for entry in entries:
        kind = kinds.kind_of(entry.path)
        if named and PurePosixPath(entry.path).name in named and kind in (kinds.CONSOLE, kinds.OTHER):
            kind = kinds.DATA  # a `.txt` (or other) dataset `dataset_info.json` names is data, not a console
        if kind == kinds.TOKENIZER:
            name = PurePosixPath(entry.path).name.lower()
            best = tokenizers.get(name)
            if best is None or entry.path.count("/") < best.path.count("/"):
                tokenizers[name] = entry
            continue
        if kind == kinds.DATA and (not has_info or kinds.checkpoint_of(entry.path) is not None):
            continue
        if kind != kinds.OTHER:
            chosen.append((entry, kind))
    chosen += [(entry, kinds.TOKENIZER) for entry in tokenizers.values()]
    return chosen


def gather(entries: list[Entry], problems: list[Message] | None = None) -> Gathered:
    """Read the entries worth reading, in order, within `MAX_FILES`, `MAX_FILE_BYTES` and `MAX_TOTAL_BYTES`."""
    result = Gathered(problems=list(problems or []))
    seen: set[str] = set()
    wanted = _wanted(entries)
    chosen = {id(entry) for entry, _ in wanted}
    for entry in entries:
        if id(entry) not in chosen:
            nested = entry.path.lower().endswith(kinds.ARCHIVE_SUFFIXES)
            result.skipped.append((entry.path, msg("runfiles.skipped.nested_zip" if nested else "runfiles.skipped.unused")))
    for entry, kind in wanted:
        if entry.path in seen:
            result.skipped.append((entry.path, msg("runfiles.skipped.duplicate")))
            continue
        seen.add(entry.path)
        if len(result.files) >= MAX_FILES:
            result.skipped.append((entry.path, msg("runfiles.skipped.too_many_files", limit=MAX_FILES)))
            continue
        room = min(MAX_FILE_BYTES, MAX_TOTAL_BYTES - result.read_bytes)
        if entry.size > room:
            result.skipped.append((entry.path, _too_big(entry.size, room)))
            continue
        try:
            data = _read_capped(entry, room)
        except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError, RuntimeError):
            result.skipped.append((entry.path, msg("runfiles.skipped.unreadable")))
            continue
        if data is None:
            result.skipped.append((entry.path, _too_big(None, room)))
            continue
        if not data:
            result.skipped.append((entry.path, msg("runfiles.skipped.empty")))
            continue
        result.read_bytes += len(data)
        result.files.append(RunFile(entry.path, kind, data))
    return result


def _too_big(size: int | None, room: int) -> Message:
    """Over the file cap, or over what is left of the total: said with the cap that stopped it."""
    if room < MAX_FILE_BYTES:
        return msg("runfiles.skipped.total_cap", limit_mb=MAX_TOTAL_BYTES // 2**20)
    if size is None:
        return msg("runfiles.skipped.expands", limit_mb=MAX_FILE_BYTES // 2**20)
    return msg("runfiles.skipped.file_cap", size_mb=round(size / 2**20, 1), limit_mb=MAX_FILE_BYTES // 2**20)
