"""/config's uploads without a browser (Streamlit's AppTest): one size limit, said where the file is chosen and
where it is refused; a YAML saved as UTF-16 or UTF-32 fills the setup like a UTF-8 one (both languages)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from test_app import first_button

from steplab.dataset.files import MAX_FILE_BYTES
from steplab.i18n import fmt_int, t
from steplab.io.safe_yaml import MAX_BYTES

ROOT = Path(__file__).resolve().parents[1]
YAML = "# 课程设置：批大小二，累积十六步\nper_device_train_batch_size: 2\ngradient_accumulation_steps: 16\n" \
       "num_train_epochs: 2\nnum_samples: 640\n"
SERVER_CAP_MB = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())["server"]["maxUploadSize"]


def page(path: str, lang: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app_pages" / path), default_timeout=60)
    at.query_params["lang"] = lang
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def fill_with_upload(at: AppTest, name: str, content: bytes) -> AppTest:
    at.file_uploader(key="config_upload").upload(name, content, "application/x-yaml").run()
    first_button(at).click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_yaml_uploader_takes_exactly_what_is_read_and_says_so(lang):
    """One limit read, `MAX_BYTES`, stated by the label. The browser lets a larger file through (up to the dataset
    files' cap), so that the page says what is wrong with it in the user's language: a file the browser refused
    stayed in the uploader beside the next one with Streamlit's English "File must be 1.0MB or smaller" (issue 27).
    The server checks every upload against `server.maxUploadSize` alone, whole request body included, so that
    takes the largest uploader's cap and a margin for the multipart framing: the dataset files' (which got a 413
    over 1 MB when the server's cap was 1)."""
    at = page("config.py", lang)
    yaml_uploader, data_uploader = at.file_uploader(key="config_upload"), at.file_uploader(key="config_data_files")
    assert yaml_uploader.proto.max_upload_size_mb * 2**20 == MAX_FILE_BYTES > MAX_BYTES
    assert yaml_uploader.label == t(lang, "config.file", mb=MAX_BYTES // 2**20)
    assert f"{MAX_BYTES // 2**20} MB" in yaml_uploader.label
    assert data_uploader.proto.max_upload_size_mb * 2**20 == MAX_FILE_BYTES
    assert SERVER_CAP_MB == max(yaml_uploader.proto.max_upload_size_mb, data_uploader.proto.max_upload_size_mb) + 1
    progress = page("selfcheck.py", lang).file_uploader[0]  # the progress file: asks the browser for no more
    assert progress.proto.max_upload_size_mb == 1 <= SERVER_CAP_MB


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_file_over_the_limit_is_refused_with_its_size_the_limit_and_what_to_do(lang):
    """A file past the cap is refused before parsing, said once as soon as it is chosen and once after Fill: its
    size, the limit in the uploader's unit and in bytes, and the hint to pick the training YAML."""
    at = page("config.py", lang)
    before = at.session_state["per_device_train_batch_size"]
    content = YAML.encode() + b"#" * (MAX_BYTES + 1 - len(YAML.encode()))
    at.file_uploader(key="config_upload").upload("train.yaml", content, "application/x-yaml").run()
    assert len(at.error) == 1 and fmt_int(len(content)) in at.error[0].value
    fill_with_upload(at, "train.yaml", content)
    assert len(at.error) == 1
    said = " ".join(e.value for e in at.error)
    assert fmt_int(len(content)) in said and fmt_int(MAX_BYTES) in said and f"{MAX_BYTES // 2**20} MB" in said
    assert t(lang, "config_io.too_large.hint").strip() in said
    assert t(lang, "config.nothing", mb=MAX_FILE_BYTES // 2**20) not in [w.value for w in at.warning]
    assert at.session_state["per_device_train_batch_size"] == before and not at.success


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32"])
def test_a_yaml_saved_as_utf16_or_utf32_fills_the_setup(lang, encoding):
    """What a Windows editor saves as "Unicode" (UTF-16 with a byte-order mark), the same without a mark, and
    UTF-32: read, not called "may be a binary file"."""
    at = page("config.py", lang)
    fill_with_upload(at, "train.yaml", YAML.encode(encoding))
    assert not at.error, [e.value for e in at.error]
    assert [s.value for s in at.success] == [t(lang, "config.applied")]
    values = {key: at.session_state[key] for key in ("per_device_train_batch_size", "gradient_accumulation_steps",
                                                      "num_train_epochs", "num_samples")}
    assert values == {"per_device_train_batch_size": 2, "gradient_accumulation_steps": 16, "num_train_epochs": 2,
                      "num_samples": 640}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_gbk_yaml_is_told_to_be_saved_as_utf8(lang):
    """A Chinese Windows editor's default encoding: named as a likely cause, with what to do, in the user's language."""
    at = page("config.py", lang)
    fill_with_upload(at, "train.yaml", YAML.encode("gbk"))
    said = " ".join(e.value for e in at.error)
    assert "GBK" in said and "UTF-8" in said
    assert said == t(lang, "config_io.not_utf8.bytes", utf8="UTF-8", utf16="UTF-16", utf32="UTF-32", gbk="GBK",
                     offset=len(b"# "))
    assert not at.success



@pytest.mark.parametrize("lang", ["zh", "en"])
def test_fills_message_stands_only_while_its_paste_is_there(lang):
    """Issue 27: an error stays with the paste it was about and goes with the next one (it stood beside the next
    paste's); a successful import's message stays when the box is empty again (Streamlit empties it when the
    learner comes back from another page), since the import still stands."""
    at = page("config.py", lang)
    at.text_area(key="config_text").set_value("per_device_train_batch_size: [\n").run()
    first_button(at).click().run()
    assert len(at.error) == 1
    at.text_area(key="config_text").set_value(YAML).run()
    assert not at.error and not at.success
    first_button(at).click().run()
    assert [s.value for s in at.success] == [t(lang, "config.applied")]
    at.text_area(key="config_text").set_value("").run()
    assert [s.value for s in at.success] == [t(lang, "config.applied")]
    at.text_area(key="config_text").set_value("num_samples: 5\n").run()
    assert not at.success and not at.error
