"""Progress codes and files: round trips, tampering and hostile input are rejected cleanly."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from steplab.teaching import progress as progress_module
from steplab.teaching.progress import (
    ALPHABET,
    LESSON_COUNT,
    MAX_CODE_CHARS,
    MAX_COUNT,
    Progress,
    ProgressError,
    from_code,
    from_dict,
    from_json,
    to_code,
    to_json,
)

counts = st.integers(min_value=0, max_value=MAX_COUNT)


@st.composite
def progresses(draw) -> Progress:
    lessons = draw(st.frozensets(st.integers(1, LESSON_COUNT)))
    scored = sorted(draw(st.frozensets(st.integers(1, LESSON_COUNT))))
    scores = []
    for lesson in scored:
        attempts = draw(counts)
        scores.append((lesson, draw(st.integers(0, attempts)), attempts))
    attempts = draw(counts)
    return Progress(lessons, tuple(scores), draw(st.integers(0, attempts)), attempts)


SAMPLE = Progress(frozenset({1, 2, 4}), ((1, 3, 3), (2, 2, 4)), 7, 9)


@settings(max_examples=150, deadline=None)
@given(progress=progresses())
def test_code_and_file_round_trip(progress):
    code = to_code(progress)
    assert code.startswith("SL2-") and len(code) <= MAX_CODE_CHARS
    assert from_code(code) == progress
    assert from_code(code.lower()) == progress
    assert from_code("  " + code.replace("-", " ") + "\n") == progress
    assert from_json(to_json(progress)) == progress
    assert from_json(to_json(progress).encode()) == progress
    assert from_dict(progress.to_dict()) == progress


def test_a_typical_code_is_short():
    assert len(to_code(Progress())) <= 20
    assert len(to_code(SAMPLE)) <= 32


def test_every_single_character_change_is_caught():
    code = to_code(SAMPLE)
    body_start = len("SL1-")
    for position in range(body_start, len(code)):
        if code[position] == "-":
            continue
        for char in ALPHABET:
            if char == code[position]:
                continue
            tampered = code[:position] + char + code[position + 1:]
            with pytest.raises(ProgressError):
                from_code(tampered)


def test_dropped_or_added_characters_are_caught():
    code = to_code(SAMPLE)
    for position in range(4, len(code)):
        with pytest.raises(ProgressError):
            from_code(code[:position] + code[position + 1:]) if code[position] != "-" else from_code(code[:position])
    with pytest.raises(ProgressError):
        from_code(code + "7")


@pytest.mark.parametrize(("text", "says"), [
    ("", "Paste"), ("   ", "Paste"), ("hello", "not a StepLab progress code"), ("SL1-", "incomplete"),
    ("SL3-2000-000A-SQ1Y", "another version"), ("SL9-2000", "another version"), ("SL1-2000-000A-SQ1Z", "checksum"),
    ("SL1-UUUU", "invalid character"), ("SL1-2", "damaged"), ("SL1-2000", "incomplete"), ("SL1-20", "damaged"),
    ("SL1-２０００", "only letters"), ("SL1-" + "Z" * 300, "too long"), ("SL1-ÄÖÜ", "only letters"),
    ("SL1-2000-000A-SQ1Y; DROP TABLE", "invalid character ';'"), ("\x00\x01", "not a StepLab"),
    ("SL1-ZZZZ-!!!!-0000", "invalid character '!'"), ("SL3-!!!!", "another version"),
])
def test_bad_codes_say_why(text, says):
    with pytest.raises(ProgressError) as caught:
        from_code(text)
    assert says in caught.value.text.en, caught.value.text.en
    assert caught.value.text.zh and caught.value.message("zh") == caught.value.text.zh


@pytest.mark.parametrize("value", [None, 150, b"SL1-2000", ["SL1"], {"code": "x"}])
def test_non_text_codes_are_rejected(value):
    with pytest.raises(ProgressError):
        from_code(value)


@settings(max_examples=150, deadline=None)
@given(text=st.one_of(st.text(max_size=300), st.from_regex(r"SL1-[0-9A-Z\-]{0,60}", fullmatch=True),
                      st.text(alphabet=ALPHABET + "-", max_size=80).map(lambda s: "SL1-" + s)))
def test_random_text_is_rejected_cleanly(text):
    try:
        progress = from_code(text)
    except ProgressError as error:
        assert error.text.en and error.text.zh
    else:  # a random string that happens to carry a valid checksum must still be a possible progress
        assert isinstance(progress, Progress)


def test_huge_input_is_cut_off_before_work():
    with pytest.raises(ProgressError, match="too long"):
        from_code("SL1-" + "2" * 10_000_000)
    with pytest.raises(ProgressError, match="too large"):
        from_json(b"{" + b" " * 20_000 + b"}")
    with pytest.raises(ProgressError, match="too large"):
        from_json("x" * 20_000)


def test_answers_count_once_per_question():
    progress = Progress()
    progress = progress.with_answer(None, True, "q1:1").with_answer(None, False, "q1:1")
    assert (progress.selfstudy_correct, progress.selfstudy_attempts) == (1, 1)
    progress = progress.with_answer(3, False, "q2:5").with_answer(3, True, "q3:5").with_answer(3, True, "q3:5")
    assert progress.score(3) == (1, 2) and progress.score(4) == (0, 0)
    progress = progress.with_lesson_done(3).with_lesson_done(5).with_lesson_done(5, done=False)
    assert progress.lessons_done == {3}
    assert from_code(to_code(progress)) == progress  # the seen set stays in the session only
    assert from_dict(progress.to_dict()).seen == progress.seen


@pytest.mark.parametrize("values", [
    dict(lessons_done=frozenset({0})), dict(lessons_done=frozenset({LESSON_COUNT + 1})),
    dict(lessons_done=frozenset({True})), dict(lesson_scores=((1, 3, 2),)), dict(lesson_scores=((LESSON_COUNT + 1, 0, 0),)), dict(lesson_scores=((2, 0, 0), (1, 0, 0))),
    dict(lesson_scores=((1, -1, 0),)), dict(selfstudy_correct=2, selfstudy_attempts=1),
    dict(selfstudy_attempts=MAX_COUNT + 1), dict(selfstudy_correct=1.0, selfstudy_attempts=1),
])
def test_impossible_progress_is_refused(values):
    with pytest.raises(ProgressError):
        Progress(**values)


GOOD_FILE = json.loads(to_json(SAMPLE))


def edited(**changes) -> str:
    data = {**GOOD_FILE, **changes}
    return json.dumps({k: v for k, v in data.items() if v is not ...})


@pytest.mark.parametrize(("content", "says"), [
    ("", "not valid JSON"), ("{", "not valid JSON"), ("[1, 2]", "not a StepLab progress file"),
    ('{"app": "other"}', "not a StepLab progress file"), (edited(version=3), "another version"),
    (edited(lessons_done=[1, 1]), "once"), (edited(lessons_done="1,2"), "list of lesson numbers"),
    (edited(lessons_done=[0]), f"1 to {LESSON_COUNT}"), (edited(lesson_scores={"1": [5, 3]}), "not possible"),
    (edited(lesson_scores={"x": [0, 0]}), "keys must be lesson numbers"), (edited(selfstudy=[1, 2]), "malformed"),
    (edited(selfstudy={"correct": "7", "attempts": 9}), "not possible"), (edited(extra=1), "unknown fields"),
    (edited(selfstudy={"correct": 8, "attempts": 9}), "do not match its progress code"),
    (edited(code=12), "do not match"), (edited(code="SL1-2000-000A-SQ1Z"), "checksum"),
    ('{"app": "steplab", "kind": "progress", "version": 1, "selfstudy": {"correct": NaN, "attempts": 1}}', "not valid JSON"),
    ("[" * 1000 + "]" * 1000, "not valid JSON"), (b"\xff\xfe\x00", "not UTF-8"), (12, "cannot be read"),
    (edited(lesson_scores={"1": [1e400, 1]}), "not valid JSON"), (edited(lesson_scores={"1": [1.0, 1]}), "not possible"),
])
def test_bad_files_say_why(content, says):
    with pytest.raises(ProgressError) as caught:
        from_json(content)
    assert says in caught.value.text.en, caught.value.text.en


def _version_1_code(lessons: set[int], scores: dict[int, tuple[int, int]], correct: int, attempts: int) -> str:
    """A code as the first version wrote it (ten lessons, before lesson 8 was split), from its own rules."""
    old = Progress(frozenset(lessons), tuple((n, c, a) for n, (c, a) in sorted(scores.items())), correct, attempts)
    payload = progress_module._payload(old)
    body = progress_module._b32encode(payload + progress_module._checksum(1, payload))
    return "SL1-" + "-".join(body[i:i + 4] for i in range(0, len(body), 4))


def test_codes_and_files_of_the_first_version_still_read_with_todays_lesson_numbers():
    """Version 1 had ten lessons; the split of lesson 8 moved the last one to 11 (the former 8 stays 8)."""
    code = _version_1_code({1, 8, 9, 10}, {8: (2, 3), 10: (1, 1)}, 4, 6)
    restored = from_code(code)
    assert restored.lessons_done == {1, 8, 9, 11}
    assert restored.lesson_scores == ((8, 2, 3), (11, 1, 1))
    assert (restored.selfstudy_correct, restored.selfstudy_attempts) == (4, 6)
    old_file = {"app": "steplab", "kind": "progress", "version": 1, "lessons_done": [1, 8, 9, 10],
                "lesson_scores": {"8": [2, 3], "10": [1, 1]}, "selfstudy": {"correct": 4, "attempts": 6}, "code": code}
    assert from_json(json.dumps(old_file)) == restored
    assert to_code(restored).startswith("SL2-")  # written again in today's version


def test_file_without_code_and_bom_still_reads():
    data = dict(GOOD_FILE)
    data.pop("code")
    assert from_json(json.dumps(data)) == SAMPLE
    assert from_json(b"\xef\xbb\xbf" + json.dumps(GOOD_FILE).encode()) == SAMPLE


@settings(max_examples=200, deadline=None)
@given(content=st.one_of(st.binary(max_size=200), st.text(max_size=200),
                         st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                                      lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                                      max_leaves=10).map(json.dumps)))
def test_random_files_are_rejected_cleanly(content):
    with pytest.raises(ProgressError):
        from_json(content)
