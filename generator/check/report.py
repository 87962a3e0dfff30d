"""Reporters: the same check result as human text, JSON, or JUnit XML for CI systems."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from generator.check.findings import Finding, RenderedObject
from generator.diagnostics import Severity

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
        return f"{POD_SECURITY_PREFIX}{self.level}: {where}{why}"


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
    """One test case per document (and per chart-level problem); each error is a failure."""
    suite = ET.Element("testsuite", name="mpigen check")
    by_case: dict[tuple[str, str], list[Finding]] = {}
    for document in report.documents:
        by_case.setdefault((document.source, document.label), [])
    for item in report.findings:
        by_case.setdefault((item.source, item.object or "(file)"), []).append(item)
    failures = 0
    for (source, name), items in by_case.items():
        case = ET.SubElement(suite, "testcase", classname=source, name=name)
        errors = [i for i in items if i.severity is Severity.ERROR]
        if errors:
            failures += 1
            failure = ET.SubElement(case, "failure", message=errors[0].message, type=errors[0].rule)
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


FORMATS = {"text": as_text, "json": as_json, "junit": as_junit}
