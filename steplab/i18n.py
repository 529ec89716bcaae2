"""Bilingual text: the engine's messages carry both languages; the app's catalogue lives in `locales/`."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

LANGUAGES = ("zh", "en")
DEFAULT_LANGUAGE = "zh"
LOCALES = Path(__file__).with_name("locales")


def _is_cjk(char: str) -> bool:
    return "\u3000" <= char <= "\u9fff" or "\uff00" <= char <= "\uffef"


FULLWIDTH = {",": "，", ":": "：", ";": "；", "!": "！", "?": "？"}


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
                chars[i] = "（"
        elif char == ")" and opened:
            _, wide = opened.pop()
            if wide or _is_cjk(before):
                chars[i] = "）"
    return "".join(chars)


@dataclass(frozen=True)
class Text:
    """One message in Chinese and English (Chinese punctuation is made full-width)."""

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


@lru_cache(maxsize=2)
def catalogue(lang: str) -> dict[str, str]:
    """The app's strings for one language: every `locales/<lang>/*.yaml` (one file per page or part, flat keys)."""
    strings: dict[str, str] = {}
    for path in sorted((LOCALES / lang).glob("*.yaml")):
        part = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        clash = set(part) & set(strings)
        if clash:
            raise ValueError(f"{path.name} repeats keys defined in another file: {sorted(clash)}")
        strings.update(part)
    return strings


def t(lang: str, key: str, /, **values: object) -> str:
    """The catalogue string `key` in `lang`, formatted with `values`; falls back to Chinese, then the key."""
    text = catalogue(lang).get(key) or catalogue(DEFAULT_LANGUAGE).get(key) or key
    return text.format(**values) if values else text


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
