"""The ways input can fail: StepLab cannot use it (`InputError` and its kinds), or the real Trainer would refuse it."""

from __future__ import annotations

from typing import Any

from steplab.i18n import Message


class InputError(ValueError):
    """Input StepLab cannot use: a catalogue code, its values, and the field it is about (if one).

    `message(lang)` says it in the reader's language; `str(error)` is the English message (CLI, logs).
    """

    def __init__(self, code: str, /, *, field: str | None = None, **values: Any):
        text = Message(code, tuple(values.items()))
        self.code: str = code
        self.field = field
        self.values = values
        self.text = text
        super().__init__(self.message("en"))

    @property
    def line(self) -> int | None:
        """The 1-based line of a config the problem is on, when known."""
        return self.values.get("line")

    def message(self, lang: str = "en") -> str:
        text = self.text.get(lang)
        return f"{self.field}: {text}" if self.field else text


class SetupError(InputError):
    """A setup field StepLab cannot plan: out of range, the wrong type, or in conflict with another field."""


class TrainerRefusal(Exception):
    """The real Trainer raises on this configuration: its exception type and message, word for word, and where
    StepLab knows one, what to change (`fix`, a catalogue sentence)."""

    def __init__(self, error_type: str, message: str, field: str | None = None, fix: Message | None = None):
        super().__init__(f"{error_type}: {message}")
        self.error_type = error_type
        self.message = message
        self.field = field
        self.fix = fix

    def as_dict(self) -> dict[str, str]:
        return {"type": self.error_type, "message": self.message}
