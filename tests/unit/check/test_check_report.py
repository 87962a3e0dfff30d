"""generator/check/report.py: text, JSON and JUnit output of one result."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from generator.check.findings import Finding, RenderedObject
from generator.check.report import CheckReport, as_json, as_junit, as_text
from generator.diagnostics import Severity

MPIJOB = RenderedObject("charts/x/templates/mpijob.yaml", {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
                                                     "metadata": {"name": "x"}}, "charts/x")
CONFIG = RenderedObject("charts/x/templates/cm.yaml", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x-h"}},
                  "charts/x")


def _report() -> CheckReport:
    return CheckReport(
        findings=[Finding(MPIJOB.source, "MPIJob/x", ".spec.slotsPerWorker", "must be an integer", "schema"),
                  Finding(MPIJOB.source, "MPIJob/x", "", "slotsPerWorker 0 runs nothing", "mpi-operator",
                          Severity.WARNING)],
        documents=[MPIJOB, CONFIG], charts=["charts/x"])


def test_text_names_file_object_path_and_message():
    assert as_text(_report()).splitlines() == [
        "charts/x/templates/mpijob.yaml: MPIJob/x: .spec.slotsPerWorker: must be an integer",
        "charts/x/templates/mpijob.yaml: MPIJob/x: warning: slotsPerWorker 0 runs nothing",
        "1 error(s), 1 warning(s) in 2 document(s) of 1 chart(s) and 0 manifest file(s)",
    ]


def test_json_carries_every_finding_and_the_counts():
    data = json.loads(as_json(_report()))
    assert data["summary"] == {"errors": 1, "warnings": 1, "documents": 2, "charts": ["charts/x"], "files": []}
    assert data["findings"][0] == {"source": MPIJOB.source, "object": "MPIJob/x", "path": ".spec.slotsPerWorker",
                                   "message": "must be an integer", "rule": "schema", "severity": "error"}


def test_junit_has_a_case_per_document_and_a_failure_per_failing_one():
    root = ET.fromstring(as_junit(_report()))
    suite = root.find("testsuite")
    assert (suite.get("tests"), suite.get("failures")) == ("2", "1")
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert set(cases) == {"MPIJob/x", "ConfigMap/x-h"}
    assert cases["MPIJob/x"].find("failure").get("message") == "must be an integer"
    assert cases["ConfigMap/x-h"].find("failure") is None
    assert "slotsPerWorker 0" in cases["MPIJob/x"].find("system-out").text


def test_clean_report():
    report = CheckReport(documents=[CONFIG], charts=["charts/x"])
    assert as_text(report) == "0 error(s), 0 warning(s) in 1 document(s) of 1 chart(s) and 0 manifest file(s)\n"
    assert ET.fromstring(as_junit(report)).find("testsuite").get("failures") == "0"
