"""A run explained: its files read, its setup put back together, the plan reconciled with it, every difference
given its likely causes, and the patterns its logs show. `explain_entries` is what the CLI and the page call."""

from __future__ import annotations

from pathlib import Path

from steplab.i18n import Message
from steplab.runfiles.causes import attach_causes
from steplab.runfiles.explanation import Explanation
from steplab.runfiles.gather import Entry, gather
from steplab.runfiles.observed import observe
from steplab.runfiles.patterns import findings
from steplab.runfiles.planning import plan_run
from steplab.runfiles.read import read_files
from steplab.runfiles.reconcile import reconcile, run_only
from steplab.runfiles.reconstruct import reconstruct


def explain_entries(entries: list[Entry], problems: list[Message] | None = None, *,
                    config: tuple[str, str] | None = None, trainer: str | None = None,
                    base: Path | None = None) -> Explanation:
    """Explain a run from its files (`gather.*_entries`), a config given apart (name, text), a release, and the
    folder the YAML's relative dataset paths start from."""
    files = read_files(gather(entries, problems), config)
    rec = reconstruct(files, base, trainer)
    observed = observe(files)
    planning = plan_run(rec, files, observed, trainer)
    explanation = Explanation(files, rec, observed, planning)
    if planning.planned is not None:
        explanation.reconciliation = reconcile(observed, planning.planned, rec)
        attach_causes(explanation)
    else:
        explanation.reconciliation = run_only(observed)
    explanation.findings = findings(explanation)
    return explanation
