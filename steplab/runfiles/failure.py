"""A failed run's error, read from its console: the last Python traceback printed (Python prints one the same way
under every transformers release; torchrun's `[rank0]: ` prefixes are taken off), the exception's type and first
line, and the frame it was raised in; then held against StepLab's own refusal of the same setup."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from steplab.errors import TrainerRefusal
from steplab.i18n import Message, msg
from steplab.runfiles.sources import Source

_PREFIX = re.compile(r"^(?:\[(?:rank|default)\d+\]:\s?)")
_FRAME = re.compile(r'^\s+File "(.+)", line (\d+), in (.+?)\s*$')
_EXCEPTION = re.compile(r"^([A-Za-z_][\w.]*)(?::\s?(.*))?$")
_START = "Traceback (most recent call last):"
_CHAIN = ("During handling of the above exception", "The above exception was the direct cause")
STOPPED = ("KeyboardInterrupt", "SystemExit")
"""Exceptions of a run stopped from outside (Ctrl-C, a kill, `sys.exit`), which no setup rule refuses."""
MAX_MESSAGE = 500
"""Characters of an exception's message kept (a message can hold a whole tensor)."""


@dataclass(frozen=True)
class Frame:
    """Where code ran: the file (from its package on: `trl/trainer/grpo_config.py`), the line and the function."""

    file: str
    line: int
    function: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line} ({self.function})"


@dataclass(frozen=True)
class Failure:
    """The exception a run died of: its type, message (first line), the frame that raised it, the console line."""

    error_type: str
    message: str
    raised_at: Frame | None
    source: Source

    @property
    def short_type(self) -> str:
        """`torch.OutOfMemoryError` → `OutOfMemoryError`: how `type(error).__name__` names it."""
        return self.error_type.rsplit(".", 1)[-1]


def _package_path(path: str) -> str:
    """A frame's file from its package on (`…/site-packages/trl/x.py` → `trl/x.py`)."""
    for marker in ("site-packages/", "dist-packages/"):
        if marker in path:
            return path.rsplit(marker, 1)[1]
    return path


@dataclass
class TracebackReader:
    """Fed a console's lines one by one (`feed`); `failure` is the last complete traceback's exception."""

    path: str
    failure: Failure | None = None
    _frames: list[Frame] = field(default_factory=list)
    inside: bool = False  # within a traceback (a line without "Traceback" outside one need not be fed)

    def feed(self, number: int, raw: str) -> None:
        text = _PREFIX.sub("", raw.rstrip("\r\n"))
        if _START in text:  # at a line's start, or after a progress bar that had no newline yet
            self.inside, self._frames = True, []
            return
        if not self.inside:
            return
        if frame := _FRAME.match(text):
            self._frames.append(Frame(_package_path(frame.group(1)), int(frame.group(2)), frame.group(3)))
            return
        if not text.strip() or text[:1].isspace():  # the code line under a frame, carets, a blank line
            return
        if text.startswith(_CHAIN):
            return
        found = _EXCEPTION.match(text.strip())
        if found and self._frames:
            message = (found.group(2) or "").strip()[:MAX_MESSAGE]
            self.failure = Failure(found.group(1), message, self._frames[-1], Source(self.path, number))
        self.inside = False


def failure_findings(failure: Failure, refusal: TrainerRefusal | None, planned: bool,
                     problem: Message | None) -> list[tuple[str, Message]]:
    """The run's error named, then StepLab's side: the same refusal (with what to change), another refusal, no
    refusal at all (a gap of StepLab's), or no plan to hold it against (why)."""
    where = str(failure.raised_at) if failure.raised_at else str(failure.source)
    said = f"{failure.error_type}: {failure.message}" if failure.message else failure.error_type
    found = [("failed", msg("runfiles.failure.named", error=said, where=where, source=str(failure.source)))]
    if failure.short_type in STOPPED:
        found.append(("failure_stopped", msg("runfiles.failure.stopped", type=failure.short_type)))
    elif refusal is not None and refusal.error_type == failure.short_type \
            and _same_words(refusal.message, failure.message):
        fix = refusal.fix if refusal.fix is not None else msg("runfiles.failure.no_fix", field=refusal.field or "—")
        found.append(("failure_matched", msg("runfiles.failure.matched", type=refusal.error_type, fix=fix)))
    elif refusal is not None:
        found.append(("failure_other_refusal", msg("runfiles.failure.other_refusal", type=refusal.error_type,
                                                   message=refusal.message)))
    elif planned:
        found.append(("failure_gap", msg("runfiles.failure.gap", type=failure.short_type)))
    else:
        found.append(("failure_unchecked", msg("runfiles.failure.unchecked",
                                               why=problem or msg("runfiles.no_plan"))))
    return found


def _same_words(ours: str, theirs: str) -> bool:
    """StepLab's refusal says what the run printed (its first line, spaces aside)."""
    return " ".join(ours.split()).split("\n")[0] == " ".join(theirs.split())
