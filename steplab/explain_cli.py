"""`python -m steplab explain PATH... [--config YAML] [--trainer PROFILE]`: a finished run's files explained.

PATHs are files, folders (walked) or zips of a run's output: the console log, `trainer_state.json` (the output
folder's and each `checkpoint-N/`'s), `trainer_log.jsonl`, `*_results.json`, the training YAML. With `--config`,
that YAML is the run's, and its datasets are found and counted from the current folder as `plan` counts them.

Prints one JSON object, stable for tools: `{"setup": {field: {"value", "source"}}, "fields": [{"name", "run",
"steplab", "agree", "source", "why"}], "findings": [{"code", "message"}], "causes": [{"code", "message", "rule",
"lesson", "reproduces", "fields"}]}` (English; `causes`: each cause once, with the fields it explains); with `--config`,
also the census's `not_modelled`, `unknown_keys` and the import's `notes`, as `plan` writes them. Exit 0 when anything
was read (whatever agrees), 2 when nothing readable was given (stderr names each file with why it was not read).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from steplab.errors import InputError
from steplab.io.safe_yaml import decode
from steplab.trainer.profiles import PROFILES

KEY_NOTES = tuple(f"config_io.note.{name}" for name in (
    "deepspeed", "eval_batch_size", "evaluation_strategy", "commented_eval", "model_parallel", "auto_find_batch_size"))
"""The import's notes on keys (not on the count, which the run's files settle here)."""
HELP = "explain a finished run's files (log, trainer_state.json, trainer_log.jsonl, results) as JSON"


def add_parser(commands: argparse._SubParsersAction) -> None:
    """The `explain` subcommand of `python -m steplab`."""
    command = commands.add_parser("explain", help=HELP)
    command.add_argument("paths", nargs="+", metavar="PATH", help="files, folders or zips of the run's output")
    command.add_argument("--config", help="the run's training YAML (its datasets are counted from here)")
    command.add_argument("--trainer", choices=sorted(p for p, f in PROFILES.items() if f.framework == "transformers"),
                         help="the Trainer profile (default: read from the log)")


def run(args: argparse.Namespace) -> tuple[int, dict[str, Any] | None]:
    """Explain: (0, the JSON record to print), or (2, None) after one line on stderr (`cli` prints the record)."""
    from steplab.io.safe_yaml import MAX_BYTES
    from steplab.runfiles.explain import explain_entries
    from steplab.runfiles.gather import path_entries, read_regular

    config = None
    if args.config:
        try:  # a regular file of at most a config's cap, read no further (`/dev/zero`, a 200 MB file: refused)
            config = (args.config, decode(read_regular(Path(args.config), MAX_BYTES)))
        except (OSError, InputError) as error:
            message = error.message("en") if isinstance(error, InputError) else str(error)
            print(f"error: --config {args.config}: {message}".splitlines()[0], file=sys.stderr)
            return 2, None
    problems: list = []
    entries = path_entries(args.paths, problems)
    explanation = explain_entries(entries, problems, config=config, trainer=args.trainer, base=Path.cwd())
    if not explanation.readable:  # every file named with why it was not read, then what would be
        for report in explanation.files.reports:
            print(f"error: {report.path}: {report.note.en if report.note else 'not read'}", file=sys.stderr)
        for problem in explanation.files.problems:
            print(f"error: {problem.en}", file=sys.stderr)
        return 2, None
    record = explanation.record("en")
    if config is not None:
        named = _census(config[1])
        plain = [f for f in record.get("findings", []) if f["code"] != "unknown_key"]  # /run's, without the key
        record["findings"] = [*plain, *named.pop("unknown", [])]
        record.update(named)
    return 0, record


def _census(text: str) -> dict[str, Any]:
    """What the census says of the run's YAML (`steplab.io.census`), as `plan` writes it: `not_modelled`
    (`{key, may_change, message}`), `unknown_keys` (names) with a finding `unknown_key` each (`{code, key, meant,
    message}`: the key meant) and the import's `notes` (`{code, message}`); nothing when the YAML cannot be read (the
    explanation says why)."""
    from steplab.io import census
    from steplab.io.config_read import read_config

    try:
        imported = read_config(text)
    except InputError:
        return {}
    checked = census.check(imported.document, str(imported.document.get("trainer_class") or "Trainer"),
                           imported.flavour == "llamafactory")
    return {"not_modelled": [item.record("en") for item in checked.unmodelled],
            "unknown_keys": [item.key for item in checked.unknown],
            "unknown": [{"code": "unknown_key", **item.record("en")} for item in checked.unknown],
            "notes": [{"code": note.key, "message": note.get("en")} for note in imported.notes
                      if getattr(note, "key", "") in KEY_NOTES]}
