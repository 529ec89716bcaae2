"""What can go wrong while reading datasets, said through the catalogue (`dataset.*` keys)."""

from __future__ import annotations

from steplab.errors import InputError


class DatasetError(InputError):
    """A dataset StepLab cannot read or count: which dataset, which path, and what to change."""
