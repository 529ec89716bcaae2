"""The class database on SQLite and PostgreSQL: migrations, the class's whole life, every refusal, expiry, rate
limits, and answers sent all at once from threads and processes that are all kept.

PostgreSQL runs when `STEPLAB_TEST_POSTGRES_URL` names a server (each test gets a fresh database of its own, so
pytest-xdist workers never meet); `.ci/run` sets it and `STEPLAB_REQUIRE_POSTGRES=1`, which turns a missing URL
into a failure.
"""

from __future__ import annotations

import ast
import csv
import io
import math
import multiprocessing
import os
import sqlite3
import sys
import threading
import types
import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from dataclasses import astuple
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine, func, inspect, select
from sqlalchemy.engine import make_url

from steplab.classroom import migrations, polls
from steplab.classroom import store as store_module
from steplab.classroom.polls import PollAnswerError, PollError
from steplab.classroom.store import (
    ANSWER_INTERVAL,
    CLASS_LIFETIME,
    CODE_ALPHABET,
    CODE_LENGTH,
    CODE_LIFETIME,
    CSV_COLUMNS,
    JOIN_WINDOW,
    JOINS_PER_CLASS,
    JOINS_PER_CLIENT,
    MAX_NICKNAME_CHARS,
    ClassError,
    Live,
    RosterRow,
    Store,
    database_url,
    normalise_code,
    roster_cells,
    roster_csv,
)
from steplab.classroom.tables import answers, classes, metadata, seats
from steplab.classroom.tables import polls as polls_table
from steplab.classroom.tables import progress as progress_table
from steplab.i18n import LANGUAGES, catalogue, msg, t
from steplab.teaching.progress import Progress
from steplab.trainer.plan import make_plan
from steplab.trainer.setup import TrainingSetup

ROOT = Path(__file__).resolve().parents[1]
T0 = datetime(2026, 12, 3, 9, 0, tzinfo=UTC)
SETUP = TrainingSetup(num_samples=1600, per_device_train_batch_size=4, gradient_accumulation_steps=8,
                      num_train_epochs=3)
RIGHT = float(make_plan(SETUP).max_steps)  # the engine's total for SETUP
POSTGRES_ENV, REQUIRE_ENV = "STEPLAB_TEST_POSTGRES_URL", "STEPLAB_REQUIRE_POSTGRES"
SKIP_POSTGRES = (f"PostgreSQL tests need {POSTGRES_ENV}=postgresql+psycopg://USER:PASSWORD@HOST:PORT/DB (a role "
                 "that may CREATE DATABASE; .ci/run starts Debian's PostgreSQL and sets it)")


def later(**delta: float) -> datetime:
    return T0 + timedelta(**delta)


# --------------------------------------------------------------------------- one fixture, both backends


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path):
    """A new, empty database: an SQLite file in tmp_path, or a fresh PostgreSQL database dropped afterwards."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'class.db'}"
        return
    admin_url = os.environ.get(POSTGRES_ENV, "").strip()
    if not admin_url:
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(f"{REQUIRE_ENV}=1 but {POSTGRES_ENV} is not set")
        pytest.skip(SKIP_POSTGRES)
    admin = create_engine(database_url(admin_url), isolation_level="AUTOCOMMIT")
    name = f"steplab_test_{uuid.uuid4().hex}"
    with admin.connect() as connection:
        connection.exec_driver_sql(f'CREATE DATABASE "{name}"')
    try:
        yield make_url(database_url(admin_url)).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()


@pytest.fixture
def store(db_url):
    opened = Store(db_url)
    yield opened
    opened.close()


def setup_poll() -> polls.Poll:
    return polls.poll_from_setup(SETUP)


def count_rows(url: str, table) -> int:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return connection.execute(select(func.count()).select_from(table)).scalar_one()
    finally:
        engine.dispose()


def refused(code: str, call, *args, **kwargs) -> ClassError:
    with pytest.raises(ClassError) as caught:
        call(*args, **kwargs)
    assert caught.value.code == code, caught.value.code
    return caught.value


# --------------------------------------------------------------------------- migrations


def test_a_fresh_database_migrates_to_head_and_matches_the_tables(db_url):
    with closing(Store(db_url)) as opened:
        engine = create_engine(db_url)
        with engine.connect() as connection:
            assert migrations.current(connection) == migrations.head() == "0002"
            names = set(inspect(connection).get_table_names())
            assert {"classes", "seats", "polls", "answers", "progress", migrations.VERSION_TABLE} <= names
            context = MigrationContext.configure(connection, opts={"version_table": migrations.VERSION_TABLE})
            assert compare_metadata(context, metadata) == []  # the revision builds exactly tables.py
        engine.dispose()
        opened_class = opened.open_class(T0)
    with closing(Store(db_url)) as reopened:  # opening again migrates nothing and keeps the data
        assert reopened.host(opened_class.host_token, T0).class_id == opened_class.class_id
    assert count_rows(db_url, classes) == 1


def test_a_database_of_the_first_revision_keeps_its_class_and_seats_on_upgrade(db_url):
    """A deployment that ran 0001 (seats without `client_hash`) opens with today's store: its class and seats work,
    and the joins limits count from then on."""
    engine = create_engine(db_url)
    with engine.begin() as connection:
        command.upgrade(migrations.config(connection), "0001")
        assert migrations.current(connection) == "0001"
    engine.dispose()
    with closing(Store(db_url)) as first:  # today's store upgrades on opening
        opened = first.open_class(T0)
        old_seat = first.join(opened.join_code, "early", T0)
    with closing(create_engine(db_url).connect()) as connection:
        assert migrations.current(connection) == "0002"
    with closing(Store(db_url)) as reopened:
        assert reopened.seat(old_seat.token, T0).nickname == "early"
        reopened.join(opened.join_code, "later", T0, client="203.0.113.5")
        assert reopened.host(opened.host_token, T0).students == 2


@pytest.fixture
def plain_main(monkeypatch):
    """A bare `__main__` while spawned processes start: an AppTest run earlier in this worker may have left a
    page script as `__main__`, and spawn would run that page again in the child."""
    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))


def _open_at_once(url: str, barrier, results) -> None:
    """A process that opens a database at the same moment as another one, then opens a class in it."""
    barrier.wait(timeout=60)
    opened = Store(url)
    results.put(opened.open_class(T0).class_id)
    opened.close()


def test_two_processes_opening_one_new_database_at_once_both_work(db_url, plain_main):
    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(2), context.Queue()
    workers = [context.Process(target=_open_at_once, args=(db_url, barrier, results)) for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    assert [worker.exitcode for worker in workers] == [0, 0]
    assert sorted(results.get(timeout=5) for _ in workers) == [1, 2]
    engine = create_engine(db_url)
    with engine.connect() as connection:
        assert migrations.current(connection) == migrations.head()
    engine.dispose()


def test_sqlite_runs_in_wal_mode_and_the_default_url_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.delenv("STEPLAB_DATABASE_URL", raising=False)
    monkeypatch.setenv("STEPLAB_DATA_DIR", str(tmp_path / "new" / "data"))
    assert database_url() == f"sqlite:///{tmp_path / 'new' / 'data' / 'steplab.db'}"
    opened = Store()
    opened.close()
    with sqlite3.connect(tmp_path / "new" / "data" / "steplab.db") as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    monkeypatch.setenv("STEPLAB_DATABASE_URL", "postgresql://u:secret@db:5432/steplab")
    assert database_url() == "postgresql+psycopg://u:secret@db:5432/steplab"
    assert database_url("sqlite:///x.db") == "sqlite:///x.db"  # the argument wins
    monkeypatch.delenv("STEPLAB_DATA_DIR")
    monkeypatch.delenv("STEPLAB_DATABASE_URL")
    assert database_url() == "sqlite:///data/steplab.db"


def test_the_url_hides_the_password(store, db_url):
    password = make_url(db_url).password
    if password:
        assert f":{password}@" not in store.url and ":***@" in store.url
    assert store.url.split("://")[0] in ("sqlite", "postgresql+psycopg")


# --------------------------------------------------------------------------- a whole class


def test_a_class_from_open_to_delete(store, db_url):
    opened = store.open_class(T0)
    assert len(opened.join_code) == CODE_LENGTH and set(opened.join_code) <= set(CODE_ALPHABET)
    assert (opened.code_expires_at, opened.expires_at) == (T0 + CODE_LIFETIME, T0 + CLASS_LIFETIME)
    info = store.host(opened.host_token, T0)
    assert (info.class_id, info.join_code, info.students, info.created_at) == (
        opened.class_id, opened.join_code, 0, T0)

    typed = f" {opened.join_code[:3].lower()} - {opened.join_code[3:]} "  # case, spaces and dashes do not matter
    ming = store.join(typed, "  小明  ", later(minutes=1))
    hacker = store.join(opened.join_code, "=cmd|' /C calc'!A0", later(minutes=2))
    quiet = store.join(opened.join_code, "", later(minutes=3))
    assert ming.nickname == "小明" and ming.token and ming.class_id == opened.class_id
    assert store.seat(ming.token, T0) == ming.__class__(opened.class_id, ming.student_id, "小明", None)
    assert store.host(opened.host_token, T0).students == 3
    assert store.current_poll(opened.class_id) is None

    poll_id = store.ask(opened.host_token, setup_poll(), later(minutes=4))
    current = store.current_poll(opened.class_id)
    assert (current.poll_id, current.poll, current.asked_at, current.revealed) == (
        poll_id, setup_poll(), later(minutes=4), False)

    assert store.answer(ming.token, poll_id, "1,600", later(minutes=5)) == 1600.0
    assert store.my_answer(ming.token, poll_id) == 1600.0
    assert store.my_answer(quiet.token, poll_id) is None  # nobody sees another seat's answer
    assert store.answer(ming.token, poll_id, str(int(RIGHT)), later(minutes=6)) == RIGHT  # replaced
    assert store.answer(hacker.token, poll_id, "７", later(minutes=6)) == 7.0  # full-width digits
    tally = store.tally(opened.class_id, poll_id)
    assert (tally.poll_id, tally.answered, tally.joined, tally.values, tally.revealed) == (
        poll_id, 2, 3, tuple(sorted((RIGHT, 7.0))), False)

    store.report_progress(ming.token, Progress(frozenset({1, 2}), ((1, 3, 4),), 5, 6), later(minutes=7))
    store.report_progress(ming.token, Progress(frozenset({1, 2, 3}), ((1, 4, 5), (2, 2, 2)), 5, 6),
                          later(minutes=8))  # the latest report wins
    store.reveal(opened.host_token, poll_id, later(minutes=9))
    store.reveal(opened.host_token, poll_id, later(minutes=10))  # again: nothing changes
    assert store.current_poll(opened.class_id).revealed and store.tally(opened.class_id, poll_id).revealed
    refused("class.poll_closed", store.answer, quiet.token, poll_id, "1", later(minutes=11))

    roster = store.roster(opened.host_token, later(minutes=12))
    assert [row.nickname for row in roster] == ["小明", "=cmd|' /C calc'!A0", ""]  # by join time
    assert roster[0] == RosterRow("小明", later(minutes=1), (1, 2, 3), ((1, 4, 5), (2, 2, 2)), 5, 6, 1, 1)
    assert (roster[1].polls_answered, roster[1].polls_correct) == (1, 0)  # 7 is not the total
    assert astuple(roster[2])[2:] == ((), (), 0, 0, 0, 0)

    text = roster_csv(roster, "zh")
    assert text.startswith("\ufeff")
    table = list(csv.reader(io.StringIO(text[1:])))
    assert table[0][0] == catalogue("zh")["class.csv.nickname"] and len(table) == 4
    assert table[1][:5] == ["小明", "2026-12-03 09:01:00", "1 2 3", "1: 4/5; 2: 2/2", "5"]
    assert table[2][0] == "'=cmd|' /C calc'!A0"  # a formula start is neutralised
    assert table[3][0] == "同学 3"
    assert list(csv.reader(io.StringIO(roster_csv(roster, "en")[1:])))[3][0] == "student 3"

    store.delete_class(opened.host_token)
    refused("class.not_host", store.host, opened.host_token, T0)
    refused("class.not_seat", store.seat, ming.token, T0)
    for table_ in (classes, seats, polls_table, answers, progress_table):  # the cascade took everything
        assert count_rows(db_url, table_) == 0, table_.name


def test_a_seat_looked_up_again_brings_its_last_progress_with_the_questions_already_counted(store, db_url):
    """A new session on a seat's link (a server restart, another replica) takes the seat's progress back from the
    database: the counts and the graded questions' tokens, so a lesson check's question is not counted twice."""
    opened = store.open_class(T0)
    seat = store.join(opened.join_code, "Kai", later(seconds=1))
    assert store.seat(seat.token, later(seconds=2)).progress is None  # nothing reported yet
    made = Progress(frozenset({1}), ((1, 1, 2),), 3, 4).with_answer(2, True, token="lesson:l2_q0:l2-x:2")
    store.report_progress(seat.token, made, later(seconds=3))
    back = store.seat(seat.token, later(seconds=4)).progress
    assert back == made and back.seen == {"lesson:l2_q0:l2-x:2"}
    assert back.with_answer(2, True, token="lesson:l2_q0:l2-x:2") == made  # counted once, after the restart too
    replica = Store(db_url)  # another replica's door to the same database
    try:
        assert replica.seat(seat.token, later(seconds=5)).progress == made
    finally:
        replica.close()
    row = store.roster(opened.host_token, later(seconds=6))[0]
    assert (row.lessons_done, row.lesson_scores, row.selfstudy_attempts) == ((1,), ((1, 1, 2), (2, 1, 1)), 4)


def test_a_choice_poll_stores_the_option_index(store):
    question = next(qid for qid in polls.bank_choices() if not polls.is_numeric(polls.poll_from_bank(qid, 1)))
    poll = polls.poll_from_bank(question, 1)
    opened = store.open_class(T0)
    seat = store.join(opened.join_code, "", T0)
    poll_id = store.ask(opened.host_token, poll, T0)
    assert store.current_poll(opened.class_id).poll == poll
    assert store.answer(seat.token, poll_id, "1", T0) == 1.0
    error = refused("class.answer", store.answer, seat.token, poll_id, str(len(polls.options(poll))), later(seconds=5))
    assert error.values["problem"].key == "quiz.bad_option"


def test_a_grpo_bank_poll_is_asked_answered_and_read_back(store):
    """A `grpo` question of the bank in a live class: stored as any bank poll, read back the same, the room's
    numbers checked and tallied, the reveal GRPO's."""
    poll = polls.poll_from_bank("l11-grpo-steps", 11)
    answer = polls.reveal(poll).answer
    opened = store.open_class(T0)
    seats_ = [store.join(opened.join_code, name, T0) for name in ("a", "b")]
    poll_id = store.ask(opened.host_token, poll, T0)
    assert store.current_poll(opened.class_id).poll == poll
    assert store.answer(seats_[0].token, poll_id, f"{answer:,.0f}", T0) == answer
    assert store.answer(seats_[1].token, poll_id, "１２", T0) == 12.0  # full-width digits, as a phone types them
    error = refused("class.answer", store.answer, seats_[1].token, poll_id, "2.5", later(seconds=5))
    assert error.values["problem"].key == "poll.whole_number"
    store.reveal(opened.host_token, poll_id, later(seconds=6))
    tally = store.tally(opened.class_id, poll_id)
    assert tally.revealed and tally.values == tuple(sorted((answer, 12.0)))
    assert [polls.is_correct(poll, value) for value in (answer, 12.0)] == [True, answer == 12.0]


def test_a_students_question_is_the_current_poll_and_the_seats_own_answer(store):
    opened = store.open_class(T0)
    seat, other = store.join(opened.join_code, "a", T0), store.join(opened.join_code, "b", T0)
    assert store.question(seat.token) == store_module.Question(None, None)
    assert store.question(seat.token).seen is None
    first = store.ask(opened.host_token, setup_poll(), T0)
    asked = store.question(seat.token)
    assert (asked.poll.poll_id, asked.mine, asked.seen) == (first, None, (first, False))
    store.answer(other.token, first, "7", T0)  # another seat's answer is not this seat's
    assert store.question(seat.token).mine is None
    store.answer(seat.token, first, "12", T0)
    assert store.question(seat.token).mine == 12.0
    store.reveal(opened.host_token, first, later(seconds=5))
    assert store.question(seat.token).seen == (first, True)
    second = store.ask(opened.host_token, setup_poll(), later(seconds=6))
    assert (store.question(seat.token).poll.poll_id, store.question(seat.token).mine) == (second, None)
    refused("class.not_seat", store.question, opened.host_token)
    refused("class.not_seat", store.question, "x" * 500)


def test_two_classes_at_once_do_not_mix(store):
    first, second = store.open_class(T0), store.open_class(T0)
    assert first.join_code != second.join_code and first.class_id != second.class_id
    a = store.join(first.join_code, "a", T0)
    b1, b2 = store.join(second.join_code, "b1", T0), store.join(second.join_code, "b2", T0)
    assert (a.class_id, b1.class_id) == (first.class_id, second.class_id)
    poll_a = store.ask(first.host_token, setup_poll(), T0)
    poll_b = store.ask(second.host_token, polls.poll_from_change(SETUP, "num_train_epochs", 4), T0)
    refused("class.no_poll", store.answer, a.token, poll_b, "1", T0)  # not a poll of a's class
    refused("class.no_poll", store.tally, first.class_id, poll_b)
    refused("class.no_poll", store.reveal, first.host_token, poll_b, T0)
    store.answer(a.token, poll_a, "10", T0)
    store.answer(b1.token, poll_b, "20", T0)
    store.answer(b2.token, poll_b, "30", T0)
    assert store.tally(first.class_id, poll_a).values == (10.0,)
    assert astuple(store.tally(second.class_id, poll_b))[1:4] == (2, 2, (20.0, 30.0))
    assert store.current_poll(first.class_id).poll_id == poll_a
    assert store.current_poll(second.class_id).poll.kind == "change"
    assert [row.nickname for row in store.roster(second.host_token, T0)] == ["b1", "b2"]
    store.delete_class(first.host_token)
    assert store.tally(second.class_id, poll_b).answered == 2  # the other class is untouched


# --------------------------------------------------------------------------- expiry


def test_the_join_code_and_then_the_class_expire(store):
    opened = store.open_class(T0)
    early = store.join(opened.join_code, "early", T0 + CODE_LIFETIME - timedelta(seconds=1))
    refused("class.code_expired", store.join, opened.join_code, "late", T0 + CODE_LIFETIME)
    poll_id = store.ask(opened.host_token, setup_poll(), T0 + CODE_LIFETIME)  # the class itself goes on
    store.answer(early.token, poll_id, "5", T0 + CODE_LIFETIME)
    end = T0 + CLASS_LIFETIME
    assert store.host(opened.host_token, end - timedelta(seconds=1)).students == 1
    refused("class.not_host", store.host, opened.host_token, end)
    refused("class.not_host", store.ask, opened.host_token, setup_poll(), end)
    refused("class.ended", store.seat, early.token, end)
    refused("class.ended", store.answer, early.token, poll_id, "6", end)
    refused("class.ended", store.report_progress, early.token, Progress(), end)
    refused("class.code_expired", store.join, opened.join_code, "", end)
    assert store.purge_expired(end - timedelta(seconds=1)) == 0
    assert store.purge_expired(end) == 1
    refused("class.not_seat", store.seat, early.token, end)
    refused("class.unknown_code", store.join, opened.join_code, "", end)
    assert store.purge_expired(end) == 0


def test_a_new_code_avoids_live_codes_and_may_reuse_an_expired_one(store, monkeypatch):
    opened = store.open_class(T0)
    draws = iter(opened.join_code + opened.join_code + "ABCDEF")
    monkeypatch.setattr(store_module.secrets, "choice", lambda _alphabet: next(draws))
    assert store.open_class(T0 + timedelta(hours=1)).join_code == "ABCDEF"  # the live code was drawn, skipped
    draws = iter(opened.join_code)
    reused = store.open_class(T0 + CODE_LIFETIME)  # the first class's code has expired: free again
    assert reused.join_code == opened.join_code
    seat = store.join(opened.join_code, "", T0 + CODE_LIFETIME)
    assert seat.class_id == reused.class_id  # the code admits to the class whose code is live


def test_opening_a_class_purges_the_classes_past_their_lifetime(store):
    old = store.open_class(T0)
    store.open_class(T0 + CLASS_LIFETIME)
    refused("class.not_host", store.delete_class, old.host_token)


# --------------------------------------------------------------------------- refusals


def test_join_codes_and_nicknames_are_read_carefully():
    assert normalise_code(" ab-cd 23 ") == "ABCD23"
    assert normalise_code("ＡＢＣ－ＤＥＦ") == "ABCDEF"  # a Chinese keyboard's full-width letters
    for bad in ("", "ABCDE", "ABCDEFG", "ABCDE0", "ABCDEO", None, 123, "A" * 400):
        assert normalise_code(bad) is None, bad


def test_every_refusal_of_join(store, monkeypatch):
    opened = store.open_class(T0)
    refused("class.unknown_code", store.join, "ZZZZZZ" if opened.join_code != "ZZZZZZ" else "YYYYYY", "", T0)
    refused("class.unknown_code", store.join, "not a code at all", "", T0)
    refused("class.unknown_code", store.join, None, "", T0)
    error = refused("class.nickname_too_long", store.join, opened.join_code, "名" * (MAX_NICKNAME_CHARS + 1), T0)
    assert error.values == {"limit": MAX_NICKNAME_CHARS}
    assert store.join(opened.join_code, " " + "名" * MAX_NICKNAME_CHARS + " ", T0).nickname == "名" * 24
    for bad in ("a\nb", "a\tb", "a\x00b", "evil\u202eg", "a\u2028b", 42):
        refused("class.nickname_invalid", store.join, opened.join_code, bad, T0)
    assert store.join(opened.join_code, "👩‍💻 Ana", T0).nickname == "👩‍💻 Ana"  # an emoji's joiner is fine
    monkeypatch.setattr(store_module, "MAX_STUDENTS", 3)
    store.join(opened.join_code, "", T0)
    assert refused("class.full", store.join, opened.join_code, "", T0).values == {"limit": 3}
    assert store.host(opened.host_token, T0).students == 3


def test_joins_are_limited_per_client_and_per_class(store):
    """One client (one address) takes at most JOINS_PER_CLIENT seats of a class per JOIN_WINDOW, a class hands out at
    most JOINS_PER_CLASS per window, whoever asks; the refusal says how long to wait, and the window slides."""
    opened, other = store.open_class(T0), store.open_class(T0)
    step = timedelta(milliseconds=100)
    for i in range(JOINS_PER_CLIENT):
        store.join(opened.join_code, "", T0 + i * step, client="203.0.113.7")
    first_refusal = T0 + JOINS_PER_CLIENT * step
    error = refused("class.too_many_joins", store.join, opened.join_code, "", first_refusal, client="203.0.113.7")
    wait = JOIN_WINDOW - JOINS_PER_CLIENT * step  # until the client's first seat leaves the window
    assert error.values["limit"] == JOINS_PER_CLIENT
    assert error.values["seconds"] == math.ceil(wait.total_seconds())
    for lang in LANGUAGES:
        said = error.message(lang)
        assert str(JOINS_PER_CLIENT) in said and str(error.values["seconds"]) in said, said
    # the same client in another class, another client in this one, and the client once its first seat is old enough
    store.join(other.join_code, "", first_refusal, client="203.0.113.7")
    store.join(opened.join_code, "", first_refusal, client="198.51.100.1")
    almost = T0 + JOIN_WINDOW - timedelta(microseconds=1)
    refused("class.too_many_joins", store.join, opened.join_code, "", almost, client="203.0.113.7")
    store.join(opened.join_code, "", first_refusal + wait, client="203.0.113.7")  # the wait said is long enough
    # the class's own limit, many clients at once (and callers that do not name a client)
    crowd = store.open_class(T0)
    for i in range(JOINS_PER_CLASS):
        store.join(crowd.join_code, "", T0 + i * step / 10, client=None if i % 2 else f"10.0.{i // 250}.{i % 250}")
    late = T0 + JOINS_PER_CLASS * step / 10
    error = refused("class.joins_busy", store.join, crowd.join_code, "", late, client="192.0.2.99")
    assert error.values["limit"] == JOINS_PER_CLASS
    assert error.values["seconds"] == math.ceil((JOIN_WINDOW - (late - T0)).total_seconds())
    refused("class.joins_busy", store.join, crowd.join_code, "", late)
    store.join(crowd.join_code, "", T0 + JOIN_WINDOW + step, client="192.0.2.99")
    assert store.host(crowd.host_token, T0 + JOIN_WINDOW + step).students == JOINS_PER_CLASS + 1
    # nothing of the address is stored as it was given
    with closing(create_engine(store._url).connect()) as connection:
        stored = connection.execute(select(seats.c.client_hash)).scalars().all()
    assert not any(value and "203.0.113.7" in value for value in stored)


def test_one_client_joining_from_threads_on_every_replica_gets_exactly_its_limit(db_url):
    """The limits hold in the database: two stores (two replicas) and eight threads each, all one client, all at
    once: exactly JOINS_PER_CLIENT seats, every other join refused with the client's message."""
    replicas = [Store(db_url), Store(db_url)]
    try:
        opened = replicas[0].open_class(T0)

        def attempt(i: int) -> str:
            try:
                replicas[i % 2].join(opened.join_code, f"bot{i}", T0 + timedelta(milliseconds=i), client="203.0.113.9")
            except ClassError as error:
                return error.code
            return "seat"

        with ThreadPoolExecutor(max_workers=8) as pool:
            outcomes = list(pool.map(attempt, range(2 * JOINS_PER_CLIENT)))
        assert outcomes.count("seat") == JOINS_PER_CLIENT
        assert set(outcomes) == {"seat", "class.too_many_joins"}
        assert replicas[1].host(opened.host_token, T0).students == JOINS_PER_CLIENT
    finally:
        for replica in replicas:
            replica.close()


def test_wrong_tokens_are_refused(store):
    opened = store.open_class(T0)
    seat = store.join(opened.join_code, "", T0)
    for token in (seat.token, "", "x" * 5000, None, opened.host_token[:-1]):
        refused("class.not_host", store.host, token, T0)
        refused("class.not_host", store.ask, token, setup_poll(), T0)
        refused("class.not_host", store.roster, token, T0)
        refused("class.not_host", store.delete_class, token)
    poll_id = store.ask(opened.host_token, setup_poll(), T0)
    refused("class.not_host", store.reveal, seat.token, poll_id, T0)
    for token in (opened.host_token, "", None, seat.token + "x"):
        refused("class.not_seat", store.seat, token, T0)
        refused("class.not_seat", store.answer, token, poll_id, "1", T0)
        refused("class.not_seat", store.my_answer, token, poll_id)
        refused("class.not_seat", store.report_progress, token, Progress(), T0)
    assert store.tally(opened.class_id, poll_id).answered == 0


def test_every_refusal_of_an_answer(store, monkeypatch):
    opened = store.open_class(T0)
    seat = store.join(opened.join_code, "", T0)
    refused("class.no_poll", store.answer, seat.token, 1, "1", T0)  # nothing asked yet
    first = store.ask(opened.host_token, setup_poll(), T0)
    for poll_id in (first + 1000, "1", True, -1, 2**70):
        refused("class.no_poll", store.answer, seat.token, poll_id, "1", T0)
    with pytest.raises(PollAnswerError) as direct:
        polls.check(setup_poll(), "twelve")
    error = refused("class.answer", store.answer, seat.token, first, "twelve", T0)
    assert error.values["problem"] == direct.value.text
    for lang in LANGUAGES:
        assert direct.value.text.get(lang) in error.message(lang)
    refused("class.answer", store.answer, seat.token, first, "9" * 500, T0)

    store.answer(seat.token, first, "10", T0)
    assert store.answer(seat.token, first, "10", T0) == 10.0  # the same value again: no change, no limit
    error = refused("class.too_fast", store.answer, seat.token, first, "11", T0 + ANSWER_INTERVAL / 2)
    assert error.values["seconds"] == ANSWER_INTERVAL.total_seconds()
    assert store.answer(seat.token, first, "11", T0 + ANSWER_INTERVAL) == 11.0

    monkeypatch.setattr(store_module, "MAX_ANSWERS_PER_POLL", 3)
    store.answer(seat.token, first, "12", later(seconds=10))
    store.answer(seat.token, first, "13", later(seconds=20))  # changed 3 times now (11, 12, 13)
    refused("class.too_many_answers", store.answer, seat.token, first, "14", later(seconds=30))
    assert store.my_answer(seat.token, first) == 13.0

    second = store.ask(opened.host_token, setup_poll(), later(seconds=30))
    refused("class.too_fast", store.answer, seat.token, second, "1", later(seconds=20.5))  # per seat, any poll
    refused("class.poll_closed", store.answer, seat.token, first, "15", later(seconds=40))  # a newer poll is current
    store.answer(seat.token, second, "1", later(seconds=40))
    store.reveal(opened.host_token, second, later(seconds=41))
    refused("class.poll_closed", store.answer, seat.token, second, "2", later(seconds=50))
    refused("class.no_poll", store.reveal, opened.host_token, second + 1, T0)
    assert store.tally(opened.class_id, first).values == (13.0,)


def test_a_poll_that_does_not_read_back_is_not_asked(store):
    opened = store.open_class(T0)
    with pytest.raises(PollError):
        store.ask(opened.host_token, polls.Poll("bank", question_id="no-such-question"), T0)
    with pytest.raises(TypeError):
        store.ask(opened.host_token, {"kind": "setup"}, T0)
    assert store.current_poll(opened.class_id) is None
    with pytest.raises(ValueError, match="timezone"):
        store.open_class(datetime(2026, 12, 3, 9, 0))


def _class_codes_raised() -> set[str]:
    tree = ast.parse((ROOT / "steplab" / "classroom" / "store.py").read_text(encoding="utf-8"))
    return {node.args[0].value for node in ast.walk(tree)
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "ClassError"
            and node.args and isinstance(node.args[0], ast.Constant)} | {"class.not_host", "class.not_seat"}


TESTED_CODES = {"class.unknown_code", "class.code_expired", "class.not_host", "class.not_seat", "class.ended",
                "class.full", "class.nickname_too_long", "class.nickname_invalid", "class.no_poll",
                "class.poll_closed", "class.too_fast", "class.too_many_answers", "class.answer",
                "class.too_many_joins", "class.joins_busy"}


def test_every_code_the_store_raises_is_tested_and_said_in_both_languages():
    assert _class_codes_raised() == TESTED_CODES
    for lang in LANGUAGES:
        assert TESTED_CODES <= set(catalogue(lang)), lang
        for code in TESTED_CODES:
            values = {"limit": 3, "seconds": 1.0, "count": 1.0, "window": 60, "problem": msg("quiz.empty")}
            assert ClassError(code, **values).message(lang) != code


def test_the_csv_neutralises_every_formula_start():
    rows = tuple(RosterRow(name, T0, (), (), 0, 0, 0, 0) for name in ("+1", "-2", "@SUM(A1)", "=1+1", "a=b"))
    table = list(csv.reader(io.StringIO(roster_csv(rows, "en")[1:])))
    assert [row[0] for row in table[1:]] == ["'+1", "'-2", "'@SUM(A1)", "'=1+1", "a=b"]
    assert table[0][:2] == ["Nickname", "Joined (UTC)"]


# --------------------------------------------------------------------------- many at once


def _answer_all(store: Store, tokens: list[str], poll_id: int, first_value: int) -> list[float]:
    """Every token answers once, all threads released together; the stored values."""
    start = threading.Barrier(len(tokens))

    def one(index: int) -> float:
        start.wait(timeout=60)
        return store.answer(tokens[index], poll_id, str(first_value + index), T0)

    with ThreadPoolExecutor(max_workers=len(tokens)) as pool:
        return list(pool.map(one, range(len(tokens))))


def test_sixty_seats_answering_at_once_from_threads_lose_no_answer(store):
    opened = store.open_class(T0)
    tokens = [store.join(opened.join_code, f"s{i}", T0).token for i in range(60)]
    poll_id = store.ask(opened.host_token, setup_poll(), T0)
    stored = _answer_all(store, tokens, poll_id, 100)
    assert stored == [float(100 + i) for i in range(60)]
    tally = store.tally(opened.class_id, poll_id)
    assert (tally.answered, tally.joined, tally.values) == (60, 60, tuple(float(100 + i) for i in range(60)))


def _answer_in_a_process(url: str, tokens: list[str], poll_id: int, first_value: int, barrier) -> None:
    opened = Store(url)
    barrier.wait(timeout=60)
    _answer_all(opened, tokens, poll_id, first_value)
    opened.close()


def test_two_processes_sharing_the_sqlite_file_lose_no_answer(tmp_path, plain_main):
    url = f"sqlite:///{tmp_path / 'class.db'}"
    opened_store = Store(url)
    opened = opened_store.open_class(T0)
    tokens = [opened_store.join(opened.join_code, "", T0).token for _ in range(60)]
    poll_id = opened_store.ask(opened.host_token, setup_poll(), T0)
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(2)
    workers = [context.Process(target=_answer_in_a_process, args=(url, tokens[i::2], poll_id, 1000 * (i + 1),
                                                                   barrier)) for i in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    assert [worker.exitcode for worker in workers] == [0, 0]
    tally = opened_store.tally(opened.class_id, poll_id)
    assert tally.answered == 60
    assert tally.values == tuple(sorted([1000.0 + i for i in range(30)] + [2000.0 + i for i in range(30)]))
    opened_store.close()


# --------------------------------------------------------------------------- the projector's refresh and the table


def test_live_reads_the_head_count_the_latest_poll_and_its_answers_in_one_go(store):
    opened = store.open_class(now=T0)
    assert store.live(opened.host_token, now=T0) == Live(0, None, None)
    first = store.ask(opened.host_token, setup_poll(), now=later(seconds=1))
    seats_ = [store.join(opened.join_code, f"s{i}", now=later(seconds=2)) for i in range(3)]
    store.answer(seats_[0].token, first, "150", now=later(seconds=3))
    store.answer(seats_[1].token, first, "1,200", now=later(seconds=3))
    now = store.live(opened.host_token, now=later(seconds=4))
    assert (now.students, now.poll.poll_id, now.tally.values, now.tally.revealed) == (3, first, (150.0, 1200.0), False)
    assert now.tally == store.tally(opened.class_id, first)  # the same aggregate the students' side reads
    second = store.ask(opened.host_token, polls.poll_from_change(SETUP, "gradient_accumulation_steps", 16),
                       now=later(seconds=5))
    store.reveal(opened.host_token, second, now=later(seconds=6))
    now = store.live(opened.host_token, now=later(seconds=7))
    assert (now.poll.poll_id, now.tally.answered, now.tally.revealed) == (second, 0, True)
    other = store.open_class(now=T0)  # another class's answers never count here
    refused("class.not_host", store.live, seats_[0].token, now=later(seconds=8))
    assert store.live(other.host_token, now=later(seconds=8)).students == 0
    refused("class.not_host", store.live, opened.host_token, now=later(hours=13))  # past the class's lifetime


def test_the_table_and_its_csv_show_the_same_cells(store):
    opened = store.open_class(now=T0)
    named = store.join(opened.join_code, "Mei", now=later(seconds=1))
    store.join(opened.join_code, "", now=later(seconds=2))
    store.report_progress(named.token, Progress(lessons_done=frozenset({1, 3}), lesson_scores=((1, 2, 3),),
                                                selfstudy_correct=4, selfstudy_attempts=5), now=later(seconds=3))
    rows = store.roster(opened.host_token, now=later(seconds=4))
    for lang in LANGUAGES:
        header, cells = roster_cells(rows, lang)
        assert header == [t(lang, f"class.csv.{column}", zone="UTC") for column in CSV_COLUMNS]
        assert cells[0][:5] == ["Mei", "2026-12-03 09:00:01", "1 3", "1: 2/3", "4"]
        assert cells[1][0] == t(lang, "class.csv.unnamed", number=2)
        parsed = list(csv.reader(io.StringIO(roster_csv(rows, lang).lstrip("\ufeff"))))
        assert parsed == [header, *cells]
        # in the reader's zone: a class in Beijing reads its own clock, and the header names the zone
        beijing = ZoneInfo("Asia/Shanghai")
        header, cells = roster_cells(rows, lang, beijing)
        assert "Asia/Shanghai" in header[1] and cells[0][1] == "2026-12-03 17:00:01"
        assert list(csv.reader(io.StringIO(roster_csv(rows, lang, beijing).lstrip("\ufeff"))))[1][1] == cells[0][1]
