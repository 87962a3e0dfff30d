"""`mpigen check` judges custom resources by their CRDs' CEL rules (rule crd-rules), and `--explain-rules` lists every
rule with its status: the issue's hand-written ClusterQueue, in both Kueue API versions, is refused as the API server
refuses it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import invoke_mpigen, run_mpigen
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from mpigen.check.cel.catalog import EVALUATED, LIVE_ONLY, UNSUPPORTED, list_rules
from mpigen.check.crdschema import crd_schemas

UPSTREAM = Path(__file__).resolve().parents[1] / "upstream"

CLUSTER_QUEUE = """\
apiVersion: {api_version}
kind: ClusterQueue
metadata:
  name: team-a
spec:
  namespaceSelector: {{}}
{cohort}  resourceGroups:
  - coveredResources: ["nvidia.com/gpu"]
    flavors:
    - name: h100
      resources:
      - name: nvidia.com/gpu
        nominalQuota: 8
        borrowingLimit: 8
"""


@pytest.mark.parametrize(("api_version", "field"), [("kueue.x-k8s.io/v1beta1", "cohort"),
                                                     ("kueue.x-k8s.io/v1beta2", "cohortName")])
def test_a_borrowing_limit_without_cohort_is_refused(tmp_path, api_version, field):
    without = tmp_path / "without.yaml"
    without.write_text(CLUSTER_QUEUE.format(api_version=api_version, cohort=""), encoding="utf-8")
    result = invoke_mpigen("check", "--strict", "--no-helm", without)
    assert result.returncode == 1, result.stdout + result.stderr
    assert (f"{without}: ClusterQueue/team-a: .spec: spec: Invalid value: borrowingLimit must be nil when "
            "cohort is empty") in result.stdout.splitlines()
    with_cohort = tmp_path / "with.yaml"
    with_cohort.write_text(CLUSTER_QUEUE.format(api_version=api_version, cohort=f"  {field}: shared\n"),
                           encoding="utf-8")
    result = invoke_mpigen("check", "--strict", "--no-helm", with_cohort)
    assert result.returncode == 0, result.stdout + result.stderr


def test_explain_rules_lists_the_rules_of_the_given_crds_with_their_status():
    result = run_mpigen("check", "--explain-rules", "--output", "json",
                        *(arg for folder in ("scheduling", "trainer", "gitops") for arg in ("--crds", UPSTREAM / folder)))
    assert result.returncode == 0, result.stderr
    listed = json.loads(result.stdout)
    assert "crd-rules" in [r["rule"] for r in listed["rules"]] and not listed["problems"]
    assert len(listed["crdRules"]) > 60
    assert all(r["status"] in (EVALUATED, LIVE_ONLY) or (r["status"] == UNSUPPORTED and r["reason"])
               for r in listed["crdRules"])


def test_every_rule_of_the_vendored_crds_is_evaluated_or_unsupported_with_a_reason():
    """The issue's done-when, CRD by CRD (in one check, CRDs of one group, version and kind replace each other)."""
    total = 0
    for path in sorted(UPSTREAM.rglob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        if "CustomResourceDefinition" not in text:
            continue
        try:
            docs = list(YAML(typ="safe").load_all(text))
        except YAMLError:  # a Helm template among the upstream files
            continue
        for doc in docs:
            if not isinstance(doc, dict) or doc.get("kind") != "CustomResourceDefinition":
                continue
            listings = list_rules(crd_schemas(doc))
            wanted = sorted((f"{doc['spec']['group']}/{version['name']}", where, rule)
                            for version in doc["spec"].get("versions") or () if version.get("served", True)
                            for where, rule in _rules((version.get("schema") or {}).get("openAPIV3Schema") or {}))
            assert sorted((item.api_version, item.path, item.rule) for item in listings) == wanted, path
            assert all(item.status in (EVALUATED, LIVE_ONLY) or item.reason for item in listings)
            total += len(listings)
    assert total == 105  # Kueue, Trainer, Flux, NVIDIA, NicClusterPolicy and KAI's Topology


def _rules(node: dict, where: str = ""):
    for rule in node.get("x-kubernetes-validations") or ():
        yield where, rule["rule"].strip()
    for name, sub in (node.get("properties") or {}).items():
        yield from _rules(sub, f"{where}.{name}")
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), dict):
            yield from _rules(node[key], f"{where}[*]")


def test_explain_rules_as_text():
    result = invoke_mpigen("check", "--explain-rules")
    assert result.returncode == 0
    assert "  crd-rules: A custom resource passes the CEL validation rules" in result.stdout
    assert ("  ClusterQueue kueue.x-k8s.io/v1beta2 .spec: 'borrowingLimit must be nil when cohort is empty'"
            in result.stdout)
    assert "LocalQueue kueue.x-k8s.io/v1beta2 .spec.clusterQueue: 'field is immutable' (self == oldSelf): judged " \
           "only against a live object (oldSelf)" in result.stdout
