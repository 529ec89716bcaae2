"""The question bank validates; every generated question agrees with the engine; grading survives any response."""

from __future__ import annotations

import itertools
import math
import random
import re
from collections import Counter
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from steplab.errors import SetupError, TrainerRefusal
from steplab.i18n import Message
from steplab.i18n import whole as tidy
from steplab.teaching import quiz
from steplab.teaching.presets import presets
from steplab.trainer.events import events
from steplab.trainer.plan import make_plan
from steplab.trainer.profiles import PROFILES
from steplab.trainer.quantities import format_quantity, quantity
from steplab.trainer.setup import setup_from_mapping

BANK = quiz.load_bank()
RAW = {item["id"]: item for item in yaml.safe_load(quiz.BANK_FILE.read_text(encoding="utf-8"))}
NUMERIC = [s for s in BANK if s.kind == "numeric"]
CHOICE = [s for s in BANK if s.kind == "choice"]
SLIDERS = [s for s in BANK if s.kind == "sliders"]
CJK = re.compile(r"[\u4e00-\u9fff]")
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def independent_setup(spec: quiz.QuestionSpec, drawn: dict) -> dict:
    """The question's setup rebuilt from the raw YAML, the preset file and the drawn values, not via quiz.py."""
    raw = dict(RAW[spec.id].get("setup") or {})
    preset = raw.pop("preset", None)
    values = {**(presets()[preset].values if preset else {}), **raw, **drawn}
    return values


def hand_count(values: dict, name: str) -> int | None:
    """The chapter's hand arithmetic for a single-GPU modern Trainer (ceil everywhere), where it applies."""
    if values.get("world_size", 1) != 1 or values.get("trainer", "hf-5") not in ("hf-5", "hf-4.57"):
        return None
    if values.get("dataloader_drop_last") or values.get("max_steps", -1) > 0:
        return None
    n, b = values["num_samples"], values["per_device_train_batch_size"]
    g, e = values.get("gradient_accumulation_steps", 1), values.get("num_train_epochs", 3)
    micro = math.ceil(n / b)
    per_epoch = max(math.ceil(micro / g), 1)
    return {"micro_batches_per_epoch": micro, "num_update_steps_per_epoch": per_epoch,
            "max_steps": math.ceil(e * per_epoch), "total_train_batch_size": b * g}.get(name)


# --------------------------------------------------------------------------- the bank


def test_bank_size_and_lessons():
    assert len(BANK) >= 30
    per_lesson = Counter(s.lesson for s in BANK)
    assert set(per_lesson) == set(range(1, 12))
    assert min(per_lesson.values()) >= 3, per_lesson
    assert len({s.id for s in BANK}) == len(BANK)
    assert {s.kind for s in BANK} == set(quiz.KINDS)


@pytest.mark.parametrize("spec", BANK, ids=lambda s: s.id)
def test_every_text_in_both_languages(spec):
    texts = [spec.prompt, spec.hint, *(o.text for o in spec.options)] + ([spec.explanation] if spec.explanation else [])
    for text in texts:
        assert text.zh.strip() and text.en.strip()
        if text.zh != text.en:  # an option may be just a field name, the same in both languages
            assert CJK.search(text.zh), f"{spec.id}: Chinese text without Chinese: {text.zh!r}"
        assert not CJK.search(text.en), f"{spec.id}: English text with Chinese: {text.en!r}"
    for seed in range(6):
        question = quiz.generate(spec, seed)
        shown = [question.prompt, question.hint, *question.options] + ([question.explanation] if question.explanation else [])
        for text in shown:
            for lang in ("zh", "en"):
                assert "{" not in text.get(lang) and "}" not in text.get(lang)
            # full-width punctuation next to Chinese characters
            assert not re.search(r"[\u4e00-\u9fff][,:;!?]|[,:;!?][\u4e00-\u9fff]", text.zh), text.zh


def test_numeric_answers_are_never_literals_in_the_yaml():
    for spec in NUMERIC:
        raw = RAW[spec.id]
        assert isinstance(raw["answer"], str) and raw["answer"] == spec.answer
        assert "{" + spec.answer + "}" not in raw["prompt"]["en"]


# --------------------------------------------------------------------------- generation agrees with the engine


@FAST
@given(seed=st.integers(min_value=0, max_value=2**40), index=st.integers(min_value=0, max_value=len(NUMERIC) - 1))
def test_numeric_answer_agrees_with_the_engine(seed, index):
    spec = NUMERIC[index]
    question = quiz.generate(spec, seed)
    drawn = dict(question.values)
    params = RAW[spec.id].get("params") or {}
    assert set(drawn) == set(params) and all(drawn[k] in params[k] for k in drawn)
    values = independent_setup(spec, drawn)
    plan = make_plan(setup_from_mapping(values)[0])
    assert question.answer == quantity(plan, spec.answer)
    hand = hand_count(values, spec.answer)
    if hand is not None:
        assert question.answer == hand
    for name in drawn:
        if "{" + name + "}" in RAW[spec.id]["prompt"]["en"]:
            assert format_quantity(getattr(plan.setup, name)) in question.prompt.en
    assert quiz.generate(spec, seed) == question  # the seed alone decides


@FAST
@given(seed=st.integers(min_value=0, max_value=2**40), index=st.integers(min_value=0, max_value=len(CHOICE) - 1))
def test_choice_marks_the_right_options(seed, index):
    spec = CHOICE[index]
    question = quiz.generate(spec, seed)
    raw_options = RAW[spec.id]["options"]
    assert len(question.options) == len(raw_options)
    by_text = {opt.text.en: opt.correct for opt in spec.options}
    assert len(question.correct) == sum(o.get("correct", False) for o in raw_options)
    if all("{" not in o["en"] for o in raw_options):
        for shown, text in enumerate(question.options):
            assert by_text[text.en] == (shown in question.correct)
    assert quiz.grade(question, sorted(question.correct) if question.multiple else next(iter(question.correct))).correct


@FAST
@given(seed=st.integers(min_value=0, max_value=2**40), index=st.integers(min_value=0, max_value=len(SLIDERS) - 1))
def test_sliders_solution_is_right_and_start_is_not(seed, index):
    spec = SLIDERS[index]
    question = quiz.generate(spec, seed)
    solution = dict(question.solution)
    feedback = quiz.grade(question, solution)
    assert feedback.correct and feedback.status == "correct"
    values = {**independent_setup(spec, dict(question.values)), **solution}
    plan = make_plan(setup_from_mapping(values)[0])
    assert all(math.isclose(quantity(plan, t.quantity), t.value) for t in question.targets if t.op == "equals")
    start = {c.field: c.start for c in question.controls}
    assert not quiz.grade(question, start).correct
    raw_target = RAW[spec.id]["target"]
    allowed = raw_target["equals"] if isinstance(raw_target["equals"], list) else [raw_target["equals"]]
    assert question.targets[0].value in allowed
    if "{target}" in RAW[spec.id]["prompt"]["en"]:
        assert format_quantity(tidy(question.targets[0].value)) in question.prompt.en


# --------------------------------------------------------------------------- grading


def course_total() -> quiz.Question:
    spec = next(s for s in NUMERIC if s.answer == "max_steps" and s.id == "l4-total-steps")
    for seed in range(100):
        question = quiz.generate(spec, seed)
        if question.answer >= 1000:
            return question
    raise AssertionError("no draw with a four-digit answer")


def test_numeric_right_in_every_spelling():
    question = course_total()
    answer = question.answer
    for response in (answer, float(answer), str(answer), f"{answer:,}", f" {answer} ", f"{answer}.0",
                     str(answer).translate(str.maketrans("0123456789", "０１２３４５６７８９"))):
        feedback = quiz.grade(question, response)
        assert feedback.correct and feedback.status == "correct", response
        assert feedback.hint is None
        assert any(line.key == "max_steps" and format_quantity(answer) in line.formula for line in feedback.worked)


def test_numeric_wrong_gets_the_hint_and_the_direction():
    question = course_total()
    low = quiz.grade(question, question.answer - 1)
    high = quiz.grade(question, question.answer + 1)
    assert (low.status, high.status) == ("wrong", "wrong")
    assert low.hint == question.hint and high.hint == question.hint
    assert "too low" in low.message.en and "too high" in high.message.en
    assert "偏小" in low.message.zh and "偏大" in high.message.zh
    assert low.worked  # the arithmetic is there (the page shows it folded away)


HOSTILE = ["", "   ", "abc", "1/3", "1,6", "1,60,0", "nan", "NaN", "inf", "-inf", "Infinity", "1e309", "9" * 65,
           "١٥٠", "一百五十", "１５０ｘ", "0x96", "1_5_0x", "²", "150 steps", None, True, False, float("nan"),
           float("inf"), -float("inf"), 10**400, [], [150], {}, {"x": 1}, object(), b"150", "1e99999"]


def _response_id(response: object) -> str:
    """A stable id (parallel workers must collect the same names): an object()'s repr holds its address."""
    return "object()" if type(response) is object else repr(response)


@pytest.mark.parametrize("response", HOSTILE, ids=_response_id)
def test_hostile_numeric_responses_are_graded_not_raised(response):
    question = course_total()
    feedback = quiz.grade(question, response)
    assert not feedback.correct
    assert feedback.status in ("invalid", "wrong")
    assert feedback.message.zh and feedback.message.en


def test_not_a_number_says_so():
    question = course_total()
    for response in ("abc", "١٥٠", "nan"):
        feedback = quiz.grade(question, response)
        assert feedback.status == "invalid" and "not a number" in feedback.message.en
    assert quiz.grade(question, "").status == "invalid"
    assert "too large" in quiz.grade(question, "1e309").message.en
    assert "too long" in quiz.grade(question, "1" * 100).message.en


ONE_OF_EACH = [quiz.generate(spec, 7) for spec in (NUMERIC[0], CHOICE[0], SLIDERS[0])]


@settings(max_examples=150, deadline=None)
@given(response=st.one_of(
    st.text(max_size=80), st.floats(allow_nan=True, allow_infinity=True), st.integers(),
    st.none(), st.booleans(), st.binary(max_size=20), st.lists(st.integers(), max_size=5),
    st.dictionaries(st.text(max_size=10), st.integers(), max_size=3)))
def test_any_response_to_any_kind_never_raises(response):
    for question in ONE_OF_EACH:
        spec = question.spec
        feedback = quiz.grade(question, response)
        assert isinstance(feedback, quiz.Feedback)
        assert isinstance(feedback.message, Message)
        if feedback.correct:
            assert spec.kind == "numeric" and float(response) == question.answer


def test_choice_responses():
    question = quiz.generate(next(s for s in CHOICE if not s.multiple), 3)
    right = next(iter(question.correct))
    wrong = next(i for i in range(len(question.options)) if i not in question.correct)
    assert quiz.grade(question, right).correct
    assert quiz.grade(question, [right]).correct
    feedback = quiz.grade(question, wrong)
    assert feedback.status == "wrong" and feedback.hint == question.hint and feedback.explanation
    for bad in (len(question.options), -1, 10**30, True, "0", 1.5, None, [], [right, right, right, right, right],
                [str(right)], {right: 1}):
        feedback = quiz.grade(question, bad)
        assert not feedback.correct and feedback.status == "invalid", bad


def test_multiple_choice_needs_every_right_option():
    spec = next(s for s in CHOICE if s.multiple)
    question = quiz.generate(spec, 1)
    right = sorted(question.correct)
    assert quiz.grade(question, right).correct
    assert quiz.grade(question, set(right)).correct
    partly = quiz.grade(question, right[:1])
    assert partly.status == "wrong" and "Partly" in partly.message.en
    assert not quiz.grade(question, list(range(len(question.options)))).correct


def test_sliders_responses():
    question = quiz.generate(next(s for s in SLIDERS if s.id == "l3-keep-32"), 0)
    control = question.controls[0]
    solution = dict(question.solution)
    assert quiz.grade(question, {control.field: str(solution[control.field])}).correct
    wrong = quiz.grade(question, {control.field: control.start})
    assert wrong.status == "wrong" and wrong.hint and wrong.extra and "✗" in wrong.extra[0].en
    assert any(line.key == "total_train_batch_size" for line in wrong.worked)
    for bad in ({}, {control.field: control.high + 1}, {control.field: 2.5}, {control.field: "x"},
                {control.field: 4, "world_size": 2}, {"nope": 1}, [4], 4, None):
        feedback = quiz.grade(question, bad)
        assert not feedback.correct and feedback.status == "invalid", bad


def test_float_answers_accept_the_shown_precision():
    spec = next(s for s in NUMERIC if s.id == "l6-max-steps-wins")
    question = next(q for q in (quiz.generate(spec, seed) for seed in range(50)) if q.answer == 2.6)
    assert quiz.grade(question, "2.6").correct
    assert not quiz.grade(question, "3").correct


def test_draw_respects_the_lessons_and_avoids_a_repeat():
    rng = random.Random(1)
    for _ in range(30):
        question = quiz.draw(BANK, rng, lessons={3, 7})
        assert question.lesson in (3, 7)
    only = [s for s in BANK if s.lesson == 1]
    for _ in range(20):
        assert quiz.draw(only, rng, avoid=only[0].id).id != only[0].id
    assert quiz.draw(BANK, rng, lessons=set()) is None


# --------------------------------------------------------------------------- an author's mistakes


GOOD = {"id": "q", "lesson": 2, "kind": "numeric", "setup": {"preset": "course_default"},
        "params": {"per_device_train_batch_size": [2, 4]}, "answer": "max_steps",
        "prompt": {"zh": "批 {per_device_train_batch_size}，总步数？", "en": "Batch {per_device_train_batch_size}: total?"},
        "hint": {"zh": "提示", "en": "hint"}}
CHOICE_GOOD = {"id": "c", "lesson": 1, "kind": "choice", "prompt": {"zh": "问", "en": "Q"},
               "hint": {"zh": "提示", "en": "hint"}, "explanation": {"zh": "因为", "en": "because"},
               "options": [{"zh": "对", "en": "right", "correct": True}, {"zh": "错", "en": "wrong"}]}
SLIDER_GOOD = {"id": "s", "lesson": 3, "kind": "sliders", "setup": {"preset": "course_default"},
               "controls": [{"field": "gradient_accumulation_steps", "min": 1, "max": 32}],
               "target": {"quantity": "total_train_batch_size", "equals": 64},
               "prompt": {"zh": "调到 {target}", "en": "Reach {target}"}, "hint": {"zh": "提示", "en": "hint"}}


def mutate(base: dict, **changes) -> dict:
    item = yaml.safe_load(yaml.safe_dump(base))
    for key, value in changes.items():
        if value is None:
            item.pop(key, None)
        else:
            item[key] = value
    return item


MISTAKES = [
    (mutate(GOOD, answer="max_stepz"), "unknown quantity 'max_stepz'"),
    (mutate(GOOD, setup={"preset": "nope"}), "unknown preset 'nope'"),
    (mutate(GOOD, prompt={"zh": "只有中文"}), "missing language 'en'"),
    (mutate(GOOD, hint={"zh": "提示", "en": "  "}), "hint is missing language 'en'"),
    (mutate(GOOD, prompt={"zh": "{nope}", "en": "{nope}"}), "placeholder {nope}"),
    (mutate(GOOD, prompt={"zh": "{max_steps}", "en": "{max_steps}"}), "shows the answer"),
    (mutate(GOOD, prompt={"zh": "{course_defaul.max_steps}", "en": "x"}), "neither one of the question's setups"),
    (mutate(GOOD, prompt={"zh": "{measured.v100.x}", "en": "x"}), "no such measurement"),
    (mutate(GOOD, prompt={"zh": "未闭合 {num_samples", "en": "x"}), "unbalanced"),
    (mutate(GOOD, prompt={"zh": "{num_samples:q}", "en": "x"}), "format spec"),
    (mutate(GOOD, lesson=12), "lesson must be"),
    (mutate(GOOD, kind="essay"), "kind must be"),
    (mutate(GOOD, params={"per_device_train_batch_size": []}), "non-empty list"),
    (mutate(GOOD, params={"per_device_train_batch_size": [0]}), "params.per_device_train_batch_size"),
    (mutate(GOOD, params={"batch": [1]}), "unknown setup field 'batch'"),
    (mutate(GOOD, setup={"num_sample": 10}), "unknown setup field"),
    (mutate(GOOD, answer=None), "unknown quantity None"),
    (mutate(GOOD, colour="red"), "unknown key(s) ['colour']"),
    (mutate(GOOD, answer="eval_every_epochs", setup={"num_samples": 100}), "not a number"),
    (mutate(GOOD, setup={"preset": "course_default", "eval_steps": 37.5}), "refuses"),
    (mutate(CHOICE_GOOD, options=[{"zh": "对", "en": "right"}, {"zh": "错", "en": "wrong"}]), "no correct option"),
    (mutate(CHOICE_GOOD, options=[{"zh": "对", "en": "right", "correct": True}]), "at least two"),
    (mutate(CHOICE_GOOD, explanation=None), "needs an explanation"),
    (mutate(CHOICE_GOOD, options=[{"zh": "对", "en": "right", "correct": True}, {"zh": "错", "en": "right"}]),
     "same en text"),
    (mutate(CHOICE_GOOD, options=[{"zh": "对", "en": "right", "correct": "yes"}, {"zh": "错", "en": "w"}]),
     "correct must be true or false"),
    (mutate(CHOICE_GOOD, prompt={"zh": "{max_steps}", "en": "x"}), "needs a setup"),
    (mutate(SLIDER_GOOD, target={"quantity": "total_train_batch_size", "equals": 3}), "no slider setting"),
    (mutate(SLIDER_GOOD, target={"quantity": "total_train_batch_size", "equals": 32}), "already reached"),
    (mutate(SLIDER_GOOD, controls=[{"field": "lr_scheduler_type", "min": 1, "max": 2}]), "not a numeric setup field"),
    (mutate(SLIDER_GOOD, controls=[{"field": "gradient_accumulation_steps", "min": 5, "max": 1}]), "min < max"),
    (mutate(SLIDER_GOOD, target={"quantity": "total_train_batch_size"}), "exactly one of"),
    (mutate(SLIDER_GOOD, target={"quantity": "total_train_batch_size", "equals": [64, 128]},
            prompt={"zh": "调一调", "en": "Adjust"}), "must show it with {target}"),
    (mutate(SLIDER_GOOD, controls=[{"field": "gradient_accumulation_steps", "min": 10, "max": 32}]), "start value"),
]


@pytest.mark.parametrize(("item", "problem"), MISTAKES, ids=[p for _, p in MISTAKES])
def test_author_mistakes_name_the_question_and_the_problem(item, problem, tmp_path):
    path = tmp_path / "bank.yaml"
    path.write_text(yaml.safe_dump([item], allow_unicode=True), encoding="utf-8")
    with pytest.raises(quiz.QuizError) as caught:
        quiz.load_bank(path)
    assert caught.value.question_id == item["id"], str(caught.value)
    assert problem in str(caught.value), str(caught.value)


def test_good_examples_load_and_bank_level_mistakes(tmp_path):
    path = tmp_path / "bank.yaml"
    path.write_text(yaml.safe_dump([GOOD, CHOICE_GOOD, SLIDER_GOOD], allow_unicode=True), encoding="utf-8")
    assert [s.id for s in quiz.load_bank(path)] == ["q", "c", "s"]
    path.write_text(yaml.safe_dump([GOOD, GOOD]), encoding="utf-8")
    with pytest.raises(quiz.QuizError, match="id used twice"):
        quiz.load_bank(path)
    path.write_text("- id: x\n  lesson: [1,\n", encoding="utf-8")
    with pytest.raises(quiz.QuizError, match="line"):
        quiz.load_bank(path)
    path.write_text("{a: 1}", encoding="utf-8")
    with pytest.raises(quiz.QuizError, match="list of questions"):
        quiz.load_bank(path)
    with pytest.raises(quiz.QuizError, match="cannot read"):
        quiz.load_bank(Path(tmp_path / "missing.yaml"))




# --------------------------------------------------------------------------- one answer, whatever the release


HF_PROFILES = [pid for pid, profile in PROFILES.items() if profile.framework == "transformers"]
NAMES_A_RELEASE = re.compile(r"\{(?:\w+\.)?trainer_(?:release|matched)\}|`\d+\.\d+`")


def _answers_by_release(spec: quiz.QuestionSpec, drawn: dict) -> dict[str, object]:
    """The question's answer with its drawn values under every transformers release (a refusal is left out: a
    release that refuses the setup is not one the question can be about)."""
    answers = {}
    for profile in HF_PROFILES:
        values = {**independent_setup(spec, drawn), "trainer": profile}
        try:
            plan = make_plan(setup_from_mapping(values)[0])
        except (TrainerRefusal, SetupError):
            continue
        answers[profile] = quantity(plan, spec.answer)
    return answers


@pytest.mark.parametrize("spec", NUMERIC, ids=lambda s: s.id)
def test_a_numeric_question_has_one_answer_under_every_release_its_prompt_allows(spec):
    """Issue 30: an answer that depends on the release (rounding, stopping early) needs the release pinned in the
    setup and named in the prompt; every other question gets the same answer from every release."""
    params = RAW[spec.id].get("params") or {}
    pinned = "trainer" in (RAW[spec.id].get("setup") or {})
    names_release = all(NAMES_A_RELEASE.search(RAW[spec.id]["prompt"][lang]) for lang in ("zh", "en"))
    combos = [dict(zip(params, values, strict=True)) for values in itertools.product(*params.values())]
    for drawn in combos:
        answers = _answers_by_release(spec, drawn)
        assert answers, (spec.id, drawn)
        if len({format_quantity(value) for value in answers.values()}) > 1:
            assert pinned and names_release, f"{spec.id} with {drawn}: answers differ by release: {answers}"
        if spec.answer == "eval_every_epochs":  # "every x epochs" means something only if it happens twice
            plan = make_plan(setup_from_mapping(independent_setup(spec, drawn))[0])
            assert events(plan, "eval").count() >= 2, (spec.id, drawn)


@pytest.mark.parametrize("spec", SLIDERS, ids=lambda s: s.id)
def test_a_slider_question_is_solved_alike_under_every_release(spec):
    for seed in range(8):
        question = quiz.generate(spec, seed)
        solution = dict(question.solution)
        for profile in HF_PROFILES:
            values = {**independent_setup(spec, dict(question.values)), **solution, "trainer": profile}
            try:
                plan = make_plan(setup_from_mapping(values)[0])
            except (TrainerRefusal, SetupError):
                continue
            assert all(target.holds(plan) for target in question.targets), (spec.id, profile, solution)


def _steps_with_val_size(val_size: float | None) -> int:
    """Lesson 9's example (LLaMA-Factory's `qwen3_lora_sft.yaml`) with `val_size`: its funnel's N, planned."""
    from steplab.teaching.lessons import load_lessons

    lesson = next(lesson for lesson in load_lessons() if "example" in lesson.llamafactory)
    setup = lesson.scenarios["example"]
    funnel = lesson.funnel("example", val_size=val_size)
    return make_plan(setup.replace(num_samples=funnel.train_examples)).max_steps


def test_the_val_size_key_holds_for_small_and_larger_splits():
    """`l9-val-size` keys "cannot go up, usually down, the same when few are held out": the engine's funnel and plan
    on lesson 9's example show both a fraction whose rounded-up hold-out leaves the steps unchanged and one that
    lowers them, and none that raises them."""
    spec = quiz.bank_by_id()["l9-val-size"]
    keyed = [option.text for option in spec.options if option.correct]
    assert len(keyed) == 1 and "不变" in keyed[0].zh and "unchanged" in keyed[0].en and "变少" in keyed[0].zh
    before = _steps_with_val_size(None)
    after = {fraction: _steps_with_val_size(fraction) for fraction in (0.0005, 0.001, 0.01, 0.1, 0.5)}
    assert all(steps <= before for steps in after.values())
    assert before in after.values() and any(steps < before for steps in after.values()), (before, after)


def _prompt_tells_apart(spec, one, other) -> bool:
    """Whether a number the prompt states differs between two setups (it then pins the setup down itself)."""
    def stated(setup, name):
        try:
            return getattr(setup, name) if hasattr(setup, name) else quantity(make_plan(setup), name)
        except (KeyError, TypeError, ZeroDivisionError, ValueError):
            return None
    names = {match.group(1).split(":")[0] for match in re.finditer(r"\{([a-z_][a-z_0-9.]*)(?::[^}]*)?\}", spec.prompt.en)}
    return any(stated(one, name) != stated(other, name) for name in names if "." not in name)


def test_a_numeric_question_whose_answer_moves_with_the_gpus_says_how_many():
    """On two GPUs `l4-eval-in-epochs`, `l5-first-epoch-end` and their like get another answer: a prompt whose
    answer the engine changes at `world_size` = 2 says 单卡 / one GPU, or names the processes."""
    unsaid = []
    for spec in quiz.load_bank():
        if spec.kind != "numeric" or not spec.has_setup:
            continue
        question = quiz.generate(spec, 0)
        if question.setup.world_size != 1:
            continue
        try:
            two = quantity(make_plan(question.setup.replace(world_size=2)), spec.answer)
        except (SetupError, TrainerRefusal, TypeError, ZeroDivisionError, ValueError):
            continue
        if two == question.answer or _prompt_tells_apart(spec, question.setup, question.setup.replace(world_size=2)):
            continue
        zh, en = spec.prompt.zh, spec.prompt.en
        if not (("单卡" in zh or "{world_size}" in zh) and re.search(r"(?i)\bone GPU\b|\{world_size\}", en)):
            unsaid.append(spec.id)
    assert not unsaid, f"prompts that leave the GPUs unsaid although the answer depends on them: {unsaid}"


def test_l9_after_split_names_llamafactorys_range_and_a_release_inside_it():
    """LLaMA-Factory 0.9.5 accepts transformers 4.55 – 5.6 (its `pyproject.toml`, held by
    tests/test_warmup_ratio_releases.py); the question names that range and plans under a release inside it."""
    from steplab.trainer.profiles import LLAMA_FACTORY_TRANSFORMERS

    question = quiz.generate(quiz.bank_by_id()["l9-after-split"], 0)
    first, last = LLAMA_FACTORY_TRANSFORMERS
    assert f"{first} – {last}" in question.prompt.zh and f"{first} – {last}" in question.prompt.en
    matched = PROFILES[question.setup.trainer].matched.split()[-1]
    as_tuple = lambda release: tuple(int(part) for part in release.split(".")[:2])  # noqa: E731
    assert as_tuple(first) <= as_tuple(matched) <= as_tuple(last) and matched in question.prompt.en
