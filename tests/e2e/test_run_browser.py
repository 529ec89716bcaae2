"""/run in a real browser: a zip of a run's output folder (with its dataset files) and a handful of loose files are
uploaded in zh and en; the verdict, the table, the pictures and their text alternatives appear, every shared run
agrees, and a run with a planted difference names its cause. Screenshots at 1280 and 420 px, light and dark."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from steplab.i18n import t
from steplab.runfiles.explain import explain_entries
from steplab.runfiles.gather import upload_entries

from .conftest import CHROMIUM, SCREENSHOTS, SKIP_REASON, StreamlitServer
from .streamlit_page import expect_no_exception, open_app, title, wait_for_app_run

pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason=SKIP_REASON)]

DATA = Path(__file__).resolve().parents[1] / "data"
RUNS_DIR = DATA / "llamafactory-runs"
ARTEFACTS = RUNS_DIR / "artefacts"
DATASETS = [*(RUNS_DIR / "assets/data").glob("*.json"), RUNS_DIR / "assets/tiny-qwen2/tokenizer.json",
            RUNS_DIR / "assets/tiny-qwen2/tokenizer_config.json"]
LOOSE = ("console.log", "trainer_state.json", "trainer_log.jsonl", "all_results.json", "config.yaml")


def run_zip(run: str, target: Path) -> Path:
    """The run's output folder as `out/...` and its dataset files as `data/...`, in one zip."""
    folder = ARTEFACTS / run
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, "out/" + path.relative_to(folder).as_posix())
        for path in DATASETS:
            archive.write(path, f"data/{path.name}")
    return target


def expected_fields(path: Path) -> int:
    """How many fields the engine compares for this upload (the page's verdict says the same number)."""
    explanation = explain_entries(upload_entries([(path.name, path.read_bytes())], []))
    checks = [c for c in explanation.reconciliation.checks if c.agree is not None]
    assert all(c.agree for c in checks)
    return len(checks)


def open_run(page: Page, url: str, lang: str) -> None:
    open_app(page, f"{url}/run" + ("?lang=en" if lang == "en" else ""))
    expect(title(page)).to_have_text(t(lang, "page.run.title"), timeout=60_000)


def files_input(page: Page) -> Locator:
    """The "files or a zip" uploader's input (not the folder tab's, whose input takes a directory)."""
    return page.locator("input[data-testid='stFileUploaderDropzoneInput']:not([webkitdirectory])").first


EXPLAINED_MS = 120_000  # an upload explained (the dataset stage included) on a loaded 2-core machine


def upload(page: Page, paths: list[Path]) -> None:
    """Upload, then wait until the whole explanation is drawn: the last section, the files' list, is on the page."""
    files_input(page).set_input_files([str(p) for p in paths])
    expect(page.get_by_test_id("stMain").get_by_test_id("stExpander").last).to_be_visible(timeout=EXPLAINED_MS)
    wait_for_app_run(page, timeout=EXPLAINED_MS)


@pytest.mark.parametrize("lang", ["zh"])
def test_a_zip_of_the_output_folder_agrees_on_every_field(browser: Browser, app_server: StreamlitServer,
                                                          lang: str, tmp_path: Path) -> None:
    archive = run_zip("resume_changed_batch", tmp_path / "resume_changed_batch.zip")
    count = expected_fields(archive)
    context = browser.new_context(viewport={"width": 1280, "height": 1400})
    page = context.new_page()
    try:
        open_run(page, app_server.url, lang)
        expect(page.get_by_test_id("stMain")).to_contain_text(t(lang, "run.empty"))
        upload(page, [archive])
        main = page.get_by_test_id("stMain")
        expect(main.get_by_test_id("stAlertContentSuccess")).to_contain_text(t(lang, "run.verdict.agrees", count=count))
        expect(page.get_by_test_id("stPlotlyChart").first).to_be_visible()
        alt = page.get_by_test_id("stPlotlyChart").first.get_attribute("aria-label") or ""
        lr_alt = t(lang, "run.chart.lr_alt_agree", rows="60")
        assert lr_alt in alt or lr_alt in main.inner_text()
        expect(main).to_contain_text(lr_alt)
        expect_no_exception(page)
    finally:
        context.close()


@pytest.mark.parametrize("lang", ["en"])  # one language each: the zip in Chinese, loose files in English
def test_loose_files_and_a_planted_difference(browser: Browser, app_server: StreamlitServer, lang: str,
                                             tmp_path: Path) -> None:
    folder = tmp_path / "course"
    folder.mkdir()
    for name in LOOSE:
        (folder / name).write_bytes((ARTEFACTS / "course" / name).read_bytes())
    config = folder / "config.yaml"
    config.write_text(config.read_text().replace("gradient_accumulation_steps: 8", "gradient_accumulation_steps: 4"))
    context = browser.new_context(viewport={"width": 1280, "height": 1400})
    page = context.new_page()
    try:
        open_run(page, app_server.url, lang)
        upload(page, [folder / name for name in LOOSE])
        main = page.get_by_test_id("stMain")
        cause = t(lang, "runfiles.cause.accumulation", run=8, ours=4)
        expect(main.get_by_test_id("stAlertContentWarning").first).to_contain_text(cause)
        expect(main.locator("a[href*='lesson=accumulation']").first).to_be_visible()
        expect_no_exception(page)
    finally:
        context.close()


BROWSER_RUNS = ("course", "resume_same", "two_processes")
"""Every shared run is uploaded in both languages by `tests/test_run_page.py` (AppTest, the same zip); the browser
sends three kinds through the real uploader: a plain run, a resumed one, a run of two processes."""


@pytest.mark.parametrize("run", BROWSER_RUNS)
def test_shared_runs_agree_in_the_browser(browser: Browser, app_server: StreamlitServer, run: str,
                                                tmp_path: Path) -> None:
    archive = run_zip(run, tmp_path / f"{run}.zip")
    count = expected_fields(archive)
    lang = "en" if BROWSER_RUNS.index(run) % 2 else "zh"
    context = browser.new_context(viewport={"width": 1280, "height": 1200})
    page = context.new_page()
    try:
        open_run(page, app_server.url, lang)
        upload(page, [archive])
        expect(page.get_by_test_id("stMain").get_by_test_id("stAlertContentSuccess")).to_contain_text(
            t(lang, "run.verdict.agrees", count=count))
        expect_no_exception(page)
    finally:
        context.close()


@pytest.mark.parametrize(("lang", "width", "scheme"), [("zh", 1280, "light"), ("en", 420, "dark")])
def test_screenshots(browser: Browser, app_server: StreamlitServer, lang: str, width: int, scheme: str,
                     tmp_path: Path) -> None:
    archive = run_zip("course_val", tmp_path / "course_val.zip")
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
    page = context.new_page()
    try:
        open_run(page, app_server.url, lang)
        upload(page, [archive])
        expect(page.get_by_test_id("stPlotlyChart").first).to_be_visible()
        wait_for_app_run(page)
        height = page.evaluate("document.querySelector(\"[data-testid='stMain']\").scrollHeight")
        page.set_viewport_size({"width": width, "height": min(int(height) + 50, 12_000)})
        wait_for_app_run(page)
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"run-{lang}-{width}-{scheme}.png"))
        expect_no_exception(page)
    finally:
        context.close()


def test_a_zip_bomb_in_the_browser_is_named(browser: Browser, app_server: StreamlitServer, tmp_path: Path) -> None:
    from steplab.runfiles import limits

    bomb = tmp_path / "bomb.zip"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("out/trainer_log.jsonl", b"0" * (limits.MAX_FILE_BYTES + 1))
    bomb.write_bytes(buffer.getvalue())
    context = browser.new_context(viewport={"width": 1280, "height": 1200})
    page = context.new_page()
    try:
        open_run(page, app_server.url, "en")
        files_input(page).set_input_files(str(bomb))
        wait_for_app_run(page)
        expect(page.get_by_test_id("stMain").get_by_test_id("stAlertContentWarning").first).to_contain_text(
            "Nothing here is a file of a training run")
        expect_no_exception(page)
    finally:
        context.close()


@pytest.mark.parametrize(("scheme", "lang"), [("light", "zh")])  # test_accessibility audits /run dark in English
def test_axe_on_an_explained_run(browser: Browser, app_server: StreamlitServer, scheme: str, lang: str,
                                 tmp_path: Path) -> None:
    """The page with its table, causes, pictures and findings (a resume with a planted accumulation: every
    section drawn) has no serious or critical axe violation."""
    from axe_playwright_python.sync_playwright import Axe

    folder = tmp_path / "run"
    folder.mkdir()
    for name in LOOSE:
        (folder / name).write_bytes((ARTEFACTS / "resume_changed_batch" / name).read_bytes())
    config = folder / "config.yaml"
    config.write_text(config.read_text().replace("gradient_accumulation_steps: 4", "gradient_accumulation_steps: 2"))
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
    page = context.new_page()
    try:
        open_run(page, app_server.url, lang)
        upload(page, [folder / name for name in LOOSE])
        expect(page.get_by_test_id("stPlotlyChart").first).to_be_visible()
        page.get_by_test_id("stMain").get_by_test_id("stExpander").last.click()  # the files' table too
        wait_for_app_run(page)
        results = Axe().run(page)
        found = [f"[{v['impact']}] {v['id']} at {node['target']}: {' '.join(node.get('failureSummary', '').split())}"
                 for v in results.response["violations"] if v["impact"] in ("serious", "critical")
                 for node in v["nodes"]]
        assert not found, "\n".join(found)
        expect_no_exception(page)
    finally:
        context.close()
