"""A learner's progress (lessons done, check scores, self-study score), kept by the learner, never by the server.

`to_code` turns it into a short code to copy (`SL1-` + Crockford base32 of a compact payload and a checksum);
`to_json` into a small file to download. `from_code` / `from_json` read them back and reject anything
invalid with a `ProgressError` that says why (its code is a catalogue key, `progress.*`); inputs are capped in
length first.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from steplab.errors import InputError
from steplab.teaching.lessons import lesson_numbers

VERSION = 2
PREFIX = "SL"
LESSON_COUNT = len(lesson_numbers())  # the codes keep one bit per lesson
FORMER = {1: {**{n: n for n in range(1, 10)}, 10: 11}}
"""How each earlier version's lesson numbers read today: version 1 had ten lessons; lesson 8 was split since, its
versions half now lesson 10, so the former lesson 10 is lesson 11 (the former lesson 8's progress stays with 8)."""
MAX_COUNT = 1_000_000  # attempts per lesson or in self-study
MAX_CODE_CHARS = 200
MAX_JSON_BYTES = 10_000
CHECKSUM_BYTES = 3
ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"  # Crockford base32: no I, L, O, U
READ_AS = {**{c: i for i, c in enumerate(ALPHABET)}, "O": 0, "I": 1, "L": 1}


class ProgressError(InputError):
    """A progress code or file that cannot be restored, and why."""


@dataclass(frozen=True)
class Progress:
    """Lessons done, the end-of-lesson check score per lesson and the self-study score."""

    lessons_done: frozenset[int] = frozenset()
    lesson_scores: tuple[tuple[int, int, int], ...] = ()  # (lesson, correct, attempts), sorted by lesson
    selfstudy_correct: int = 0
    selfstudy_attempts: int = 0
    seen: frozenset[str] = field(default=frozenset(), compare=False)  # graded question tokens (session only)

    def __post_init__(self) -> None:
        _validate(self)

    def score(self, lesson: int) -> tuple[int, int]:
        """(correct, attempts) of a lesson's check; (0, 0) before any answer."""
        for number, correct, attempts in self.lesson_scores:
            if number == lesson:
                return correct, attempts
        return 0, 0

    def with_lesson_done(self, lesson: int, done: bool = True) -> Progress:
        lessons = self.lessons_done | {lesson} if done else self.lessons_done - {lesson}
        return _copy(self, lessons_done=frozenset(lessons))

    def with_answer(self, lesson: int | None, correct: bool, token: str | None = None) -> Progress:
        """Count one graded answer: in a lesson's check (`lesson` 1–10) or in self-study (`lesson` None).

        With a `token` (a question instance), only its first grading counts; later re-checks change nothing.
        """
        if token is not None and token in self.seen:
            return self
        seen = self.seen | {token} if token is not None else self.seen
        if lesson is None:
            return _copy(self, selfstudy_correct=min(self.selfstudy_correct + bool(correct), MAX_COUNT),
                         selfstudy_attempts=min(self.selfstudy_attempts + 1, MAX_COUNT), seen=seen)
        scores = dict((n, (c, a)) for n, c, a in self.lesson_scores)
        right, attempts = scores.get(lesson, (0, 0))
        if attempts >= MAX_COUNT:
            return _copy(self, seen=seen)
        scores[lesson] = (right + bool(correct), attempts + 1)
        return _copy(self, lesson_scores=tuple((n, c, a) for n, (c, a) in sorted(scores.items())), seen=seen)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values (the session keeps this)."""
        return {
            "lessons_done": sorted(self.lessons_done),
            "lesson_scores": {str(n): [c, a] for n, c, a in self.lesson_scores},
            "selfstudy": {"correct": self.selfstudy_correct, "attempts": self.selfstudy_attempts},
            "seen": sorted(self.seen)[:500],
        }


def _copy(progress: Progress, **changes: Any) -> Progress:
    values = {
        "lessons_done": progress.lessons_done, "lesson_scores": progress.lesson_scores,
        "selfstudy_correct": progress.selfstudy_correct, "selfstudy_attempts": progress.selfstudy_attempts,
        "seen": progress.seen,
    }
    values.update(changes)
    return Progress(**values)


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_COUNT


def _validate(progress: Progress) -> None:
    if not isinstance(progress.lessons_done, frozenset) or not all(
            isinstance(n, int) and not isinstance(n, bool) and 1 <= n <= LESSON_COUNT for n in progress.lessons_done):
        raise ProgressError("progress.lessons_done_range", first=1, last=LESSON_COUNT)
    numbers = [item[0] for item in progress.lesson_scores if isinstance(item, tuple) and len(item) == 3]
    if len(numbers) != len(progress.lesson_scores) or numbers != sorted(set(numbers)):
        raise ProgressError("progress.scores_malformed")
    for lesson, correct, attempts in progress.lesson_scores:
        if not (isinstance(lesson, int) and not isinstance(lesson, bool) and 1 <= lesson <= LESSON_COUNT):
            raise ProgressError("progress.score_lesson_range", first=1, last=LESSON_COUNT)
        if not (_is_count(correct) and _is_count(attempts) and correct <= attempts):
            raise ProgressError("progress.score_impossible", lesson=lesson)
    if not (_is_count(progress.selfstudy_correct) and _is_count(progress.selfstudy_attempts)
            and progress.selfstudy_correct <= progress.selfstudy_attempts):
        raise ProgressError("progress.selfstudy_impossible")


def from_dict(data: Any) -> Progress:
    """A progress from plain values (the session's dict or a file's JSON), validated."""
    if not isinstance(data, Mapping):
        raise ProgressError("progress.not_object")
    lessons = data.get("lessons_done", [])
    scores = data.get("lesson_scores", {})
    selfstudy = data.get("selfstudy", {"correct": 0, "attempts": 0})
    seen = data.get("seen", [])
    if not isinstance(lessons, list) or len(lessons) > LESSON_COUNT:
        raise ProgressError("progress.lessons_done_not_list")
    if not isinstance(scores, Mapping) or len(scores) > LESSON_COUNT:
        raise ProgressError("progress.lesson_scores_malformed")
    if not isinstance(selfstudy, Mapping):
        raise ProgressError("progress.selfstudy_malformed")
    items = []
    for key, value in scores.items():
        if not (isinstance(key, str) and key.isascii() and key.isdigit() and len(key) <= 2):
            raise ProgressError("progress.lesson_scores_key")
        if not (isinstance(value, list) and len(value) == 2):
            raise ProgressError("progress.lesson_score_shape")
        items.append((int(key), value[0], value[1]))
    if not isinstance(seen, list) or len(seen) > 500 or not all(isinstance(s, str) and len(s) <= 100 for s in seen):
        seen = []
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in lessons) or len(set(lessons)) != len(lessons):
        raise ProgressError("progress.lessons_done_repeated")
    if len({n for n, _, _ in items}) != len(items):
        raise ProgressError("progress.lesson_scores_repeated")
    return Progress(frozenset(lessons), tuple(sorted(items, key=lambda item: item[0])), selfstudy.get("correct"),
                    selfstudy.get("attempts"), frozenset(seen))


# --------------------------------------------------------------------------- the short code


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    for _ in range(4):  # 4 × 7 bits > MAX_COUNT
        if pos >= len(data):
            raise ProgressError("progress.code_incomplete")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos
    raise ProgressError("progress.code_number_too_large")


def _checksum(version: int, payload: bytes) -> bytes:
    return hashlib.blake2b(bytes([version]) + payload, digest_size=CHECKSUM_BYTES, person=b"steplab-prog").digest()


def _payload(progress: Progress) -> bytes:
    done = sum(1 << (n - 1) for n in progress.lessons_done)
    scored = sum(1 << (n - 1) for n, _, _ in progress.lesson_scores)
    out = bytearray(_varint(done) + _varint(scored))
    for _, correct, attempts in progress.lesson_scores:
        out += _varint(correct) + _varint(attempts)
    out += _varint(progress.selfstudy_correct) + _varint(progress.selfstudy_attempts)
    return bytes(out)


def _b32encode(data: bytes) -> str:
    number = int.from_bytes(b"\x01" + data, "big")  # a leading 1 keeps leading zero bytes
    chars = []
    while number:
        number, digit = divmod(number, 32)
        chars.append(ALPHABET[digit])
    return "".join(reversed(chars))


def _b32decode(text: str) -> bytes:
    number = 0
    for char in text:
        if char not in READ_AS:
            raise ProgressError("progress.code_invalid_character", char=repr(char))
        number = number * 32 + READ_AS[char]
    raw = number.to_bytes((number.bit_length() + 7) // 8, "big")
    if not raw or raw[0] != 1:
        raise ProgressError("progress.code_damaged")
    return raw[1:]


def to_code(progress: Progress) -> str:
    """A short code for the learner to copy, such as `SL1-2D1K-4RX9-T7`."""
    payload = _payload(progress)
    body = _b32encode(payload + _checksum(VERSION, payload))
    groups = [body[i:i + 4] for i in range(0, len(body), 4)]
    return f"{PREFIX}{VERSION}-" + "-".join(groups)


CODE_SHAPE = re.compile(rf"{PREFIX}(\d{{1,3}})[\s\-]+([0-9A-Z][0-9A-Z\s\-]*)")


CODE_HEAD = re.compile(rf"{PREFIX}(\d{{1,3}})[\s\-]+")


def _why_not_a_code(upper: str) -> None:
    """A text that is not shaped like a code: a StepLab start with a wrong character or nothing after it says so;
    anything else is not a StepLab code at all."""
    head = CODE_HEAD.match(upper)
    if head is None:
        raise ProgressError("progress.code_not_steplab", start=f"{PREFIX}{VERSION}-")
    if int(head.group(1)) not in (VERSION, *FORMER):
        raise ProgressError("progress.code_other_version", version=int(head.group(1)))
    body = upper[head.end():]
    bad = next((char for char in body if char not in READ_AS and char not in "- \t\n\r"), None)
    if bad is not None:
        raise ProgressError("progress.code_invalid_character", char=repr(bad))
    raise ProgressError("progress.code_incomplete")


def from_code(text: Any) -> Progress:
    """Read a progress code back; `ProgressError` for anything that is not a valid code of this version."""
    if not isinstance(text, str) or not text.strip():
        raise ProgressError("progress.code_missing")
    if len(text) > MAX_CODE_CHARS:
        raise ProgressError("progress.code_too_long", limit=MAX_CODE_CHARS)
    upper = text.strip().upper()
    if not upper.isascii():
        raise ProgressError("progress.code_not_ascii")
    match = CODE_SHAPE.fullmatch(upper)
    if match is None:
        _why_not_a_code(upper)
    version = int(match.group(1))
    if version != VERSION and version not in FORMER:
        raise ProgressError("progress.code_other_version", version=version)
    data = _b32decode(re.sub(r"[\s\-]", "", match.group(2)))
    if len(data) <= CHECKSUM_BYTES:
        raise ProgressError("progress.code_incomplete")
    payload, check = data[:-CHECKSUM_BYTES], data[-CHECKSUM_BYTES:]
    if _checksum(version, payload) != check:
        raise ProgressError("progress.code_checksum")
    return _parse_payload(payload, FORMER.get(version))


def _parse_payload(payload: bytes, renumber: Mapping[int, int] | None = None) -> Progress:
    """The payload's progress; `renumber` maps an earlier version's lesson numbers to today's."""
    count = len(renumber) if renumber else LESSON_COUNT
    number = (lambda n: renumber[n]) if renumber else (lambda n: n)
    done, pos = _read_varint(payload, 0)
    scored, pos = _read_varint(payload, pos)
    if done >> count or scored >> count:
        raise ProgressError("progress.code_lesson_range")
    scores = []
    for lesson in range(1, count + 1):
        if scored >> (lesson - 1) & 1:
            correct, pos = _read_varint(payload, pos)
            attempts, pos = _read_varint(payload, pos)
            scores.append((number(lesson), correct, attempts))
    correct, pos = _read_varint(payload, pos)
    attempts, pos = _read_varint(payload, pos)
    if pos != len(payload):
        raise ProgressError("progress.code_extra_data")
    lessons = frozenset(number(n) for n in range(1, count + 1) if done >> (n - 1) & 1)
    return Progress(lessons, tuple(sorted(scores)), correct, attempts)


# --------------------------------------------------------------------------- the file


def to_json(progress: Progress) -> str:
    """The progress as a small JSON file (with its code, for a second check)."""
    data = {"app": "steplab", "kind": "progress", "version": VERSION, **progress.to_dict(), "code": to_code(progress)}
    data.pop("seen")
    return json.dumps(data, ensure_ascii=False, indent=2)


def from_json(content: Any) -> Progress:
    """Read a progress file back (text or bytes); `ProgressError` for anything invalid."""
    if isinstance(content, bytes | bytearray):
        if len(content) > MAX_JSON_BYTES:
            raise ProgressError("progress.file_too_large")
        try:
            content = bytes(content).decode("utf-8-sig")
        except UnicodeDecodeError:
            raise ProgressError("progress.file_not_text", encoding="UTF-8") from None
    if not isinstance(content, str):
        raise ProgressError("progress.file_unreadable")
    if len(content.encode("utf-8", "surrogatepass")) > MAX_JSON_BYTES:
        raise ProgressError("progress.file_too_large")
    try:
        data = json.loads(content, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        raise ProgressError("progress.file_not_json") from None
    if not isinstance(data, Mapping) or data.get("app") != "steplab" or data.get("kind") != "progress":
        raise ProgressError("progress.file_not_steplab")
    version = data.get("version")
    if version != VERSION and (isinstance(version, bool) or version not in FORMER):
        raise ProgressError("progress.file_other_version")
    unknown = set(data) - {"app", "kind", "version", "lessons_done", "lesson_scores", "selfstudy", "code"}
    if unknown:
        raise ProgressError("progress.file_unknown_fields")
    if version != VERSION:
        data = _renumbered(data, FORMER[version])
    progress = from_dict(data)
    if "code" in data and (not isinstance(data["code"], str) or from_code(data["code"]) != progress):
        raise ProgressError("progress.file_code_mismatch")
    return progress


def _renumbered(data: Mapping[str, Any], renumber: Mapping[int, int]) -> dict[str, Any]:
    """An earlier version's file with today's lesson numbers (numbers it never had are left for `from_dict` to
    refuse)."""
    lessons, scores = data.get("lessons_done", []), data.get("lesson_scores", {})
    if isinstance(lessons, list):
        lessons = [renumber.get(n, n) if isinstance(n, int) and not isinstance(n, bool) else n for n in lessons]
    if isinstance(scores, Mapping):
        scores = {str(renumber.get(int(k), k)) if isinstance(k, str) and k.isascii() and k.isdigit() and len(k) <= 2
                  else k: v for k, v in scores.items()}
    return {**data, "lessons_done": lessons, "lesson_scores": scores}


def _reject_constant(name: str) -> None:
    raise ValueError(name)
