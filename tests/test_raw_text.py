"""No page and no lesson shows a catalogue key instead of its sentence (issue 39: `home.link.grpo` was on the home
page in both languages). Every page and every lesson, each prediction answered, in both languages, through
AppTest; every string the page sends to the browser (text, labels, help, options, captions) is read."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.json_format import MessageToDict
from streamlit.testing.v1 import AppTest

from steplab.i18n import LANGUAGES, catalogue
from steplab.teaching.lessons import load_lessons
from steplab_ui.shell.navigation import PAGES
from steplab_ui.views.lesson import revealed_key

ROOT = Path(__file__).resolve().parents[1]
KEYS = frozenset(catalogue("zh")) | frozenset(catalogue("en"))
PREFIXES = frozenset(key.split(".")[0] for key in KEYS)
# a dotted lower-case name standing alone (not part of a path, a file name, a URL or a longer identifier)
DOTTED = re.compile(r"(?<![\w./:@-])([a-z][a-z0-9_]*(?:\.[a-z0-9_]+)+)(?![\w/:(-])")
FILE_ENDINGS = frozenset({"py", "yaml", "yml", "json", "jsonl", "md", "txt", "csv", "bin", "safetensors", "pt", "log",
                          "zip", "parquet", "arrow", "html", "png", "toml", "cfg", "sh"})


def looks_like_a_key(token: str) -> bool:
    """A catalogue key, or a name shaped like one: two dots or more under a catalogue prefix (`home.link.grpo`)."""
    parts = token.split(".")
    return token in KEYS or (len(parts) >= 3 and parts[0] in PREFIXES and parts[-1] not in FILE_ENDINGS)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for inner in value.values():
            yield from _strings(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _strings(inner)


def _nodes(node: Any) -> Iterator[Any]:
    yield node
    for child in getattr(node, "children", {}).values():
        yield from _nodes(child)


def raw_keys(at: AppTest) -> list[str]:
    """Every key-like token in what the page sent (each element's and container's message, all its strings)."""
    found = []
    for node in _nodes(at._tree):
        proto = getattr(node, "proto", None)
        if proto is None or getattr(node, "type", "") == "plotly_chart":
            continue
        for text in _strings(MessageToDict(proto)):
            found += [token for token in DOTTED.findall(text) if looks_like_a_key(token)]
    return sorted(set(found))


def test_the_check_finds_a_raw_key():
    """The check itself: a page that writes a key where its sentence belongs is caught, a file name is not."""
    def page() -> None:
        import streamlit as st

        st.caption("home.link.grpo")
        st.markdown("see `qwen3_lora_sft.yaml` and `trl/trainer/grpo_config.py`, version 4.57.1")
        st.selectbox("pick", ["room.ask.title", "plain"])

    at = AppTest.from_function(page).run()
    assert raw_keys(at) == ["home.link.grpo", "room.ask.title"]


def _run(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("path", [path for _, path, _, _ in PAGES])
def test_no_page_shows_a_catalogue_key(path, lang):
    at = AppTest.from_file(str(ROOT / path), default_timeout=90)
    at.query_params["lang"] = lang
    assert raw_keys(_run(at)) == []


LESSONS = load_lessons()


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("lesson", LESSONS, ids=[lesson.id for lesson in LESSONS])
def test_no_lesson_shows_a_catalogue_key(lesson, lang):
    """The whole lesson: every prediction answered, so every block is drawn, its widgets and self-check too."""
    at = AppTest.from_file(str(ROOT / "app_pages" / "lessons.py"), default_timeout=120)
    at.query_params["lesson"] = lesson.id
    at.query_params["lang"] = lang
    for index, block in enumerate(lesson.blocks):
        if block.kind == "predict":
            at.session_state[revealed_key(f"{lesson.id}_{index}")] = True
    assert raw_keys(_run(at)) == []
