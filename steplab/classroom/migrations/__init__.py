"""The class database's schema history (Alembic), run from code: no `alembic.ini` is needed.

`upgrade(connection)` brings the database on that connection to the newest revision inside the caller's
transaction (the store holds a lock around it). To write a new revision, change `tables.py`, then
`python -m steplab.classroom.migrations revision -m "what changes"` and edit the file it writes in `versions/`.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Connection

HERE = Path(__file__).resolve().parent
VERSION_TABLE = "steplab_alembic_version"  # not Alembic's default name: the database may be shared


def config(connection: Connection | None = None) -> Config:
    """Alembic's configuration, built in code (`script_location` is this folder)."""
    cfg = Config()
    cfg.set_main_option("script_location", str(HERE))
    cfg.set_main_option("version_table", VERSION_TABLE)
    cfg.attributes["connection"] = connection
    return cfg


def head() -> str:
    """The newest revision."""
    heads = ScriptDirectory.from_config(config()).get_heads()
    if len(heads) != 1:
        raise RuntimeError(f"the class migrations must have one head, not {heads}")
    return heads[0]


def current(connection: Connection) -> str | None:
    """The revision the database on this connection is at (None: not yet migrated)."""
    return MigrationContext.configure(connection, opts={"version_table": VERSION_TABLE}).get_current_revision()


def upgrade(connection: Connection) -> None:
    """Migrate the database on this connection to the newest revision (nothing to do when it is there)."""
    if current(connection) == head():
        return
    command.upgrade(config(connection), "head")
