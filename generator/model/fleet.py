"""The resolved fleet: typed, frozen, with every default and derived value filled in.

Builders read only this; they never look at profile dictionaries or apply defaults themselves.
"""

from __future__ import annotations

from dataclasses import dataclass

from mpigen.model.cluster import Cluster
from mpigen.model.hardware import Hardware
from mpigen.model.job import Job


@dataclass(frozen=True)
class Fleet:
    hardware: tuple[Hardware, ...]
    clusters: tuple[Cluster, ...]
    jobs: tuple[Job, ...]
    acceptance: tuple[Job, ...] = ()
    """The clusters' fabric acceptance jobs (model/acceptance.py), apart from `jobs`: they are run by hand, so no plan,
    quota or capacity counts them, and their charts are delivered without automated sync."""

    def jobs_of(self, cluster: Cluster) -> tuple[Job, ...]:
        return tuple(job for job in self.jobs if job.cluster.name == cluster.name)

    def acceptance_of(self, cluster: Cluster) -> tuple[Job, ...]:
        return tuple(job for job in self.acceptance if job.cluster.name == cluster.name)
