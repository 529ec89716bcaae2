"""The one door to the class database: SQLAlchemy Core over SQLite (WAL, the embedded default) or PostgreSQL.

`Store(url)` opens the database and brings its schema to Alembic's head (`steplab/classroom/migrations/`; on
PostgreSQL under an advisory lock, on SQLite under `BEGIN IMMEDIATE`, so replicas starting together migrate
once). The URL comes from the argument, else `STEPLAB_DATABASE_URL`, else `sqlite:///<data dir>/steplab.db`
(`STEPLAB_DATA_DIR`, default `./data`).

Identity is a bearer token in a link: the instructor's `host` token (controls the class) and each student's
`seat` token. The database keeps only their SHA-256 hashes. The short join code only lets someone take a seat,
and only until it expires. Students are known by an optional nickname and nothing else.

Every method takes `now` (a timezone-aware UTC datetime; default: the clock) so tests never sleep. Problems a
user can cause raise `ClassError` with a catalogue code (`class.*`, in `locales/<lang>/engine/classroom.yaml`).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
import re
import secrets
import sqlite3
import time
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from functools import lru_cache
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, delete, event, func, insert, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.pool import StaticPool

from steplab.classroom import migrations, polls
from steplab.classroom.localtime import local_text, zone_label
from steplab.classroom.polls import Poll, PollAnswerError
from steplab.classroom.tables import answers, classes, seats
from steplab.classroom.tables import polls as polls_table
from steplab.classroom.tables import progress as progress_table
from steplab.errors import InputError
from steplab.i18n import t, whole
from steplab.teaching.progress import Progress, ProgressError
from steplab.teaching.progress import from_dict as progress_from_dict

CLASS_LIFETIME = timedelta(hours=12)  # a class and all its answers are deleted after this
CODE_LIFETIME = timedelta(hours=3)  # the join code stops admitting new students after this
CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"  # no 0/O, 1/I/L
CODE_LENGTH = 6
MAX_NICKNAME_CHARS = 24
MAX_STUDENTS = 500  # per class
# Joins are counted over the last JOIN_WINDOW, in the database (every replica counts the same seats): one client (the
# address the page was reached from: `client` of `join`) may take at most JOINS_PER_CLIENT seats of a class in it, and
# a class hands out at most JOINS_PER_CLASS seats in it, whoever asks. A room behind one campus NAT is one client:
# sixty students there get in within two minutes (the refused ones are told how many seconds to wait); one script
# needs seventeen minutes to fill a class, and however many addresses it has, a minute and forty seconds, while a
# lecture hall of MAX_STUDENTS that scans the code at once is seated in as long.
JOIN_WINDOW = timedelta(minutes=1)
JOINS_PER_CLIENT = 30
JOINS_PER_CLASS = 300
ANSWER_INTERVAL = timedelta(seconds=1)  # a seat may send at most one answer per interval ...
MAX_ANSWERS_PER_POLL = 20  # ... and change its answer at most this many times per poll
MAX_TOKEN_CHARS = 100  # a longer "token" is refused before it is hashed
MAX_CODE_INPUT_CHARS = 40  # a typed join code longer than this is unknown without a lookup
SQLITE_BUSY_MS = 30_000  # how long an SQLite writer waits for the write lock before giving up
DATA_DIR_ENV, URL_ENV = "STEPLAB_DATA_DIR", "STEPLAB_DATABASE_URL"
# PostgreSQL advisory lock keys (any 64-bit numbers, fixed): schema migration, handing out join codes.
MIGRATION_LOCK, CODE_LOCK = 0x5354_4550_4C41_4201, 0x5354_4550_4C41_4202
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


class ClassError(InputError):
    """Something about a class a user caused: unknown or expired code, a link that is not (or no longer) valid,
    a closed poll, a rate limit, a bad nickname. Codes: `class.unknown_code`, `class.code_expired`,
    `class.not_host`, `class.not_seat`, `class.ended`, `class.full`, `class.nickname_too_long`,
    `class.nickname_invalid`, `class.no_poll`, `class.poll_closed`, `class.too_fast`, `class.too_many_answers`,
    `class.too_many_joins` (this client, `JOINS_PER_CLIENT`), `class.joins_busy` (this class, `JOINS_PER_CLASS`),
    `class.answer` (wraps a `PollAnswerError`: its message is the problem)."""


@dataclass(frozen=True)
class Opened:
    """A new class: what the instructor needs (the host token is shown once, in the instructor's link)."""

    class_id: int
    join_code: str
    host_token: str
    code_expires_at: datetime
    expires_at: datetime


@dataclass(frozen=True)
class ClassInfo:
    class_id: int
    join_code: str
    created_at: datetime
    code_expires_at: datetime
    expires_at: datetime
    students: int


@dataclass(frozen=True)
class Seat:
    """A student's place in a class (`token` only when just joined: it goes into the student's link; `progress`
    only when looked up: the latest progress the seat reported, None before any)."""

    class_id: int
    student_id: int
    nickname: str
    token: str | None = None
    progress: Progress | None = None


@dataclass(frozen=True)
class PollState:
    """The class's current poll (the latest one asked) and whether it is revealed."""

    poll_id: int
    poll: Poll
    asked_at: datetime
    revealed: bool


@dataclass(frozen=True)
class Question:
    """A student's view of the class: its current poll (None before the first) and the seat's stored answer to it."""

    poll: PollState | None
    mine: float | None

    @property
    def seen(self) -> tuple[int, bool] | None:
        """What a change of makes the student's page draw itself again: the poll and whether it is revealed."""
        return None if self.poll is None else (self.poll.poll_id, self.poll.revealed)


@dataclass(frozen=True)
class Tally:
    """The aggregate of one poll: how many answered out of how many joined, and the answers' values (sorted;
    no names, no seats: what the projector may show)."""

    poll_id: int
    answered: int
    joined: int
    values: tuple[float, ...]
    revealed: bool


@dataclass(frozen=True)
class Live:
    """What the projector refreshes: how many joined, the current poll (None before the first) and its tally."""

    students: int
    poll: PollState | None
    tally: Tally | None


@dataclass(frozen=True)
class RosterRow:
    """One student in the instructor's class table."""

    nickname: str
    joined_at: datetime
    lessons_done: tuple[int, ...]
    lesson_scores: tuple[tuple[int, int, int], ...]  # (lesson, correct, attempts)
    selfstudy_correct: int
    selfstudy_attempts: int
    polls_answered: int
    polls_correct: int  # among revealed polls


class Store:
    """The class database. Thread-safe: one per process (the UI keeps it in `st.cache_resource`)."""

    def __init__(self, url: str | None = None) -> None:
        self._url = make_url(database_url(url))
        self._sqlite = self._url.get_backend_name() == "sqlite"
        self._engine = _sqlite_engine(self._url) if self._sqlite else _postgres_engine(self._url)
        # Writes that read first take the write lock at BEGIN on SQLite (BEGIN IMMEDIATE): a deferred transaction
        # that reads and then writes can fail with "database is locked" instead of waiting its turn.
        self._writer = self._engine.execution_options(steplab_write=True)
        self._migrate()

    @property
    def url(self) -> str:
        """The database URL with any password masked."""
        return self._url.render_as_string(hide_password=True)

    @property
    def dialect(self) -> str:
        """`sqlite` or `postgresql`."""
        return self._engine.dialect.name

    def _migrate(self) -> None:
        """Bring the schema to head once, whoever else opens the database at the same moment."""
        with self._writer.begin() as connection:  # SQLite: BEGIN IMMEDIATE holds the write lock until commit
            if not self._sqlite:
                connection.execute(select(func.pg_advisory_xact_lock(MIGRATION_LOCK)))
            migrations.upgrade(connection)

    @contextmanager
    def _write(self) -> Iterator[Connection]:
        with self._writer.begin() as connection:
            yield connection

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        with self._engine.connect() as connection:
            yield connection

    # ---------------------------------------------------------------- instructor
    def open_class(self, now: datetime | None = None) -> Opened:
        """A new class with a fresh join code (unique among classes whose code has not expired). Classes past
        their lifetime are purged on the way."""
        now = _now(now)
        token = _token()
        with self._write() as connection:
            if not self._sqlite:  # SQLite's write lock already serialises this transaction
                connection.execute(select(func.pg_advisory_xact_lock(CODE_LOCK)))
            _purge(connection, now)
            code = _free_code(connection, now)
            result = connection.execute(insert(classes).values(
                join_code=code, host_hash=_hash(token), created_at=now, code_expires_at=now + CODE_LIFETIME,
                expires_at=now + CLASS_LIFETIME))
            class_id = int(result.inserted_primary_key[0])
        return Opened(class_id, code, token, now + CODE_LIFETIME, now + CLASS_LIFETIME)

    def host(self, host_token: str, now: datetime | None = None) -> ClassInfo:
        """The class this instructor token controls, or `ClassError("class.not_host")` (also once it expired)."""
        now = _now(now)
        students = select(func.count()).where(seats.c.class_id == classes.c.id).scalar_subquery()
        with self._read() as connection:
            row = connection.execute(select(classes, students.label("students"))
                                     .where(classes.c.host_hash == _token_hash(host_token, "class.not_host"))).first()
        if row is None or row.expires_at <= now:
            raise ClassError("class.not_host")
        return ClassInfo(row.id, row.join_code, row.created_at, row.code_expires_at, row.expires_at,
                         int(row.students))

    def _hosted(self, connection: Connection, host_token: str, now: datetime) -> int:
        """The id of the live class this token controls (inside a transaction)."""
        row = connection.execute(select(classes.c.id, classes.c.expires_at).where(
            classes.c.host_hash == _token_hash(host_token, "class.not_host"))).first()
        if row is None or row.expires_at <= now:
            raise ClassError("class.not_host")
        return int(row.id)

    def ask(self, host_token: str, poll: Poll, now: datetime | None = None) -> int:
        """Put a new poll to the class (it becomes the current one); its id."""
        now = _now(now)
        if not isinstance(poll, Poll):
            raise TypeError("ask takes a steplab.classroom.polls.Poll")
        spec = _spec(poll)
        Poll.from_dict(json.loads(spec))  # only what reads back is stored (PollError otherwise)
        with self._write() as connection:
            class_id = self._hosted(connection, host_token, now)
            result = connection.execute(insert(polls_table).values(class_id=class_id, spec=spec, asked_at=now))
            return int(result.inserted_primary_key[0])

    def reveal(self, host_token: str, poll_id: int, now: datetime | None = None) -> None:
        """Reveal a poll of this class: answers are closed, students see the answer (again: nothing changes)."""
        now = _now(now)
        with self._write() as connection:
            class_id = self._hosted(connection, host_token, now)
            revealed = connection.execute(select(polls_table.c.revealed_at).where(
                polls_table.c.id == _db_id(poll_id), polls_table.c.class_id == class_id)).first()
            if revealed is None:
                raise ClassError("class.no_poll")
            if revealed.revealed_at is None:
                connection.execute(update(polls_table).where(polls_table.c.id == poll_id).values(revealed_at=now))

    def live(self, host_token: str, now: datetime | None = None) -> Live:
        """The projector's refresh in one query: the class's head count, its latest poll and that poll's answers
        (`ClassError("class.not_host")` for a token that controls no live class)."""
        now = _now(now)
        students = select(func.count()).where(seats.c.class_id == classes.c.id).scalar_subquery()
        asked = polls_table.alias("asked")
        latest = (select(func.max(asked.c.id)).where(asked.c.class_id == classes.c.id).correlate(classes)
                  .scalar_subquery())
        query = (select(classes.c.expires_at, students.label("students"), polls_table.c.id.label("poll_id"),
                        polls_table.c.spec, polls_table.c.asked_at, polls_table.c.revealed_at, answers.c.value)
                 .select_from(classes)
                 .outerjoin(polls_table, polls_table.c.id == latest)
                 .outerjoin(answers, answers.c.poll_id == polls_table.c.id)
                 .where(classes.c.host_hash == _token_hash(host_token, "class.not_host")))
        with self._read() as connection:
            rows = connection.execute(query).all()
        if not rows or rows[0].expires_at <= now:
            raise ClassError("class.not_host")
        first = rows[0]
        if first.poll_id is None:
            return Live(int(first.students), None, None)
        revealed = first.revealed_at is not None
        state = PollState(int(first.poll_id), _poll_of(first.spec), first.asked_at, revealed)
        values = tuple(sorted(float(row.value) for row in rows if row.value is not None))
        return Live(int(first.students), state, Tally(state.poll_id, len(values), int(first.students), values,
                                                       revealed))

    def roster(self, host_token: str, now: datetime | None = None) -> tuple[RosterRow, ...]:
        """Every student of the class, by join time (then by seat: the order `roster_csv` numbers them in)."""
        now = _now(now)
        with self._read() as connection:
            class_id = self._hosted(connection, host_token, now)
            students = connection.execute(
                select(seats.c.id, seats.c.nickname, seats.c.joined_at, progress_table.c.payload)
                .outerjoin(progress_table, progress_table.c.seat_id == seats.c.id)
                .where(seats.c.class_id == class_id).order_by(seats.c.joined_at, seats.c.id)).all()
            given = connection.execute(
                select(answers.c.seat_id, answers.c.value, polls_table.c.spec, polls_table.c.revealed_at)
                .join(polls_table, polls_table.c.id == answers.c.poll_id)
                .where(polls_table.c.class_id == class_id)).all()
        answered: dict[int, int] = {}
        correct: dict[int, int] = {}
        for seat_id, value, spec, revealed_at in given:
            answered[seat_id] = answered.get(seat_id, 0) + 1
            if revealed_at is not None and polls.is_correct(_poll_of(spec), value):
                correct[seat_id] = correct.get(seat_id, 0) + 1
        rows = []
        for seat_id, nickname, joined_at, payload in students:
            learner = _progress_of(payload)
            rows.append(RosterRow(
                nickname=nickname, joined_at=joined_at, lessons_done=tuple(sorted(learner.lessons_done)),
                lesson_scores=learner.lesson_scores, selfstudy_correct=learner.selfstudy_correct,
                selfstudy_attempts=learner.selfstudy_attempts, polls_answered=answered.get(seat_id, 0),
                polls_correct=correct.get(seat_id, 0)))
        return tuple(rows)

    def delete_class(self, host_token: str) -> None:
        """The class and everything in it (seats, polls, answers, progress), now (also a class that expired)."""
        digest = _token_hash(host_token, "class.not_host")
        with self._write() as connection:
            if connection.execute(delete(classes).where(classes.c.host_hash == digest)).rowcount == 0:
                raise ClassError("class.not_host")

    # ---------------------------------------------------------------- student
    def join(self, join_code: str, nickname: str = "", now: datetime | None = None,
             client: str | None = None) -> Seat:
        """A seat in the class of this code (case, spaces and dashes ignored, full-width letters read as ASCII);
        the seat's token is in the result. The nickname is trimmed; empty is allowed.

        `client` names who asks (the page passes the address it was reached from; None: unknown, limited only with
        the whole class). It is stored hashed with the class (`_client_hash`), never as given. Refused beyond
        `JOINS_PER_CLIENT` seats of this client or `JOINS_PER_CLASS` seats of the class in the last `JOIN_WINDOW`
        (`class.too_many_joins`, `class.joins_busy`, with the seconds to wait), and beyond `MAX_STUDENTS`."""
        now = _now(now)
        nickname = clean_nickname(nickname)
        code = normalise_code(join_code)
        if code is None:
            raise ClassError("class.unknown_code")
        token = _token()
        with self._write() as connection:
            found = (select(classes.c.id, classes.c.code_expires_at).where(classes.c.join_code == code)
                     .order_by(classes.c.code_expires_at.desc()).limit(1))
            if not self._sqlite:  # joins of one class one at a time: the head count and the limits stay exact
                found = found.with_for_update(key_share=True)
            row = connection.execute(found).first()
            if row is None:
                raise ClassError("class.unknown_code")
            if row.code_expires_at <= now:
                raise ClassError("class.code_expired")
            count = connection.execute(select(func.count()).where(seats.c.class_id == row.id)).scalar_one()
            if count >= MAX_STUDENTS:
                raise ClassError("class.full", limit=MAX_STUDENTS)
            client_hash = None if client is None else _client_hash(int(row.id), client)
            window = whole(JOIN_WINDOW.total_seconds())
            if client_hash is not None and (wait := _join_wait(
                    connection, (seats.c.class_id == row.id) & (seats.c.client_hash == client_hash), JOINS_PER_CLIENT,
                    now)):
                raise ClassError("class.too_many_joins", limit=JOINS_PER_CLIENT, window=window, seconds=wait,
                                 count=wait)
            if wait := _join_wait(connection, seats.c.class_id == row.id, JOINS_PER_CLASS, now):
                raise ClassError("class.joins_busy", limit=JOINS_PER_CLASS, window=window, seconds=wait, count=wait)
            result = connection.execute(insert(seats).values(
                class_id=row.id, seat_hash=_hash(token), nickname=nickname, joined_at=now, client_hash=client_hash))
            return Seat(int(row.id), int(result.inserted_primary_key[0]), nickname, token)

    def seat(self, seat_token: str, now: datetime | None = None) -> Seat:
        """The seat of this token with the progress it last reported (`token` is None), or
        `ClassError("class.not_seat")` (`class.ended` once the class's lifetime is over). A new session on a seat's
        link (after a server restart, on another replica) takes its progress back from here."""
        now = _now(now)
        with self._read() as connection:
            row = _seat_row(connection, seat_token, now)
            payload = connection.execute(select(progress_table.c.payload)
                                         .where(progress_table.c.seat_id == row.id)).scalar_one_or_none()
        return Seat(int(row.class_id), int(row.id), row.nickname,
                    progress=None if payload is None else _progress_of(payload))

    def answer(self, seat_token: str, poll_id: int, response: object, now: datetime | None = None) -> float:
        """Store (or replace) this seat's answer to an open poll of its class; the stored value.

        Checked by `polls.check`; rate-limited per seat (`ANSWER_INTERVAL`, `MAX_ANSWERS_PER_POLL`). Sending the
        stored value again changes nothing (and is not limited). `class.no_poll`: not a poll of the class;
        `class.poll_closed`: revealed, or no longer the current poll.
        """
        now = _now(now)
        poll_id = _db_id(poll_id)
        with self._write() as connection:
            seat = _seat_row(connection, seat_token, now, lock=not self._sqlite)
            latest = (select(func.max(polls_table.c.id)).where(polls_table.c.class_id == seat.class_id)
                      .scalar_subquery())
            asked = (select(polls_table.c.spec, polls_table.c.revealed_at, latest.label("latest"))
                     .where(polls_table.c.id == poll_id, polls_table.c.class_id == seat.class_id))
            if not self._sqlite:  # a reveal waits for the answers being stored, and later answers see it
                asked = asked.with_for_update(read=True, of=polls_table)
            row = connection.execute(asked).first()
            if row is None:
                raise ClassError("class.no_poll")
            if row.revealed_at is not None or row.latest != poll_id:
                raise ClassError("class.poll_closed")
            try:
                value = polls.check(_poll_of(row.spec), response)
            except PollAnswerError as error:
                raise ClassError("class.answer", problem=error.text) from None
            mine = connection.execute(select(answers.c.value, answers.c.changes).where(
                answers.c.poll_id == poll_id, answers.c.seat_id == seat.id)).first()
            if mine is not None and mine.value == value:
                return value
            if mine is not None and mine.changes >= MAX_ANSWERS_PER_POLL:
                raise ClassError("class.too_many_answers", limit=MAX_ANSWERS_PER_POLL)
            last = connection.execute(select(func.max(answers.c.answered_at))
                                      .where(answers.c.seat_id == seat.id)).scalar_one()
            if last is not None and now - last < ANSWER_INTERVAL:
                seconds = ANSWER_INTERVAL.total_seconds()
                raise ClassError("class.too_fast", seconds=seconds, count=seconds)
            if mine is None:
                connection.execute(insert(answers).values(
                    poll_id=poll_id, seat_id=seat.id, value=value, answered_at=now, changes=0))
            else:
                connection.execute(update(answers).where(answers.c.poll_id == poll_id, answers.c.seat_id == seat.id)
                                   .values(value=value, answered_at=now, changes=answers.c.changes + 1))
        return value

    def my_answer(self, seat_token: str, poll_id: int) -> float | None:
        """This seat's stored answer to the poll, if any."""
        poll_id = _db_id(poll_id)
        with self._read() as connection:
            row = connection.execute(
                select(seats.c.id, answers.c.value)
                .outerjoin(answers, (answers.c.seat_id == seats.c.id) & (answers.c.poll_id == poll_id))
                .where(seats.c.seat_hash == _token_hash(seat_token, "class.not_seat"))).first()
        if row is None:
            raise ClassError("class.not_seat")
        return None if row.value is None else float(row.value)

    def question(self, seat_token: str) -> Question:
        """What a student's page shows, in one query: the class's current poll (None before the first) and this
        seat's stored answer to it (`ClassError("class.not_seat")` for a token that holds no seat). The page reads
        it on every refresh, so it shows what the store holds whatever happened to an earlier run's output."""
        latest = (select(func.max(polls_table.c.id)).where(polls_table.c.class_id == seats.c.class_id)
                  .correlate(seats).scalar_subquery())
        query = (select(seats.c.id, polls_table.c.id.label("poll_id"), polls_table.c.spec, polls_table.c.asked_at,
                        polls_table.c.revealed_at, answers.c.value)
                 .select_from(seats)
                 .outerjoin(polls_table, polls_table.c.id == latest)
                 .outerjoin(answers, (answers.c.poll_id == polls_table.c.id) & (answers.c.seat_id == seats.c.id))
                 .where(seats.c.seat_hash == _token_hash(seat_token, "class.not_seat")))
        with self._read() as connection:
            row = connection.execute(query).first()
        if row is None:
            raise ClassError("class.not_seat")
        if row.poll_id is None:
            return Question(None, None)
        state = PollState(int(row.poll_id), _poll_of(row.spec), row.asked_at, row.revealed_at is not None)
        return Question(state, None if row.value is None else float(row.value))

    def report_progress(self, seat_token: str, progress: Progress, now: datetime | None = None) -> None:
        """The student's lesson and self-check progress, as the class table shows it (the latest report wins)."""
        now = _now(now)
        if not isinstance(progress, Progress):
            raise TypeError("report_progress takes a steplab.teaching.progress.Progress")
        payload = _payload(progress)
        with self._write() as connection:
            seat = _seat_row(connection, seat_token, now)
            upsert = (sqlite_insert if self._sqlite else pg_insert)(progress_table)
            connection.execute(upsert.values(seat_id=seat.id, payload=payload, updated_at=now).on_conflict_do_update(
                index_elements=["seat_id"], set_={"payload": payload, "updated_at": now}))

    # ---------------------------------------------------------------- either side
    def current_poll(self, class_id: int) -> PollState | None:
        """The latest poll asked in the class (one cheap query)."""
        with self._read() as connection:
            row = connection.execute(
                select(polls_table.c.id, polls_table.c.spec, polls_table.c.asked_at, polls_table.c.revealed_at)
                .where(polls_table.c.class_id == _db_id(class_id))
                .order_by(polls_table.c.id.desc()).limit(1)).first()
        if row is None:
            return None
        return PollState(int(row.id), _poll_of(row.spec), row.asked_at, row.revealed_at is not None)

    def tally(self, class_id: int, poll_id: int) -> Tally:
        """The aggregate of a poll of this class (one cheap query, for the projector's refresh);
        `ClassError("class.no_poll")` for a poll that is not the class's."""
        joined = select(func.count()).where(seats.c.class_id == polls_table.c.class_id).scalar_subquery()
        with self._read() as connection:
            rows = connection.execute(
                select(polls_table.c.revealed_at, joined.label("joined"), answers.c.value)
                .outerjoin(answers, answers.c.poll_id == polls_table.c.id)
                .where(polls_table.c.id == _db_id(poll_id), polls_table.c.class_id == _db_id(class_id))).all()
        if not rows:
            raise ClassError("class.no_poll")
        values = tuple(sorted(float(row.value) for row in rows if row.value is not None))
        return Tally(int(poll_id), len(values), int(rows[0].joined), values, rows[0].revealed_at is not None)

    # ---------------------------------------------------------------- housekeeping
    def purge_expired(self, now: datetime | None = None) -> int:
        """Delete every class past its lifetime (with its seats, polls, answers, progress); how many."""
        now = _now(now)
        with self._write() as connection:
            return _purge(connection, now)

    def close(self) -> None:
        """Dispose of the connection pool."""
        self._engine.dispose()


# --------------------------------------------------------------------------- opening the database


def database_url(url: str | None = None) -> str:
    """The URL to open: the argument, else `STEPLAB_DATABASE_URL`, else an SQLite file in the data folder
    (`STEPLAB_DATA_DIR`, default `./data`, created). `postgresql://` and `postgres://` mean psycopg 3."""
    chosen = url or os.environ.get(URL_ENV, "").strip()
    if not chosen:
        folder = Path(os.environ.get(DATA_DIR_ENV, "").strip() or "data")
        chosen = f"sqlite:///{folder / 'steplab.db'}"
    for plain in ("postgres://", "postgresql://"):
        if chosen.startswith(plain):
            chosen = "postgresql+psycopg://" + chosen[len(plain):]
    return chosen


def _sqlite_engine(url: Any) -> Engine:
    """SQLite in WAL mode: readers never wait for the writer; writers queue for up to `SQLITE_BUSY_MS`."""
    database = url.database or ""
    memory = database in ("", ":memory:") or database.startswith("file::memory:")
    if memory:  # one connection shared by every thread (tests and scratch use only)
        engine = create_engine(url, poolclass=StaticPool, connect_args={"check_same_thread": False})
    else:
        Path(database).expanduser().resolve().parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, pool_size=8, max_overflow=24, pool_timeout=60,
                               connect_args={"check_same_thread": False, "timeout": SQLITE_BUSY_MS / 1000})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # SQLAlchemy emits BEGIN itself (the "begin" event below)
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_MS}")
        cursor.execute("PRAGMA foreign_keys = ON")
        if not memory:
            _set_wal(cursor)
            cursor.execute("PRAGMA synchronous = NORMAL")  # safe in WAL mode: a crash loses no committed page
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        write = connection.get_execution_options().get("steplab_write", False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    return engine


def _set_wal(cursor: Any) -> None:
    """WAL mode, waiting for a lock like any write: switching a new file to WAL needs it alone, and SQLite answers
    "database is locked" at once, without its busy handler, while another process is creating the same file."""
    deadline = time.monotonic() + SQLITE_BUSY_MS / 1000
    while True:
        try:
            cursor.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def _postgres_engine(url: Any) -> Engine:
    return create_engine(url, pool_size=8, max_overflow=24, pool_timeout=60, pool_pre_ping=True)


# --------------------------------------------------------------------------- small pieces


def _now(now: datetime | None) -> datetime:
    if now is None:
        return datetime.now(UTC)
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError("`now` must be a timezone-aware datetime")
    return now.astimezone(UTC)


def _token() -> str:
    return secrets.token_urlsafe(24)


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _token_hash(token: object, code: str) -> str:
    """The stored form of a token; anything that cannot be one of ours is refused with `code`."""
    if not isinstance(token, str) or not token or len(token) > MAX_TOKEN_CHARS:
        raise ClassError(code)
    return _hash(token)


def _db_id(value: object) -> int:
    """A poll's or class's id from a page (a URL, a widget): a positive int, else no such poll."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 2**63:
        raise ClassError("class.no_poll")
    return value


def _spec(poll: Poll) -> str:
    return json.dumps(poll.to_dict(), sort_keys=True, ensure_ascii=False, separators=(",", ":"))


@lru_cache(maxsize=256)
def _poll_of(spec: str) -> Poll:
    """A stored spec read back (cached: the projector and every phone read the same one)."""
    return Poll.from_dict(json.loads(spec))


def _payload(learner: Progress) -> str:
    """The progress as stored, with its graded-question tokens (`seen`): a session that takes the seat back after a
    restart must not count a lesson check's question a second time (the class table never shows them)."""
    return json.dumps(learner.to_dict(), sort_keys=True, separators=(",", ":"))


def _progress_of(payload: str | None) -> Progress:
    if payload is None:
        return Progress()
    try:
        return progress_from_dict(json.loads(payload))
    except (ProgressError, ValueError):
        return Progress()


def _seat_row(connection: Connection, seat_token: object, now: datetime, lock: bool = False) -> Any:
    """The seat of a token and its class's end, or `class.not_seat` / `class.ended`."""
    query = (select(seats.c.id, seats.c.class_id, seats.c.nickname, classes.c.expires_at)
             .join(classes, classes.c.id == seats.c.class_id)
             .where(seats.c.seat_hash == _token_hash(seat_token, "class.not_seat")))
    if lock:  # the class first, as deleting it does: a delete waits for the answers under way, no deadlock
        query = query.with_for_update(of=classes, read=True, key_share=True)
    row = connection.execute(query).first()
    if row is None:
        raise ClassError("class.not_seat")
    if row.expires_at <= now:
        raise ClassError("class.ended")
    if lock:  # then the seat: one answer of a seat at a time (SQLite's write lock already is one at a time)
        connection.execute(select(seats.c.id).where(seats.c.id == row.id).with_for_update())
    return row


def _client_hash(class_id: int, client: object) -> str:
    """The stored form of who asked for a seat: the client's name (an address) hashed with its class, so that the
    database holds no address as text and one client's seats in two classes do not share a value."""
    return _hash(f"{class_id}\n{str(client)[:MAX_TOKEN_CHARS]}")


def _join_wait(connection: Connection, taken: Any, limit: int, now: datetime) -> int | None:
    """None when fewer than `limit` seats matching `taken` were taken in the last `JOIN_WINDOW`; else the whole
    seconds until a join is allowed again (when the oldest of the latest `limit` seats leaves the window)."""
    oldest = connection.execute(select(seats.c.joined_at).where(taken, seats.c.joined_at > now - JOIN_WINDOW)
                                .order_by(seats.c.joined_at.desc()).offset(limit - 1).limit(1)).scalar_one_or_none()
    if oldest is None:
        return None
    return max(1, math.ceil((oldest + JOIN_WINDOW - now).total_seconds()))


def _purge(connection: Connection, now: datetime) -> int:
    return int(connection.execute(delete(classes).where(classes.c.expires_at <= now)).rowcount)


def _free_code(connection: Connection, now: datetime) -> str:
    """A join code no class with a live code holds (31^6 codes: a clash is rare, a few tries always do)."""
    for _ in range(100):
        code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
        taken = connection.execute(select(classes.c.id).where(
            classes.c.join_code == code, classes.c.code_expires_at > now).limit(1)).first()
        if taken is None:
            return code
    raise RuntimeError("no free join code after 100 tries")


DASHES = re.compile(r"[\s\-_\u2010-\u2015\u2212\u30fc\uff0d]+")


def normalise_code(text: object) -> str | None:
    """A typed join code as stored (`ab c-d2 3` -> `ABCD23`; full-width letters and digits read as ASCII), or None
    when it cannot be one."""
    if not isinstance(text, str) or len(text) > MAX_CODE_INPUT_CHARS:
        return None
    code = DASHES.sub("", unicodedata.normalize("NFKC", text)).upper()
    if len(code) != CODE_LENGTH or any(char not in CODE_ALPHABET for char in code):
        return None
    return code


def clean_nickname(nickname: object) -> str:
    """A nickname as stored: trimmed, at most `MAX_NICKNAME_CHARS`, no control characters; empty is allowed."""
    if nickname is None:
        return ""
    if not isinstance(nickname, str):
        raise ClassError("class.nickname_invalid")
    text = unicodedata.normalize("NFC", nickname).strip()
    if any(unicodedata.category(char) in ("Cc", "Cs", "Co", "Cn", "Zl", "Zp") or char in BIDI_CONTROLS
           for char in text):
        raise ClassError("class.nickname_invalid")
    if len(text) > MAX_NICKNAME_CHARS:
        raise ClassError("class.nickname_too_long", limit=MAX_NICKNAME_CHARS)
    return text


def roster_cells(rows: tuple[RosterRow, ...], lang: str, zone: tzinfo = UTC) -> tuple[list[str], list[list[str]]]:
    """The class table as the page and the CSV show it: the header in the user's language and one row of text
    cells per student. A student without a nickname is named by join order (`class.csv.unnamed`: "student 3").
    Join times are wall-clock times in `zone` (the reader's), named in the header."""
    header = [t(lang, f"class.csv.{column}", **({"zone": zone_label(zone)} if column == "joined_at" else {}))
              for column in CSV_COLUMNS]
    cells = [[str(cell) for cell in (
        row.nickname or t(lang, "class.csv.unnamed", number=number),
        local_text(row.joined_at, zone, seconds=True),
        " ".join(str(lesson) for lesson in row.lessons_done),
        "; ".join(f"{lesson}: {correct}/{attempts}" for lesson, correct, attempts in row.lesson_scores),
        row.selfstudy_correct, row.selfstudy_attempts, row.polls_answered, row.polls_correct)]
        for number, row in enumerate(rows, start=1)]
    return header, cells


def roster_csv(rows: tuple[RosterRow, ...], lang: str, zone: tzinfo = UTC) -> str:
    """The class table as CSV (`roster_cells`; UTF-8 with BOM so Excel opens Chinese right); cells that start
    with `=`, `+`, `-` or `@` are quoted against formula injection."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    header, cells = roster_cells(rows, lang, zone)
    writer.writerow(header)
    writer.writerows([_safe_cell(cell) for cell in row] for row in cells)
    return "\ufeff" + out.getvalue()


CSV_COLUMNS = ("nickname", "joined_at", "lessons_done", "lesson_scores", "selfstudy_correct", "selfstudy_attempts",
               "polls_answered", "polls_correct")
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _safe_cell(value: object) -> str:
    """A cell a spreadsheet shows as text: one that would start a formula gets a leading apostrophe."""
    text = str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text
