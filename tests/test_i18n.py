"""steplab.i18n's number helpers."""

from __future__ import annotations

import math

import pytest

from steplab.i18n import LANGUAGES, fmt_number, whole


def test_whole_numbers_lose_their_point_and_nothing_else_changes():
    assert whole(8.0) == 8 and isinstance(whole(8.0), int)
    assert whole(-0.0) == 0 and isinstance(whole(-0.0), int)
    assert whole(2.5) == 2.5 and isinstance(whole(2.5), float)
    assert whole(7) == 7 and isinstance(whole(7), int)
    assert math.isinf(whole(math.inf)) and math.isnan(whole(math.nan))
    assert fmt_number(whole(1600.0)) == "1,600"


# --------------------------------------------------------------------------- issue 39: code inside a message


def _rendered(markdown: str) -> str:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").render(markdown)


@pytest.mark.parametrize("text", ["TrainingArguments.__init__() got an unexpected keyword argument 'warmup_ratio'",
                                  "a `tick` and ``two`` inside", "`starts and ends`", "*stars* and _under_ and [link](x)",
                                  "two\nlines"])
def test_code_in_a_message_is_shown_as_typed(text):
    """A `Code` value is one code span wherever the message is rendered as Markdown: nothing in it turns into
    emphasis, a link or a second span."""
    import html

    from steplab.i18n import code, fill

    said = _rendered(fill("before {error} after", {"error": code(text)}))
    assert said.count("<code>") == 1 and "<strong>" not in said and "<em>" not in said and "<a " not in said
    inner = html.unescape(said.split("<code>")[1].split("</code>")[0])
    assert inner == " ".join(text.splitlines())


def test_the_warmup_ratio_warning_shows_init_as_typed():
    """Markdown read the `__init__` of transformers' refusal in the warmup_ratio warning as bold "init"; the
    warning as `layout.show_warnings` writes it now keeps it."""
    from steplab.teaching.warnings import plan_warnings
    from steplab.trainer.plan import make_plan
    from steplab.trainer.setup import TrainingSetup

    warnings = plan_warnings(make_plan(TrainingSetup(warmup_ratio=0.1, trainer="hf-5.6")))
    (warning,) = [w for w in warnings if w.text.key == "warn.warmup_ratio_deprecated.text"]
    for lang in LANGUAGES:
        said = _rendered(f"**{warning.text.get(lang)}**  \n{warning.fix.get(lang)}")
        assert "TrainingArguments.__init__()" in said and "<strong>init</strong>" not in said


def test_a_template_row_error_shows_its_exception_and_the_row_as_typed():
    """A dataset row that a template cannot write is refused with the exception's words and the row's text as code:
    a row holding `__init__` or `*stars*` is shown as typed, in both languages."""
    from steplab.dataset.templates import _refused, templates

    template = next(iter(templates().values()))
    error = _refused("dataset.bad_tools", template, "call *stars* __init__", ValueError("bad __init__ [x](y)"))
    for lang in LANGUAGES:
        said = _rendered(error.message(lang))
        assert "<strong>" not in said and "<em>" not in said and "<a " not in said
        assert "__init__" in said and said.count("<code>") >= 2
