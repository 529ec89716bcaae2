"""Every sentence a user reads: the catalogue in `locales/`, one placeholder language, one number formatter.

The engine never writes prose. It returns a `Message` (a catalogue key and its values); a page says it in the
reader's language with `message.get(lang)`. Placeholders are `{name}` or `{name:spec}` everywhere (locales,
lessons, questions), filled by `fill`; numbers without a spec are written by `fmt_number` (1,600; 2.4; 5.00e-05).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

LANGUAGES = ("zh", "en")
DEFAULT_LANGUAGE = "zh"
LOCALES = Path(__file__).with_name("locales")


def _is_cjk(char: str) -> bool:
    return "\u3000" <= char <= "\u9fff" or "\uff00" <= char <= "\uffef"


FULLWIDTH = {",": "\uff0c", ":": "\uff1a", ";": "\uff1b", "!": "\uff01", "?": "\uff1f"}  # full-width , : ; ! ?


def zh_typography(text: str) -> str:
    """Chinese punctuation next to Chinese characters: ASCII , : ; ! ? and (…) become full-width.

    Numbers (1,600), code and formulas keep ASCII punctuation: only marks touching a CJK character change.
    """
    chars = list(text)
    opened: list[tuple[int, bool]] = []
    for i, char in enumerate(chars):
        before = chars[i - 1] if i else ""
        after = chars[i + 1] if i + 1 < len(chars) else ""
        if char in FULLWIDTH and (_is_cjk(before) or (_is_cjk(after) and not before.isdigit())):
            chars[i] = FULLWIDTH[char]
        elif char == "(":
            wide = _is_cjk(before) or _is_cjk(after)
            opened.append((i, wide))
            if wide:
                chars[i] = "\uff08"
        elif char == ")" and opened:
            _, wide = opened.pop()
            if wide or _is_cjk(before):
                chars[i] = "\uff09"
    return "".join(chars)


@dataclass(frozen=True)
class Text:
    """Bilingual content as an author wrote it in a lesson or question file (Chinese punctuation made full-width).

    Engine code never builds one from literals: its sentences are `Message`s of the catalogue.
    """

    zh: str
    en: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "zh", zh_typography(self.zh))

    def get(self, lang: str) -> str:
        return self.en if lang == "en" else self.zh


def normalise_language(value: object) -> str:
    """'en'/'zh' (also 'en-US', 'zh-CN', ...); anything else is the default language."""
    text = str(value or "").strip().lower()[:2]
    return text if text in LANGUAGES else DEFAULT_LANGUAGE


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml reads the catalogue ~10x faster (our own files)


@lru_cache(maxsize=2)
def catalogue(lang: str) -> dict[str, str]:
    """The app's strings for one language: every `locales/<lang>/*.yaml` (one file per page or part, flat keys)."""
    strings: dict[str, str] = {}
    for path in sorted((LOCALES / lang).rglob("*.yaml")):
        part = yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER) or {}  # noqa: S506 - a safe loader
        clash = set(part) & set(strings)
        if clash:
            raise ValueError(f"{path.name} repeats keys defined in another file: {sorted(clash)}")
        strings.update(part)
    return strings


PLACEHOLDER = re.compile(r"(?<![%{])\{([A-Za-z_][\w.]*)(?::([^{}]*))?\}(?!\})")
"""`{name}` or `{name:spec}`; `%{x}` (a plotly hover template) and `{{...}}` are left alone."""


def whole(value: float) -> float:
    """A whole number as an int (8.0 → 8, so it is written and stored without `.0`), any other number as it is."""
    return int(value) if float(value).is_integer() else value


def fmt_number(value: Any) -> str:
    """Numbers as a learner reads them: 1,600; 2.4; 5.00e-05; other values as they print."""
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int):
        return fmt_int(value)
    if isinstance(value, float):
        if value == int(value) and abs(value) < 1e15:
            return fmt_int(int(value))
        return f"{value:.2e}" if abs(value) < 1e-3 else fmt_float(value, 3)
    return str(value)


class Code(str):
    """Code said inside a message (an exception's words, a name): `fill` writes it as a Markdown code span, so
    `TrainingArguments.__init__()` stays as typed where the message is rendered (Markdown read `__init__` as bold
    "init"). Engine code wraps such a value with `code(...)`; the templates leave it bare."""


def code(text: object) -> Code:
    """`text` as code for a message's placeholder (see `Code`)."""
    return Code(str(text))


def code_span(text: str) -> str:
    """`text` as one Markdown code span: fenced by one more backtick than its longest run, spaced when it starts or
    ends with a backtick (CommonMark's rule), line breaks as spaces."""
    text = " ".join(text.splitlines())
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * (longest + 1)
    padded = f" {text} " if text.startswith("`") or text.endswith("`") else text
    return f"{fence}{padded}{fence}"


def fill(template: str, values: Mapping[str, Any] | Callable[[str], Any], lang: str = DEFAULT_LANGUAGE) -> str:
    """Put values into `{name}` / `{name:spec}` placeholders: the one resolver of locales, lessons and questions.

    `values` is a mapping or a function of the name (lessons resolve `{course.max_steps}` that way). A value
    that is a `Message` is said in `lang`; a number without a spec goes through `fmt_number`. A name that
    does not resolve raises `KeyError` (with the name), so a typo in a template is found by the tests.
    """
    lookup = values if callable(values) else values.__getitem__

    def one(match: re.Match[str]) -> str:
        value = lookup(match.group(1))
        spec = match.group(2)
        if isinstance(value, _Said):
            return value.get(lang)
        if isinstance(value, Code):
            return code_span(value)
        return format(value, spec) if spec else fmt_number(value)

    return PLACEHOLDER.sub(one, template)


def _entry(lang: str, key: str) -> str | dict[str, str]:
    return catalogue(lang).get(key) or catalogue(DEFAULT_LANGUAGE).get(key) or key


def t(lang: str, key: str, /, **values: object) -> str:
    """The catalogue string `key` in `lang` with `values` filled in; falls back to Chinese, then the key.

    An entry may be a mapping `{one: ..., other: ...}`: the `count` value picks the form (English plurals).
    """
    text = _entry(lang, key)
    if isinstance(text, dict):
        text = text["one"] if values.get("count") == 1 else text["other"]
    return fill(text, values, lang) if values else text


class _Said:
    """Something said in either language by `get(lang)`; `.zh` and `.en` read it in one."""

    def get(self, lang: str) -> str:
        raise NotImplementedError

    @property
    def zh(self) -> str:
        return self.get("zh")

    @property
    def en(self) -> str:
        return self.get("en")


@dataclass(frozen=True)
class Message(_Said):
    """A sentence the engine means: a catalogue key and its values, said in either language by `get`."""

    key: str
    values: tuple[tuple[str, Any], ...] = ()

    def get(self, lang: str) -> str:
        text = t(lang, self.key, **dict(self.values))
        return zh_typography(text) if lang == "zh" else text


def msg(key: str, /, **values: Any) -> Message:
    """`Message(key, values)`: what engine code writes instead of a sentence."""
    return Message(key, tuple(values.items()))


@dataclass(frozen=True)
class Joined(_Said):
    """Several messages said one after another, joined by the catalogue's separator `separator`."""

    parts: tuple[Message | Joined, ...]
    separator: str = "list.separator"

    def get(self, lang: str) -> str:
        return t(lang, self.separator).join(part.get(lang) for part in self.parts)


def joined(parts: Iterable[Message | Joined], separator: str = "list.separator") -> Joined:
    """The messages `parts` as one, joined by the separator entry `separator` (`list.separator`: a full-width semicolon / "; ")."""
    return Joined(tuple(parts), separator)


def fmt_int(value: int) -> str:
    """Thousands separators, the same in both languages: 1,600."""
    return f"{value:,}"


def fmt_float(value: float, digits: int = 4) -> str:
    """A float without noise: 2.4, 0.5, 2.934 (up to `digits` decimals)."""
    text = f"{value:,.{digits}f}".rstrip("0").rstrip(".")
    return text or "0"


def fmt_lr(value: float) -> str:
    """Learning rates in scientific notation when small: 5e-05 → 5.0e-05."""
    return "0" if value == 0 else (f"{value:.3g}" if value >= 1e-3 else f"{value:.2e}")


# A measured figure keeps the precision it is read with (a table's column lines up, 9.80 GiB stays 9.80): these
# write it as asked, where `fmt_number` would choose. The torch labs' views write every number through them.

def fmt_fixed(value: float, digits: int) -> str:
    """Exactly `digits` decimals, thousands grouped: 27.92, 0.690, 1,024 (`digits` 0)."""
    return f"{value:,.{digits}f}"


def fmt_significant(value: float, digits: int = 6) -> str:
    """At most `digits` significant digits, no trailing zeros, scientific when very small or large: 0.0812, 0.125,
    1024, 1e-12 (Python's `g`)."""
    return f"{value:.{digits}g}"


def fmt_exponent(value: float, digits: int = 1) -> str:
    """Scientific notation with `digits` decimals: 4.2e-17."""
    return f"{value:.{digits}e}"


def fmt_percent(share: float, digits: int = 0) -> str:
    """A share (0.25) as a percentage with `digits` decimals: 25%, 12.5%."""
    return f"{share:.{digits}%}"


def sentences(lang: str, *parts: str) -> str:
    """Sentences one after another as each language writes them: Chinese without a space between them."""
    return ("" if lang == "zh" else " ").join(part for part in parts if part)
