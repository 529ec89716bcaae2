"""A run explained: its files read, its setup put back together, the plan reconciled with it, every difference
given its likely causes, and the patterns its logs show. `explain_run` is what the CLI and the page call."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from steplab.i18n import Message
from steplab.runfiles.causes import Cause, attach_causes
from steplab.runfiles.gather import Entry, gather
from steplab.runfiles.observed import Observed, observe
from steplab.runfiles.patterns import Finding, findings
from steplab.runfiles.planning import Planning, plan_run
from steplab.runfiles.read import RunFiles, read_files
from steplab.runfiles.reconcile import Reconciliation, reconcile, run_only
from steplab.runfiles.reconstruct import Reconstructed, reconstruct
from steplab.runfiles.sources import Found


@dataclass
class Explanation:
    """Everything StepLab found out about a run."""

    files: RunFiles
    setup: Reconstructed
    observed: Observed
    planning: Planning
    reconciliation: Reconciliation = field(default_factory=Reconciliation)
    causes: list[Cause] = field(default_factory=list)  # every cause that reproduces a difference, first first
    findings: list[Finding] = field(default_factory=list)

    @property
    def readable(self) -> bool:
        return self.files.readable

    def setup_values(self) -> dict[str, Found]:
        """The setup StepLab planned with, the release included."""
        values = dict(self.setup.values)
        if self.planning.profile is not None:
            values["trainer"] = self.planning.profile
        resumed = self.observed.resume.get("resumed_step")
        if resumed is not None:
            values["resumed_from_step"] = resumed
        return values

    def record(self, lang: str = "en") -> dict[str, Any]:
        """The CLI's stable JSON: `setup`, `fields`, `findings` (messages in `lang`)."""
        return {
            "setup": {name: {"value": found.value, "source": str(found.source)}
                      for name, found in self.setup_values().items()},
            "fields": [{"name": c.name, "run": c.run, "steplab": c.steplab, "agree": c.agree,
                        "source": None if c.source is None else str(c.source),
                        "why": [_said(cause, lang) for cause in c.why]}
                       for c in self.reconciliation.checks],
            "findings": [{"code": f.code, "message": f.message.get(lang)} for f in self.findings],
        }


def _said(cause: Cause | Message, lang: str) -> dict[str, Any]:
    if isinstance(cause, Cause):
        return cause.record(lang)
    return {"code": cause.key, "message": cause.get(lang)}


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
