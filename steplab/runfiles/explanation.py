"""What StepLab found out about a run, as data: the files read, the setup put back together, the run's side, the
plan, the table, the causes of its differences and the findings; `Explanation.record()` is the CLI's JSON."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from steplab.i18n import Message, msg
from steplab.runfiles.observed import Observed
from steplab.runfiles.planning import Planning
from steplab.runfiles.read import RunFiles
from steplab.runfiles.reconcile import Reconciliation
from steplab.runfiles.reconstruct import Reconstructed
from steplab.runfiles.sources import Found

LESSONS = {
    "resume": "max-steps-vs-epochs", "rows_dropped": "sample-count", "packing": "sample-count",
    "val_size": "sample-count", "max_samples": "sample-count", "processes": "several-gpus",
    "accumulation": "accumulation", "batch": "batch-epoch-step", "epochs": "counting-a-run",
    "release": "versions", "max_steps": "max-steps-vs-epochs", "warmup": "max-steps-vs-epochs",
    "grpo": "rl-steps",
}
"""Each cause's lesson (`lessons/*.yaml` ids)."""


@dataclass(frozen=True)
class Cause:
    """One likely cause: what it is (with the run's numbers), its rule, its lesson, and whether re-planning with it
    reproduces the difference."""

    code: str
    message: Message
    reproduces: bool
    fixes: frozenset[str] = frozenset()

    @property
    def lesson(self) -> str:
        return LESSONS[self.code]

    @property
    def rule(self) -> Message:
        return msg(f"runfiles.rule.{self.code}")

    def record(self, lang: str) -> dict[str, Any]:
        return {"code": self.code, "message": self.message.get(lang), "rule": self.rule.get(lang),
                "lesson": self.lesson, "reproduces": self.reproduces}


@dataclass(frozen=True)
class Finding:
    """One thing the files show: a stable code (for tools) and the sentence."""

    code: str
    message: Message


@dataclass(frozen=True)
class CauseCard:
    """One cause as the page shows it, once: the cause (its re-planned form when it reproduces any field), the
    differing fields it reproduces, and those it could move but was not shown to."""

    cause: Cause
    fields: tuple[str, ...]
    possible: tuple[str, ...] = ()


DIFFERENT_RUNS_SHARE = 0.5
"""More than this share of the compared fields differing (and at least `DIFFERENT_RUNS_MINIMUM`): the files are
probably from different runs, whatever single change is tried."""
DIFFERENT_RUNS_MINIMUM = 3


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

    @property
    def different_runs(self) -> bool:
        """Most compared fields differ and no single cause reproduces them all: the files (a YAML, a console, a
        state) probably come from different runs."""
        compared = [c for c in self.reconciliation.checks if c.agree is not None]
        wrong = {c.name for c in compared if c.agree is False}
        explained = any(cause.fixes == wrong for cause in self.causes)  # one change reproduces them all
        return not explained and len(wrong) >= DIFFERENT_RUNS_MINIMUM and len(wrong) > DIFFERENT_RUNS_SHARE * len(
            compared)

    def cause_cards(self) -> list[CauseCard]:
        """Every cause once, with the differing fields it explains: those that reproduce first (as ordered in
        `causes`), then the unverified ones that could move a field nothing reproduces."""
        verified: dict[str, list[str]] = {}
        possible: dict[str, list[str]] = {}
        said: dict[str, Cause] = {}
        for check in self.reconciliation.disagreements:
            for cause in check.why:
                if not isinstance(cause, Cause):
                    continue
                (verified if cause.reproduces else possible).setdefault(cause.code, []).append(check.name)
                if cause.reproduces and not (cause.code in said and said[cause.code].reproduces):
                    said[cause.code] = cause  # the re-planned sentence, with the run's numbers
                said.setdefault(cause.code, cause)
        rank = {cause.code: index for index, cause in enumerate(self.causes)}
        codes = sorted(said, key=lambda code: (code not in verified, rank.get(code, 0)))
        return [CauseCard(said[code], tuple(verified.get(code, ())), tuple(possible.get(code, ()))) for code in codes]

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
            "causes": [{**card.cause.record(lang), "fields": list(card.fields), "possible": list(card.possible)}
                       for card in self.cause_cards()],
        }


def _said(cause: Cause | Message, lang: str) -> dict[str, Any]:
    if isinstance(cause, Cause):
        return cause.record(lang)
    return {"code": cause.key, "message": cause.get(lang)}
