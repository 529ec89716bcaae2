"""Issue 38's findings on real runs' files (LLaMA-Factory 0.9.5's `tests/data/llamafactory-runs/artefacts/`, TRL's
`tests/data/trl-runs/`): causes that hold, a chosen release, messages in the reader's language, files named."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from steplab.runfiles.explain import explain_entries
from steplab.runfiles.explanation import LESSONS
from steplab.runfiles.gather import path_entries, text_entry
from steplab.teaching.lessons import load_lessons

DATA = Path(__file__).parent / "data"
ARTEFACTS = DATA / "llamafactory-runs" / "artefacts"
CJK = re.compile(r"[\u4e00-\u9fff]")


def explain(folder: Path, config: Path | None = None, **kwargs):
    problems: list = []
    entries = [e for e in path_entries([folder], problems) if not e.path.endswith("config.yaml")]
    given = (config.name, config.read_text(encoding="utf-8")) if config else None
    return explain_entries(entries, problems, config=given, **kwargs)


def test_another_runs_yaml_is_said_first_as_different_runs_and_each_cause_appears_once() -> None:
    ex = explain(ARTEFACTS / "course", ARTEFACTS / "dpo" / "config.yaml")
    assert ex.findings[0].code == "different_runs"
    cards = ex.cause_cards()
    codes = [card.cause.code for card in cards]
    assert len(codes) == len(set(codes)) and len(codes) >= 3
    wrong = {c.name for c in ex.reconciliation.disagreements}
    for card in cards:
        assert card.fields or card.possible
        assert set(card.fields) | set(card.possible) <= wrong
        assert card.cause.reproduces == bool(card.fields)
    assert [bool(card.fields) for card in cards] == sorted((bool(card.fields) for card in cards), reverse=True)


def test_one_change_that_reproduces_everything_is_no_different_run() -> None:
    config = (ARTEFACTS / "course" / "config.yaml").read_text(encoding="utf-8")
    changed = config.replace("gradient_accumulation_steps: 8", "gradient_accumulation_steps: 4")
    problems: list = []
    entries = [e for e in path_entries([ARTEFACTS / "course"], problems) if not e.path.endswith("config.yaml")]
    ex = explain_entries(entries, problems, config=("config.yaml", changed), base=DATA / "llamafactory-runs")
    assert not ex.different_runs
    assert ex.findings[0].code == "accumulation"


def test_every_cause_links_to_a_lesson_that_exists() -> None:
    ids = {lesson.id for lesson in load_lessons()}
    assert set(LESSONS.values()) <= ids
    assert LESSONS["release"] == "versions"


def test_a_chosen_release_is_said_as_chosen_with_the_release_the_log_names() -> None:
    ex = explain(ARTEFACTS / "course", trainer="hf-4.46")
    release = next(f for f in ex.findings if f.code == "release")
    assert release.message.key == "runfiles.finding.release_chosen_other"
    assert "hf-5.6" in release.message.en and "best" not in release.message.en
    fits = explain(ARTEFACTS / "course", trainer="hf-5.6")
    assert next(f for f in fits.findings if f.code == "release").message.key == "runfiles.finding.release_chosen"


def test_an_empty_file_is_not_read_and_a_cut_json_is_said_in_the_readers_language() -> None:
    state = (ARTEFACTS / "course" / "trainer_state.json").read_text(encoding="utf-8")
    ex = explain_entries([text_entry("out/trainer_log.jsonl", ""), text_entry("out/trainer_state.json", state[:2000]),
                          text_entry("out/console.log", (ARTEFACTS / "course" / "console.log").read_text())])
    reports = {r.path: r for r in ex.files.reports}
    assert not reports["out/trainer_log.jsonl"].read
    assert reports["out/trainer_log.jsonl"].note.key == "runfiles.skipped.empty"
    cut = reports["out/trainer_state.json"]
    assert not cut.read
    zh = cut.note.get("zh")
    assert not re.search(r"[A-Za-z]{4,}", re.sub(r"`[^`]*`|JSON", "", zh)), zh
    unread = [f.message.get("zh") for f in ex.findings if f.code == "file_unread"]
    assert unread and all("。。" not in text for text in unread)


def test_a_logged_dict_that_does_not_parse_is_counted_and_named() -> None:
    lines = (ARTEFACTS / "course" / "console.log").read_text(encoding="utf-8").split("\n")
    broken = next(i for i, line in enumerate(lines) if line.lstrip().startswith("{'loss'"))
    lines[broken] = lines[broken][:len(lines[broken]) // 2]  # cut off mid-dict, as a killed process leaves it
    ex = explain_entries([text_entry("console.log", "\n".join(lines))])
    found = [f for f in ex.findings if f.code == "unparsed_dicts"]
    assert len(found) == 1 and str(broken + 1) in found[0].message.en
    assert ex.files.console.unparsed_dicts == [broken + 1]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_steplabs_own_sources_are_said_in_the_readers_language(lang: str) -> None:
    from steplab_ui.views.run import source_text

    state = (DATA / "trl-runs" / "dpo" / "checkpoint-10" / "trainer_state.json").read_text(encoding="utf-8")
    ex = explain_entries([text_entry("trainer_state.json", state)])  # no console: processes assumed, release fits
    world = ex.setup.values["world_size"].source
    trainer = explain(ARTEFACTS / "course", trainer="hf-5.6").setup_values()["trainer"].source
    for source in (world, trainer):
        said = source_text(source, lang)
        assert bool(CJK.search(said)) == (lang == "zh"), said


TRL_RUNS = DATA / "trl-runs"


def test_a_scheduler_kwargs_mapping_and_intervals_below_one_reconcile_without_conflicts() -> None:
    """A real SFTTrainer run with `lr_scheduler_kwargs: {min_lr_rate: 0.1}` and `logging_steps: 0.15`,
    `save_steps: 0.4` (shares of the 30 steps: the Trainer logs every 5 and saves every 12, as its state says)."""
    folder = TRL_RUNS / "sft_ratios"
    ex = explain(folder, folder / "config.yaml")
    assert ex.setup.value("lr_scheduler_kwargs") == {"min_lr_rate": 0.1}
    checks = ex.reconciliation.by_name()
    assert [c.name for c in checks.values() if c.agree is False] == []
    assert checks["learning_rates"].agree and checks["logging_steps"].run == [5, 10, 15, 20, 25, 30]
    codes = [f.code for f in ex.findings]
    assert "conflict" not in codes
    ratios = [f.message.en for f in ex.findings if f.code == "interval_ratio"]
    assert len(ratios) == 2 and "= 5 steps" in ratios[0] and "= 12 steps" in ratios[1]


def test_a_conflicting_scheduler_kwargs_is_a_conflict_not_a_crash() -> None:
    folder = TRL_RUNS / "sft_ratios"
    text = (folder / "config.yaml").read_text(encoding="utf-8")
    problems: list = []
    entries = [e for e in path_entries([folder], problems) if not e.path.endswith("config.yaml")]
    ex = explain_entries(entries, problems, config=("a.yaml", text.replace("0.1}", "0.2}")))
    assert ex.setup.value("lr_scheduler_kwargs") == {"min_lr_rate": 0.2}
    assert ex.reconciliation.by_name()["learning_rates"].agree is False


def test_train_loss_after_a_resume_is_not_called_the_whole_runs_mean() -> None:
    """A real run stopped at step 13 and resumed from checkpoint-10 (transformers 5.24); steps 29–30 unlogged."""
    folder = TRL_RUNS / "sft_resumed"
    ex = explain(folder, folder / "config.yaml")
    assert ex.observed.resumed_step == 10
    said = next(f for f in ex.findings if f.code == "train_loss")
    assert said.message.key == "runfiles.finding.train_loss_tail_resumed"
    assert "whole run" not in said.message.en.split(", nor")[0]
    assert "steps 11 to 30" in said.message.en


def test_a_txt_dataset_named_by_dataset_info_is_data_not_a_console() -> None:
    course = ARTEFACTS / "course"
    entries = [text_entry("run/console.log", (course / "console.log").read_text(encoding="utf-8")),
               text_entry("run/data/dataset_info.json", '{"notes": {"file_name": "notes.txt"}}'),
               text_entry("run/data/notes.txt", "first line of text\nsecond line\n")]
    ex = explain_entries(entries)
    kinds = {r.path: r.kind for r in ex.files.reports}
    assert kinds["run/data/notes.txt"] == "data"
    assert ex.files.console is not None and ex.files.console.path == "run/console.log"
    assert "notes.txt" in ex.files.dataset_files


@pytest.mark.parametrize("alone", [False, True])
def test_two_evaluation_sets_log_eval_name_loss_and_reconcile(alone: bool) -> None:
    """A real run evaluating two sets (13 and 9 examples) every 4 steps: each evaluation logs
    `eval_alpaca_loss` and `eval_identity_loss` rows; the console alone too."""
    folder = TRL_RUNS / "sft_two_evals"
    if alone:
        text = (folder / "config.yaml").read_text(encoding="utf-8")
        ex = explain_entries([text_entry("console.log", (folder / "console.log").read_text(encoding="utf-8"))],
                             config=("config.yaml", text))
        assert ex.files.console.eval_examples.value == 13 + 9
    else:
        ex = explain(folder, folder / "config.yaml")
    checks = ex.reconciliation.by_name()
    assert checks["eval_steps"].run == [4, 8, 10] and checks["eval_steps"].agree
    assert [c.name for c in checks.values() if c.agree is False] == []
    assert "no_eval_loss" not in [f.code for f in ex.findings]
