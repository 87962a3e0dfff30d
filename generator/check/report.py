"""Reporters: the same check result as human text, JSON, JUnit XML for CI systems, or SARIF for code-scanning
views (GitHub's, GitLab's, editors')."""

from __future__ import annotations

import hashlib
import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from urllib.parse import quote

from mpigen import __version__
from mpigen.readback.findings import Finding, RenderedObject
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
                      "rule": f.rule, "severity": f.severity.value} for f in report.findings],
        "notes": report.notes,
        "podSecurity": [{"source": w.source, "object": w.object, "namespace": w.namespace, "level": w.level,
                         "reasons": list(w.reasons)} for w in report.pod_security],
        "summary": {"errors": len(report.errors), "warnings": len(report.warnings),
                    "documents": len(report.documents), "charts": report.charts, "files": report.files},
    }, indent=2) + "\n"


def as_junit(report: CheckReport) -> str:
    """One test case per document (and per chart-level problem); each error is a failure.

    Every attribute and text passes `one_line` (the findings' own `format` does): XML 1.0 cannot hold a NUL, a
    `\\x01` or a lone surrogate even as a character reference, and a CI that cannot parse the report drops it
    whole, findings included."""
    suite = ET.Element("testsuite", name="mpigen check")
    by_case: dict[tuple[str, str], list[Finding]] = {}
    for document in report.documents:
        by_case.setdefault((document.source, document.label), [])
    for item in report.findings:
        by_case.setdefault((item.source, item.object or "(file)"), []).append(item)
    failures = 0
    for (source, name), items in by_case.items():
        case = ET.SubElement(suite, "testcase", classname=one_line(source), name=one_line(name))
        errors = [i for i in items if i.severity is Severity.ERROR]
        if errors:
            failures += 1
            failure = ET.SubElement(case, "failure", message=one_line(errors[0].message), type=one_line(errors[0].rule))
            failure.text = "\n".join(i.format() for i in errors)
        warnings = [i for i in items if i.severity is Severity.WARNING]
        if warnings:
            ET.SubElement(case, "system-out").text = "\n".join(i.format() for i in warnings)
    suite.set("tests", str(len(by_case)))
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
RULE_DESCRIPTIONS = {
    "schema": "The object is valid against the schema of its kind in the chart's Kubernetes version.",
    "mpi-operator": "The MPIJob passes mpi-operator's own validation (in the words of its ValidationError event).",
    "network": "Each network a pod attaches exists as a NetworkAttachmentDefinition it can use.",
    "capacity": "The extended resources a worker requests fit one node of its pool.",
    "resources": "Extended resources are whole numbers, with a limit, and requests equal to it.",
    "names": "Names, namespaces, labels and container names are what the API server takes, and nothing beside a job "
             "takes a name its controller creates for it.",
    "pod-security": "No workload needs a higher Pod Security level than its namespace enforces.",
    "scheduling": "The gang can complete, and the queue and priority it names exist.",
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
    """SARIF 2.1.0, one run: each finding a result at its file (line 1: findings name objects and JSON paths, not
    lines), the object and JSON path as its logical location, and a fingerprint that stays the same from run to
    run while the finding does. GitHub matches alerts by `primaryLocationLineHash` only, and computes one from
    the text of the line where none is given: every finding of a file would then be one alert."""
    rules = sorted({finding.rule for finding in report.findings})
    results = []
    for finding in report.findings:
        where = " ".join(part for part in (finding.object, finding.path) if part)
        location: dict[str, object] = {"physicalLocation": {
            "artifactLocation": {"uri": _uri(finding.source)}, "region": {"startLine": 1}}}
        if where:
            location["logicalLocations"] = [{"fullyQualifiedName": where, "kind": "object"}]
        identity = "\0".join((finding.rule, finding.source, finding.object, finding.path, finding.message))
        fingerprint = hashlib.sha256(identity.encode("utf-8", "surrogatepass")).hexdigest()
        results.append({
            "ruleId": finding.rule, "ruleIndex": rules.index(finding.rule),
            "level": "error" if finding.severity is Severity.ERROR else "warning",
            "message": {"text": f"{where}: {finding.message}" if where else finding.message},
            "locations": [location],
            "partialFingerprints": {"primaryLocationLineHash": f"{fingerprint[:16]}:1",
                                    "mpigenFinding/v1": fingerprint},
        })
    driver = {"name": "mpigen", "version": __version__, "semanticVersion": __version__,
              "rules": [{"id": rule, "shortDescription": {"text": _describe(rule)},
                         "fullDescription": {"text": _describe(rule)}, "help": {"text": _describe(rule)}}
                        for rule in rules]}
    return json.dumps({"$schema": SARIF_SCHEMA, "version": "2.1.0",
                       "runs": [{"tool": {"driver": driver}, "results": results}]}, indent=2) + "\n"


def _uri(source: str) -> str:
    """A file's path as a URI reference: a name that is no UTF-8 (its bytes kept as surrogates, as Python reads file
    names) is percent-encoded byte for byte; any other lone surrogate as the bytes of its UTF-16 half."""
    try:
        return quote(source or ".", safe="/", errors="surrogateescape")
    except UnicodeEncodeError:
        return quote(source, safe="/", errors="surrogatepass")


def _describe(rule: str) -> str:
    return RULE_DESCRIPTIONS.get(rule, f"mpigen check rule {rule}")


FORMATS = {"text": as_text, "json": as_json, "junit": as_junit, "sarif": as_sarif}
