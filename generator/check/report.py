"""Reporters: the same check result as human text, JSON, JUnit XML for CI systems, or SARIF for code-scanning
views (GitHub's, GitLab's, editors')."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from mpigen import __version__
from mpigen.readback.findings import Finding, RenderedObject
from mpigen.support.ci_reports import JUnitCase, JUnitFailure, JUnitSuite, SarifPlace, SarifResult, junit_xml, sarif_log
from mpigen.support.diagnostics import Severity, one_line

POD_SECURITY_PREFIX = "pod security "


@dataclass(frozen=True)
class WorkloadSecurity:
    """The Pod Security level one rendered workload needs, and why no lower level would do."""

    source: str
    object: str
    namespace: str
    level: str
    reasons: tuple[str, ...]

    def format(self) -> str:
        """`pod security <level>: <where>: <why>`: one line per workload, easy to grep or filter out."""
        where = f"{self.source}: {self.object}" + (f" in namespace {self.namespace}" if self.namespace else "")
        why = f": {'; '.join(self.reasons)}" if self.reasons else ""
        return one_line(f"{POD_SECURITY_PREFIX}{self.level}: {where}{why}")


@dataclass
class CheckReport:
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    documents: list[RenderedObject] = field(default_factory=list)
    charts: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    pod_security: list[WorkloadSecurity] = field(default_factory=list)
    places: dict[Finding, tuple[int, int]] = field(default_factory=dict)
    """The line and column (0: unknown) of each finding that could be placed in its file: its object's, or the
    field's its path names (generator/readback/lines.py)."""

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity is Severity.ERROR]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity is Severity.WARNING]

    def summary(self) -> str:
        return (f"{len(self.errors)} error(s), {len(self.warnings)} warning(s) in {len(self.documents)} document(s) "
                f"of {len(self.charts)} chart(s) and {len(self.files)} manifest file(s)")


def as_text(report: CheckReport) -> str:
    return ("".join(f"{f.format()}\n" for f in report.findings)
            + "".join(f"{w.format()}\n" for w in report.pod_security) + report.summary() + "\n")


def as_json(report: CheckReport) -> str:
    return json.dumps({
        "findings": [{"source": f.source, "object": f.object, "path": f.path, "message": f.message,
                      "rule": f.rule, "severity": f.severity.value, **_place(report, f)} for f in report.findings],
        "notes": report.notes,
        "podSecurity": [{"source": w.source, "object": w.object, "namespace": w.namespace, "level": w.level,
                         "reasons": list(w.reasons)} for w in report.pod_security],
        "summary": {"errors": len(report.errors), "warnings": len(report.warnings),
                    "documents": len(report.documents), "charts": report.charts, "files": report.files},
    }, indent=2) + "\n"


def _place(report: CheckReport, finding: Finding) -> dict[str, int | None]:
    """`line` and `column` of a finding in its file; null where it has no place (`column` null: the line only)."""
    line, column = report.places.get(finding, (0, 0))
    return {"line": line or None, "column": column or None}


def as_junit(report: CheckReport) -> str:
    """One test case per document (and per chart-level problem); each error a failure of its own, with its rule as
    the failure's type (a capacity and a network finding of one object are two failures); warnings are the case's
    output."""
    by_case: dict[tuple[str, str], list[Finding]] = {}
    for document in report.documents:
        by_case.setdefault((document.source, document.label), [])
    for item in report.findings:
        by_case.setdefault((item.source, item.object or "(file)"), []).append(item)
    cases = tuple(JUnitCase(source, name, tuple(JUnitFailure(i.message, i.rule, i.format()) for i in items
                                                if i.severity is Severity.ERROR),
                            "\n".join(i.format() for i in items if i.severity is Severity.WARNING))
                  for (source, name), items in by_case.items())
    return junit_xml(JUnitSuite("mpigen check", cases))


RULE_DESCRIPTIONS = {
    "schema": "The object is valid against the schema of its kind in the chart's Kubernetes version.",
    "pruned": "Every field is one the schema of its kind declares: the API server drops any other, and the setting "
              "never takes effect (an error in charts mpigen compiled and under --strict, else a warning).",
    "mpi-operator": "The MPIJob passes mpi-operator's own validation (in the words of its ValidationError event).",
    "network": "Each network a pod attaches exists as a NetworkAttachmentDefinition it can use.",
    "capacity": "The extended resources a worker requests fit one node of its pool.",
    "drift": "The profiles (or the pods) agree with the live nodes given with --context.",
    "resources": "Extended resources are whole numbers, with a limit, and requests equal to it.",
    "quantities": "Every quantity decodes and is not negative, container resource names are standard or "
                  "domain-prefixed, and no request exceeds its limit.",
    "pod-spec": "Every container has an image, ports in range, env var names its Kubernetes version takes and mounts of "
                "declared volumes at paths of their own; each kind's pods restart as it allows.",
    "immutable": "No change to a field the API server keeps as created, against the live object given with --context.",
    "devices": "A pod's DRA claims name templates of its namespace and DeviceClasses the cluster has, ask for no "
               "device twice, and constrain attributes the drivers publish.",
    "names": "Names, namespaces, labels, annotations (256 KiB in all) and container names are what the API server "
             "takes, and nothing beside a job takes a name its controller creates for it.",
    "pod-security": "No workload needs a higher Pod Security level than its namespace enforces.",
    "scheduling": "The gang can complete, and the queue and priority it names exist and can admit it.",
    "crd-rules": "A custom resource passes the CEL validation rules (x-kubernetes-validations) of its CRD, as the API "
                 "server evaluates them.",
    "render": "The chart lints and renders.",
    "chart": "The chart's own files (Chart.yaml) are as Helm and mpigen read them.",
    "crds": "The CRDs given are usable.",
    "input": "The file can be read as Kubernetes reads it.",
    "usage": "There is something to check.",
    "yaml": "Each file is YAML as Kubernetes reads it.",
    "lint": "`helm lint --strict` passes.",
}
"""What each rule of `mpigen check` holds, for the rule list of a SARIF log."""


def as_sarif(report: CheckReport) -> str:
    """SARIF 2.1.0, one run: each finding a result at its file and the line of its object (of the field its JSON path
    names, where the file holds it; `report.places`, else line 1), the object and JSON path as its logical location."""
    results = []
    for finding in report.findings:
        where = " ".join(part for part in (finding.object, finding.path) if part)
        line, column = report.places.get(finding, (1, 0))
        results.append(SarifResult(finding.rule, "error" if finding.severity is Severity.ERROR else "warning",
                                   f"{where}: {finding.message}" if where else finding.message,
                                   SarifPlace(finding.source, line, column),
                                   (finding.source, finding.object, finding.path, finding.message), where))
    return sarif_log(__version__, "mpigen/check", {r.rule: _describe(r.rule) for r in results}, results)


def _describe(rule: str) -> str:
    return RULE_DESCRIPTIONS.get(rule, f"mpigen check rule {rule}")


FORMATS = {"text": as_text, "json": as_json, "junit": as_junit, "sarif": as_sarif}
