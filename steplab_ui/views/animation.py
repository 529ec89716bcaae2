"""The animation page's content around its frames (`steplab_ui.widgets.animation_frames` draws them): how the
player's buttons look, and the comparison of the chapter's measured pair, computed by StepLab and as measured."""

from __future__ import annotations

import plotly.graph_objects as go

from steplab.i18n import fmt_float, fmt_int, t
from steplab.simulation.narration import narration
from steplab.simulation.timeline import Timeline, build_timeline
from steplab.teaching.measurements import measurements
from steplab.teaching.presets import presets
from steplab.trainer.plan import Plan, make_plan
from steplab_ui.widgets.animation_frames import frame_figure

BUTTONS = {  # the player's buttons (`Player.moves`, widget key `anim_<name>`): label, help, icon, shortcut
    "play": ("anim.play", "anim.play_help", ":material/play_arrow:", "P"),
    "back": ("anim.back", "anim.back_help", ":material/chevron_left:", "Left"),
    "step": ("anim.step", "anim.step_help", ":material/chevron_right:", "Right"),
    "update": ("anim.step_update", "anim.step_update_help", ":material/skip_next:", "U"),
    "reset": ("anim.reset", "anim.reset_help", ":material/first_page:", "Home"),
}
SKIP_LABELS = {"epoch_end": "anim.skip_epoch_end", "last_update": "anim.skip_last"}  # `Player.skips`


def control_button(name: str, playing: bool, lang: str) -> dict[str, str]:
    """How the player's button `name` looks (`st.button`'s label, help, icon, shortcut, type); Play turns
    into Pause while playing."""
    label, help_key, icon, shortcut = BUTTONS[name]
    if name == "play" and playing:
        label, icon = "anim.pause", ":material/pause:"
    return {"label": t(lang, label), "help": t(lang, help_key), "icon": icon, "shortcut": shortcut,
            "type": "primary" if name == "play" else "secondary"}


# --- the comparison: the chapter's measured pair, computed by StepLab and as measured ------------------------

COMPARED = ("samples_per_update", "micro_per_update", "micro_per_epoch", "updates_per_epoch", "total_steps")


def compared_pairs() -> list[tuple[int, int]]:
    """(per_device_train_batch_size, gradient_accumulation_steps) of each measured setup, in order."""
    return [(m["per_device_train_batch_size"], m["gradient_accumulation_steps"]) for m in measurements().values()]


def compared_plans(trainer: str) -> list[Plan]:
    """The course setup on one GPU with each measured pair (raises `SetupError` / `TrainerRefusal`)."""
    course = presets()["course_default"]
    return [make_plan(course.setup(per_device_train_batch_size=batch, gradient_accumulation_steps=ga, world_size=1,
                                   trainer=trainer)) for batch, ga in compared_pairs()]


def compared_numbers(plan: Plan) -> dict[str, int]:
    """The numbers the comparison sets side by side (`COMPARED`), read off the plan."""
    return {
        "samples_per_update": plan.total_train_batch_size,
        "micro_per_update": plan.setup.gradient_accumulation_steps,
        "micro_per_epoch": plan.micro_batches_per_epoch,
        "updates_per_epoch": plan.num_update_steps_per_epoch,
        "total_steps": plan.max_steps,
    }


def first_update(timeline: Timeline) -> int:
    """The window position (0-based) of the first frame that closes an optimizer step, else the first frame."""
    return next((p for p, f in enumerate(timeline.frames) if f.is_step), 0)


def compared_figures(plans: list[Plan], lang: str) -> list[tuple[str, str, go.Figure, str]]:
    """Per compared plan: (bold heading, chart key, the figure of its first update, its text alternative)."""
    figures = []
    for plan in plans:
        timeline = build_timeline(plan)
        first, batch, ga = first_update(timeline), timeline.batch_size, timeline.accumulation
        figures.append((f"**{t(lang, 'anim.compare.column', batch=batch, ga=ga)}**", f"anim_compare_{batch}_{ga}",
                        frame_figure(timeline, first, lang, height=300, compact=True),
                        narration(timeline.frames[first], timeline).get(lang)))
    return figures


def comparison_intro(lang: str) -> str:
    """The caption over the comparison: the two pairs and the course setup they share."""
    (batch_a, ga_a), (batch_b, ga_b) = compared_pairs()[:2]
    course = presets()["course_default"].setup()
    return t(lang, "anim.compare.intro", batch_a=batch_a, ga_a=ga_a, batch_b=batch_b, ga_b=ga_b,
             samples_per_update=batch_a * ga_a, samples=course.num_samples, epochs=course.num_train_epochs)


def markdown_table(corner: str, head: list[str], rows: list[tuple[str, list[str]]]) -> str:
    """A markdown table: one column per setup (`head`), one row per quantity, numbers right-aligned."""
    lines = [f"| {corner} | {' | '.join(head)} |", "|---|" + "---:|" * len(head)]
    lines += [f"| {name} | {' | '.join(cells)} |" for name, cells in rows]
    return "\n".join(lines) + "\n"


def _head(lang: str) -> list[str]:
    return [t(lang, "anim.compare.short", batch=batch, ga=ga) for batch, ga in compared_pairs()]


def computed_table(plans: list[Plan], lang: str) -> str:
    """What StepLab computes for each compared setup, as a markdown table."""
    numbers = [compared_numbers(plan) for plan in plans]
    rows = [(t(lang, f"anim.compare.row.{name}"), [fmt_int(n[name]) for n in numbers]) for name in COMPARED]
    return markdown_table(t(lang, "anim.compare.computed"), _head(lang), rows)


def measured_table(lang: str) -> str:
    """The chapter's measurement of each compared setup (peak memory, wall time), labelled as measured."""
    measured = list(measurements().values())
    rows = [
        (t(lang, "anim.compare.row.memory"), [f"{fmt_float(m['peak_memory_gib'], 2)} GiB" for m in measured]),
        (t(lang, "anim.compare.row.time", steps=fmt_int(measured[0]["steps"])),
         [f"≈ {fmt_int(m['seconds'])} s" for m in measured]),
    ]
    return markdown_table(t(lang, "anim.compare.measured"), _head(lang), rows)


def measured_caption(lang: str) -> str:
    """Where the measurement comes from (the steps timed, the model)."""
    steps = fmt_int(next(iter(measurements().values()))["steps"])
    return t(lang, "anim.compare.measured_caption", steps=steps, model=presets()["course_default"].model)
