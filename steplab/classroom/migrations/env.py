"""Alembic's environment for the class database: run on the connection the store hands over (`config.attributes`),
inside the store's transaction and lock."""

from __future__ import annotations

from alembic import context

from steplab.classroom.tables import metadata

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("the class migrations run from steplab.classroom.migrations.upgrade(connection)")

context.configure(
    connection=connection,
    target_metadata=metadata,
    version_table=context.config.get_main_option("version_table") or "alembic_version",
    render_as_batch=True,  # SQLite alters tables by copying them
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
