"""generator/diff/report.py: the text (actions and notes first, then a section per cluster and chart) and the JSON
of `mpigen diff`."""

from __future__ import annotations

import json

from conftest import RAW_CONTROL

from mpigen.diff.compare import compare
from mpigen.diff.report import DIFF_FORMAT, DiffReport, as_json, as_text
from mpigen.diff.review import review
from mpigen.diff.sides import Unit

SRIOVDP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "sriovdp-config", "namespace": "kube-system"},
           "data": {"config.json": "a"}}
JOB = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {"name": "bert", "namespace": "ml"},
       "spec": {"slotsPerWorker": 1}}
HELD = {**JOB, "spec": {"slotsPerWorker": 2}}
LUA = "west/bootstrap/argocd/mpijob-health.lua"


def _report(old: list[Unit], new: list[Unit]) -> DiffReport:
    before, after = {u.key: u for u in old}, {u.key: u for u in new}
    changed = compare(before, after)
    found = review(changed, before, after, "charts")
    return DiffReport("charts", tuple(changed), found.actions, found.notes, ("a problem",))


def _fleet() -> DiffReport:
    """East's device plugin config changed, west's not; west's health check changed; east's bert holds a spec back."""
    job = Unit("east", "east/jobs/bert", objects=(JOB,), annotations={"mpigen/mpijob": "bert"})
    old = [Unit("east", "east/infra", objects=(SRIOVDP,)), Unit("west", "west/infra", objects=(SRIOVDP,)),
           Unit("west", LUA, bootstrap=True, objects=None, text="a\n"), job]
    new = [Unit("east", "east/infra", objects=({**SRIOVDP, "data": {"config.json": "b"}},)),
           Unit("west", "west/infra", objects=(SRIOVDP,)), Unit("west", LUA, bootstrap=True, objects=None, text="b\n"),
           Unit("east", "east/jobs/bert", objects=(JOB,), annotations=job.annotations, held_back=HELD)]
    return _report(old, new)


def test_text_puts_actions_and_notes_first_then_a_section_per_cluster_and_chart():
    lines = as_text(_fleet()).splitlines()
    headers = [line for line in lines if line.startswith("== ")]
    assert headers == ["== cluster east, chart east/infra ==", "== cluster east, chart east/jobs/bert ==",
                       f"== cluster west, bootstrap {LUA} =="]
    first_header = lines.index(headers[0])
    assert [line.split(": ")[1] for line in lines[:first_header]] == ["action", "action", "note"]
    assert lines[0].startswith("charts/east/infra: action: ConfigMap kube-system/sriovdp-config")
    assert lines[1].startswith(f"charts/{LUA}: action: Argo CD health check changed")
    east = lines[first_header:lines.index(headers[1])]
    assert east[1] == "changed: v1 ConfigMap kube-system/sriovdp-config" and "+  config.json: b" in east
    bert = lines[lines.index(headers[1]):lines.index(headers[2])]
    assert bert[1] == "held back until the next run: kubeflow.org/v2beta1 MPIJob ml/bert"
    assert "-  slotsPerWorker: 1" in bert and "+  slotsPerWorker: 2" in bert
    assert lines[lines.index(headers[2]) + 1] == f"changed: {LUA}"


def test_json_carries_the_same_in_a_documented_shape():
    report = _fleet()
    data = json.loads(as_json(report))
    assert list(data) == ["format", "kind", "against", "summary", "actions", "notes", "changes", "problems"]
    assert data["format"] == DIFF_FORMAT == 1 and data["kind"] == "diff" and data["against"] == "charts"
    assert data["summary"] == {"changes": 2, "actions": 2, "notes": 1, "problems": 1}
    assert [(c["cluster"], c["chart"], c["bootstrap"], c["key"], c["status"]) for c in data["changes"]] == [
        ("east", "east/infra", False, "v1 ConfigMap kube-system/sriovdp-config", "changed"),
        ("west", LUA, True, LUA, "changed")]
    assert all(c["diff"].startswith("--- a: ") for c in data["changes"])
    action = data["actions"][0]
    assert list(action) == ["kind", "cluster", "chart", "key", "where", "what", "todo", "command", "diff"]
    assert action["kind"] == "device-plugin" and action["cluster"] == "east" and action["command"] == \
        "kubectl -n kube-system rollout restart daemonset/kube-sriov-device-plugin"
    assert data["actions"][1]["command"] is None
    text = as_text(report)
    for action in report.actions:
        assert action.line("action") in text
    assert data["notes"][0]["kind"] == "held-back" and "+  slotsPerWorker: 2\n" in data["notes"][0]["diff"]
    assert data["problems"] == ["a problem"]


def test_names_holding_control_or_bidi_characters_are_escaped_in_text_and_ascii_in_json():
    hostile = {**SRIOVDP, "metadata": {"name": "x\u202e\x1b]0;t\x07", "namespace": "ml"}}
    report = _report([], [Unit("east\u202e", "east\u202e/infra", objects=(hostile,))])
    text = as_text(report)
    assert RAW_CONTROL.search(text) is None
    assert "== cluster east\\u202e, chart east\\u202e/infra ==" in text
    assert "added: v1 ConfigMap ml/x\\u202e\\x1b]0;t\\x07" in text
    encoded = as_json(report)
    assert encoded.isascii() and "\\u202e" in encoded
    assert json.loads(encoded)["changes"][0]["cluster"] == "east\u202e"


def test_the_summary_counts_changes_and_actions():
    assert _fleet().summary() == ("2 object(s) differ between charts and the profiles; 2 change(s) need a person "
                                  "(the action lines)")
    assert _report([], []).summary() == "no object differs between charts and the profiles"
    assert as_text(_report([], [])) == ""
