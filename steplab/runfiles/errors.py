"""A run file StepLab cannot read: the one error kind of this room (`runfiles.*` catalogue keys)."""

from __future__ import annotations

from steplab.errors import InputError


class RunFileError(InputError):
    """A file (or archive) that cannot be read as a run's file: which one, and why."""
