"""`mpigen check --output sarif` (and json) puts each finding at its line: in a hand-written chart's template, in a
chart mpigen compiled, in a manifest file, through the real command line; the SARIF log is valid against the SARIF
2.1.0 schema. On main every finding sat at line 1 of its file, and code scanning annotated the wrong line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import CHARTS, run_mpigen, sarif_problems

POD_TEMPLATE = """\
{{- /* two pods: only the second is wrong */ -}}
apiVersion: v1
kind: Pod
metadata:
  name: {{ .Release.Name }}-a
spec:
  containers:
  - name: main
    image: {{ .Values.image | quote }}
---
apiVersion: v1
kind: Pod
metadata:
  name: {{ .Release.Name }}-b
  labels:
    {{- toYaml .Values.labels | nindent 4 }}
spec:
  containers:
  - name: main
    image: {{ .Values.image | quote }}
    resources:
      limits:
        nvidia.com/gpu: "1.5"
    bogus: 1
"""


def _results(stdout: str) -> list[tuple[str, str, int, int | None]]:
    assert sarif_problems(stdout) == []
    (run,) = json.loads(stdout)["runs"]
    return [(result["locations"][0]["logicalLocations"][0]["fullyQualifiedName"],
             result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
             result["locations"][0]["physicalLocation"]["region"]["startLine"],
             result["locations"][0]["physicalLocation"]["region"].get("startColumn")) for result in run["results"]]


def test_a_finding_in_a_hand_written_chart_is_at_its_template_line(helm4, tmp_path):
    chart = tmp_path / "web"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: web\nversion: 0.1.0\n", encoding="utf-8")
    (chart / "values.yaml").write_text("image: busybox\nlabels: {app: web}\n", encoding="utf-8")
    (chart / "templates" / "pods.yaml").write_text(POD_TEMPLATE, encoding="utf-8")
    result = run_mpigen("check", "--helm", helm4, "--output", "sarif", "web", cwd=tmp_path)
    assert result.returncode == 1, result.stdout
    assert _results(result.stdout) == [
        ("Pod/web-b .spec.containers[0].bogus", "web/templates/pods.yaml", 24, 5),
        ('Pod/web-b .spec.containers[0].resources.limits["nvidia.com/gpu"]', "web/templates/pods.yaml", 23, 9)]


def test_a_finding_in_a_chart_mpigen_compiled_is_at_its_line_and_so_in_json(tmp_path):
    chart = shutil.copytree(CHARTS / "dgx-lab" / "jobs" / "pi", tmp_path / "pi")
    template = chart / "templates" / "mpijob.yaml"
    lines = template.read_text(encoding="utf-8").split("\n")
    at = lines.index("  slotsPerWorker: 1") + 1
    lines.insert(at, "  bogus: true")  # a field no MPIJob has, on line at + 1
    template.write_text("\n".join(lines), encoding="utf-8")
    sarif = run_mpigen("check", "--no-helm", "--output", "sarif", "pi", cwd=tmp_path)
    ((where, uri, line, column),) = _results(sarif.stdout)
    assert (where.endswith(" .spec.bogus"), uri, line, column) == (True, "pi/templates/mpijob.yaml", at + 1, 3)
    as_json = run_mpigen("check", "--no-helm", "--output", "json", "pi", cwd=tmp_path)
    (finding,) = json.loads(as_json.stdout)["findings"]
    assert (finding["path"], finding["line"], finding["column"]) == (".spec.bogus", at + 1, 3)


def test_a_finding_in_a_manifest_file_is_at_its_line(tmp_path):
    manifests = tmp_path / "manifests"
    manifests.mkdir()
    (manifests / "pod.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\n# the pod\napiVersion: v1\nkind: Pod\n"
        "metadata:\n  name: p\nspec:\n  containers:\n  - name: main\n    image: busybox\n    bogus: 1\n",
        encoding="utf-8")
    result = run_mpigen("check", "--no-helm", "--output", "sarif", Path("manifests"), cwd=tmp_path)
    assert _results(result.stdout) == [("Pod/p .spec.containers[0].bogus", "manifests/pod.yaml", 14, 5)]
