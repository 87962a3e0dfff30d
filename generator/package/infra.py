"""A cluster's infra chart: its namespaces, rail networks, scheduling objects and TrainingRuntimes."""

from __future__ import annotations

from typing import Any

from mpigen.manifests import build_infra, infra_chart_ref, namespace_pod_security
from mpigen.model import Cluster, Job, names
from mpigen.objects import chartfiles
from mpigen.objects.chartfiles import helpers_tpl, template_path
from mpigen.package import common
from mpigen.package.chart import Chart
from mpigen.package.notes import infra_notes


def package_infra_chart(cluster: Cluster, bootstrap: tuple[tuple[str, str], ...] = (),
                        jobs: tuple[Job, ...] = (), mpijobs: dict[str, dict[str, Any]] | None = None,
                        acceptance: tuple[Job, ...] = ()) -> Chart:
    """`mpijobs`: the objects holding the jobs' pods (`pods_object`), plain, by job name, where they are built.
    `acceptance`: the cluster's fabric acceptance jobs, whose pods the namespaces must admit too."""
    ref = infra_chart_ref(cluster)
    # For the Namespaces and the NOTES of existing ones.
    levels = namespace_pod_security(cluster, jobs + acceptance, mpijobs)
    manifests = build_infra(cluster, ref, jobs, mpijobs, levels)
    files: dict[str, str] = {
        chartfiles.CHART_YAML: common.chart_yaml(ref, f"Namespaces, RDMA rail networks, scheduling objects and "
                                                f"TrainingRuntimes of cluster {cluster.name}",
                                                 cluster.source, common.cluster_annotations(cluster)),
        chartfiles.VALUES_YAML: common.values_yaml(
            [f"Values of the infra chart of cluster {cluster.name}.",
             common.GENERATED_NOTE.format(source=cluster.source), "Everything here follows from the profiles; "
             "there is nothing to set."], []),
        chartfiles.VALUES_SCHEMA: common.values_schema(f"Values of the infra chart of cluster {cluster.name}", {}),
        template_path(chartfiles.HELPERS): helpers_tpl(ref),
        template_path(chartfiles.NOTES): infra_notes(cluster, manifests, levels, jobs),
    }
    for template, group in common.by_template(manifests).items():
        files[template_path(template)] = common.template_file(
            group, lambda m: {("metadata", "labels"): common.labels_hole(ref, m)}, cluster.source)
    return Chart(names.chart_dir_of_infra(cluster.name), ref, tuple(sorted(files.items())), tuple(manifests),
                 bootstrap, cluster.source)
