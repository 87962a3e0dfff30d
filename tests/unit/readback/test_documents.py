"""Manifest files read as kubectl reads them: the size bound of one object, and a `kind: List` of many."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mpigen.readback.documents import read_manifest_file
from mpigen.readback.inputs import MAX_DOCUMENT_BYTES


def nodes(count: int) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"node-{i:05d}", "labels": {"pool": "gpu"}},
         "status": {"allocatable": {"nvidia.com/gpu": "8"}, "capacity": {"nvidia.com/gpu": "8"}}} for i in range(count)]}


def test_an_export_of_a_big_cluster_is_one_list_read_past_one_objects_size(tmp_path: Path) -> None:
    """`kubectl get nodes -o yaml` of a few hundred real nodes is one document over 3 MiB: a List of objects each
    far under it, which the API server never takes as one (padded here to pass the bound with few nodes)."""
    exported = nodes(2_000)
    (tmp_path / "nodes.json").write_text(json.dumps(exported, indent=64), encoding="utf-8")
    (tmp_path / "nodes.yaml").write_text(json.dumps(exported, indent=64).replace('"kind": "List",', 'kind: List,'),
                                         encoding="utf-8")
    for name in ("nodes.json", "nodes.yaml"):
        assert (tmp_path / name).stat().st_size > MAX_DOCUMENT_BYTES
        objects, findings = read_manifest_file(tmp_path / name)
        assert findings == [] and len(objects) == 2_000, name


def test_one_object_over_the_api_servers_size_is_still_refused(tmp_path: Path) -> None:
    big = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"},
           "data": {"k": "x" * (MAX_DOCUMENT_BYTES + 1), "note": "kind: List"}}
    for name, text in (("big.json", json.dumps(big, indent=4)), ("big.yaml", json.dumps(big))):
        (tmp_path / name).write_text(text, encoding="utf-8")
        objects, findings = read_manifest_file(tmp_path / name)
        assert objects == [] and [f.message for f in findings] == [
            f"document is over {MAX_DOCUMENT_BYTES} bytes, more than the Kubernetes API server accepts"], name


@pytest.mark.parametrize(("text", "is_list"), [
    ("kind: List", True), ("apiVersion: v1\nitems: []\nkind: List", True), ('{"apiVersion":"v1","kind":"NodeList"}', True),
    ('  "kind": "List",', True), ("'kind': List", True), ("{kind: NodeList}", True), ("x: 1\n, kind: List", True),
    ("kind: ConfigMap", False), ("kindness: List", False), ("kind: Listing", False), ("kind:", False),
    (" " * 100_000, False), ('"kind"' * 50_000, False), ("kind:" + " " * 100_000 + "List", True)])
def test_a_list_is_told_by_its_kind_in_yaml_and_json(text: str, is_list: bool) -> None:
    from mpigen.readback.documents import _may_be_list
    assert _may_be_list(text) is is_list
