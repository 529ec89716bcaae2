"""The class database's tables (SQLAlchemy Core). The schema itself is made by `migrations/` (Alembic); a change
here needs a new revision there.

Every time is a timezone-aware UTC `datetime` in Python (`UTCDateTime`): `timestamptz` on PostgreSQL, an ISO text
in UTC on SQLite (which has no time zones; text in one format compares in time order).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    TypeDecorator,
)
from sqlalchemy.engine import Dialect

HASH_CHARS = 64  # SHA-256 as hex
CODE_CHARS = 16  # room for a longer join code later (CODE_LENGTH is 6 now)
NICKNAME_CHARS = 64  # the column; the store caps nicknames shorter (MAX_NICKNAME_CHARS)

# Constraint names chosen here, so both databases (and later migrations) know them.
metadata = MetaData(naming_convention={
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
})


class UTCDateTime(TypeDecorator[datetime]):
    """A timezone-aware UTC datetime both ways; naive datetimes are refused (they would be ambiguous)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError("the class database stores timezone-aware datetimes only")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if isinstance(value, str):  # a raw SQLite text (from an aggregate such as max())
            value = datetime.fromisoformat(value)
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _class_fk() -> ForeignKey:
    return ForeignKey("classes.id", ondelete="CASCADE")


classes = Table(
    "classes", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("join_code", String(CODE_CHARS), nullable=False),
    Column("host_hash", String(HASH_CHARS), nullable=False, unique=True),  # unique: the host's lookup index
    Column("created_at", UTCDateTime, nullable=False),
    Column("code_expires_at", UTCDateTime, nullable=False),
    Column("expires_at", UTCDateTime, nullable=False),
    Index("ix_classes_join_code", "join_code", "code_expires_at"),  # join: the class of a code
    Index("ix_classes_expires_at", "expires_at"),  # purge_expired
)

seats = Table(
    "seats", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("class_id", Integer, _class_fk(), nullable=False),
    Column("seat_hash", String(HASH_CHARS), nullable=False, unique=True),  # unique: the seat's lookup index
    Column("nickname", String(NICKNAME_CHARS), nullable=False, default=""),
    Column("joined_at", UTCDateTime, nullable=False),
    # who asked for the seat (the store's `_client_hash`: the client's address hashed with the class), None when
    # the caller did not say; the joins-per-client limit counts by it
    Column("client_hash", String(HASH_CHARS), nullable=True),
    Index("ix_seats_class_id", "class_id", "joined_at"),  # roster, head count, joins per class
    Index("ix_seats_client", "class_id", "client_hash", "joined_at"),  # joins per client
)

polls = Table(
    "polls", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("class_id", Integer, _class_fk(), nullable=False),
    Column("spec", Text, nullable=False),  # json.dumps(Poll.to_dict())
    Column("asked_at", UTCDateTime, nullable=False),
    Column("revealed_at", UTCDateTime, nullable=True),
    Index("ix_polls_class_id", "class_id", "id"),  # the current poll: the class's highest id
)

answers = Table(
    "answers", metadata,
    Column("poll_id", Integer, ForeignKey("polls.id", ondelete="CASCADE"), nullable=False),
    Column("seat_id", Integer, ForeignKey("seats.id", ondelete="CASCADE"), nullable=False),
    Column("value", Float, nullable=False),
    Column("answered_at", UTCDateTime, nullable=False),
    Column("changes", Integer, nullable=False, default=0),  # how many times the answer was replaced
    PrimaryKeyConstraint("poll_id", "seat_id"),  # one answer per seat and poll; the tally reads by poll_id
    Index("ix_answers_seat_id", "seat_id", "answered_at"),  # a seat's last answer (rate limit), roster
)

progress = Table(
    "progress", metadata,
    Column("seat_id", Integer, ForeignKey("seats.id", ondelete="CASCADE"), primary_key=True),
    Column("payload", Text, nullable=False),  # json.dumps(Progress.to_dict()) without the session's `seen`
    Column("updated_at", UTCDateTime, nullable=False),
)
