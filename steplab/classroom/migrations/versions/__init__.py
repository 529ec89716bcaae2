"""The revisions, one file each (Alembic reads them as files; a package so a wheel carries them)."""
