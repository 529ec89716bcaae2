"""/run without a browser (Streamlit's AppTest): every shared run uploaded as a zip of its output folder with its
dataset files agrees on every field, in both languages; a planted difference is named with its cause and lesson;
hostile uploads get their message in the user's language; nothing breaks."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from steplab.i18n import fmt_int, t
from steplab.runfiles import limits

ROOT = Path(__file__).resolve().parents[1]
RUNS_DIR = ROOT / "tests" / "data" / "llamafactory-runs"
ARTEFACTS = RUNS_DIR / "artefacts"
RUNS = sorted(p.name for p in ARTEFACTS.iterdir() if p.is_dir())
DATA_FILES = {"dataset_info.json": RUNS_DIR / "assets/data/dataset_info.json",
              "tokenizer.json": RUNS_DIR / "assets/tiny-qwen2/tokenizer.json",
              "tokenizer_config.json": RUNS_DIR / "assets/tiny-qwen2/tokenizer_config.json"}


def run_zip(run: str, datasets: bool = True) -> bytes:
    """The run's output folder zipped as `out/...`, with the dataset files its YAML names (and the tokenizer)."""
    folder = ARTEFACTS / run
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, "out/" + path.relative_to(folder).as_posix())
        if datasets:
            for name, path in DATA_FILES.items():
                archive.write(path, f"data/{name}")
            for path in (RUNS_DIR / "assets/data").glob("*.json"):
                if path.name not in DATA_FILES:
                    archive.write(path, f"data/{path.name}")
    return buffer.getvalue()


def page(lang: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app_pages" / "run.py"), default_timeout=120)
    at.query_params["lang"] = lang
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def upload(at: AppTest, *files: tuple[str, bytes]) -> AppTest:
    uploader = at.file_uploader(key="run_files")
    for name, data in files:
        uploader.upload(name, data)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def table(at: AppTest, lang: str) -> list[dict]:
    frame = at.dataframe[0].value  # the first table on the page: "your run | StepLab"
    return frame.to_dict("records")


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_empty_page_says_what_to_give_and_the_caps(lang):
    at = page(lang)
    assert [i.value for i in at.info] == [t(lang, "run.empty")]
    caps = next(c.value for c in at.caption if fmt_int(limits.MAX_LINES) in c.value)
    for number in (limits.MAX_FILES, limits.MAX_FILE_BYTES // 2**20, limits.MAX_TOTAL_BYTES // 2**20):
        assert fmt_int(number) in caps
    assert at.file_uploader(key="run_files").proto.max_upload_size_mb * 2**20 == limits.MAX_FILE_BYTES


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("run", RUNS)
def test_every_shared_run_agrees_on_the_page(run, lang):
    at = upload(page(lang), (f"{run}.zip", run_zip(run)))
    rows = table(at, lang)
    marks = {row[t(lang, "run.table.field")]: row[t(lang, "run.table.agree")] for row in rows}
    assert set(marks.values()) == {"✔"}, marks
    assert len(marks) >= 14
    assert [s.value for s in at.success] == [t(lang, "run.verdict.agrees", count=len(marks))]
    assert len(at.get("plotly_chart")) >= 2  # the learning rate and the loss at least


def test_a_planted_accumulation_names_its_cause_and_lesson():
    folder = ARTEFACTS / "course"
    at = page("en")
    at.session_state["run_yaml"] = (folder / "config.yaml").read_text().replace(
        "gradient_accumulation_steps: 8", "gradient_accumulation_steps: 4")
    upload(at, *[(name, (folder / name).read_bytes()) for name in ("console.log", "trainer_state.json",
                                                                     "trainer_log.jsonl", "all_results.json")])
    verdict = at.warning[0].value
    assert "The run accumulated 8 micro-batches per step, the YAML says 4." in verdict
    rows = {r[t("en", "run.table.field")]: r for r in table(at, "en")}
    assert rows["Total optimization steps"][t("en", "run.table.run")] == "150"
    assert rows["Total optimization steps"][t("en", "run.table.steplab")] == "300"
    assert rows["Total optimization steps"][t("en", "run.table.agree")] == "✗"
    said = " ".join(m.value for m in at.markdown)
    assert "Reproduces your run." in said and "lessons?lesson=accumulation" in said


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_hostile_uploads_are_named_in_the_users_language(lang, monkeypatch):
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("out/trainer_log.jsonl", b"0" * (limits.MAX_FILE_BYTES + 1))
    cut = (ARTEFACTS / "course" / "trainer_log.jsonl").read_bytes()[:-40]
    at = upload(page(lang), ("bomb.zip", bomb.getvalue()), ("weights.log", bytes(range(256)) * 64),
                ("trainer_log.jsonl", cut), ("broken.zip", b"PK\x03\x04 broken"))
    said = " ".join(m.value for m in at.markdown)
    assert t(lang, "runfiles.zip_broken", archive="broken.zip").replace("`", "") in said.replace("`", "")
    assert "weights.log" in said
    files = at.dataframe[-1].value.to_dict("records")  # the last: the files
    status = {row[t(lang, "run.files.path")]: row[t(lang, "run.files.status")] for row in files}
    assert str(limits.MAX_FILE_BYTES // 2**20) in status["out/trainer_log.jsonl"]
    assert status["trainer_log.jsonl"] == t(lang, "run.files.read")
    assert not at.exception


def test_nothing_readable_is_said_and_a_pasted_console_is_read():
    at = upload(page("en"), ("weights.bin", bytes(1000)))
    assert t("en", "runfiles.nothing_readable").replace("`", "")[:40] in " ".join(
        w.value for w in at.warning).replace("`", "")
    at = page("zh")
    at.session_state["run_paste"] = (ARTEFACTS / "course_val" / "console.log").read_text()
    at.run()
    assert not at.exception
    rows = table(at, "zh")
    assert "✗" not in {row[t("zh", "run.table.agree")] for row in rows}


def test_the_release_can_be_chosen_and_the_explanation_is_kept_between_reruns():
    at = upload(page("en"), ("course.zip", run_zip("course", datasets=False)))
    first = at.session_state["_run_explanation"]
    at.run()
    assert at.session_state["_run_explanation"] is first  # not explained again on a rerun
    at.selectbox(key="run_trainer").set_value("hf-4.46").run()
    assert not at.exception
    assert at.session_state["_run_explanation"][1].planning.profile.value == "hf-4.46"


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_home_page_and_the_lesson_on_counting_a_run_link_here(lang):
    from steplab.teaching.lessons import load_lessons

    home = AppTest.from_file(str(ROOT / "app_pages" / "home.py"), default_timeout=60)
    home.query_params["lang"] = lang
    home.run()
    assert not home.exception
    links = [m.value for m in home.markdown] + [link.proto.label for link in home.get("page_link")]
    assert any(t(lang, "page.run.title") in text for text in links)
    assert t(lang, "home.link.run") in [c.value for c in home.caption]
    lesson = next(lesson for lesson in load_lessons() if lesson.id == "counting-a-run")
    texts = [lesson.fill(block.data[lang], lang) for block in lesson.blocks if block.kind == "text"]
    assert any(f"[{t(lang, 'page.run.title')}](run)" in text for text in texts)


def test_the_runs_setup_goes_into_the_sidebar():
    at = upload(page("en"), ("two_processes.zip", run_zip("two_processes")))
    at.button(key="run_use_setup").click().run()
    assert not at.exception
    assert (at.session_state["num_samples"], at.session_state["world_size"],
            at.session_state["gradient_accumulation_steps"]) == (1600, 2, 8)
    assert t("en", "run.setup.used") in [s.value for s in at.success]


def test_a_hundred_thousand_line_console_is_read():
    console = (ARTEFACTS / "course" / "console.log").read_bytes().decode()  # tqdm's \r kept inside its lines
    lines = "\n".join(f"Running tokenizer on dataset: {i} examples" for i in range(10**5))
    at = upload(page("zh"), ("console.log", (lines + "\n" + console).encode()))
    rows = table(at, "zh")
    assert "✗" not in {row[t("zh", "run.table.agree")] for row in rows}
    assert rows[0][t("zh", "run.table.source")] == f"console.log:{10**5 + 211}"


TRL_RUNS = ROOT / "tests" / "data" / "trl-runs"


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_failed_runs_error_is_the_verdict_with_what_to_change(lang):
    folder = TRL_RUNS / "failed_grpo_divisible"
    at = upload(page(lang), *[(name, (folder / name).read_bytes()) for name in ("console.log", "config.yaml")])
    said = " ".join(e.value for e in at.error)
    assert "generation_batch_size (8) must be divisible by num_generations (3)." in said
    assert "trl/trainer/grpo_config.py:1132" in said
    assert "2, 4, 8" in said  # StepLab's refusal's fix: the divisors of Gb


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_grpo_run_reconciles_on_the_page_with_its_cause_cards_once(lang):
    folder = TRL_RUNS / "grpo_iterations"
    at = page(lang)
    at.session_state["run_yaml"] = (folder / "config.yaml").read_text().replace("num_iterations: 2", "num_iterations: 1")
    upload(at, ("console.log", (folder / "console.log").read_bytes()),
           ("trainer_state.json", (folder / "checkpoint-40" / "trainer_state.json").read_bytes()))
    said = " ".join(m.value for m in at.markdown)
    assert "lessons?lesson=rl-steps" in said
    assert said.count(t(lang, "run.why.reproduces")) == 1  # one cause, one card, naming every field it explains
    assert t(lang, "run.field.total_optimization_steps").replace("`", "") in said.replace("`", "")
