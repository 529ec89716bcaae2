"""Create the class tables: classes, seats, polls, answers, progress.

Revision ID: 0001
Revises:
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "classes",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("join_code", sa.String(16), nullable=False),
        sa.Column("host_hash", sa.String(64), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("code_expires_at", WHEN, nullable=False),
        sa.Column("expires_at", WHEN, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_classes"),
        sa.UniqueConstraint("host_hash", name="uq_classes_host_hash"),
    )
    op.create_index("ix_classes_join_code", "classes", ["join_code", "code_expires_at"])
    op.create_index("ix_classes_expires_at", "classes", ["expires_at"])

    op.create_table(
        "seats",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("class_id", sa.Integer, nullable=False),
        sa.Column("seat_hash", sa.String(64), nullable=False),
        sa.Column("nickname", sa.String(64), nullable=False),
        sa.Column("joined_at", WHEN, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_seats"),
        sa.ForeignKeyConstraint(["class_id"], ["classes.id"], ondelete="CASCADE", name="fk_seats_class_id_classes"),
        sa.UniqueConstraint("seat_hash", name="uq_seats_seat_hash"),
    )
    op.create_index("ix_seats_class_id", "seats", ["class_id", "joined_at"])

    op.create_table(
        "polls",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("class_id", sa.Integer, nullable=False),
        sa.Column("spec", sa.Text, nullable=False),
        sa.Column("asked_at", WHEN, nullable=False),
        sa.Column("revealed_at", WHEN, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_polls"),
        sa.ForeignKeyConstraint(["class_id"], ["classes.id"], ondelete="CASCADE", name="fk_polls_class_id_classes"),
    )
    op.create_index("ix_polls_class_id", "polls", ["class_id", "id"])

    op.create_table(
        "answers",
        sa.Column("poll_id", sa.Integer, nullable=False),
        sa.Column("seat_id", sa.Integer, nullable=False),
        sa.Column("value", sa.Float, nullable=False),
        sa.Column("answered_at", WHEN, nullable=False),
        sa.Column("changes", sa.Integer, nullable=False),
        sa.PrimaryKeyConstraint("poll_id", "seat_id", name="pk_answers"),
        sa.ForeignKeyConstraint(["poll_id"], ["polls.id"], ondelete="CASCADE", name="fk_answers_poll_id_polls"),
        sa.ForeignKeyConstraint(["seat_id"], ["seats.id"], ondelete="CASCADE", name="fk_answers_seat_id_seats"),
    )
    op.create_index("ix_answers_seat_id", "answers", ["seat_id", "answered_at"])

    op.create_table(
        "progress",
        sa.Column("seat_id", sa.Integer, nullable=False),
        sa.Column("payload", sa.Text, nullable=False),
        sa.Column("updated_at", WHEN, nullable=False),
        sa.PrimaryKeyConstraint("seat_id", name="pk_progress"),
        sa.ForeignKeyConstraint(["seat_id"], ["seats.id"], ondelete="CASCADE", name="fk_progress_seat_id_seats"),
    )


def downgrade() -> None:
    for table in ("progress", "answers", "polls", "seats", "classes"):
        op.drop_table(table)
