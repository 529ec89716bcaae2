"""The GRPO page's content around its figures (`steplab_ui.widgets.grpo_figures` draws them): its fields, the
result cards, the worked arithmetic, the words of each event, the counters, the player's buttons and a refusal.

Every number comes from the engine (`steplab.trl.grpo.GrpoPlan`, `steplab.simulation.grpo_run`).
"""

from __future__ import annotations

from steplab.errors import TrainerRefusal
from steplab.i18n import fmt_float, fmt_int, fmt_lr, t
from steplab.simulation.grpo_run import GrpoTimeline
from steplab.teaching import grpo_counting
from steplab.trl.grpo import GrpoPlan
from steplab.trl.settings import CONFIG_DEFAULTS
from steplab_ui.shell import layout
from steplab_ui.views import animation

GRPO_FIELDS = ("num_generations", "steps_per_generation", "generation_batch_size", "num_iterations")
"""The page's own controls: GRPOConfig's count fields (the setup's rows; the sidebar holds the rest)."""
GRPO_CONFIG_CHECKS = ("auto_find_batch_size", "per_device_eval_batch_size")
"""Other fields `GRPOConfig.__post_init__` refuses (auto_find_batch_size; an eval batch of no whole groups)."""


def config_defaults_differing(setup) -> dict[str, object]:  # noqa: ANN001 - a TrainingSetup, or None
    """GRPOConfig's own defaults where they differ from the setup's values (`learning_rate` 1e-6, `logging_steps`
    10: TRL 1.16.0's, `steplab.trl.settings.CONFIG_DEFAULTS`); empty when the setup has them."""
    if setup is None:
        return {}
    return {name: value for name, value in CONFIG_DEFAULTS["GRPOTrainer"].items() if getattr(setup, name) != value}


def config_defaults_text(lang: str) -> str:
    """The sentence beside the button that sets them."""
    defaults = CONFIG_DEFAULTS["GRPOTrainer"]
    return t(lang, "grpo.defaults", lr=fmt_lr(defaults["learning_rate"]), steps=defaults["logging_steps"])


def legend(plan: GrpoPlan, lang: str) -> str:
    """What the figure's parts are, with this setup's numbers (the figure itself keeps to short labels)."""
    setup = plan.setup
    return t(lang, "grpo.legend", u=fmt_int(plan.unique_prompts_per_round), g=fmt_int(setup.num_generations),
             s=fmt_int(plan.steps_per_generation), b=fmt_int(setup.per_device_train_batch_size),
             p=fmt_int(setup.world_size), ga=fmt_int(setup.gradient_accumulation_steps), count=setup.world_size)


def cards(plan: GrpoPlan, lang: str) -> list[tuple[str, str, str]]:
    """(label, value, help) of the page's result cards."""
    setup, trainer = plan.setup, plan.trainer
    values = [
        ("round", t(lang, "grpo.card.round_value", u=fmt_int(plan.unique_prompts_per_round),
                    g=fmt_int(setup.num_generations), gb=fmt_int(plan.generation_batch_size))),
        ("slices", t(lang, "grpo.card.slices_value", s=fmt_int(plan.steps_per_generation),
                     mu=fmt_int(setup.num_iterations))),
        ("rounds", fmt_int(plan.generation_rounds)),
        ("updates", fmt_int(trainer.max_steps)),
        ("completions", fmt_int(plan.completions_per_update)),
        ("epochs", fmt_float(trainer.final_epoch, 3)),
    ]
    return [(t(lang, f"grpo.card.{name}"), value, t(lang, f"grpo.card.{name}_help")) for name, value in values]


def arithmetic_text(plan: GrpoPlan, lang: str) -> str:
    """The worked arithmetic (`teaching.grpo_counting.worked`, as the lesson and a class reveal show it)."""
    return layout.worked_markdown(grpo_counting.worked(plan), lang)


def narration(timeline: GrpoTimeline, position: int, lang: str) -> str:
    """What the event at `position` does, in words (also the figure's text alternative)."""
    frame, plan = timeline.frames[position], timeline.plan
    setup = plan.setup
    if frame.is_generation:
        first = frame.round_in_epoch * plan.unique_prompts_per_round
        text = t(lang, "grpo.say.generation", round=fmt_int(frame.round + 1), epoch=frame.epoch + 1,
                 first=fmt_int(first + 1), last=fmt_int(first + plan.unique_prompts_per_round),
                 u=fmt_int(plan.unique_prompts_per_round), g=fmt_int(setup.num_generations),
                 gb=fmt_int(plan.generation_batch_size), p=fmt_int(setup.world_size), count=setup.world_size,
                 s=fmt_int(plan.steps_per_generation), b=fmt_int(setup.per_device_train_batch_size))
        if setup.num_iterations > 1:
            text += t(lang, "grpo.say.passes", mu=fmt_int(setup.num_iterations))
        return text
    parts = [t(lang, "grpo.say.micro_batch", slice=fmt_int(frame.slice + 1), s=fmt_int(plan.steps_per_generation),
               i=fmt_int(frame.iteration + 1), mu=fmt_int(setup.num_iterations), round=fmt_int(frame.round + 1),
               b=fmt_int(setup.per_device_train_batch_size), fill=fmt_int(frame.micro.fill),
               ga=fmt_int(setup.gradient_accumulation_steps))]
    if frame.reused:
        parts.append(t(lang, "grpo.say.reused", i=fmt_int(frame.iteration + 1)))
    if frame.is_step:
        lr = fmt_lr(frame.micro.lr) if frame.micro.lr is not None else "—"
        parts.append(t(lang, "grpo.say.step", step=fmt_int(frame.step), lr=lr,
                       completions=fmt_int(plan.completions_per_update)))
    elif frame.micro.run_end:
        parts.append(t(lang, "grpo.say.unused"))
    return " ".join(parts)


def position_texts(timeline: GrpoTimeline, position: int, lang: str) -> tuple[str, str | None]:
    """The caption under the scrubber, and what the window skipped just before this event (None when nothing)."""
    caption = t(lang, "grpo.position", position=fmt_int(position + 1), count=fmt_int(len(timeline.frames)))
    gap, rounds = timeline.gaps[position], timeline.skipped_rounds[position]
    skipped = None if gap is None else t(lang, "grpo.gap", micro_batches=fmt_int(gap.micro_batches),
                                         rounds=fmt_int(rounds), updates=fmt_int(gap.updates))
    return caption, skipped


def counters(timeline: GrpoTimeline, position: int, lang: str) -> list[tuple[str, str, str]]:
    """(label, value, help) of the counters under the figure; the same numbers the figure draws."""
    frame, plan = timeline.frames[position], timeline.plan
    rounds = timeline.rounds_done(position)
    values = [
        ("round", f"{fmt_int(rounds)} / {fmt_int(plan.generation_rounds)}"),
        ("generated", fmt_int(rounds * plan.generation_batch_size)),
        ("trained", fmt_int(timeline.completions_trained(position))),
        ("updates", f"{fmt_int(frame.updates)} / {fmt_int(timeline.total_steps)}"),
        ("lr", fmt_lr(frame.micro.lr) if frame.micro.lr is not None else "—"),
    ]
    return [(t(lang, f"grpo.count.{name}"), value, t(lang, f"grpo.count.{name}_help")) for name, value in values]


def current_update(timeline: GrpoTimeline, position: int) -> int:
    """The update the event at `position` belongs to: the one it closes, else the next (the last when none is left)."""
    frame = timeline.frames[position]
    return frame.step or min(frame.updates + 1, max(timeline.total_steps, 1))


SKIP_LABELS = animation.SKIP_LABELS


def control_button(name: str, playing: bool, lang: str) -> dict[str, str]:
    """The player's buttons as the animation draws them; one step here is one event (a round or a micro-batch)."""
    button = animation.control_button(name, playing, lang)
    if name == "step":
        button.update(label=t(lang, "grpo.step"), help=t(lang, "grpo.step_help"))
    return button


def refusal_texts(refusal: TrainerRefusal, lang: str) -> tuple[str, str, str]:
    """(heading, the exception word for word, what to change) of a configuration GRPOConfig (its fields) or the
    Trainer under it refuses."""
    fix = refusal.fix.get(lang) if refusal.fix is not None else t(lang, "error.refusal_hint")
    heading = t(lang, "grpo.refused" if refusal.field in (*GRPO_FIELDS, *GRPO_CONFIG_CHECKS) else "error.refusal")
    return heading, f"{refusal.error_type}: {refusal.message}", fix
