"""Every chart of the fleet, clusters packaged in parallel, with the GitOps bootstrap files of each cluster."""

from __future__ import annotations

from collections.abc import Sequence

from mpigen.manifests import build_marked_job, job_chart_ref, pods_object
from mpigen.manifests.bootstrap import BootstrapFile, build_bootstrap
from mpigen.manifests.gitops import argocd_health_checks
from mpigen.model import EVERYTHING, Cluster, Fleet, Selection
from mpigen.package import common
from mpigen.package.chart import Chart
from mpigen.package.infra import package_infra_chart
from mpigen.package.job import package_job_chart
from mpigen.support import yamlio
from mpigen.support.parallel import split_map
from mpigen.support.progress import Tally


def package_fleet(fleet: Fleet, selection: Selection = EVERYTHING, tally: Tally | None = None) -> list[Chart]:
    """Every cluster's infra chart followed by its job charts (those `selection` holds: a job filter leaves the
    clusters' own charts out). Clusters are independent, so both cores share them, split by the charts each gives
    (generator/support/parallel.py), which `tally` hears of as they are done."""
    def package_clusters(clusters: Sequence[Cluster]) -> list[Chart]:
        charts: list[Chart] = []
        for cluster in clusters:
            jobs = fleet.jobs_of(cluster)
            chosen = [job for job in jobs if selection.has_job(job.name, cluster.name)]
            built = {job.name: build_marked_job(job, job_chart_ref(job))  # each job's objects, once
                     for job in (jobs if selection.whole_clusters else chosen)}
            acceptance = fleet.acceptance_of(cluster) if selection.whole_clusters else ()
            if selection.whole_clusters:
                mpijobs = {job.name: pods_object(job, built[job.name]) for job in jobs}
                bootstrap = tuple((file.path, bootstrap_text(file, cluster))
                                  for file in build_bootstrap(cluster, jobs, acceptance))
                bootstrap += tuple((check.path, check.lua) for check in argocd_health_checks(cluster, jobs))
                charts.append(package_infra_chart(cluster, bootstrap, jobs, mpijobs, acceptance))
            charts += [package_job_chart(job, built[job.name]) for job in chosen]
            charts += [package_job_chart(job, build_marked_job(job, job_chart_ref(job))) for job in acceptance]
        return charts

    def charts_of(cluster: Cluster) -> int:
        if selection.whole_clusters:
            return 1 + len(fleet.jobs_of(cluster)) + len(fleet.acceptance_of(cluster))
        return sum(1 for job in fleet.jobs_of(cluster) if selection.has_job(job.name, cluster.name))

    clusters = [cluster for cluster in fleet.clusters if selection.has_cluster(cluster.name)]
    return split_map(package_clusters, clusters, weight=charts_of, tally=tally)


def bootstrap_text(file: BootstrapFile, cluster: Cluster) -> str:
    """A plain multi-document manifest file (no template: nothing in it is escaped or evaluated)."""
    header = [common.GENERATED_NOTE.format(source=cluster.source), file.purpose]
    return "".join(f"# {common.comment(line)}\n" for line in header) + yamlio.dump_all(list(file.objects))
