"""Every page's preamble: the shell (language, menu, sidebar setup), the first row (title and the presenter
switch), the presenter style when it is on, the URL notices, and a live class's seat kept in the address, in one
call."""

from __future__ import annotations

from dataclasses import dataclass

from streamlit.delta_generator import DeltaGenerator

from steplab.errors import SetupError
from steplab.trainer.plan import Plan
from steplab.trainer.setup import TrainingSetup
from steplab_ui.shell import layout, presenter, progress, seat, state


@dataclass(frozen=True, eq=False)
class PageContext:
    """What every page starts from: the language, the shared setup (or the reason there is none), whether
    presenter view is on, and the first row's slot left of the presenter switch (`heading`)."""

    lang: str
    setup: TrainingSetup | None
    error: SetupError | None
    presenter: bool = False
    heading: DeltaGenerator | None = None

    def plan(self) -> Plan | None:
        """The shared setup's plan, or None after a clear message (`plan_or_message`)."""
        return layout.plan_or_message(self.setup, self.error, self.lang)


def page(name: str | None) -> PageContext:
    """Every page's preamble, the same through the router or run alone: the shell, the first row, the URL notices.

    `name` picks the title and intro (`page.<name>.title`); None for a page that writes its own first row into
    `heading` (a title, a chooser). Presenter view drops the intro: the projector gets the title only.
    """
    shared = state.shared_setup()
    lang = state.language()
    on = presenter.sync()
    if on:
        presenter.style()
    heading = presenter.bar(lang, on)
    if name is not None:
        layout.header(lang, name, heading, intro=not on)
    state.show_url_notices(lang, shared.notices)
    if name != "config":  # /config lists them itself, beside its import
        state.show_import_notes(lang, shared.setup)
    if (restored := seat.keep(lang)) is not None:  # a class seat taken back from the address: its progress too
        progress.restore_from_class(restored)
    return PageContext(lang, shared.setup, shared.error, on, heading)
