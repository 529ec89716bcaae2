"""The setup as query parameters, both ways: the one codec of a setup's text form.

`to_query(setup, base)` writes the fields that differ from `base` (the sidebar's links leave the course setup out,
a class poll the Trainer's defaults); `from_query(mapping, base)` reads a link's parameters back in one parse into
a `Parsed`: the setup (a value that cannot be used keeps `base`'s) and the notices the page says about the link.
`plain_value` is a field's value as JSON holds it (a stored class poll), `query_text` as a URL writes it.
Kinds, ranges and defaults are the field table's (`steplab.trainer.fields.FIELDS`): a new field needs nothing here.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from steplab.errors import SetupError
from steplab.trainer.fields import FIELD_NAMES, FIELDS
from steplab.trainer.setup import DEFAULTS, TrainingSetup, parse_setup

MAX_URL_PARAMETER = 1_000  # characters of `key=value`: far more than any setting or page parameter needs
# A whole link longer than the server reads never reaches the app (Streamlit's uvicorn answers a bare HTTP 400
# once it buffers over 16 KiB of an unfinished request head; on loopback a head arrives whole up to ~100 KB):
# deploy/nginx.conf sends a query longer than MAX_LINK_QUERY characters back to the same page with only
# LINK_REFUSED in it, and the page says why its setup is the default.
MAX_LINK_QUERY = 8_192
LINK_REFUSED = ("link", "too_long")
TEXT_FIELDS = tuple(name for name, field in FIELDS.items() if field.kind in ("choice", "kwargs"))  # read as text
NULL = "null"  # an optional field set to "not set" where the base sets it


class Notice(NamedTuple):
    """What a page says about a link's parameter: `code` is the catalogue key, `detail` what it needs.

    `url.ignored`: the value cannot be used (the detail is the value); `url.too_long`: a `key=value` longer than
    `MAX_URL_PARAMETER` (its length); `url.unknown`: a misspelt setup field (the field meant); `url.link_refused`:
    the balancer's mark of a link it refused (its limit)."""

    code: str
    key: str
    detail: int | str


@dataclass(frozen=True)
class Parsed:
    """One parse of a link: the setup, the notices about its parameters, and the setup fields it set."""

    setup: TrainingSetup
    notices: tuple[Notice, ...] = ()
    given: frozenset[str] = frozenset()

    @property
    def dropped(self) -> tuple[str, ...]:
        """The parameters to take out of the link before anything reads them: every one a notice names."""
        return tuple(dict.fromkeys(notice.key for notice in self.notices))


def plain_value(name: str, value: Any) -> Any:
    """A field's value as JSON holds it: whole numbers as integers, kwargs as their JSON text, flags as flags."""
    if name == "lr_scheduler_kwargs":
        if isinstance(value, str):  # already its JSON text
            return value
        items = dict(value) if value else {}
        return json.dumps(items, sort_keys=True) if items else ""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return int(value)
    return value


def query_text(name: str, value: Any) -> str:
    """A field's value as a link writes it: `eval_steps=50` (not `50.0`), `true`/`false`, `null` for not set."""
    plain = plain_value(name, value)
    if plain is None:
        return NULL
    if isinstance(plain, bool):
        return "true" if plain else "false"
    return str(plain)


def to_query(setup: TrainingSetup, base: TrainingSetup = DEFAULTS) -> dict[str, str]:
    """The fields of `setup` that differ from `base`, in the field table's order, as a link writes them
    (`max_steps` only when it is on: positive)."""
    query = {}
    for name in FIELD_NAMES:
        value = getattr(setup, name)
        if value != getattr(base, name) and not (name == "max_steps" and value <= 0):
            query[name] = query_text(name, value)
    return query


def read_value(name: str, raw: str) -> Any:
    """A link's text as the field reads it: JSON for numbers and flags, the text itself for names and kwargs."""
    if name in TEXT_FIELDS:
        return raw
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):  # RecursionError: `[[[[...` nested deeper than the parser goes
        return raw


def link_problem(key: str, values: Sequence[str]) -> tuple[str, int | str] | None:
    """Why a parameter is dropped before anything reads it, whoever it belongs to: `("url.too_long", length)`
    for a `key=value` longer than `MAX_URL_PARAMETER` characters, `("url.unknown", field)` for a misspelt setup
    field, `("url.link_refused", MAX_LINK_QUERY)` for the balancer's mark of a link it refused. Other unknown
    keys stay unnamed: pages have their own (`?lesson=`, `?step=`) and shared links pick up a messenger's or a
    tracker's (`?from=singlemessage`, `?utm_source=`)."""
    if (key, list(values)) == (LINK_REFUSED[0], [LINK_REFUSED[1]]):
        return "url.link_refused", MAX_LINK_QUERY
    length = len(key) + 1 + max(map(len, values), default=0)
    if length > MAX_URL_PARAMETER:
        return "url.too_long", length
    if key not in FIELDS:
        meant = field_meant(key)
        return ("url.unknown", meant) if meant else None
    return None


def field_meant(key: str) -> str | None:
    """The setup field a misspelt key most likely means: the closest names (similarity 0.8 or more), and among those
    nearly as close as the best (within 0.05), the one the field table lists first: it lists the fields that count
    first (`per_device_batch_size` is `per_device_train_batch_size`, not the later `per_device_eval_batch_size`)."""
    close = difflib.get_close_matches(key, FIELD_NAMES, n=5, cutoff=0.8)
    if not close:
        return None
    ratio = {name: difflib.SequenceMatcher(None, key, name).ratio() for name in close}
    best = max(ratio.values())
    return min((name for name in close if ratio[name] >= best - 0.05), key=FIELD_NAMES.index)


def _problems(raw: Mapping[str, str], base: TrainingSetup) -> tuple[TrainingSetup, dict[str, SetupError]]:
    """The setup `raw`'s usable values make on `base`, and the values that cannot be used: the field table's kind
    and range, and an open choice (a scheduler name) that the controls do not offer."""
    parsed = parse_setup({name: read_value(name, text) for name, text in raw.items()}, base)
    problems = dict(parsed.problems)
    setup = parsed.setup
    for name, text in raw.items():
        field = FIELDS[name]
        if name not in problems and field.open and getattr(setup, name) not in field.choices:
            problems[name] = SetupError("setup.choice", field=name, value=text, allowed=", ".join(field.choices))
            setup = replace(setup, **{name: getattr(base, name)})
    return setup, problems


def from_query(query: Mapping[str, str | Sequence[str]], base: TrainingSetup = DEFAULTS) -> Parsed:
    """A link's parameters (a key's values, the last one counting) read in one parse: the setup on `base`, and a
    notice for each parameter that is dropped (`Notice`), link problems first, then the values refused."""
    notices: list[Notice] = []
    raw: dict[str, str] = {}
    for key, given in query.items():
        values = [given] if isinstance(given, str) else list(given)
        problem = link_problem(key, values)
        if problem is not None:
            notices.append(Notice(problem[0], key, problem[1]))
        elif key in FIELDS and values:
            raw[key] = values[-1]
    setup, problems = _problems(raw, base)
    notices.extend(Notice("url.ignored", name, raw[name]) for name in problems)
    return Parsed(setup, tuple(notices), frozenset(raw) - set(problems))


def value_problem(name: str, text: str) -> str | None:
    """Why a link's value for field `name` cannot be used, in English (None when it can)."""
    problem = _problems({name: text}, DEFAULTS)[1].get(name)
    return None if problem is None else problem.text.en
