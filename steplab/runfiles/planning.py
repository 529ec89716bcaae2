"""StepLab's plan of a run: the reconstructed setup planned under the release that wrote the run.

The release comes from `--trainer`, else from the files (`release.candidates`: a version or a release family's
lines); among the releases still possible, the one whose plan agrees with the most of the run's counts (ties: the
newest). A resumed run also gets the plan of the run that wrote its checkpoint (`resume.earlier_plan`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from steplab.errors import InputError, TrainerRefusal
from steplab.i18n import Message, msg
from steplab.runfiles import release
from steplab.runfiles.observed import Observed
from steplab.runfiles.planned import Planned
from steplab.runfiles.read import RunFiles
from steplab.runfiles.reconcile import count_checks, resume_checks
from steplab.runfiles.reconstruct import Reconstructed
from steplab.runfiles.resume import Earlier, after_resume, earlier_plan
from steplab.runfiles.sources import Found, Source
from steplab.trainer.plan import Plan, make_plan
from steplab.trainer.setup import setup_from_mapping


@dataclass
class Planning:
    """The plan compared with (None, and why, when the setup cannot be planned), the release and its evidence."""

    planned: Planned | None = None
    profile: Found | None = None
    evidence: list[Found] = field(default_factory=list)
    earlier: Earlier | None = None
    problem: Message | None = None
    refusal: TrainerRefusal | None = None
    tied: tuple[str, ...] = ()  # every release that fits as well as the one used (newest first)


def plan_setup(rec: Reconstructed, profile: str, **changes: object) -> Plan:
    """The reconstructed setup (with `changes`) planned under `profile`."""
    setup, _ = setup_from_mapping({**rec.setup_values(), **changes, "trainer": profile})
    return make_plan(setup)


def _score(observed: Observed, planned: Planned, rec: Reconstructed) -> float:
    """Counts (and a resume's skips) that agree, minus those that do not; half a point less for a `max_steps`
    StepLab had to take from the run (a release that needs no such guess fits better)."""
    checks = [*count_checks(observed, planned, rec), *resume_checks(observed, planned)]
    guessed = 0.5 if planned.plan.setup.max_steps > 0 and "max_steps" not in rec.values else 0.0
    return sum(1 if check.agree else -1 for check in checks if check.agree is not None) - guessed


def _max_steps_shown(rec: Reconstructed, observed: Observed, planned: Planned, profile: str) -> Planned:
    """Without a YAML, a total the release does not give from the epochs is `max_steps` (the run's own total):
    StepLab takes it when that makes more counts agree (`plan_run` then records it with its source)."""
    total = observed.counts.get("total_optimization_steps")
    if rec.config is not None or total is None or total.value == planned.plan.max_steps or rec.streaming:
        return planned
    try:
        plan = plan_setup(rec, profile, max_steps=total.value)
    except (InputError, TrainerRefusal):
        return planned
    trial = replace(planned, plan=plan, after=after_resume(plan, planned.resumed_step))
    return trial if _score(observed, trial, rec) > _score(observed, planned, rec) else planned


def plan_run(rec: Reconstructed, files: RunFiles, observed: Observed, trainer: str | None = None) -> Planning:
    """Plan the run under the release that fits it best."""
    result = Planning()
    if trainer:
        options, evidence = (trainer,), []
    elif "trainer" in rec.values and rec.values["trainer"].source.file == rec.config_path:
        options, evidence = (rec.values["trainer"].value,), [rec.values["trainer"]]
    else:
        options, evidence = release.candidates(files.console)
    if "num_samples" not in rec.values:
        result.problem = msg("runfiles.no_sample_count")
        return result
    best: tuple[float, Planned, str] | None = None
    scores: dict[str, float] = {}
    for profile in options:
        try:
            plan = plan_setup(rec, profile)
            planned = Planned(plan, rec.streaming, None, observed.resumed_step,
                              after_resume(plan, observed.resumed_step))
        except TrainerRefusal as refusal:
            result.refusal = result.refusal or refusal
            continue
        except InputError as error:
            result.problem = result.problem or error.text
            continue
        planned = _max_steps_shown(rec, observed, planned, profile)
        score = scores[profile] = _score(observed, planned, rec)
        if best is None or score > best[0]:
            best = (score, planned, profile)
    if best is None:
        return result
    score, planned, profile = best
    result.tied = tuple(p for p, s in scores.items() if s == score)
    if planned.plan.setup.max_steps > 0 and "max_steps" not in rec.values:
        total = observed.counts["total_optimization_steps"]
        rec.use("max_steps", Found(total.value, Source(total.source.file, total.source.line, "inferred")))
    result.refusal = result.problem = None
    source = evidence[0].source if evidence else Source("StepLab", key="--trainer" if trainer else "fits")
    result.profile = Found(profile, source)
    result.evidence = evidence
    result.earlier = earlier_plan(planned.plan, observed.rows, observed.resumed_step,
                                  files.checkpoint_states.get(observed.resumed_step or -1), rec.schedule_known)
    result.planned = replace(planned, earlier=result.earlier.plan if result.earlier else None)
    return result
