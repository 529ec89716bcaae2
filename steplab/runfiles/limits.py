"""The caps on what StepLab reads of a run: stated on the page, enforced while reading (never after)."""

from __future__ import annotations

MAX_FILE_BYTES = 64 * 1024 * 1024
"""One file, as uploaded or once expanded from a zip (a `trainer_state.json` of 10^5 logged steps is ~20 MB)."""

MAX_TOTAL_BYTES = 128 * 1024 * 1024
"""Everything read together, zips expanded: a zip bomb stops here, however small the zip."""

MAX_FILES = 200
"""Files read (a checkpoint folder's weights and other files StepLab has no use for are skipped unread)."""

MAX_ENTRIES = 20_000
"""Names listed in all the zips and folders given (a zip of a million empty names is refused here)."""

MAX_LINES = 1_000_000
"""Lines of one log or `trainer_log.jsonl`; 10^5 lines are read whole."""

MAX_LINE_CHARACTERS = 100_000
"""One line of a log: a logged dict longer than this is not parsed (it is no Trainer log line)."""
