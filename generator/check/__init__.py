"""`mpigen check`: judge charts and manifests the way the cluster will, before Argo CD does.

render (Helm, or mpigen's own renderer) -> schema (built-in kinds, mpigen's CRD schemas, --crds)
-> rules (mpi-operator's validation, networks, capacity, reserved names) -> report.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from generator.check.findings import CheckContext, Document, Finding
from generator.check.render import (
    ChartInfo,
    discover,
    find_helm,
    helm_lint,
    helm_template,
    helm_version,
    own_render,
    read_manifest_file,
)
from generator.check.report import CheckReport
from generator.check.rules import run_rules
from generator.check.schemas import SchemaSet, bundled_kube_versions, select_kube_version


@dataclass(frozen=True)
class CheckOptions:
    helm: str | None = None
    use_helm: bool = True
    kube_version: str | None = None
    crds: tuple[Path, ...] = ()
    strict: bool = False


class CheckUsageError(Exception):
    """The options cannot work (e.g. `--helm` names no program); exit code 2."""


def _crd_folder_documents(paths: tuple[Path, ...]) -> list[Document]:
    """Objects in the --crds folders that are not CRDs: existing cluster state such as NADs.

    Unreadable files are reported once, by the schema set that reads the CRDs in them.
    """
    documents: list[Document] = []
    for root in paths:
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.suffix in (".yaml", ".yml", ".json"))
        for file in files:
            docs, _ = read_manifest_file(file)
            documents += [d for d in docs if d.kind != "CustomResourceDefinition"]
    return documents


def run_check(paths: list[Path], options: CheckOptions) -> CheckReport:
    report = CheckReport()
    targets = discover(paths)
    report.findings += targets.problems
    helm = None
    if options.use_helm:
        helm = find_helm(options.helm)
        if options.helm and helm is None:
            raise CheckUsageError(f"--helm {options.helm}: no such program")
    if helm:
        report.notes.append(f"rendering and linting with helm {helm_version(helm) or '(unknown version)'} ({helm})")
    else:
        report.notes.append("no helm found: charts are not linted, and only charts mpigen compiled can be rendered "
                            "(by mpigen itself); install helm or pass --helm PATH")
    default_version = options.kube_version or bundled_kube_versions()[-1]
    for version in {options.kube_version, *(c.kubernetes_version for c in targets.charts)} - {None}:
        try:
            select_kube_version(version)
        except ValueError as exc:
            raise CheckUsageError(f"{exc}; mpigen knows {bundled_kube_versions()[0]} to "
                                  f"{bundled_kube_versions()[-1]}") from exc
    schema_sets: dict[str, SchemaSet] = {}

    def schemas(version: str) -> SchemaSet:
        if version not in schema_sets:
            schema_set = SchemaSet(version, strict=options.strict)
            for problem in schema_set.add_crds(list(options.crds)):
                report.findings.append(Finding(problem.split(":")[0], "", "", problem, "crds"))
            schema_sets[version] = schema_set
        return schema_sets[version]

    def version_of(chart: ChartInfo | None) -> str:
        return options.kube_version or (chart.kubernetes_version if chart else None) or default_version

    extra = _crd_folder_documents(options.crds)
    documents: list[tuple[Document, str]] = []
    node_shapes = {}
    for chart in targets.charts:
        report.charts.append(chart.display)
        version = version_of(chart)
        if chart.node_shape is not None:
            node_shapes[chart.display] = chart.node_shape
        if helm:
            report.findings += helm_lint(helm, chart)
            docs, problems = helm_template(helm, chart, f"v{version}.0" if version.count(".") == 1 else version)
        elif chart.compiled_by_mpigen:
            docs, problems = own_render(chart)
        else:
            docs, problems = [], [Finding(chart.display, "", "", "cannot render a chart mpigen did not compile "
                                          "without helm; install helm or pass --helm PATH", "render")]
        report.findings += problems
        documents += [(d, version) for d in docs]
    for file in targets.manifests:
        report.files.append(file.as_posix())
        docs, problems = read_manifest_file(file)
        report.findings += problems
        documents += [(d, version_of(None)) for d in docs]
    for document, version in documents:
        report.findings += schemas(version).check(document)
    report.documents = [d for d, _ in documents]
    report.findings += run_rules(report.documents, CheckContext(extra=tuple(extra), node_shapes=node_shapes))
    return report
