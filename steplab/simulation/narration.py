"""The animation's words: what each micro-batch round does to the accumulation bucket, and the run in one sentence.

Every sentence is a `Message` (catalogue keys `narration.*`); the numbers come from the frame and its timeline.
"""

from __future__ import annotations

from steplab.i18n import Message, fmt_lr, joined, msg
from steplab.simulation.timeline import Frame, Timeline


def _micro_batches(count: int) -> Message:
    return msg("narration.micro_batches", count=count)


def _event(frame: Frame, timeline: Timeline) -> Message:
    """What the micro-batch does to the accumulation bucket: a step (full, short, oversized, across epochs) or a wait."""
    ga, size = timeline.accumulation, frame.fill
    profile = timeline.plan.profile.matched
    lr = fmt_lr(frame.lr) if frame.lr is not None else "—"
    bucket = {"size": size, "ga": ga, "samples": frame.bucket_samples}
    stepped = {"step": frame.step, "lr": lr, "profile": profile}
    previous = frame.epoch  # the epoch before this one, 1-based
    if frame.is_step and frame.carried and size > ga:
        return msg("narration.event.oversized_step", **stepped, ga=ga, micro_batches=_micro_batches(size),
                   carried=frame.carried, previous_epoch=previous)
    if frame.is_step and frame.carried:
        return msg("narration.event.step_across_epochs", **bucket, **stepped, previous_epoch=previous,
                   carried=_micro_batches(frame.carried), own=_micro_batches(size - frame.carried))
    if frame.is_step and size < ga:
        return msg("narration.event.short_group", **bucket, **stepped)
    if frame.is_step:
        return msg("narration.event.full_step", **bucket, **stepped)
    if frame.run_end:
        return msg("narration.event.unused_at_end", micro_batches=_micro_batches(size))
    if frame.epoch_end:
        return msg("narration.event.wait_for_next_epoch", epoch=frame.epoch + 1, micro_batches=_micro_batches(size),
                   profile=profile)
    if size >= ga:  # carried micro-batches overfill the bucket (4.47–4.51 count only this epoch's)
        return msg("narration.event.overfilled_wait", **bucket, profile=profile)
    if frame.carried:
        return msg("narration.event.accumulate_carried", **bucket, carried=frame.carried)
    return msg("narration.event.accumulate", **bucket)


def _notes(frame: Frame, timeline: Timeline) -> list[Message]:
    """What else is worth saying about this micro-batch: short, repeated, skipped or dropped samples, the end."""
    plan = timeline.plan
    lanes, batch = timeline.world_size, timeline.batch_size
    notes: list[Message] = []
    if frame.samples < batch:
        notes.append(msg("narration.note.short_batch", samples=frame.samples, count=frame.samples))
    if sum(frame.duplicated):
        notes.append(msg("narration.note.repeats", repeated=sum(frame.duplicated), count=sum(frame.duplicated)))
    if frame.skipped:
        unseen = frame.skipped * lanes * batch - lanes * (batch - plan.epoch.last_batch)
        notes.append(msg("narration.note.never_fetched", profile=plan.profile.matched,
                         micro_batches=_micro_batches(frame.skipped), unseen=unseen))
    if frame.dropped:
        reason = "limit_train_batches" if plan.epoch.limited_from is not None else "dataloader_drop_last"
        notes.append(msg("narration.note.dropped", dropped=frame.dropped, reason=reason, count=frame.dropped))
    if frame.is_step and frame.run_end and frame.step >= plan.max_steps:
        notes.append(msg("narration.note.max_steps", step=frame.step))
    elif frame.is_step and frame.run_end:
        notes.append(msg("narration.note.last_update"))
    elif frame.epoch_end and frame.is_step:
        notes.append(msg("narration.note.epoch_complete", epoch=frame.epoch + 1))
    return notes


def narration(frame: Frame, timeline: Timeline) -> Message:
    """What just happened at this frame and why: where it is, who computes, the bucket, and any notes."""
    lanes = timeline.world_size
    who = (msg("narration.who.one_gpu", samples=frame.samples) if lanes == 1
           else msg("narration.who.gpus", gpus=lanes, samples=frame.samples))
    head = msg("narration.head", epoch=frame.epoch + 1, micro_batch=frame.micro_batch,
               length=timeline.plan.micro_batches_per_epoch, who=who)
    notes = _notes(frame, timeline)
    if not notes:
        return msg("narration.sentence", head=head, event=_event(frame, timeline))
    return msg("narration.sentence_with_notes", head=head, event=_event(frame, timeline),
               notes=joined(notes, "narration.note.separator"))


def totals(timeline: Timeline) -> Message:
    """The whole run in one sentence, and how much of it the window shows."""
    run_values = {"count": timeline.plan.epochs_run, "rounds": timeline.total_frames, "steps": timeline.total_steps}
    gpus = timeline.world_size
    whole = (msg("narration.totals.one_gpu", **run_values) if gpus == 1
             else msg("narration.totals.gpus", **run_values, gpus=gpus))
    shown = (msg("narration.window.whole_run") if timeline.whole_run
             else msg("narration.window.part", shown=len(timeline.frames), epoch=1))
    return msg("narration.totals", run=whole, window=shown)
