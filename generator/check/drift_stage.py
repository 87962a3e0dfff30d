"""The drift stage of `mpigen check`, run where the context holds live Nodes: the profiles of the compiled charts
judged against the nodes of their cluster (check/drift.py), then the pods and NADs no profile describes
(check/drift_pods.py). It loads and resolves the charts' profiles, so run.py imports it only when nodes are given."""

from __future__ import annotations

from mpigen.check.chart_profiles import chart_profiles
from mpigen.check.drift import DriftFindings, judge_fleet
from mpigen.check.drift_pods import judge_nads, judge_pods
from mpigen.check.report import CheckReport
from mpigen.inventory import LiveNode
from mpigen.inventory.pools import live_nodes, may_be_of
from mpigen.readback.discover import ChartInfo
from mpigen.readback.findings import CheckContext, Finding, RenderedObject


def judge_drift(charts: list[ChartInfo], context: CheckContext, node_documents: list[RenderedObject],
                report: CheckReport) -> list[Finding]:
    """The profiles of the compiled charts judged against the live nodes of their cluster, then the pods and NADs no
    profile describes (generator/check/drift.py, drift_pods.py)."""
    found = chart_profiles(charts)
    report.notes += found.notes
    drift = DriftFindings()
    for profiles in found.fleets:
        of_cluster = {cluster.name: live_nodes((d.obj, d.source) for d in node_documents
                                               if context.cluster_of(d) in ("", cluster.name))
                      for cluster in profiles.fleet.clusters}
        several = len(profiles.fleet.clusters) > 1
        named = {context.cluster_of(d) for d in node_documents}
        for cluster in profiles.fleet.clusters:  # nodes of unknown origin are of the clusters they may be of
            if several and cluster.name not in named and not may_be_of(cluster, of_cluster[cluster.name]):
                of_cluster[cluster.name] = []
        judge_fleet(profiles, {name: nodes for name, nodes in of_cluster.items() if nodes}, drift)
    covered = {chart.display for profiles in found.fleets for chart in profiles.charts}
    reported = {resource for _, resource in drift.resources}

    known: dict[str, list[LiveNode]] = {}

    def nodes_of(document: RenderedObject) -> list[LiveNode]:
        """The nodes a document's cluster sees, read once per cluster (seen_by depends on the cluster only)."""
        cluster = context.cluster_of(document)
        if cluster not in known:
            known[cluster] = live_nodes((d.obj, d.source) for d in context.seen_by(document, node_documents))
        return known[cluster]

    judged = [d for d in report.documents if d.chart not in covered or not d.chart]
    named = {context.cluster_of(d) for d in node_documents}
    several = len({context.cluster_of(d) for d in report.documents} - {""}) > 1

    def surely_of(document: RenderedObject) -> bool:
        """Whether the nodes are surely of the document's cluster: one cluster checked, or nodes given as its."""
        return not several or context.cluster_of(document) in named

    findings = drift.findings() + judge_pods(judged, nodes_of, reported, surely_of)
    return findings + judge_nads([*judged, *(d for d in context.extra if not d.chart)], nodes_of, reported)
