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
from steplab.trl.grpo import TRL_PROFILES, GrpoPlan, generation_sizes, plan_grpo


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


def class_plan(rec: Reconstructed, profile: str, **changes: object) -> tuple[Plan, GrpoPlan | None]:
    """The reconstructed setup (with `changes`) planned under `profile` by its trainer class's planner: the
    Trainer's plan (over GRPO's micro-batches for a `GRPOTrainer` run), and GRPO's rounds when it is one. A DPO
    run is the Trainer's plan over its pairs; an SFT run's "Num examples" already counts the packed examples."""
    setup, _ = setup_from_mapping({**rec.setup_values(), **changes, "trainer": profile})
    if setup.trainer_class == "GRPOTrainer":
        grpo = plan_grpo(setup)
        return grpo.trainer, grpo
    return make_plan(setup), None


def plan_setup(rec: Reconstructed, profile: str, **changes: object) -> Plan:
    """The Trainer's plan of the reconstructed setup (with `changes`) under `profile` (`class_plan`)."""
    return class_plan(rec, profile, **changes)[0]


def planned_for(rec: Reconstructed, profile: str, resumed_step: int | None, **changes: object) -> Planned:
    """`class_plan` as the plan a run is compared with (a resume's earlier plan left to `plan_run`)."""
    plan, grpo = class_plan(rec, profile, **changes)
    return Planned(plan, rec.streaming, None, resumed_step, after_resume(plan, resumed_step), grpo)


def grpo_refusal_without_round(rec: Reconstructed) -> tuple[int, TrainerRefusal] | None:
    """A GRPO setup whose sample count no file says: (U, StepLab's refusal with fewer than U prompts, too few for
    one round), or None. What a run that found no round to train on is held against."""
    if rec.value("trainer_class") != "GRPOTrainer" or "num_samples" in rec.values:
        return None
    try:
        setup, _ = setup_from_mapping({**rec.setup_values(), "num_samples": 1})
        _, size = generation_sizes(setup)
    except (InputError, TrainerRefusal):
        return None
    prompts = size // setup.num_generations
    try:
        plan_grpo(setup.replace(num_samples=prompts - 1))
    except TrainerRefusal as refusal:
        return prompts, refusal
    except InputError:
        return None
    return None


def grpo_refusal(rec: Reconstructed) -> TrainerRefusal | None:
    """What `GRPOConfig` refuses of the setup before any data is seen (its sizes), or None."""
    if rec.value("trainer_class") != "GRPOTrainer":
        return None
    try:
        setup, _ = setup_from_mapping({**rec.setup_values(), "num_samples": rec.value("num_samples") or 1})
        generation_sizes(setup)
    except TrainerRefusal as refusal:
        return refusal
    except InputError:
        return None
    return None


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
        trial = planned_for(rec, profile, planned.resumed_step, max_steps=total.value)
    except (InputError, TrainerRefusal):
        return planned
    return trial if _score(observed, trial, rec) > _score(observed, planned, rec) else planned


GRPO_SEARCH = ("num_generations", "num_iterations")
MAX_ITERATIONS = 8


def _grpo_sizes(rec: Reconstructed, observed: Observed, profile: str) -> None:
    """A GRPO run whose config is not given (a config that is silent means TRL's defaults): no file states G (`num_generations`) or μ (`num_iterations`), so
    StepLab takes the pair (G a divisor of the round's completions, μ up to `MAX_ITERATIONS`) whose plan agrees with
    the most of the run's counts, the smallest first among equals, and marks them inferred."""
    if rec.value("trainer_class") != "GRPOTrainer" or rec.config is not None \
            or any(name in rec.values for name in GRPO_SEARCH):
        return
    try:
        setup, _ = setup_from_mapping({**rec.setup_values(), "trainer": profile})
        _, size = generation_sizes(setup.replace(num_generations=2))
    except (InputError, TrainerRefusal):
        return
    best: tuple[float, int, int] | None = None
    for generations in (g for g in range(2, min(size, 256) + 1) if size % g == 0):
        for iterations in range(1, MAX_ITERATIONS + 1):
            try:
                trial = planned_for(rec, profile, observed.resumed_step, num_generations=generations,
                                    num_iterations=iterations)
            except (InputError, TrainerRefusal):
                continue
            score = _score(observed, trial, rec)
            if best is None or score > best[0]:
                best = (score, generations, iterations)
    if best is None:
        return
    total = observed.counts.get("total_optimization_steps")
    source = Source(total.source.file, total.source.line, "inferred") if total else Source("StepLab", key="inferred")
    rec.use("num_generations", Found(best[1], source))
    rec.use("num_iterations", Found(best[2], source))


def plan_run(rec: Reconstructed, files: RunFiles, observed: Observed, trainer: str | None = None) -> Planning:
    """Plan the run under the release that fits it best."""
    result = Planning()
    if trainer:
        options, evidence = (trainer,), []
    elif "trainer" in rec.values and rec.values["trainer"].source.file == rec.config_path:
        options, evidence = (rec.values["trainer"].value,), [rec.values["trainer"]]
    else:
        options, evidence = release.candidates(files.console)
    if rec.value("trainer_class") == "GRPOTrainer":
        options = tuple(p for p in options if p in TRL_PROFILES) or TRL_PROFILES
        result.refusal = grpo_refusal(rec) if rec.config is not None else None  # else G is still to be found
        if result.refusal is not None:
            return result
    if "num_samples" not in rec.values:
        result.problem = msg("runfiles.no_sample_count")
        return result
    _grpo_sizes(rec, observed, options[0])
    best: tuple[float, Planned, str] | None = None
    scores: dict[str, float] = {}
    for profile in options:
        try:
            planned = planned_for(rec, profile, observed.resumed_step)
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
