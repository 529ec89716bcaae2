"""Issue 17 in a real browser: a YAML too large for the uploader, a dataset file over the old 1 MB server cap,
and a link with about 100 KB of query string (both languages).

Every number the tests expect comes from the code (`MAX_BYTES`, the dataset stage's count, `MAX_URL_PARAMETER`).
"""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import Page, expect

from steplab.dataset.load import funnel_from_uploads
from steplab.i18n import fmt_int, t
from steplab.io.safe_yaml import MAX_BYTES
from steplab_ui.shell.state import MAX_URL_PARAMETER

from .conftest import CHROMIUM, SKIP_REASON, StreamlitServer
from .streamlit_page import expect_no_exception, open_app, sidebar, title, wait_for_app_run

pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason=SKIP_REASON)]

MB = MAX_BYTES // 2**20


def config_page(page: Page, app_server: StreamlitServer, lang: str) -> None:
    open_app(page, f"{app_server.url}/config?lang={lang}")
    expect(title(page)).to_have_text(t(lang, "page.config.title"))


@pytest.mark.parametrize("lang", ["zh"])  # English: tests/test_config_upload.py (AppTest)
def test_a_yaml_too_large_to_read_is_explained(page: Page, app_server: StreamlitServer, lang: str) -> None:
    """A 10 MB "YAML": it reaches the page (the browser used to turn it away with Streamlit's English "File must be
    1.0MB or smaller", which stayed beside the next file), which says at once, in the user's language, its size
    and the limit the label states; "Fill" refuses it in the same words, once, not "nothing was read"."""
    config_page(page, app_server, lang)
    page.get_by_role("tab", name=t(lang, "config.upload")).click()
    uploader = page.get_by_test_id("stTabs").get_by_test_id("stFileUploader")
    expect(uploader).to_contain_text(t(lang, "config.file", mb=MB))
    big = b"a: 1\n" + b"#" * (10 * 2**20)
    uploader.locator("input[type='file']").set_input_files(
        {"name": "big.yaml", "mimeType": "application/x-yaml", "buffer": big})
    wait_for_app_run(page)
    expect(uploader).to_contain_text("big.yaml")
    errors = page.get_by_test_id("stAlertContentError")
    expect(errors).to_have_count(1)
    expect(errors).to_contain_text(fmt_int(len(big)))
    expect(errors).to_contain_text(f"{MB} MB")
    page.get_by_role("button", name=t(lang, "config.apply")).click()
    wait_for_app_run(page)
    expect(errors).to_have_count(1)
    expect(errors).to_contain_text(fmt_int(len(big)))
    body = page.get_by_test_id("stMain").inner_text()
    assert t(lang, "config_io.empty") not in body and "must be" not in body
    expect(page.get_by_test_id("stAlertContentWarning")).to_have_count(0)
    expect_no_exception(page)


@pytest.mark.parametrize("lang", ["en"])  # Chinese: tests/test_config_upload.py (AppTest)
def test_a_dataset_file_over_one_megabyte_is_counted(page: Page, app_server: StreamlitServer, lang: str) -> None:
    """A 3.5 MB JSONL: the server takes it (with `server.maxUploadSize = 1` it answered 413, while the uploader's
    label promised 64 MB) and the dataset stage counts its rows into the setup."""
    rows = [{"instruction": f"question {i} " + "x" * 150, "input": "", "output": "answer"} for i in range(16_000)]
    data = "\n".join(json.dumps(row) for row in rows).encode()
    info = json.dumps({"big": {"file_name": "big.jsonl"}}).encode()
    mapping = {"stage": "sft", "dataset": "big", "template": "qwen", "cutoff_len": 1024}
    examples = funnel_from_uploads(mapping, {"big.jsonl": data, "dataset_info.json": info}, {}).train_examples
    assert len(data) > 3 * 2**20 and examples == len(rows)
    config_page(page, app_server, lang)
    page.get_by_label(t(lang, "config.yaml")).fill("".join(f"{key}: {value}\n" for key, value in mapping.items()))
    page.keyboard.press("Control+Enter")
    wait_for_app_run(page)
    section = page.get_by_test_id("stMain").get_by_test_id("stExpander")
    section.get_by_text(t(lang, "config.data.heading")).click()
    section.locator("input[type=file]").set_input_files([
        {"name": "big.jsonl", "mimeType": "application/json", "buffer": data},
        {"name": "dataset_info.json", "mimeType": "application/json", "buffer": info}])
    wait_for_app_run(page)
    assert "413" not in section.inner_text()
    page.get_by_role("button", name=t(lang, "config.apply")).click()
    wait_for_app_run(page)
    summary = t(lang, "config.data.summary", train=fmt_int(examples)).replace("**", "").replace("`", "")
    expect(page.get_by_test_id("stMain")).to_contain_text(summary)
    expect(sidebar(page).get_by_text(t(lang, "config.data.sidebar_source", n=fmt_int(examples)))).to_be_visible()
    expect_no_exception(page)


@pytest.mark.parametrize("lang", ["zh"])
def test_a_hundred_kilobyte_link_opens_the_page_with_the_apps_notice(page: Page, app_server: StreamlitServer,
                                                                   lang: str) -> None:
    """About 100 KB of query string, opened on the same machine (the server takes a request head of that size
    when it arrives in one piece): the page draws, the app's notice names the parameter, and the address bar
    no longer carries it."""
    junk = "9" * 100_000
    open_app(page, f"{app_server.url}/calculator?lang={lang}&x={junk}")
    expect(title(page)).to_have_text(t(lang, "page.calculator.title"))
    notice = t(lang, "url.too_long", key="x", length=len(junk) + 2, limit=MAX_URL_PARAMETER).replace("`", "")
    expect(page.get_by_test_id("stAlertContentWarning")).to_contain_text(notice)
    page.wait_for_function("() => !new URLSearchParams(location.search).has('x')")
    assert "x" not in parse_qs(urlparse(page.url).query) and len(page.url) < 100
    expect_no_exception(page)
