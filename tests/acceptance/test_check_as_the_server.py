"""`mpigen check` judges a hand-written folder as the API server would (issue 36's "done when", through the real
command): a ClusterQueue that lends a `borrowingLimit` without a cohort (the CRD's own CEL rule), the four names the
server refuses (a Pod `A_B..`, a container `C!`, a ConfigMap `../x`, a namespace `Kube System`) and a field the server
would drop are each found, with their stable rule IDs; a field the server drops is a warning in a chart written by
hand, an error under `--strict`; and `--explain-rules` lists every rule of the registry and every CEL rule of the CRD
schemas mpigen ships, each with its status."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import REPO, run_mpigen

from mpigen.check.report import RULE_DESCRIPTIONS
from mpigen.check.rules.registry import RULES

HAND_WRITTEN = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: lender}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default-flavor
      resources:
      - {name: cpu, nominalQuota: 10, borrowingLimit: 5}
---
apiVersion: v1
kind: Pod
metadata: {name: A_B.., namespace: Kube System}
spec:
  restartPolicy: Never
  containers: [{name: C!, image: "busybox:1.36"}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: ../x, namespace: ml}
data: {a: b}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ml}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "nginx:1.27", imagePullPolicyy: Always}]
"""

EXPECTED = [
    ("ClusterQueue/lender", "crd-rules", ".spec", "error"),
    ("Pod/A_B..", "names", ".metadata.name", "error"),
    ("Pod/A_B..", "names", ".metadata.namespace", "error"),
    ("Pod/A_B..", "names", ".spec.containers[0].name", "error"),
    ("ConfigMap/../x", "names", ".metadata.name", "error"),
    ("Deployment/web", "pruned", ".spec.template.spec.containers[0].imagePullPolicyy", "error"),
]
# Stable: SARIF baselines, JUnit failure types and suppressions name these; a rename breaks every user's filters.
RULE_IDS = {"schema", "pruned", "crd-rules", "mpi-operator", "network", "capacity", "resources", "quantities",
            "pod-spec", "devices", "names", "immutable", "pod-security", "scheduling", "drift", "render", "chart",
            "crds", "input", "usage", "yaml", "lint"}


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("hand-written")
    (folder / "objects.yaml").write_text(HAND_WRITTEN, encoding="utf-8")
    return folder


def _findings(*args: str | Path) -> tuple[int, list[tuple[str, str, str, str]], dict]:
    done = run_mpigen("check", "--no-helm", "--output", "json", *args)
    assert "Traceback" not in done.stderr, done.stderr
    report = json.loads(done.stdout)
    return done.returncode, [(f["object"], f["rule"], f["path"], f["severity"]) for f in report["findings"]], report


def test_each_thing_the_server_refuses_is_found_under_strict(folder: Path) -> None:
    code, found, report = _findings("--strict", folder)
    assert code == 1
    assert sorted(found) == sorted(EXPECTED), report["findings"]
    queue = next(f for f in report["findings"] if f["rule"] == "crd-rules")
    assert "borrowingLimit must be nil when cohort is empty" in queue["message"]


def test_a_dropped_field_in_a_hand_written_chart_is_a_warning_without_strict(folder: Path) -> None:
    code, found, _ = _findings(folder)
    assert code == 1  # the other findings are errors still
    assert ("Deployment/web", "pruned", ".spec.template.spec.containers[0].imagePullPolicyy", "warning") in found
    assert sorted(f for f in found if f[1] != "pruned") == sorted(e for e in EXPECTED if e[1] != "pruned")


def test_the_rule_ids_are_stable_and_each_is_described() -> None:
    assert set(RULE_DESCRIPTIONS) == RULE_IDS
    assert {rule.name for rule in RULES} <= RULE_IDS


def test_explain_rules_lists_every_rule_and_every_cel_rule_of_the_shipped_schemas() -> None:
    done = run_mpigen("check", "--explain-rules")
    assert done.returncode == 0, done.stderr
    for rule in RULE_IDS:
        assert rule in done.stdout
    shipped = sum(json.dumps(json.loads(path.read_text(encoding="utf-8"))).count('"rule": ')
                  for path in (REPO / "schemas" / "crds").glob("*.json"))
    assert shipped > 30  # Kueue, Trainer, Flux and NVIDIA's CRDs carry their rules into the shipped schemas
    listed = json.loads(run_mpigen("check", "--explain-rules", "--output", "json").stdout)
    assert len(listed["crdRules"]) == shipped
    statuses = {entry["status"] for entry in listed["crdRules"]}
    assert statuses <= {"evaluated", "judged only against a live object (oldSelf)", "unsupported"}
    assert "evaluated" in statuses and "judged only against a live object (oldSelf)" in statuses
    assert all(entry["reason"] for entry in listed["crdRules"] if entry["status"] == "unsupported")
