"""Part of a fleet a command is asked about (`--cluster`, `--job`): big fleets are read a cluster or a job at a
time. Each filter narrows; none given means the whole fleet."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from mpigen.support.diagnostics import did_you_mean, one_line


@dataclass(frozen=True)
class Selection:
    clusters: frozenset[str] = frozenset()
    jobs: frozenset[str] = frozenset()

    @property
    def everything(self) -> bool:
        return not self.clusters and not self.jobs

    @property
    def whole_clusters(self) -> bool:
        """Whether a chosen cluster's own charts and files (infra, GitOps bootstrap) are part of it: not when it
        names jobs, whose charts are all it asks for."""
        return not self.jobs

    def has_cluster(self, cluster: str) -> bool:
        return not self.clusters or cluster in self.clusters

    def has_job(self, job: str, cluster: str) -> bool:
        return self.has_cluster(cluster) and (not self.jobs or job in self.jobs)

    def unknown(self, clusters: Iterable[str], jobs: Iterable[tuple[str, str]]) -> list[str]:
        """What the filters name that is not there, each with the closest names there are; `jobs` as (job,
        cluster). A job named on a cluster not chosen counts as not there."""
        clusters, jobs = set(clusters), set(jobs)
        problems = [f"--cluster {one_line(name)}: no such cluster; {did_you_mean(name, clusters, n=3)}"
                    for name in sorted(self.clusters - clusters)]
        known = self.clusters & clusters  # with none of them there, the jobs of every cluster are the closest
        chosen = {job for job, cluster in jobs if not known or cluster in known}
        where = " on the chosen cluster(s)" if known else ""
        problems += [f"--job {one_line(name)}: no such job{where}; {did_you_mean(name, chosen, n=3)}"
                     for name in sorted(self.jobs - chosen)]
        return problems


EVERYTHING = Selection()
