"""The GRPO page (app_pages/grpo.py) with AppTest: its numbers are the engine's GrpoPlan's, its controls are setup
fields in the URL, a generation round is an event of its own, and TRL's refusals are said, never raised."""

from __future__ import annotations

import pytest
from test_app import consoles, metrics, run

from steplab.i18n import catalogue, fmt_int, t
from steplab.simulation import grpo_run
from steplab.teaching.presets import presets
from steplab.trainer.plan import make_plan
from steplab.trl.grpo import plan_grpo
from steplab_ui.shell.state import control_key

PAGE = "app_pages/grpo.py"
COURSE = presets()["course_default"].setup()


def expected(**values):
    """The engine's plan of the course setup with `values` (the page plans its evaluation as TRL checks it)."""
    return plan_grpo(COURSE.replace(**values))


def card(at, lang: str, name: str) -> str:
    return metrics(at)[catalogue(lang)[f"grpo.card.{name}"]]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_course_setup_as_grpo_in_both_languages(lang):
    at = run(PAGE, lang=lang)
    plan = expected()
    assert card(at, lang, "updates") == fmt_int(plan.trainer.max_steps)
    assert card(at, lang, "rounds") == fmt_int(plan.generation_rounds)
    assert card(at, lang, "completions") == fmt_int(plan.completions_per_update)
    # the first event is a generation round, told in words; the console starts with the Trainer's block
    timeline = grpo_run.build_grpo_timeline(plan)
    assert timeline.frames[0].is_generation
    words = [m.value for m in at.markdown]
    assert any(text.startswith(t(lang, "grpo.say.generation", round="1", epoch=1, first="1",
                                 last=fmt_int(plan.unique_prompts_per_round), u=fmt_int(plan.unique_prompts_per_round),
                                 g=fmt_int(8), gb=fmt_int(plan.generation_batch_size), p="1", count=1,
                                 s=fmt_int(plan.steps_per_generation), b=fmt_int(COURSE.per_device_train_batch_size))
                           ) for text in words), words
    console = consoles(at)[-1]
    assert f"  Num examples = {fmt_int(COURSE.num_samples)}" in console
    assert f"= {fmt_int(plan.completions_per_update)}" in console
    assert not at.error


def test_a_hand_edited_link_sets_the_grpo_fields_and_the_event():
    at = run(PAGE, lang="en", num_generations="4", num_iterations="2", steps_per_generation="2", grpo_frame="4")
    plan = expected(num_generations=4, num_iterations=2, steps_per_generation=2)
    assert card(at, "en", "round") == t("en", "grpo.card.round_value", u=fmt_int(plan.unique_prompts_per_round),
                                        g="4", gb=fmt_int(plan.generation_batch_size))
    assert card(at, "en", "updates") == fmt_int(plan.trainer.max_steps)
    # event 4: after the generation and S = 2 micro-batches, the first slice again: the second of μ = 2 passes
    frame = grpo_run.build_grpo_timeline(plan).frames[3]
    assert (frame.round, frame.slice, frame.iteration) == (0, 0, 1)
    assert any(t("en", "grpo.say.reused", i="2") in m.value for m in at.markdown)
    assert (at.number_input(key=control_key("num_generations")).value,
            at.number_input(key=control_key("num_iterations")).value) == (4, 2)


def test_presenter_view_draws_the_picture_without_the_settings():
    at = run(PAGE, lang="en", presenter="1", grpo_frame="9")
    assert not at.main.number_input and at.metric  # the sidebar keeps the setup; the page draws no settings
    assert [c.value for c in at.caption if c.value.startswith("Event ")] == [
        t("en", "grpo.position", position="9", count=fmt_int(len(grpo_run.build_grpo_timeline(expected()).frames)))]


def test_a_grpo_control_writes_the_link():
    at = run(PAGE, lang="en")
    at.number_input(key=control_key("num_generations")).set_value(4).run()
    assert not at.exception
    assert at.query_params["num_generations"] == ["4"] or at.query_params["num_generations"] == "4"
    assert card(at, "en", "rounds") == fmt_int(expected(num_generations=4).generation_rounds)


@pytest.mark.parametrize(("lang", "values", "fix"), [
    ("zh", {"num_generations": "3", "eval_strategy": "no"}, "trl.fix.divisible"),  # Gb = 4 × 1 × 8 = 32: not by 3
    ("zh", {"num_generations": "3", "eval_strategy": "steps"}, "trl.fix.eval_batch"),  # TRL checks the eval batch
    # (8 × 1) first
    ("en", {"num_generations": "1"}, "trl.fix.at_least_two"),
    ("en", {"steps_per_generation": "2", "generation_batch_size": "16"}, "trl.fix.both_set"),
])
def test_trls_refusal_is_said_not_raised(lang, values, fix):
    at = run(PAGE, lang=lang, **values)
    assert [e.value for e in at.error] == [t(lang, "grpo.refused")]
    with pytest.raises(Exception) as refusal:  # the engine's refusal, word for word on the page
        expected(**{name: value if name.endswith("_strategy") else int(value) for name, value in values.items()})
    assert consoles(at) == [f"{refusal.value.error_type}: {refusal.value.message}"]
    assert any(m.value == refusal.value.fix.get(lang) for m in at.markdown)
    assert refusal.value.fix.key == fix
    assert not at.metric  # no plan, no numbers


def test_bad_link_values_keep_the_page_working():
    at = run(PAGE, lang="en", num_generations="many", grpo_frame="999999")
    notices = [w.value for w in at.warning] + [i.value for i in at.info]
    assert any("num_generations=many" in text for text in notices), notices
    assert card(at, "en", "updates") == fmt_int(expected().trainer.max_steps)  # the default G kept


def test_too_few_prompts_for_a_round_says_so():
    """Fewer prompts than one round: the dataloader is empty; without max_steps the Trainer refuses (in its words,
    with why in ours), with max_steps it runs no update, which the page says."""
    at = run(PAGE, lang="en", num_samples="3")
    assert [e.value for e in at.error] == [t("en", "error.refusal")]
    assert t("en", "trl.fix.no_round", prompts=4, n=3) in [m.value for m in at.markdown]  # U = 32 ÷ 8
    at = run(PAGE, lang="en", num_samples="3", max_steps="5")
    plan = expected(num_samples=3, max_steps=5)
    assert plan.trainer.optimizer_steps == 0
    assert [i.value for i in at.info if i.value.startswith("Too few prompts")] == [
        t("en", "grpo.no_rounds", u=plan.unique_prompts_per_round, n=3)]


def test_grpoconfigs_own_defaults_are_one_click_away():
    """GRPOConfig's learning rate and logging steps (TRL's, not TrainingArguments') through the one writer: the
    sidebar, the link and the plan follow."""
    at = run(PAGE, lang="en")
    at.button(key="grpo_use_defaults").click().run()
    assert not at.exception
    assert (at.query_params["learning_rate"], at.query_params["logging_steps"]) in ((["1e-06"], ["10"]), ("1e-06", "10"))
    plan = expected(learning_rate=1e-6, logging_steps=10)
    assert metrics(at)[t("en", "grpo.count.lr")] == "1.00e-06"
    assert card(at, "en", "updates") == fmt_int(plan.trainer.max_steps)
    assert not [b for b in at.button if b.key == "grpo_use_defaults"]  # the setup has them now


@pytest.mark.parametrize(("lang", "trainer_class"), [("zh", "GRPOTrainer"), ("en", "DPOTrainer")])
def test_other_pages_say_they_count_the_plain_trainer(lang, trainer_class):
    """A link naming a TRL trainer class on a page that counts the Trainer: said, the plain Trainer's count shown,
    and for GRPO the way to its page."""
    at = run("app_pages/calculator.py", lang=lang, trainer_class=trainer_class)
    key = "plan.trainer_class_grpo" if trainer_class == "GRPOTrainer" else "plan.trainer_class"
    assert [i.value for i in at.info][:1] == [t(lang, key, name=trainer_class)]
    assert metrics(at)[t(lang, "card.total_steps")] == fmt_int(make_plan(COURSE).max_steps)
    links = [str(link.proto.page) for link in at.main.get("page_link")] + [m.value for m in at.main.markdown]
    assert any("grpo" in link for link in links) == (trainer_class == "GRPOTrainer"), links
