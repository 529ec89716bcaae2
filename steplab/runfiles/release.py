"""Which Trainer release wrote a run, from what its files show: the version a console prints, the lines each
release prints (5.x's "Num update steps per epoch" and "Resuming training", 4.x's "Continuing training"), and
how its progress callback writes a logged dict (5.x: strings of four significant digits; 4.x: floats)."""

from __future__ import annotations

from steplab.runfiles.console import Console
from steplab.runfiles.sources import Found
from steplab.trainer.profiles import PROFILES

HF_PROFILES = tuple(p for p, profile in PROFILES.items() if profile.framework == "transformers")


def _version(text: str) -> tuple[int, float]:
    """`5.6.0` → (5, 6); `4.x` → (4, inf)."""
    major, _, minor = text.partition(".")
    minor = minor.split(".")[0]
    return int(major), float("inf") if minor in ("x", "") else int(minor)


def profile_for_version(version: str) -> str | None:
    """The profile whose `releases` range (profiles.py, e.g. "4.47 – 4.51") holds a transformers version."""
    wanted = _version(version)
    for profile_id in HF_PROFILES:
        low, _, high = PROFILES[profile_id].releases.partition(" – ")
        if _version(low) <= wanted <= _version(high):
            return profile_id
    return None


def _family(profile_id: str) -> str:
    return PROFILES[profile_id].log_block  # "5" or "4": the block (and the lines) a release prints


def candidates(console: Console | None) -> tuple[tuple[str, ...], list[Found]]:
    """The profiles a console allows, newest first, and the evidence (a version, or the family's lines)."""
    if console is None:
        return HF_PROFILES, []
    if console.transformers_version is not None:
        found = profile_for_version(console.transformers_version.value)
        if found:
            return (found,), [console.transformers_version]
    family: str | None = None
    evidence: list[Found] = []
    if "update_steps_per_epoch" in console.block:
        family = "5"
        evidence.append(console.block["update_steps_per_epoch"])
    elif console.block:
        family = "4"
        evidence.append(next(iter(console.block.values())))
    if "release_lines" in console.resume:
        family = family or console.resume["release_lines"].value
        evidence.append(console.resume["release_lines"])
    if console.string_floats is not None:
        family = family or "5"
        evidence.append(console.string_floats)
    elif console.python_floats is not None:
        family = family or "4"
        evidence.append(console.python_floats)
    if family is None:
        return HF_PROFILES, []
    return tuple(p for p in HF_PROFILES if _family(p) == family), evidence
