"""generator/readback/lines.py: a finding's line and column in the template or manifest file its object came from."""

from __future__ import annotations

from pathlib import Path

from mpigen.readback.findings import Finding
from mpigen.readback.lines import blank_actions, place_findings

TEMPLATE = """\
{{- /* two documents of one kind,
       told apart by their names */ -}}
apiVersion: v1
kind: Pod
metadata:
  name: {{ .Release.Name }}-launcher
spec:
  containers:
  - name: main
    image: busybox
---
# Source: the worker
apiVersion: v1
kind: Pod
metadata:
  name: "{{ .Release.Name }}-worker"
  labels:
    {{- include "labels" . | nindent 4 }}
    app.kubernetes.io/part-of: x
spec:
  containers:
  - name: main
    image: {{ .Values.image | quote }}
    resources:
      limits:
        nvidia.com/gpu: 1.5
        {{- toYaml .Values.more | nindent 8 }}
"""


def _places(tmp_path: Path, text: str, *findings: tuple[str, str], manifest: bool = False) -> list[tuple[int, int] | None]:
    file = tmp_path / "pod.yaml"
    file.write_text(text, encoding="utf-8")
    made = [Finding(str(file), label, path, "m", "schema") for label, path in findings]
    places = place_findings(made, [str(file)] if manifest else [])
    return [places.get(finding) for finding in made]


def test_blanking_keeps_every_other_character_where_it_was():
    blanked = blank_actions(TEMPLATE)
    assert [len(line) for line in blanked.split("\n")] == [len(line) for line in TEMPLATE.split("\n")]
    assert "{{" not in blanked and "}}" not in blanked
    assert blanked.split("\n")[5] == "  name: xxxxxxxxxxxxxxxxxxx-launcher"  # inside a line: a word
    assert blanked.split("\n")[17].strip() == ""  # alone on its line: spaces


def test_a_field_is_at_its_key_in_the_document_of_its_object(tmp_path):
    assert _places(tmp_path, TEMPLATE,
                   ("Pod/r-worker", ".spec.containers[0].image"),
                   ("Pod/r-launcher", ".spec.containers[0].image"),
                   ("Pod/r-worker", '.spec.containers[0].resources.limits["nvidia.com/gpu"]'),
                   ("Pod/r-worker", ".metadata.labels.app.kubernetes.io/part-of"),  # a schema path: dots unquoted
                   ("Pod/r-worker", "")) == [(23, 5), (10, 5), (26, 9), (19, 5), (13, 1)]


def test_a_field_a_template_writes_is_at_its_nearest_written_ancestor(tmp_path):
    assert _places(tmp_path, TEMPLATE,
                   ("Pod/r-worker", '.spec.containers[0].resources.limits["example.com/nic"]'),
                   ("Pod/r-worker", ".metadata.labels.helm.sh/chart"),
                   ("Pod/r-worker", ".spec.containers[3].name")) == [(25, 7), (17, 3), (21, 3)]


def test_an_object_no_document_names_has_no_place(tmp_path):
    assert _places(tmp_path, TEMPLATE, ("ConfigMap/x", ".data"), ("document 2", "")) == [None, None]


def test_a_manifest_files_documents_count_by_number(tmp_path):
    text = "a: 1\n---\n# two\nkind: [unclosed\n---\nkind: ConfigMap\n"
    assert _places(tmp_path, text, ("document 2", ""), ("document 3", ""), manifest=True) == [(3, 0), (6, 1)]


def test_a_file_that_is_not_there_or_a_chart_level_finding_has_no_place(tmp_path):
    made = [Finding(str(tmp_path / "gone.yaml"), "Pod/x", "", "m", "schema"), Finding(str(tmp_path), "", "", "m", "chart")]
    assert place_findings(made, []) == {}


def test_an_unclosed_action_blanks_to_the_end_and_a_path_that_cannot_be_read_stops_where_it_breaks(tmp_path):
    assert blank_actions("a: {{ b\nc: d\n") == "a: xxxx\n    \n"  # as Helm would refuse it: no tree, no place
    assert _places(tmp_path, TEMPLATE, ("Pod/r-worker", '.spec.containers[0]["unclosed'),
                   ("Pod/r-worker", ".spec.containers[x]")) == [(22, 5), (21, 3)]
