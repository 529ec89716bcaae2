"""Lesson 11's GRPO side: its scenarios, its predict, the self-check's `grpo` questions and their class polls, all
answered by `steplab.trl.plan.plan_trl` (which `tests/test_trl_vs_steplab.py` holds to real TRL runs).

The expected values here are `plan_trl`'s on a `TrainingSetup` built by hand from the same
numbers, not the lesson's or the bank's own route (`grpo_counting`), so that route is checked, not repeated.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml

from steplab.classroom import polls
from steplab.errors import TrainerRefusal
from steplab.i18n import LANGUAGES, Text
from steplab.teaching import grpo_counting, quiz
from steplab.teaching.lessons import LESSONS_DIR, LessonError, load_lessons, parse_lesson
from steplab.trainer.setup import TrainingSetup
from steplab.trl.plan import plan_trl

ROOT = Path(__file__).resolve().parents[1]
LESSON = next(lesson for lesson in load_lessons() if lesson.number == 11)
RAW = yaml.safe_load((LESSONS_DIR / "11_rl_steps.yaml").read_text(encoding="utf-8"))
GRPO_SPECS = [spec for spec in quiz.load_bank() if spec.kind == "grpo"]


def by_hand(values: dict) -> object:
    """`plan_trl` on a `GRPOTrainer` setup made by hand from the same numbers."""
    return plan_trl(TrainingSetup(**values, trainer_class="GRPOTrainer"))


def test_the_lesson_has_grpo_scenarios_a_grpo_predict_and_a_grpo_widget():
    grpo = {name for name, spec in RAW["scenarios"].items() if "grpo" in spec}
    assert grpo and all(isinstance(LESSON.scenarios[name], grpo_counting.GrpoSetup) for name in grpo)
    kinds = [(block.kind, block.data.get("widget"), block.data.get("scenario")) for block in LESSON.blocks]
    assert ("widget", "grpo", "grpo_course") in kinds and ("predict", None, "grpo_course") in kinds


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_grpo_placeholder_resolves_to_plan_trls_number(lang):
    """Every `{grpo scenario.quantity}` of the lesson, in both languages, is what plan_trl gives for it."""
    from steplab.i18n import PLACEHOLDER

    seen = 0
    for block in LESSON.blocks:
        texts = [block.data.get(lang)] + [block.data[k][lang] for k in ("caption", "prompt", "reveal") if k in block.data]
        for text in filter(None, texts):
            filled = LESSON.fill(text, lang)
            assert "{" not in filled and "}" not in filled
            for match in PLACEHOLDER.finditer(text):
                head, _, name = match.group(1).partition(".")
                if "grpo" not in RAW["scenarios"].get(head, {}):
                    continue
                plan = by_hand(RAW["scenarios"][head]["grpo"])
                expected = {"max_steps": plan.trainer.max_steps, "num_update_steps_per_epoch":
                            plan.trainer.num_update_steps_per_epoch, "micro_batches_per_epoch":
                            plan.trainer.micro_batches_per_epoch}.get(name)
                if expected is None and hasattr(plan, name):
                    expected = getattr(plan, name)
                if expected is None:
                    expected = getattr(plan.setup, name)
                assert LESSON.value(match.group(1)) == expected, match.group(1)
                seen += 1
    assert seen > 30


def test_the_predicts_answer_is_plan_trls_and_its_arithmetic_holds():
    """The course's question (N prompts, B, P processes, GA, G, epochs from the scenario): the answer is plan_trl's
    steps, and the reveal's chain holds: Gb = B·P·S, U = Gb / G, ⌊N / U⌋ rounds, rounds·μ·S micro-batches, ÷ GA."""
    (block,) = [b for b in LESSON.blocks if b.kind == "predict" and b.data["scenario"] == "grpo_course"]
    values = RAW["scenarios"]["grpo_course"]["grpo"]
    plan = by_hand(values)
    assert LESSON.answer(block) == plan.trainer.max_steps == plan.trainer.optimizer_steps
    n, b, p, ga, g = (values[k] for k in ("num_samples", "per_device_train_batch_size", "world_size",
                                          "gradient_accumulation_steps", "num_generations"))
    gb = b * p * ga  # S defaults to GA
    assert gb % g == 0 and plan.generation_batch_size == gb  # TRL takes these numbers: Gb divides by G
    u = gb // g
    assert plan.unique_prompts_per_round == u and plan.rounds_per_epoch == n // u
    assert plan.trainer.micro_batches_per_epoch == (n // u) * 1 * ga
    assert plan.trainer.max_steps == math.ceil((n // u) * ga / ga) * values["num_train_epochs"]
    assert plan.num_examples == n and plan.completions_per_update == b * ga * p
    for lang in LANGUAGES:  # the reveal names the chain's numbers, and the prompt does not give the answer away
        reveal = LESSON.say(block.text("reveal"), lang)
        for number in (gb, u, n // u, n - (n // u) * u, plan.trainer.max_steps):
            assert f"{number:,}" in reveal
        assert f"{plan.trainer.max_steps:,}" not in LESSON.say(block.text("prompt"), lang)


def test_the_default_epochs_are_the_trainers():
    default = by_hand(RAW["scenarios"]["grpo_default_epochs"]["grpo"])
    assert LESSON.value("grpo_default_epochs.num_train_epochs") == TrainingSetup().num_train_epochs
    assert LESSON.value("grpo_default_epochs.max_steps") == default.trainer.max_steps


@pytest.mark.parametrize(("change", "problem"), [
    ({"num_generations": 9}, "must be divisible by num_generations"),
    ({"steps_per_generation": 2, "generation_batch_size": 64}, "can not be both"),
    ({"num_generatoins": 8}, "does not know this field"),
    ({"world_size": 0}, "world_size"),
])
def test_a_grpo_scenario_trl_refuses_is_named(change, problem):
    data = yaml.safe_load((LESSONS_DIR / "11_rl_steps.yaml").read_text(encoding="utf-8"))
    data["scenarios"]["grpo_course"]["grpo"].update(change)
    with pytest.raises(LessonError, match=f"scenarios.grpo_course.*{problem}"):
        parse_lesson(data, "11_rl_steps.yaml")


def test_a_grpo_scenario_only_goes_to_a_grpo_widget():
    data = yaml.safe_load((LESSONS_DIR / "11_rl_steps.yaml").read_text(encoding="utf-8"))
    data["blocks"].insert(0, {"kind": "widget", "widget": "calculator", "scenario": "grpo_course"})
    with pytest.raises(LessonError, match="grpo run: use it in a grpo widget"):
        parse_lesson(data, "11_rl_steps.yaml")
    data["scenarios"]["plain"] = {"set": {"num_samples": 100}}
    data["blocks"][0] = {"kind": "widget", "widget": "grpo", "scenario": "plain"}
    with pytest.raises(LessonError, match="needs a grpo scenario"):
        parse_lesson(data, "11_rl_steps.yaml")


def test_each_worked_line_ends_with_plan_trls_number_over_generated_runs():
    """The arithmetic the reveal, the self-check and the class show: each line's result is plan_trl's for its key,
    over runs with S unset or set, mu above one, epochs whole and fractional, max_steps and every release TRL takes."""
    import random

    from steplab.trl.grpo import TRL_PROFILES

    rng = random.Random(32)
    checked = 0
    while checked < 150:
        values = {"num_samples": rng.randint(1, 3000), "per_device_train_batch_size": rng.choice([1, 2, 4, 8]),
                  "world_size": rng.choice([1, 2, 3, 7]), "gradient_accumulation_steps": rng.choice([1, 2, 3, 4]),
                  "num_generations": rng.choice([2, 4, 8]), "num_iterations": rng.choice([1, 1, 2, 3]),
                  "num_train_epochs": rng.choice([1, 2, 0.5, 1.7]), "trainer": rng.choice(TRL_PROFILES)}
        if rng.random() < 0.4:
            values["steps_per_generation"] = rng.choice([1, 2, 4, 8])
        if rng.random() < 0.2:
            values["max_steps"] = rng.randint(1, 50)
        try:
            plan = by_hand(values)
        except TrainerRefusal:
            continue
        expected = {"generation_batch_size": plan.generation_batch_size,
                    "unique_prompts_per_round": plan.unique_prompts_per_round,
                    "rounds_per_epoch": plan.rounds_per_epoch,
                    "micro_batches_per_epoch": plan.trainer.micro_batches_per_epoch,
                    "num_update_steps_per_epoch": plan.trainer.num_update_steps_per_epoch,
                    "max_steps": plan.trainer.max_steps, "generation_rounds": plan.generation_rounds,
                    "completions_per_update": plan.completions_per_update}
        lines = {line.key: line.formula for line in grpo_counting.worked(grpo_counting.plan_of(values))}
        for key, value in expected.items():
            assert lines[key].rsplit("= ", 1)[-1] == f"{value:,}", (values, key, lines[key])
        assert lines["optimizer_steps"].startswith(f"{plan.trainer.optimizer_steps:,}")
        checked += 1


# --------------------------------------------------------------------------- the self-check's grpo questions


def test_the_bank_has_grpo_questions_for_lesson_11_and_the_check_draws_them():
    assert len(GRPO_SPECS) >= 3 and {spec.lesson for spec in GRPO_SPECS} == {11}
    check = next(block for block in LESSON.blocks if block.kind == "check")
    drawn = [spec for spec in quiz.load_bank() if spec.lesson == 11][: check.data["count"]]
    assert any(spec.kind == "grpo" for spec in drawn) and any(spec.kind == "choice" for spec in drawn)


@pytest.mark.parametrize("spec", GRPO_SPECS, ids=[spec.id for spec in GRPO_SPECS])
def test_a_grpo_questions_answer_is_plan_trls_over_seeded_variants(spec):
    seen = set()
    for seed in range(48):
        question = quiz.generate(spec, seed)
        values = {**dict(spec.setup), **dict(question.values)}
        plan = by_hand(values)
        expected = {"max_steps": plan.trainer.max_steps}.get(spec.answer, None)
        expected = getattr(plan, spec.answer) if expected is None else expected
        assert question.answer == expected, (seed, values)
        seen.add(question.values)
        right, wrong = quiz.grade(question, f"{expected:,}"), quiz.grade(question, expected + 1)
        assert right.correct and not wrong.correct and wrong.status == "wrong"
        assert right.worked[-1].formula.endswith(f"= {expected:,}"), right.worked[-1].formula
        for lang in LANGUAGES:
            assert "{" not in question.prompt.get(lang) and right.message.get(lang)
    assert len(seen) > 8  # the seeds draw different runs


def test_a_grpo_question_a_run_trl_refuses_is_the_authors_mistake():
    item = {"id": "x-grpo", "lesson": 11, "kind": "grpo", "answer": "max_steps",
            "setup": {"num_samples": 100, "per_device_train_batch_size": 4, "num_generations": 8},
            "prompt": {"zh": "几步？", "en": "How many steps?"}, "hint": {"zh": "想想", "en": "Think"}}
    with pytest.raises(quiz.QuizError, match="cannot be planned.*divisible by num_generations"):
        quiz.parse_bank([item])
    with pytest.raises(quiz.QuizError, match="unknown GRPO quantity"):
        quiz.parse_bank([{**item, "setup": {"num_samples": 100}, "answer": "eval_count"}])
    with pytest.raises(quiz.QuizError, match="unknown field"):
        quiz.parse_bank([{**item, "setup": {"num_samples": 100, "rollout_batch_size": 8}}])
    with pytest.raises(TrainerRefusal):
        grpo_counting.plan_of(item["setup"])


# --------------------------------------------------------------------------- in class


@pytest.mark.parametrize("spec", GRPO_SPECS, ids=[spec.id for spec in GRPO_SPECS])
def test_a_grpo_question_is_a_class_poll_that_round_trips_and_grades_as_the_self_check(spec):
    assert spec.id in polls.bank_choices()
    poll = polls.poll_from_bank(spec.id, 7)
    assert poll.to_dict() == {"kind": "bank", "question": spec.id, "seed": 7}  # the stored form every bank poll has
    assert polls.Poll.from_dict(poll.to_dict()) == poll
    question = quiz.generate(spec, 7)
    reveal = polls.reveal(poll)
    assert polls.is_numeric(poll) and polls.whole_answer(poll) and reveal.answer == question.answer
    assert polls.check(poll, f"{question.answer:,}") == question.answer and polls.is_correct(poll, question.answer)
    assert [line.formula for line in reveal.worked] == [line.formula for line in quiz.grade(question, 0).worked]
    assert isinstance(polls.prompt(poll), Text) and polls.prompt(poll) == question.prompt
    with pytest.raises(polls.PollAnswerError):
        polls.check(poll, "2.5")


def test_a_grpo_steps_poll_reveals_grpos_wrong_rules_and_matches_the_rooms_answers():
    poll = polls.poll_from_bank("l11-grpo-steps", 3)
    question = quiz.generate(quiz.bank_by_id()["l11-grpo-steps"], 3)
    values = {**dict(question.spec.setup), **dict(question.values)}
    plan = by_hand(values)
    reveal = polls.reveal(poll)
    traps = {trap.value: trap for trap in reveal.traps}
    assert float(values["num_samples"]) in traps  # "steps equal my dataset size"
    as_prompts = float(plan_trl(plan.setup.replace(trainer_class="Trainer")).max_steps)  # the Trainer's count, B taken as prompts
    assert as_prompts in traps or as_prompts == reveal.answer
    assert reveal.answer not in traps
    given = polls.wrong_answers(poll, (float(values["num_samples"]),) * 3 + (reveal.answer, 1.0))
    assert given[0].value == values["num_samples"] and given[0].count == 3 and given[0].trap is not None
    for lang in LANGUAGES:
        assert all(trap.why.get(lang) for trap in reveal.traps)


# --------------------------------------------------------------------------- the page


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_lesson_page_draws_the_grpo_widget_with_plan_trls_numbers(lang):
    """Lesson 11 on the page, predictions answered: the GRPO widget's cards are plan_trl's for the scenario, then
    for the learner's G and S; a G that TRL refuses is said in TRL's words, nothing else drawn."""
    from streamlit.testing.v1 import AppTest

    from steplab.i18n import catalogue, fmt_int
    from steplab_ui.views.lesson import revealed_key

    words = catalogue(lang)
    index = next(i for i, b in enumerate(LESSON.blocks) if b.data.get("widget") == "grpo")
    key = f"{LESSON.id}_{index}"
    at = AppTest.from_file(str(ROOT / "app_pages" / "lessons.py"), default_timeout=90)
    at.query_params["lesson"] = LESSON.id
    at.query_params["lang"] = lang
    for i, block in enumerate(LESSON.blocks):
        if block.kind == "predict":
            at.session_state[revealed_key(f"{LESSON.id}_{i}")] = True
    at.run()
    assert not at.exception, [e.value for e in at.exception]

    def cards() -> dict[str, str]:
        return {metric.label: metric.value for metric in at.metric}

    values = dict(RAW["scenarios"]["grpo_course"]["grpo"])
    plan = by_hand(values)
    shown = cards()
    assert shown[words["grpo.quantity.max_steps"]] == fmt_int(plan.trainer.max_steps)
    assert shown[words["grpo.quantity.unique_prompts_per_round"]] == fmt_int(plan.unique_prompts_per_round)
    assert shown[words["grpo.quantity.rounds_per_epoch"]] == fmt_int(plan.rounds_per_epoch)
    at.slider(key=f"{key}_num_generations").set_value(16).run()
    plan = by_hand({**values, "num_generations": 16})
    assert cards()[words["grpo.quantity.max_steps"]] == fmt_int(plan.trainer.max_steps)
    at.toggle(key=f"{key}_s_follows_ga").set_value(False).run()
    at.slider(key=f"{key}_steps_per_generation").set_value(8).run()
    plan = by_hand({**values, "num_generations": 16, "steps_per_generation": 8})
    assert cards()[words["grpo.quantity.generation_rounds"]] == fmt_int(plan.generation_rounds)
    assert any(words["grpo.note.round_feeds_updates"].split("{")[0][:8] in info.value for info in at.info)
    at.slider(key=f"{key}_num_generations").set_value(9).run()
    with pytest.raises(TrainerRefusal) as refusal:
        by_hand({**values, "num_generations": 9, "steps_per_generation": 8})
    assert any(refusal.value.message in error.value for error in at.error)
    # issue 39: TRL's words are English; the reason and the allowed values follow in the reader's language
    assert refusal.value.fix is not None and refusal.value.fix.get(lang) in [e.value for e in at.markdown]
    assert words["grpo.quantity.max_steps"] not in cards()
    assert not at.exception


def test_the_widget_says_why_too_few_prompts_are_refused():
    """Fewer prompts than a round takes: the Trainer's refusal in its words (plan_trl raises it too), and the
    widget's note saying the sampler makes no round."""
    values = {**RAW["scenarios"]["grpo_course"]["grpo"], "num_samples": 10}
    with pytest.raises(TrainerRefusal) as refusal:
        by_hand(values)
    view = grpo_counting.widget_view(values)
    assert refusal.value.message in view.refusal.get("en") and not view.results
    (note,) = view.notes
    assert note.key == "grpo.note.no_round" and dict(note.values)["per_round"] == by_hand(
        {**values, "num_samples": 1000}).unique_prompts_per_round


def test_a_given_generation_batch_size_says_how_s_follows_from_it():
    """Gb set directly (S unset): the first worked line says S = Gb ÷ (B × P) with the run's own numbers."""
    plan = by_hand({"num_samples": 1600, "per_device_train_batch_size": 4, "world_size": 2,
                    "gradient_accumulation_steps": 8, "generation_batch_size": 64})
    first = grpo_counting.worked(plan)[0]
    assert first.formula == "generation_batch_size = 64"
    assert plan.steps_per_generation == 8
    assert "64 ÷ (4 × 2) = 8" in first.note.get("en") and "64 ÷ (4 × 2) = 8" in first.note.get("zh")
    default = grpo_counting.worked(by_hand({"num_samples": 1600, "per_device_train_batch_size": 4,
                                            "gradient_accumulation_steps": 8}))[0]
    assert "÷" not in default.note.get("en")
