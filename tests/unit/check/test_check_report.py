"""generator/check/report.py: text, JSON and JUnit output of one result."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from generator.check.findings import Finding, RenderedObject
from generator.check.report import RULE_DESCRIPTIONS, CheckReport, as_json, as_junit, as_sarif, as_text
from generator.check.rules import RULES
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


def test_sarif_is_one_run_of_results_each_at_its_file_with_its_rule_level_and_object():
    log = json.loads(as_sarif(_report()))
    assert (log["version"], len(log["runs"])) == ("2.1.0", 1)
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "mpigen" and [rule["id"] for rule in driver["rules"]] == ["mpi-operator", "schema"]
    assert all(rule["shortDescription"]["text"] for rule in driver["rules"])
    error, warning = run["results"]
    assert (error["ruleId"], error["level"], warning["ruleId"], warning["level"]) == \
        ("schema", "error", "mpi-operator", "warning")
    for result in run["results"]:
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
        (location,) = result["locations"]
        assert location["physicalLocation"] == {"artifactLocation": {"uri": "charts/x/templates/mpijob.yaml"},
                                                "region": {"startLine": 1}}  # code scanning needs a line
    assert error["locations"][0]["logicalLocations"] == [{"fullyQualifiedName": "MPIJob/x .spec.slotsPerWorker",
                                                          "kind": "object"}]
    assert error["message"]["text"] == "charts/x/templates/mpijob.yaml: MPIJob/x: .spec.slotsPerWorker: must be an integer"


def test_sarif_fingerprints_follow_the_finding_not_the_run():
    first, again = (json.loads(as_sarif(_report()))["runs"][0]["results"] for _ in range(2))
    prints = [result["partialFingerprints"]["mpigenFinding/v1"] for result in first]
    assert prints == [result["partialFingerprints"]["mpigenFinding/v1"] for result in again]
    assert len(set(prints)) == 2


def test_every_rule_has_a_description_for_sarif():
    assert {rule.name for rule in RULES} | {"schema"} <= set(RULE_DESCRIPTIONS)
