"""Issue 27 on /config, in a real browser: a paste the text box cannot take (the tab froze for minutes), one YAML
file at a time with only the current file's problem said, and the uploader's own words in the page's language.

The numbers come from the code: the box's cap (`browser.TEXT_BOX_CHARS`), the size read (`MAX_BYTES`)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from steplab.i18n import fmt_int, t
from steplab.io.safe_yaml import MAX_BYTES
from steplab_ui.shell.browser import TEXT_BOX_CHARS

from .conftest import CHROMIUM, SKIP_REASON, StreamlitServer
from .streamlit_page import open_app, title, wait_for_app_run
from .watch import Watch

pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason=SKIP_REASON)]

MB = MAX_BYTES // 2**20
LINE = "# a comment line of a long config, as people paste them\n"
YAML = "per_device_train_batch_size: 2\ngradient_accumulation_steps: 16\nnum_samples: 1090\n"


def config_page(page: Page, app_server: StreamlitServer, lang: str) -> None:
    open_app(page, f"{app_server.url}/config" + ("?lang=en" if lang == "en" else ""))
    expect(title(page)).to_have_text(t(lang, "page.config.title"))


@pytest.mark.parametrize("lang", ["zh"])
def test_a_paste_longer_than_the_box_takes_is_refused_and_the_upload_named(page: Page, app_server: StreamlitServer,
                                                                           lang: str) -> None:
    """300 KB pasted into the text box: refused at once, the box as it was, and a note (in the page's language)
    naming the cap and the upload tab; the box states its cap before anything is pasted. A YAML within the cap is
    taken and fills the setup. (Before: the paste went in, 23 s of a frozen tab at 300 KB, minutes at 1.2 MB.)"""
    watch = Watch(page)
    config_page(page, app_server, lang)
    upload_tab = t(lang, "config.upload")
    box = page.get_by_test_id("stTextArea").locator("textarea")
    note = page.get_by_role("alert").filter(has_text=t(lang, "config.box_refused", chars=TEXT_BOX_CHARS, mb=MB,
                                                        tab=upload_tab))
    expect(note).to_be_hidden()
    box.focus()
    page.keyboard.insert_text(YAML + LINE * (300_000 // len(LINE)))  # what a paste inserts
    expect(note).to_be_visible()
    expect(box).to_have_value("")
    expect(page.get_by_test_id("stCaptionContainer").filter(
        has_text=t(lang, "config.box_limit", chars=TEXT_BOX_CHARS, mb=MB, tab=upload_tab))).to_be_visible()
    fits = YAML + LINE * ((TEXT_BOX_CHARS - len(YAML)) // len(LINE))
    assert len(fits) <= TEXT_BOX_CHARS
    box.focus()
    page.keyboard.insert_text(fits)
    expect(note).to_be_hidden()
    assert box.evaluate("box => box.value.length") == len(fits)
    page.keyboard.press("Control+Enter")
    wait_for_app_run(page)
    page.get_by_role("button", name=t(lang, "config.apply")).click()
    wait_for_app_run(page)
    expect(page.get_by_test_id("stAlertContentSuccess")).to_contain_text(t(lang, "config.applied"))
    watch.check("after the pastes")


@pytest.mark.parametrize("lang", ["en"])  # one language each (the paste in Chinese): both are AppTested
def test_the_yaml_uploader_holds_one_file_and_says_only_its_problem(page: Page, app_server: StreamlitServer,
                                                                    lang: str) -> None:
    """A text file, then a 3 MB "YAML", then a good YAML: the uploader shows one file at a time (the browser had
    refused the large one and shown it beside the text file with Streamlit's English "File must be 1.0MB or
    smaller"), each problem is said once in the page's language and goes when the next file comes, and Fill
    refuses the large file in the same words, once."""
    watch = Watch(page)
    config_page(page, app_server, lang)
    page.get_by_role("tab", name=t(lang, "config.upload")).click()
    uploader = page.get_by_test_id("stTabs").get_by_test_id("stFileUploader")
    files, errors = uploader.get_by_test_id("stFileChip"), page.get_by_test_id("stAlertContentError")
    choose = uploader.locator("input[type='file']").set_input_files
    choose({"name": "notes.txt", "mimeType": "text/plain", "buffer": b"hello\n"})
    wait_for_app_run(page)
    expect(errors).to_have_count(1)
    expect(errors).to_contain_text(t(lang, "config.not_yaml_file", name="notes.txt").replace("`", ""))
    big = YAML.encode() + b"#" * (3 * 2**20)
    choose({"name": "big.yaml", "mimeType": "application/x-yaml", "buffer": big})
    wait_for_app_run(page)
    expect(files).to_have_count(1)
    expect(files).to_contain_text("big.yaml")
    expect(errors).to_have_count(1)
    expect(errors).to_contain_text(fmt_int(len(big)))
    expect(errors).to_contain_text(fmt_int(MAX_BYTES))
    assert "must be" not in uploader.inner_text()
    page.get_by_role("button", name=t(lang, "config.apply")).click()
    wait_for_app_run(page)
    expect(errors).to_have_count(1)
    expect(errors).to_contain_text(fmt_int(len(big)))
    choose({"name": "train.yaml", "mimeType": "application/x-yaml", "buffer": YAML.encode()})
    wait_for_app_run(page)
    expect(files).to_have_count(1)
    expect(errors).to_have_count(0)
    page.get_by_role("button", name=t(lang, "config.apply")).click()
    wait_for_app_run(page)
    expect(page.get_by_test_id("stAlertContentSuccess")).to_contain_text(t(lang, "config.applied"))
    watch.check("after the uploads")


def test_the_uploader_speaks_chinese_where_streamlit_lets_it(page: Page, app_server: StreamlitServer) -> None:
    """On a Chinese page the uploader's button reads 上传 (it read "Upload"), and the YAML uploader shows no English
    "… per file" line under it (its label states the limit read, in Chinese)."""
    config_page(page, app_server, "zh")
    page.get_by_role("tab", name=t("zh", "config.upload")).click()
    dropzone = page.get_by_test_id("stTabs").get_by_test_id("stFileUploaderDropzone")
    button = dropzone.get_by_test_id("stBaseButton-secondary")
    expect(button).to_have_accessible_name(t("zh", "streamlit.upload"))
    expect(dropzone.get_by_test_id("stFileUploaderDropzoneInstructions")).to_be_hidden()
    assert "Upload" not in dropzone.inner_text() and "per file" not in dropzone.inner_text()


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_uploaders_size_limit_is_said_in_the_pages_language(page: Page, app_server: StreamlitServer,
                                                                 lang: str) -> None:
    """Issue 39: /run's and /config's uploaders said "64MB per file" on a Chinese page. The limit line is said in
    the page's language, its size and file types kept; English pages keep Streamlit's own words."""
    open_app(page, f"{app_server.url}/run" + ("?lang=en" if lang == "en" else ""))
    limits = page.get_by_test_id("stFileUploaderDropzoneInstructions")
    expect(limits.first).to_be_attached()
    said = limits.first.evaluate("e => e.textContent")
    size = re.search(r"\d+(?:\.\d+)?[KMG]B", said).group(0)
    assert said.startswith(t(lang, "streamlit.per_file", size=size)), said
    assert ("per file" in said) is (lang == "en")
