"""What `mpigen check` works on and what it reports: rendered documents and findings, as data."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mpigen.support.diagnostics import Severity, one_line


@dataclass(frozen=True)
class RenderedObject:
    """One rendered Kubernetes object and where it came from.

    `source` is the template (`charts/x/templates/mpijob.yaml`) or manifest file it was rendered
    from; `chart` the chart folder it belongs to ('' for plain manifest files).
    """

    source: str
    obj: dict[str, Any]
    chart: str = ""

    @property
    def api_version(self) -> str:
        return str(self.obj.get("apiVersion", ""))

    @property
    def kind(self) -> str:
        return str(self.obj.get("kind", ""))

    @property
    def name(self) -> str:
        metadata = self.obj.get("metadata") or {}
        return str(metadata.get("name", "")) if isinstance(metadata, dict) else ""

    @property
    def namespace(self) -> str:
        metadata = self.obj.get("metadata") or {}
        return str(metadata.get("namespace", "") or "") if isinstance(metadata, dict) else ""

    @property
    def label(self) -> str:
        return f"{self.kind or '?'}/{self.name or '?'}"


@dataclass(frozen=True)
class Finding:
    """One problem: where (file, object, JSON path), what, and which check found it."""

    source: str
    object: str
    path: str
    message: str
    rule: str
    severity: Severity = Severity.ERROR
    line: int = 0
    """Where in `source` the finding is, when the rule knows it (a profile fact `check --context` finds untrue: the
    profile is not a rendered file, so `readback.lines` cannot find its place); 0: placed from `object` and `path`."""
    column: int = 0

    @property
    def file(self) -> str:
        """`source`, with `:line:column` where the finding knows its place."""
        return f"{self.source}:{self.line}:{self.column}" if self.line else self.source

    def format(self) -> str:
        """One line, whatever the file names, object names and values quoted in it hold (`one_line`)."""
        where = ": ".join(part for part in (self.file, self.object, self.path) if part)
        level = "" if self.severity is Severity.ERROR else f"{self.severity.value}: "
        return one_line(f"{where}: {level}{self.message}")


@dataclass(frozen=True)
class RuleOutcome:
    """What a rule of `mpigen check` may hand back instead of bare findings: notes for the report too (what it could
    not judge, and why), so that nothing it passes over is passed over silently."""

    findings: tuple[Finding, ...] = ()
    notes: tuple[str, ...] = ()


def finding(document: RenderedObject, path: str, message: str, rule: str,
            severity: Severity = Severity.ERROR) -> Finding:
    return Finding(document.source, document.label, path, message, rule, severity)


@dataclass(frozen=True)
class NodeShape:
    """What one node of a job's pool offers: extended resources and how many (None: some, count unknown), and the
    DeviceClasses its cluster's DRA drivers serve (named in its profile, so a chart mpigen compiled may claim them)."""

    cluster: str
    pool: str
    resources: dict[str, int | None] = field(default_factory=dict)
    device_classes: tuple[str, ...] = ()


@dataclass(frozen=True)
class CheckContext:
    """Knowledge beyond the documents themselves.

    `extra` are documents from outside the render (for example NetworkAttachmentDefinitions already
    in the cluster, given as manifest files); `node_shapes` maps a chart folder to its pool's node,
    `chart_clusters` to its cluster, `manifest_clusters` a manifest file to the cluster `--cluster` puts it in, and
    `job_charts` names the chart folders that are mpigen's job charts.

    Objects live in clusters: every rule that looks one object up for another looks only among those of the same
    cluster (`same_cluster`). A chart mpigen compiled is of the cluster its Chart.yaml records; a manifest file of the
    cluster `--cluster NAME=PATH` says; anything else is of unknown origin, all of it one cluster, and taken to be
    of every named cluster too (existing objects given with `--context` or `--crds` for the one cluster checked).
    """

    extra: tuple[RenderedObject, ...] = ()
    node_shapes: dict[str, NodeShape] = field(default_factory=dict)
    chart_clusters: dict[str, str] = field(default_factory=dict)
    """Chart folder -> the cluster mpigen compiled it for: namespaces of one name in two clusters are two."""
    manifest_clusters: dict[str, str] = field(default_factory=dict)
    """Manifest file (as a document's `source` names it) -> its cluster, from `--cluster`."""
    job_charts: frozenset[str] = frozenset()
    """Chart folders of mpigen's job charts (their Chart.yaml names the job object): every pod they make is a job's."""
    kube_versions: dict[str, str] = field(default_factory=dict)
    """Chart folder -> the Kubernetes version its documents are checked against (`--kube-version`, else its own)."""
    kube_version: str = ""
    """The version of the documents of plain manifest files ('': not known, the newest rules apply)."""

    def kube_version_of(self, document: RenderedObject) -> str:
        """The Kubernetes version a document is checked against, as given ('1.31', 'v1.31.4'); '' where unknown."""
        return self.kube_versions.get(document.chart, self.kube_version) if document.chart else self.kube_version
    schema_refused: frozenset[tuple[str, str]] = frozenset()
    """(source, label) of the documents whose schema check found an error the API server stops at before it evaluates
    a CRD's CEL rules (a required field missing, a wrong type, a value not in its enum, a string or list too long)."""
    custom_schemas: Mapping[tuple[str, str], Mapping[str, Any]] | None = None
    """The schemas custom resources are judged by, by (apiVersion, kind): mpigen's own, the --crds' and the rendered
    CRDs' (check/schemas.SchemaSet); None: mpigen's own only. Their CEL rules are judged from these."""

    def cluster_of(self, document: RenderedObject) -> str:
        """The cluster of a document; '' where its origin is unknown."""
        if document.chart:
            return self.chart_clusters.get(document.chart, "")
        return self.manifest_clusters.get(document.source, "")

    def same_cluster(self, document: RenderedObject, other: RenderedObject) -> bool:
        """Objects of two named clusters never meet; those of unknown origin are taken to be of every cluster."""
        mine, theirs = self.cluster_of(document), self.cluster_of(other)
        return not mine or not theirs or mine == theirs

    def seen_by(self, document: RenderedObject, candidates: Iterable[RenderedObject]) -> list[RenderedObject]:
        """The candidates of the document's cluster: those of that very cluster (named or unknown) first, then those
        only taken to be of it; each group in the candidates' order."""
        cluster = self.cluster_of(document)
        mine = [other for other in candidates if self.same_cluster(document, other)]
        return sorted(mine, key=lambda other: self.cluster_of(other) != cluster)


