"""`python -m steplab.classroom.migrations revision -m "..."` (or any Alembic command) against a throwaway SQLite
database migrated to head, so a new revision starts from the current schema."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from alembic.config import CommandLine
from sqlalchemy import create_engine

from steplab.classroom.migrations import config, upgrade


def main(argv: list[str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        engine = create_engine(f"sqlite:///{Path(folder) / 'schema.db'}")
        with engine.begin() as connection:
            upgrade(connection)
            cli = CommandLine(prog="python -m steplab.classroom.migrations")
            options = cli.parser.parse_args(argv)
            cfg = config(connection)
            cfg.cmd_opts = options
            cli.run_cmd(cfg, options)
        engine.dispose()


if __name__ == "__main__":
    main(sys.argv[1:])
