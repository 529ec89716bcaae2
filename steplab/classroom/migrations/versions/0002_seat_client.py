"""Seats remember who asked for them (`client_hash`): joins are limited per client and per class.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-06
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("seats") as batch:  # SQLite: ADD COLUMN in place (a nullable column, no copy)
        batch.add_column(sa.Column("client_hash", sa.String(64), nullable=True))
    op.create_index("ix_seats_client", "seats", ["class_id", "client_hash", "joined_at"])


def downgrade() -> None:
    op.drop_index("ix_seats_client", table_name="seats")
    with op.batch_alter_table("seats") as batch:
        batch.drop_column("client_hash")
