"""Every page's preamble: the shell (language, menu, sidebar setup), the title and the URL notices, in one call."""

from __future__ import annotations

from dataclasses import dataclass

from steplab.errors import SetupError
from steplab.trainer.plan import Plan
from steplab.trainer.setup import TrainingSetup
from steplab_ui import layout, state


@dataclass(frozen=True)
class PageContext:
    """What every page starts from: the language and the shared setup (or the reason there is none)."""

    lang: str
    setup: TrainingSetup | None
    error: SetupError | None

    def plan(self) -> Plan | None:
        """The shared setup's plan, or None after a clear message (`plan_or_message`)."""
        return layout.plan_or_message(self.setup, self.error, self.lang)


def page(name: str | None) -> PageContext:
    """Every page's preamble, the same through the router or run alone: the shell, the title, the URL notices.

    `name` picks the title and intro (`page.<name>.title`); None for a page that writes its own title.
    """
    setup, error = state.shared_setup()
    lang = state.language()
    if name is not None:
        layout.header(lang, name)
    state.show_url_notices(lang)
    return PageContext(lang, setup, error)
