"""The two ways a setup can fail: StepLab rejects the input, or the real Trainer would refuse it."""

from __future__ import annotations


class SetupError(ValueError):
    """Input StepLab cannot plan: names the field and says what is allowed, in Chinese and English."""

    def __init__(self, field: str, en: str, zh: str):
        super().__init__(f"{field}: {en}")
        from steplab.i18n import zh_typography

        self.field = field
        self.en = en
        self.zh = zh_typography(zh)

    def message(self, lang: str = "en") -> str:
        text = self.zh if lang == "zh" else self.en
        return f"{self.field}: {text}"


class TrainerRefusal(Exception):
    """The real Trainer raises on this configuration: its exception type and message, word for word."""

    def __init__(self, error_type: str, message: str, field: str | None = None):
        super().__init__(f"{error_type}: {message}")
        self.error_type = error_type
        self.message = message
        self.field = field

    def as_dict(self) -> dict[str, str]:
        return {"type": self.error_type, "message": self.message}
