"""The run of `mpigen check`: the targets discovered, rendered (one Helm process per chart, side by side) or read,
each document checked against the schemas of its Kubernetes version, then the rules over them all, and the Pod
Security level each workload needs listed."""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from mpigen.check.helm import LINT_BATCH, HelmRefused, choose_helm, helm_lint, helm_lint_all, helm_template
from mpigen.check.report import CheckReport, WorkloadSecurity
from mpigen.check.rules import apply_rules, workload_pod_security
from mpigen.check.schema_stage import SchemaOptions, check_schemas, refused_before_rules
from mpigen.check.schemas import bundled_kube_versions, select_kube_version
from mpigen.model import EVERYTHING, Selection
from mpigen.objects import chartfiles
from mpigen.readback.discover import ChartInfo, Targets, chart_name_findings, chosen_targets, discover, manifest_files
from mpigen.readback.documents import read_manifest_file
from mpigen.readback.findings import CheckContext, Finding, RenderedObject
from mpigen.readback.lines import place_findings
from mpigen.readback.own_renderer import own_render
from mpigen.support.diagnostics import Severity
from mpigen.support.parallel import split_map
from mpigen.support.progress import Progress, Tally, stage, tallied
from mpigen.vocabulary.kubernetes import CRD_KIND, NODE_KIND


@dataclass(frozen=True)
class CheckOptions:
    helm: str | None = None
    use_helm: bool = True
    kube_version: str | None = None
    crds: tuple[Path, ...] = ()
    context: tuple[Path, ...] = ()
    strict: bool = False
    clusters: tuple[tuple[str, Path], ...] = ()
    """`--cluster NAME=PATH`: the manifests (and charts that record no cluster) under PATH are of cluster NAME."""
    helm_given_as: str = "--helm"
    """Where `helm` came from, as messages name it: `--helm`, the environment variable `MPIGEN_HELM`, or the
    repository config."""
    selection: Selection = EVERYTHING
    """`--cluster NAME`, `--job NAME`: only the charts (and cluster folders) of these are judged; the rest is read as
    context, as `--context` is (readback.discover.chosen_targets)."""
    progress: Progress | None = None
    """Hears of each stage as it goes (`mpigen -v`, and the line a terminal sees)."""


class CheckUsageError(Exception):
    """The options cannot work (e.g. `--helm` names no Helm); exit code 2."""


def _crd_folder_documents(paths: tuple[Path, ...]) -> list[RenderedObject]:
    """Objects in the --crds folders that are not CRDs: existing cluster state such as NADs.

    Unreadable files are reported once, by the schema set that reads the CRDs in them.
    """
    documents: list[RenderedObject] = []
    for root in paths:
        files, _ = manifest_files(root)
        for file in files:
            docs, _ = read_manifest_file(file)
            documents += [d for d in docs if d.kind != CRD_KIND]
    return documents


@dataclass(frozen=True)
class _Renderer:
    helm: str | None
    lint: bool = True
    """False for context charts: only their objects are wanted, and a lint would cost a Helm process each."""

    def __call__(self, chart: ChartInfo, version: str,
                 linted: list[Finding] | None = None) -> tuple[list[RenderedObject], list[Finding]]:
        """Lint and render one chart; run in a thread pool, one Helm process per chart at a time. `linted`: its lint
        findings where the charts were linted together (`helm_lint_all`).

        A chart whose name Helm would not take is still rendered (as Helm's placeholder release), so its
        objects are judged beside the finding on its name."""
        named = chart_name_findings(chart)
        if self.helm:
            findings = linted if linted is not None else helm_lint(self.helm, chart) if self.lint else []
            docs, problems = helm_template(self.helm, chart, f"v{version}.0" if version.count(".") == 1 else version)
            return docs, named + findings + problems
        if chart.compiled_by_mpigen:
            docs, problems = own_render(chart)
            return docs, named + problems
        return [], [*named, Finding(chart.display, "", "", "cannot render a chart mpigen did not compile without "
                                    "helm; install helm or pass --helm PATH", "render")]


Rendered = tuple[list[RenderedObject], list[Finding]]


def _render_all(charts: list[ChartInfo], versions: list[str], renderer: _Renderer,
                tally: Tally | None = None) -> list[Rendered]:
    """Helm processes run side by side from threads; mpigen's own renderer shares the charts between both
    cores (generator/support/parallel.py). `tally` hears of the charts rendered (Helm's once linted)."""
    if renderer.helm and len(charts) > 1:
        helm = renderer.helm
        with ThreadPoolExecutor(max_workers=max(os.cpu_count() or 1, 2)) as pool:
            batches = [charts[start:start + LINT_BATCH] for start in range(0, len(charts), LINT_BATCH)]
            linted = [found for batch in pool.map(lambda batch: helm_lint_all(helm, batch), batches) for found in batch] \
                if renderer.lint else [None] * len(charts)
            return list(tallied(pool.map(renderer, charts, versions, linted), len(charts), tally, every=1))

    def render(pairs: Sequence[tuple[ChartInfo, str]]) -> list[Rendered]:
        return [renderer(chart, version) for chart, version in pairs]

    return split_map(render, list(zip(charts, versions, strict=True)), tally=tally)


def _chart_clusters(charts: list[ChartInfo]) -> dict[str, str]:
    return {chart.display: chart.annotations[chartfiles.CLUSTER] for chart in charts
            if chartfiles.CLUSTER in chart.annotations}


def _context_documents(paths: tuple[Path, ...], renderer: _Renderer, version: str,
                       clusters: dict[str, str]) -> tuple[list[RenderedObject], list[Finding]]:
    """Charts and manifests that exist beside the checked ones (e.g. an infra chart's NADs): rendered, not judged."""
    targets = discover(list(paths))
    clusters.update(_chart_clusters(targets.charts))
    documents: list[RenderedObject] = []
    findings = list(targets.problems)
    for docs, problems in _render_all(targets.charts, [version] * len(targets.charts), replace(renderer, lint=False)):
        documents += docs
        findings += [p for p in problems if p.rule in ("render", "chart")]
    for file in targets.manifests:
        docs, problems = read_manifest_file(file)
        documents += docs
        findings += problems
    return documents, findings


def run_check(paths: list[Path], options: CheckOptions) -> CheckReport:
    """Judge the charts and manifest files under `paths`; raises CheckUsageError when the options cannot work."""
    report = CheckReport()
    with stage(options.progress, "discover", "chart(s)", "finding charts") as discovering:
        targets, beside, unknown = chosen_targets(discover(paths), options.selection)
        if unknown:
            raise CheckUsageError("; ".join(unknown))
        discovering.count = len(targets.charts)
    report.findings += targets.problems
    renderer = _Renderer(_choose_helm(options, report))
    versions = _KubeVersions(options, report)
    with stage(options.progress, "render", "document(s)", "rendering charts") as rendering:
        documents = _render_targets(targets, renderer, versions, report, rendering.tally)
        unselected = _render_beside(targets, beside, renderer, versions, options, report)
        rendering.count = len(documents)
    if not targets.charts and not targets.manifests:
        report.findings.append(Finding(" ".join(p.as_posix() for p in paths), "", "",
                                       "no charts or manifest files to check", "usage"))
    with stage(options.progress, "schemas", "document(s)", "checking documents") as judging:
        own = frozenset(chart.display for chart in targets.charts if chart.compiled_by_mpigen)
        custom_schemas = check_schemas(documents, SchemaOptions(options.crds, options.strict), report, own,
                                       unselected.documents, judging.tally)
        judging.count = len(documents)
    report.documents = [d for d, _ in documents]
    with stage(options.progress, "rules", "finding(s)", "applying the rules") as ruling:
        context = replace(_rule_context(targets, unselected, options, renderer, versions, report),
                          custom_schemas=custom_schemas, schema_refused=refused_before_rules(report))
        outcome = apply_rules(report.documents, context)
        report.findings += outcome.findings
        report.notes += outcome.notes
        ruling.count = len(report.findings)
    node_documents = [d for d in (*context.extra, *report.documents) if d.kind == NODE_KIND]
    if node_documents:  # the context says what the nodes are: the profiles and pods are judged against them
        with stage(options.progress, "drift", "finding(s)", "judging the live nodes") as drifting:
            from mpigen.check.drift_stage import judge_drift  # the profiles' pipeline: only where nodes are given

            drift = judge_drift(targets.charts, context, node_documents, report)
            report.findings += drift
            drifting.count = len(drift)
    _list_pod_security(report)
    report.places = place_findings(report.findings, report.files)
    return report


def _choose_helm(options: CheckOptions, report: CheckReport) -> str | None:
    """The Helm to render and lint with (None: mpigen renders what it compiled), said in a note with its version; a
    `--helm` that names no Helm, or a Helm of a major mpigen does not support, is a usage error."""
    chosen = None
    if options.use_helm:
        try:
            chosen = choose_helm(options.helm, options.helm_given_as)
        except HelmRefused as exc:
            raise CheckUsageError(str(exc)) from exc
    helm = chosen.path if chosen else None
    if chosen:
        report.notes.append(chosen.note("rendering and linting"))
    elif options.use_helm:
        report.notes.append("no helm found: charts are not linted, and only charts mpigen compiled can be rendered "
                            "(by mpigen itself); install helm or pass --helm PATH")
    else:
        report.notes.append("--no-helm: charts are not linted; charts mpigen compiled are rendered by mpigen itself")
    return helm


class _KubeVersions:
    """The Kubernetes version each target is checked against: --kube-version, else the chart's own, else the
    newest mpigen knows. An unknown --kube-version is a usage error; an unknown chart version a warning."""

    def __init__(self, options: CheckOptions, report: CheckReport) -> None:
        self.wanted = options.kube_version
        self.report = report
        self.newest = bundled_kube_versions()[-1]
        if self.wanted:
            try:
                select_kube_version(self.wanted)
            except ValueError as exc:
                raise CheckUsageError(f"{exc}; mpigen knows {bundled_kube_versions()[0]} to {self.newest}") from exc

    def of(self, chart: ChartInfo | None, judged: bool = True) -> str:
        """The version; a chart's unknown one is warned of when the chart is judged (`judged`), else passed over."""
        wanted = self.wanted or (chart.kubernetes_version if chart else None) or self.newest
        try:
            select_kube_version(wanted)
        except ValueError as exc:
            if not judged:
                return self.newest
            self.report.findings.append(Finding(f"{chart.display}/{chartfiles.CHART_YAML}" if chart else "", "", "",
                                                f"{chartfiles.KUBERNETES_VERSION}: {exc}; checking against {self.newest}",
                                                "chart", Severity.WARNING))
            return self.newest
        return wanted


def _render_targets(targets: Targets, renderer: _Renderer, versions: _KubeVersions, report: CheckReport,
                    tally: Tally | None = None) -> list[tuple[RenderedObject, str]]:
    """Every chart rendered and every manifest file read, each document with the version it is checked against;
    `tally` hears of the charts rendered."""
    chart_versions = [versions.of(chart) for chart in targets.charts]
    documents: list[tuple[RenderedObject, str]] = []
    for chart, version, (docs, problems) in zip(targets.charts, chart_versions,
                                                _render_all(targets.charts, chart_versions, renderer, tally), strict=True):
        report.charts.append(chart.display)
        report.findings += problems
        if not docs and not any(p.rule == "render" for p in problems):
            report.findings.append(Finding(chart.display, "", "", "the chart renders no objects", "render",
                                           Severity.WARNING))
        documents += [(d, version) for d in docs]
    for file in targets.manifests:
        report.files.append(file.as_posix())
        docs, problems = read_manifest_file(file)
        report.findings += problems
        documents += [(d, versions.of(None)) for d in docs]
    return documents


@dataclass(frozen=True)
class _Unselected:
    """The charts and manifests `--cluster NAME` and `--job NAME` leave out that were read: their objects exist
    beside the judged ones (an infra chart's NADs, namespaces and queues), so the rules know them, as they know
    `--context`; nothing in them is judged or counted."""

    charts: tuple[ChartInfo, ...] = ()
    documents: tuple[RenderedObject, ...] = ()


def _render_beside(targets: Targets, beside: Targets, renderer: _Renderer, versions: _KubeVersions,
                   options: CheckOptions, report: CheckReport) -> _Unselected:
    """The unselected charts a judged object can meet (CheckContext.same_cluster), rendered unlinted with the version
    the whole check would render them with, and every unselected manifest file read (a file is cheap, and one of no
    cluster meets every cluster). A chart that cannot be rendered is said in a note: its objects are unknown."""
    if any(not _grouped(file.as_posix(), options.clusters) for file in targets.manifests):
        charts = beside.charts  # a judged file of no cluster meets the objects of every cluster
    else:
        judged = set(_chart_clusters(targets.charts).values())
        charts = [chart for chart in beside.charts if chart.annotations.get(chartfiles.CLUSTER, "") in judged
                  or chartfiles.CLUSTER not in chart.annotations]
    chart_versions = [versions.of(chart, judged=False) for chart in charts]
    documents: list[RenderedObject] = []
    for chart, (docs, problems) in zip(charts, _render_all(charts, chart_versions, replace(renderer, lint=False)),
                                       strict=True):
        documents += docs
        if any(problem.rule == "render" for problem in problems):
            report.notes.append(f"{chart.display} (not chosen, read as context) could not be rendered: the rules do "
                                "not know its objects; check it on its own")
    for file in beside.manifests:
        documents += read_manifest_file(file)[0]
    return _Unselected(tuple(charts), tuple(documents))


def _rule_context(targets: Targets, unselected: _Unselected, options: CheckOptions, renderer: _Renderer,
                  versions: _KubeVersions, report: CheckReport) -> CheckContext:
    """What the rules know beyond the checked documents: the unselected charts and files, the --crds folders' other
    objects, the --context charts and manifests (their render problems reported), each chart's node shape and
    cluster, and the Kubernetes version each document is checked against."""
    version = versions.newest
    extra = [*unselected.documents, *_crd_folder_documents(options.crds)]
    charts = [*targets.charts, *unselected.charts]
    clusters = _chart_clusters(charts)
    if options.context:
        context_docs, problems = _context_documents(options.context, renderer, version, clusters)
        extra += context_docs
        report.findings += problems
    node_shapes = {chart.display: shape for chart in charts if (shape := chart.node_shape) is not None}
    manifests: dict[str, str] = {}
    for document in (*report.documents, *extra):
        owner = document.chart or document.source
        named = clusters if document.chart else manifests
        if owner not in named and (cluster := _grouped(owner, options.clusters)):
            named[owner] = cluster
    job_charts = frozenset(chart.display for chart in charts if chart.is_job_chart)
    kube_versions = {chart.display: versions.of(chart, judged=False) for chart in targets.charts}
    return CheckContext(extra=tuple(extra), node_shapes=node_shapes, chart_clusters=clusters,
                        manifest_clusters=manifests, job_charts=job_charts, kube_versions=kube_versions,
                        kube_version=versions.of(None, judged=False))


def _grouped(path: str, groups: tuple[tuple[str, Path], ...]) -> str:
    """The cluster `--cluster` gives the file or chart folder at `path`: that of the deepest folder holding it."""
    if not groups:
        return ""
    # Absolute, not resolved: a file reached through a link inside the folder is the folder's, as it was read.
    absolute = Path(os.path.abspath(path))
    held = [(len(folder.parts), name) for name, root in groups
            if absolute == (folder := Path(os.path.abspath(root))) or folder in absolute.parents]
    return max(held)[1] if held else ""


def _list_pod_security(report: CheckReport) -> None:
    """The Pod Security level each workload needs, for the report's list."""
    for document in report.documents:
        security = workload_pod_security(document)
        if security is not None:
            report.pod_security.append(WorkloadSecurity(document.source, document.label, document.namespace,
                                                        security.level.label, security.reasons))
