"""`mpigen import`: profiles from what a cluster already runs (its exported nodes and operators, its MPIJobs).

`adopt_jobs` is imported on first use: it compiles profiles (validate, resolve, manifests), which a command that
only names this package's result types must not load (`mpigen --help` loads no stage)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mpigen.adopt.result import Adoption, AdoptionError, ProfileText
from mpigen.support.lazy import lazy_name

if TYPE_CHECKING:
    from mpigen.adopt.jobs import adopt_jobs

_HOMES = {"adopt_jobs": "mpigen.adopt.jobs"}


def __getattr__(name: str) -> Any:
    return lazy_name(__name__, _HOMES, name)


__all__ = ["Adoption", "AdoptionError", "ProfileText", "adopt_jobs"]
