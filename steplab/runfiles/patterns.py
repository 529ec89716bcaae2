"""What a run's files show that a learner asks about, each pattern a rule: the causes of its differences first,
then what was inferred, resumes, the final `train_loss`, a missing `eval_loss`, the loss staircase, streaming's
epoch count, gradient-norm spikes, and the files that could not be read."""

from __future__ import annotations

import math
import sys

import numpy as np

from steplab.i18n import code, fmt_float, msg
from steplab.runfiles import release
from steplab.runfiles.explanation import Explanation, Finding
from steplab.runfiles.failure import failure_findings
from steplab.runfiles.planning import grpo_refusal_without_round
from steplab.runfiles.precision import close
from steplab.runfiles.rows import INT64_MAX, Rows
from steplab.trainer.events import events, interval
from steplab.trainer.plan import make_plan

SPIKE_FACTOR = 5.0  # a grad_norm this many times the run's median is a spike
STAIR_FACTOR = 3.0  # a drop at an epoch start this many times the typical change between rows is a step ...
STAIR_SHARE = 0.01  # ... and at least this share of the loss (noise on a flat curve is no staircase)
MAX_NAMED_STEPS = 5
OWN_STEPS_RELEASE, ALL_STEPS_RELEASE = "5.24", "5.15"
"""After a resume, `train_loss` divides the process's losses by its own steps in transformers 5.24.0 (`trainer.py`
`_finalize_training`: `num_steps_trained`), by all the steps in 5.15.0 and before (`effective_global_step`): the
wheels StepLab has read. (Both in the `hf-5` profile's range: the profile does not say which.)"""


def _steps_text(steps: list[int]) -> str:
    shown = ", ".join(f"{s:,}" for s in steps[:MAX_NAMED_STEPS])
    return shown + (", …" if len(steps) > MAX_NAMED_STEPS else "")


# --------------------------------------------------------------------------- what was read and inferred


def _files(ex: Explanation) -> list[Finding]:
    found = [Finding("file_problem", problem) for problem in ex.files.problems]
    found += [Finding("file_unread", r.note if not r.note.key.startswith("runfiles.skipped.")
                      else msg("runfiles.finding.unread", path=r.path, why=r.note))
              for r in ex.files.reports if not r.read and r.note is not None and r.note.key != "runfiles.skipped.unused"]
    found += [Finding("setup_note", note) for note in ex.setup.notes]
    if ex.files.other_configs and ex.files.config:
        found.append(Finding("configs_not_used", msg("runfiles.finding.other_configs", used=ex.files.config[0],
                                                     others=", ".join(ex.files.other_configs[:5]))))
    for console in ex.files.earlier_consoles:
        if console.blocks and console.interrupted is not None:
            found.append(Finding("earlier_part", msg("runfiles.finding.earlier_part", path=console.path,
                                                     step=console.bar.value if console.bar else 0,
                                                     line=console.interrupted.source.line)))
    return found


def _chosen(ex: Explanation) -> bool:
    """The release was chosen (`--trainer`, the page's choice, the YAML's `trainer`), not read from the files."""
    planning = ex.planning
    return planning.profile.source.key == "--trainer" or bool(
        planning.evidence and planning.evidence[0].source.file == ex.setup.config_path)


def _chosen_release(ex: Explanation, profile: str) -> Finding:
    """A chosen release said as chosen, and the release the log itself names when it names another."""
    named, evidence = release.candidates(ex.files.console)
    if evidence and profile not in named:
        return Finding("release", msg("runfiles.finding.release_chosen_other", profile=profile,
                                      named=", ".join(f"`{p}`" for p in named), source=str(evidence[0].source)))
    return Finding("release", msg("runfiles.finding.release_chosen", profile=profile))


def _inferred(ex: Explanation) -> list[Finding]:
    found = []
    planning = ex.planning
    if planning.profile is not None and len(planning.tied) > 1:
        found.append(Finding("release", msg("runfiles.finding.release_tied", profile=planning.profile.value,
                                            profiles=", ".join(f"`{p}`" for p in planning.tied))))
    elif planning.profile is not None and planning.evidence:
        found.append(Finding("release", msg("runfiles.finding.release", profile=planning.profile.value,
                                            source=str(planning.evidence[0].source))))
    elif planning.profile is not None and _chosen(ex):
        found.append(_chosen_release(ex, planning.profile.value))
    elif planning.profile is not None:
        found.append(Finding("release", msg("runfiles.finding.release_fits", profile=planning.profile.value)))
    world = ex.setup.values.get("world_size")
    if world is not None and world.value > 1 and ex.planning.planned is not None:
        plan = ex.planning.planned.plan
        found.append(Finding("processes", msg(
            "runfiles.finding.processes", processes=world.value, source=str(world.source), examples=plan.setup.num_samples,
            batch=plan.setup.per_device_train_batch_size, accumulation=plan.setup.gradient_accumulation_steps,
            total=plan.total_train_batch_size, per_epoch=plan.num_update_steps_per_epoch)))
    elif world is not None and world.source.key == "assumed":
        found.append(Finding("processes_assumed", msg("runfiles.finding.processes_assumed")))
    resumed = ex.observed.resumed_step is not None
    for name, values in ex.setup.conflicts().items():
        if resumed and name in ("logging_steps", "eval_steps", "save_steps"):
            continue  # said by `resume_intervals`: the checkpoint's interval won
        said = "; ".join(f"{v.value} ({v.source})" for v in values)
        found.append(Finding("conflict", msg("runfiles.finding.conflict", field=name, values=said)))
    return found


def _trainer_class(ex: Explanation) -> list[Finding]:
    """The TRL trainer that ran the run, where the files named it, and for GRPO how its rounds make the count."""
    named = ex.setup.values.get("trainer_class")
    if named is None:
        return []
    found = [Finding("trainer_class", msg("runfiles.finding.trainer_class", trainer_class=named.value,
                                          source=str(named.source)))]
    planned = ex.planning.planned
    grpo = planned.grpo if planned is not None else None
    if named.value == "DPOTrainer" and planned is not None:
        batch = planned.plan.setup.per_device_train_batch_size
        found.append(Finding("dpo_pairs", msg("runfiles.finding.dpo_pairs", pairs=planned.plan.setup.num_samples,
                                              batch=batch, sequences=2 * batch)))
    if named.value == "SFTTrainer" and ex.setup.value("packing"):
        examples = ex.observed.counts.get("num_examples")
        found.append(Finding("sft_packed", msg("runfiles.finding.sft_packed", examples=examples.value if examples
                                               else 0, length=ex.setup.value("max_length", 0))))
    if grpo is not None:
        from steplab.teaching.grpo_counting import notes

        s = grpo.setup
        found.append(Finding("grpo_rounds", msg(
            "runfiles.finding.grpo_rounds", size=grpo.generation_batch_size, generations=s.num_generations,
            prompts=grpo.unique_prompts_per_round, rounds=grpo.rounds_per_epoch, steps=grpo.steps_per_generation,
            mu=s.num_iterations, per_round=grpo.micro_batches_per_round, total=grpo.generation_rounds,
            updates=grpo.trainer.optimizer_steps, batch=s.per_device_train_batch_size,
            accumulation=s.gradient_accumulation_steps, completions=grpo.completions_per_update)))
        found += [Finding("grpo_note", note) for note in notes(grpo)]
        guessed = ex.setup.values.get("num_generations")
        if guessed is not None and guessed.source.key == "inferred":
            found.append(Finding("grpo_inferred", msg("runfiles.finding.grpo_inferred", generations=s.num_generations,
                                                      mu=s.num_iterations)))
    return found


def _ratios(ex: Explanation) -> list[Finding]:
    """Intervals given as shares of the total (`logging_steps: 0.15`): the steps the Trainer made of them."""
    planned = ex.planning.planned
    if planned is None:
        return []
    found = []
    for name, kind in (("logging_steps", "log"), ("eval_steps", "eval"), ("save_steps", "save")):
        value = ex.setup.value(name)
        if isinstance(value, float) and 0 < value < 1:
            found.append(Finding("interval_ratio", msg("runfiles.finding.interval_ratio", field=name, ratio=value,
                                                       total=planned.plan.max_steps,
                                                       every=interval(planned.plan, kind) or 0)))
    return found


def _dataset(ex: Explanation) -> list[Finding]:
    funnel = ex.setup.funnel
    if funnel is None:
        return []
    found = []
    for stage in funnel.stages:
        if stage.code == "invalid" and stage.rows_out < stage.rows_in:
            found.append(Finding("rows_dropped", msg("runfiles.finding.rows_dropped", dropped=stage.rows_in - stage.rows_out,
                                                     rows=stage.rows_in, note=stage.note)))
        elif stage.code in ("packing", "pt_blocks", "split", "max_samples") and stage.rows_out != stage.rows_in:
            found.append(Finding(stage.code, stage.note))
    return found


# --------------------------------------------------------------------------- resumes


def _resume(ex: Explanation) -> list[Finding]:
    step = ex.observed.resumed_step
    planned = ex.planning.planned
    if step is None or planned is None:
        return []
    plan = planned.plan
    per_epoch = plan.num_update_steps_per_epoch
    skipped_epochs = step // per_epoch if per_epoch else 0
    batches = (step % per_epoch) * plan.setup.gradient_accumulation_steps if per_epoch else 0
    found = []
    if step < plan.max_steps:
        found.append(Finding("resume", msg("runfiles.finding.resume", step=step, total=plan.max_steps,
                                           epochs=skipped_epochs, batches=batches, first=step + 1)))
    else:
        more = math.floor(plan.setup.num_train_epochs) + 1
        longer = make_plan(plan.setup.replace(num_train_epochs=more)).max_steps if not plan.setup.uses_max_steps \
            else None
        found.append(Finding("resume_finished", msg(
            "runfiles.finding.resume_finished" if longer else "runfiles.finding.resume_finished_max_steps",
            step=step, total=plan.max_steps, more=more, steps=longer or 0)))
    earlier = ex.planning.earlier
    if earlier is not None and earlier.changed:
        old = earlier.plan
        if "gradient_accumulation_steps" in earlier.changed:
            used = step * old.setup.gradient_accumulation_steps
            found.append(Finding("resume_accumulation", msg(
                "runfiles.finding.resume_accumulation", step=step, old=old.setup.gradient_accumulation_steps,
                new=plan.setup.gradient_accumulation_steps, used=used, skipped=batches, total=plan.max_steps,
                old_total=old.max_steps)))
        if old.max_steps != plan.max_steps and step < plan.max_steps:
            after = float(plan.learning_rates(step + 1, step + 1)[0])
            before = float(old.learning_rates(step + 1, step + 1)[0]) if step < old.max_steps else 0.0
            stale = msg("runfiles.finding.resume_stale", next=step + 1) \
                if not plan.profile.logs_next_rate else ""
            found.append(Finding("resume_schedule", msg(
                "runfiles.finding.resume_schedule", old_total=old.max_steps, total=plan.max_steps, next=step + 1,
                before=before, after=after, old_epochs=fmt_float(old.setup.num_train_epochs),
                epochs=fmt_float(plan.setup.num_train_epochs), stale=stale)))
    found += _resume_intervals(ex)
    if ex.files.console is not None and ex.files.console.trainer_log_deleted is not None:
        found.append(Finding("trainer_log_restarted", msg("runfiles.finding.trainer_log_restarted",
                                                          source=str(ex.files.console.trainer_log_deleted.source))))
    return found


def _resume_intervals(ex: Explanation) -> list[Finding]:
    """The YAML's logging, evaluation and save intervals a resumed run did not use (the checkpoint's won)."""
    config = ex.setup.config
    if config is None:
        return []
    found = []
    for name in ("logging_steps", "eval_steps", "save_steps"):
        used = ex.setup.values.get(name)
        asked = config.document.get(name)
        if used is None or asked is None or used.source.file == ex.setup.config_path:
            continue
        if str(asked) != str(used.value):
            found.append(Finding("resume_intervals", msg("runfiles.finding.resume_intervals", field=name,
                                                         asked=asked, used=used.value, source=str(used.source))))
    return found


# --------------------------------------------------------------------------- the loss


def train_loss_from_rows(rows: Rows, global_step: int, resumed_step: int | None,
                         own_steps: bool = False) -> float | None:
    """`train_loss` as the Trainer computes it from what it logged: every logged loss is the mean over the steps
    since the previous log, so Σ loss × steps covered ÷ `global_step` (a resumed process sums only its own steps,
    yet divides by all of them up to transformers 5.15; 5.24 divides by its own steps: `own_steps`). None when the
    last steps were never logged."""
    train = rows.train
    start = resumed_step or 0
    mask = train.steps > start
    steps, losses = train.steps[mask], train.column("loss")[mask]
    if not len(steps) or steps[-1] != global_step or not global_step or global_step <= start:
        return None
    windows = np.diff(np.concatenate([[start], steps]))
    return float(np.sum(losses * windows) / (global_step - start if own_steps else global_step))


def _train_loss(ex: Explanation) -> list[Finding]:
    reported = ex.observed.train_loss
    rows = ex.reconciliation.rows
    steps_run = ex.observed.counts.get("steps_run")
    if reported is None or rows is None or not rows.has("loss").any() or steps_run is None:
        return []
    if ex.observed.resumed_step is not None and steps_run.value <= ex.observed.resumed_step:
        return []  # nothing trained after the checkpoint: `resume_finished` says so
    last = float(rows.train.column("loss")[-1])
    resumed = ex.observed.resumed_step
    ours = train_loss_from_rows(rows, int(steps_run.value), resumed)
    if ours is None:
        key = "runfiles.finding.train_loss_tail" if resumed is None else "runfiles.finding.train_loss_tail_resumed"
        return [Finding("train_loss", msg(key, reported=reported.value, last=last, first=(resumed or 0) + 1,
                                          steps=int(steps_run.value), own_release=OWN_STEPS_RELEASE,
                                          all_release=ALL_STEPS_RELEASE))]
    digits = 4 if rows.digits or rows.epoch_decimals or reported.source.line is not None else None
    agrees = bool(close(reported.value, ours, digits))
    if resumed is not None:
        own = train_loss_from_rows(rows, int(steps_run.value), resumed, own_steps=True)
        key = "runfiles.finding.train_loss_resumed" if agrees else (
            "runfiles.finding.train_loss_resumed_own" if own is not None and close(reported.value, own, digits)
            else "runfiles.finding.train_loss_other")
        return [Finding("train_loss", msg(key, reported=reported.value, ours=own if key.endswith("own") else ours,
                                          first=resumed + 1, steps=int(steps_run.value), last=last,
                                          own_release=OWN_STEPS_RELEASE, all_release=ALL_STEPS_RELEASE))]
    world = ex.setup.value("world_size", 1)
    key = "runfiles.finding.train_loss" if agrees else (
        "runfiles.finding.train_loss_processes" if world > 1 else "runfiles.finding.train_loss_other")
    return [Finding("train_loss", msg(key, reported=reported.value, ours=ours, last=last,
                                      steps=int(steps_run.value), processes=world))]


def _last_row(ex: Explanation) -> list[Finding]:
    log = ex.files.trainer_log
    if log is None or not len(log.rows):
        return []
    last = log.rows.where(np.arange(len(log.rows)) == len(log.rows) - 1)
    if last.has("loss")[0] or last.has("eval_loss")[0]:
        return []
    return [Finding("last_row_without_loss", msg("runfiles.finding.last_row", path=log.path,
                                                 line=int(last.lines[0]), step=int(last.steps[0])))]


def _no_eval(ex: Explanation) -> list[Finding]:
    rows = ex.observed.rows
    if rows is None or rows.has("eval_loss").any():
        return []
    document = ex.setup.config.document if ex.setup.config else None
    if document is None:
        return [Finding("no_eval_loss", msg("runfiles.finding.no_eval.unknown"))]
    has_data = bool(document.get("val_size")) or bool(document.get("eval_dataset"))
    strategy = ex.setup.value("eval_strategy", "no")
    if not has_data:
        key = "runfiles.finding.no_eval.no_data"
    elif strategy == "no":
        key = "runfiles.finding.no_eval.strategy_no"
    else:
        planned = ex.planning.planned
        every = interval(planned.plan, "eval") if planned else None
        key = "runfiles.finding.no_eval.too_rare" if planned and not events(planned.plan, "eval").count() else (
            "runfiles.finding.no_eval.unexplained")
        return [Finding("no_eval_loss", msg(key, every=every or 0, total=planned.plan.max_steps if planned else 0))]
    return [Finding("no_eval_loss", msg(key))]


def staircase(rows: Rows, boundaries: list[int]) -> list[int]:
    """The epoch starts at which the loss drops like a stair: the mean of the two rows after the boundary lies
    below the two before by `STAIR_FACTOR` times the typical change between neighbouring rows, and by at least
    `STAIR_SHARE` of the loss."""
    train = rows.train
    steps, losses = train.steps, train.column("loss")
    if len(steps) < 8 or not boundaries:
        return []
    typical = float(np.median(np.abs(np.diff(losses))))
    found = []
    for boundary in boundaries:
        before = losses[steps <= boundary][-2:]
        after = losses[steps > boundary][:2]
        if len(before) == 2 and len(after) == 2:
            drop = float(before.mean() - after.mean())
            if drop > STAIR_FACTOR * max(typical, 1e-12) and drop > STAIR_SHARE * abs(float(before.mean())):
                found.append(boundary)
    return found


def _staircase(ex: Explanation) -> list[Finding]:
    rows, planned = ex.reconciliation.rows, ex.planning.planned
    if rows is None or planned is None or planned.streaming:
        return []
    boundaries = [s for s in planned.plan.epoch_end_steps() if s < planned.plan.optimizer_steps]
    found = staircase(rows, boundaries)
    if len(found) >= max(1, len(boundaries) // 2):
        return [Finding("loss_staircase", msg("runfiles.finding.staircase", steps=_steps_text(found)))]
    return []


def _streaming(ex: Explanation) -> list[Finding]:
    epochs = ex.observed.counts.get("num_epochs")
    if epochs is None or epochs.value != sys.maxsize:
        return []
    return [Finding("streaming_epochs", msg("runfiles.finding.streaming", epochs=epochs.value,
                                            source=str(epochs.source)))]


def grad_spikes(rows: Rows) -> np.ndarray:
    """The steps whose `grad_norm` is more than `SPIKE_FACTOR` times the run's median."""
    has = rows.has("grad_norm") & (rows.steps >= 0)
    norms = rows.column("grad_norm")[has]
    if len(norms) < 5:
        return np.zeros(0, dtype=np.int64)
    median = float(np.nanmedian(norms))
    return rows.steps[has][norms > SPIKE_FACTOR * max(median, 1e-12)]


def _spikes(ex: Explanation) -> list[Finding]:
    rows = ex.reconciliation.rows
    if rows is None:
        return []
    spikes = [int(s) for s in grad_spikes(rows)]
    if not spikes:
        return []
    return [Finding("grad_norm_spikes", msg("runfiles.finding.spikes", count=len(spikes), steps=_steps_text(spikes),
                                            factor=SPIKE_FACTOR))]


def _eval_after_training(ex: Explanation) -> list[Finding]:
    """`eval_results.json` is written by an evaluation run after training (`do_eval`), never by the evaluations
    during training, so it is not among the logged rows even when it repeats the last one's loss."""
    results = ex.files.results.get("eval_results.json")
    if results is None or "eval_loss" not in results.values:
        return []
    logged = ex.observed.rows.evals.column("eval_loss") if ex.observed.rows is not None else np.zeros(0)
    if not len(logged):
        return [Finding("eval_after_training", msg("runfiles.finding.eval_after_training_only", path=results.path,
                                                   loss=results.values["eval_loss"]))]
    return [Finding("eval_after_training", msg("runfiles.finding.eval_after_training", path=results.path,
                                               loss=results.values["eval_loss"], last=float(logged[-1])))]


def _causes(ex: Explanation) -> list[Finding]:
    return [Finding(cause.code, cause.message) for cause in ex.causes]


def _agreement(ex: Explanation) -> list[Finding]:
    checks = [c for c in ex.reconciliation.checks if c.agree is not None]
    if not checks:
        return []
    wrong = [c for c in checks if c.agree is False]
    if ex.different_runs:
        return [Finding("different_runs", msg("runfiles.finding.different_runs", count=len(wrong), total=len(checks),
                                              fields=", ".join(c.name for c in wrong)))]
    if wrong:
        return [Finding("differs", msg("runfiles.finding.differs", count=len(wrong), total=len(checks),
                                       fields=", ".join(c.name for c in wrong)))]
    return [Finding("agrees", msg("runfiles.finding.agrees", total=len(checks)))]


def _census(ex: Explanation) -> list[Finding]:
    """The run's config keys StepLab does not model, and misspelt ones with the key meant: the one call site of
    the census (`steplab.io.census.check`, branch `census`), with the trainer class the files name. Until that
    module is in the tree there is nothing to say, and nothing is claimed."""
    config = ex.setup.config
    if config is None:
        return []
    from steplab.io import census

    checked = census.check(config.document, str(ex.setup.value("trainer_class") or "Trainer"),
                           config.flavour == "llamafactory")
    return [*(Finding("not_modelled", item.message()) for item in checked.unmodelled),
            *(Finding("unknown_key", item.message()) for item in checked.unknown)]


def _failure(ex: Explanation) -> list[Finding]:
    """The exception a failed run died of, and StepLab's own refusal of the same setup (or the gap)."""
    failure = ex.files.failure
    if failure is None:
        return []
    planning = ex.planning
    found = [Finding(code, message) for code, message in failure_findings(
        failure, planning.refusal, planning.planned is not None, planning.problem)]
    if found[-1].code == "failure_unchecked" and (probe := grpo_refusal_without_round(ex.setup)) is not None:
        prompts, refusal = probe  # the files do not say N: StepLab's own refusal when N is under one round
        if [code for code, _ in failure_findings(failure, refusal, False, None)][-1] == "failure_matched":
            found[-1] = Finding("failure_matched_if", msg("runfiles.failure.matched_if", type=refusal.error_type,
                                                          prompts=prompts, fix=refusal.fix or ""))
    return found


def _unparsed(ex: Explanation) -> list[Finding]:
    """Logged dicts of the consoles that could not be read: counted and named by their lines."""
    found = []
    for console in [c for c in (ex.files.console, *ex.files.earlier_consoles) if c is not None]:
        found += [Finding("number_too_big", msg("runfiles.finding.number_too_big", field=name, digits=digits,
                                                source=str(source), bits=INT64_MAX.bit_length() + 1))
                  for name, digits, source in console.too_big]
        lines = console.unparsed_dicts
        if lines:
            found.append(Finding("unparsed_dicts", msg("runfiles.finding.unparsed_dicts", path=console.path,
                                                       count=len(lines), lines=_steps_text(lines))))
    return found


PATTERNS = (_causes, _agreement, _files, _census, _unparsed, _inferred, _ratios, _trainer_class, _dataset, _resume, _streaming,
            _train_loss, _last_row, _no_eval, _eval_after_training, _staircase, _spikes)


def findings(ex: Explanation) -> list[Finding]:
    """Every finding, a failed run's error first, then the causes."""
    failed = _failure(ex)
    if ex.planning.planned is None:
        reason = ex.planning.problem or (msg("runfiles.refused", error=code(str(ex.planning.refusal)))
                                         if ex.planning.refusal else msg("runfiles.no_plan"))
        said = [] if failed else [Finding("not_planned", reason)]
        return [*failed, *said, *_files(ex), *_census(ex), *_unparsed(ex), *_inferred(ex), *_trainer_class(ex), *_last_row(ex),
                *_streaming(ex)]
    found = [finding for pattern in PATTERNS for finding in pattern(ex)]
    first = [f for f in found if f.code == "different_runs"]  # said before any single cause
    return [*failed, *first, *(f for f in found if f.code != "different_runs")]
