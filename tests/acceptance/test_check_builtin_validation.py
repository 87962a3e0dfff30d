"""`mpigen check` judges Kubernetes' own kinds as the API server does beyond their schemas, on hand-written manifests
through the command: quantities and pod specs (env var names by the Kubernetes version checked against), and
immutable fields against a `kubectl get -o yaml` export given with
`--context` (and nothing said without one)."""

from __future__ import annotations

import json

from conftest import invoke_mpigen

POD_SPEC = """\
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: hpc}
spec:
  template:
    spec:
      volumes: [{name: data, emptyDir: {sizeLimit: lots}}]
      containers:
      - name: c
        image: "busybox:1.36"
        env: [{name: "1ST_RANK", value: "0"}]
        ports: [{containerPort: 70000}]
        volumeMounts: [{name: scratch, mountPath: /data}]
        resources:
          requests: {cpu: "2"}
          limits: {cpu: "1"}
"""

EXPORT = """\
apiVersion: v1
kind: List
items:
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: web, namespace: hpc, resourceVersion: "812", uid: 5b1c}
  spec:
    replicas: 1
    selector: {matchLabels: {app: web}}
    template:
      metadata: {labels: {app: web}}
      spec:
        containers: [{name: web, image: "nginx:1.27", imagePullPolicy: IfNotPresent}]
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: settings, namespace: hpc, resourceVersion: "813", uid: 5b1d}
  immutable: true
  data: {mode: fast}
"""

UPDATE = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: hpc}
spec:
  replicas: 3
  selector: {matchLabels: {app: web2}}
  template:
    metadata: {labels: {app: web2}}
    spec:
      containers: [{name: web, image: "nginx:1.27"}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: hpc}
immutable: true
data: {mode: slow}
"""


def _findings(stdout: str, rule: str) -> list[tuple[str, str, str]]:
    return [(f["object"], f["path"], f["message"]) for f in json.loads(stdout)["findings"] if f["rule"] == rule]


def test_pod_specs_and_quantities_are_judged_and_env_names_by_version(tmp_path):
    (tmp_path / "job.yaml").write_text(POD_SPEC, encoding="utf-8")
    old = invoke_mpigen("check", "--no-helm", "--kube-version", "1.31", "--output", "json", tmp_path)
    assert old.returncode == 1, old.stdout + old.stderr
    assert [p for _, p, _ in _findings(old.stdout, "pod-spec")] == [
        ".spec.template.spec.containers[0].ports[0].containerPort", ".spec.template.spec.containers[0].env[0].name",
        ".spec.template.spec.containers[0].volumeMounts[0].name", ".spec.template.spec.restartPolicy"]
    assert [p for _, p, _ in _findings(old.stdout, "quantities")] == [
        ".spec.template.spec.volumes[0].emptyDir.sizeLimit", ".spec.template.spec.containers[0].resources.requests"]
    new = invoke_mpigen("check", "--no-helm", "--kube-version", "1.33", "--output", "json", tmp_path)
    # From 1.32 the API server takes `1ST_RANK`: the env finding is gone, the rest stays.
    assert [p for _, p, _ in _findings(new.stdout, "pod-spec")] == [
        ".spec.template.spec.containers[0].ports[0].containerPort",
        ".spec.template.spec.containers[0].volumeMounts[0].name", ".spec.template.spec.restartPolicy"]


def test_immutable_changes_are_found_against_a_live_export_and_not_without(tmp_path):
    (tmp_path / "charts").mkdir()
    (tmp_path / "charts" / "update.yaml").write_text(UPDATE, encoding="utf-8")
    (tmp_path / "export.yaml").write_text(EXPORT, encoding="utf-8")
    alone = invoke_mpigen("check", "--no-helm", "--output", "json", tmp_path / "charts")
    assert alone.returncode == 0, alone.stdout + alone.stderr
    against = invoke_mpigen("check", "--no-helm", "--output", "json", "--context", tmp_path / "export.yaml",
                            tmp_path / "charts")
    assert against.returncode == 1, against.stdout + against.stderr
    found = _findings(against.stdout, "immutable")
    assert [(o, p, m.split(";")[0]) for o, p, m in found] == [
        ("Deployment/web", ".spec.selector", 'spec.selector: Invalid value: {"matchLabels":{"app":"web2"}}: field is '
         'immutable (spec.selector.matchLabels.app: "web2", live "web")'),
        ("ConfigMap/settings", ".data", "data: Forbidden: field is immutable when `immutable` is set")]
