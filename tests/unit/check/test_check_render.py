"""generator/check/{discover,documents,helm,own_renderer}.py: finding targets, Helm rendering, mpigen's own renderer."""

from __future__ import annotations

import contextlib
import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import CHARTS, is_run_of, run_mpigen

from mpigen.check.helm import _error_lines, helm_lint, helm_lint_all, helm_template
from mpigen.readback.discover import discover
from mpigen.readback.documents import parse_documents, read_manifest_file, split_documents
from mpigen.readback.own_renderer import _Helpers, _parse_helpers, own_render, render_template_text, template_actions


def _key(documents):
    return sorted((d.source, d.chart, d.kind, d.namespace, d.name, repr(d.obj)) for d in documents)


def test_discover_finds_every_chart_and_no_manifest_inside_them(tmp_path):
    charts = shutil.copytree(CHARTS, tmp_path / "charts")
    (charts / "extra.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", encoding="utf-8")
    targets = discover([charts])
    # The fabric acceptance charts (`<cluster>/acceptance/<job>`, sorted before `infra`): listed in full by
    # tests/unit/manifests/test_manifests_gitops.py; here that they are found, in order, and nothing else is new.
    acceptance = [c.display for c in targets.charts if "/acceptance/" in c.display]
    assert len(acceptance) == 46 and acceptance == sorted(acceptance)
    assert [c.display for c in targets.charts if "/acceptance/" not in c.display] == [f"{charts.as_posix()}/{p}" for p in (
        "cpu-lab/infra", "cpu-lab/jobs/cpu-pi", "dgx-lab/infra", "dgx-lab/jobs/pi", "dgx-lab/jobs/resnet50-dgx",
        "dgx-lab/jobs/resnet50-trainjob", "dgx-lab/jobs/tensorflow-benchmarks", "dgx-pod/infra",
        "dgx-pod/jobs/language-bert", "dgx-pod/jobs/vision-resnet50", "gb200-rack/infra",
        "gb200-rack/jobs/mnnvl-allreduce", "h100-dra/infra", "h100-dra/jobs/llm-pretrain", "kai-lab/infra",
        "kai-lab/jobs/kai-allreduce", "kai-lab/jobs/kai-research", "kueue-lab/infra",
        "kueue-lab/jobs/kueue-pi",
        "netapp-lab/infra", "netapp-lab/jobs/netapp-resnet50", "roce-lab/infra", "volcano-lab/infra",
        "volcano-lab/jobs/allreduce-vcjob", "volcano-lab/jobs/volcano-allreduce")]
    # The GitOps bootstrap folders hold plain manifests, not charts.
    assert targets.manifests == [charts / p for p in (
        "extra.yaml", "cpu-lab/bootstrap/apps/helmreleases.yaml", "cpu-lab/bootstrap/root/root-sync.yaml",
        "dgx-lab/bootstrap/apps/acceptance.yaml", "dgx-lab/bootstrap/apps/applications.yaml",
        "dgx-lab/bootstrap/root/root-application.yaml", "dgx-pod/bootstrap/apps/acceptance.yaml",
        "dgx-pod/bootstrap/apps/applications.yaml", "dgx-pod/bootstrap/root/root-application.yaml")]
    assert all(c.compiled_by_mpigen for c in targets.charts)
    # cpu-lab (1.32), dgx-lab and dgx-pod (1.31), gb200-rack and h100-dra (1.34: DRA), kai-lab, kueue-lab and the
    # rest (1.31).
    assert [c.kubernetes_version for c in targets.charts if "/acceptance/" not in c.display] == (
        ["1.32", "1.32"] + ["1.31"] * 8 + ["1.34"] * 4 + ["1.31"] * 11)
    assert {c.kubernetes_version for c in targets.charts if "/gb200-rack/" in c.display or "/h100-dra/" in c.display} == {
        "1.34"}


def test_chart_annotations_describe_the_pool_node():
    resnet = next(c for c in discover([CHARTS]).charts if c.name == "resnet50-dgx")
    shape = resnet.node_shape
    # By hand: a DGX-1 has 8 GPUs and carries the four rails of cluster dgx-lab (VF count unknown).
    assert (shape.cluster, shape.pool) == ("dgx-lab", "dgx")
    assert shape.resources == {"nvidia.com/gpu": 8, "nvidia.com/rdma_rail0": None, "nvidia.com/rdma_rail1": None,
                               "nvidia.com/rdma_rail2": None, "nvidia.com/rdma_rail3": None}
    pi = next(c for c in discover([CHARTS]).charts if c.name == "pi")
    assert pi.node_shape.resources == {}


def test_own_renderer_equals_helm_for_every_chart(helm):
    for chart in discover([CHARTS]).charts:
        mine, problems = own_render(chart)
        assert problems == []
        theirs, problems = helm_template(str(helm), chart, None)
        assert problems == []
        assert _key(mine) == _key(theirs), chart.display
        templates = {f"{chart.display}/templates/{t.name}" for t in (chart.path / "templates").iterdir()}
        assert {d.source for d in mine} <= templates


def test_own_renderer_equals_helm_for_braces_in_every_escape_form(helm, profiles_copy, tmp_path):
    """Lines of data holding `{{` are Go string literals: raw (`{{ `...` }}`), quoted where the line has a
    backtick (`{{ "..." }}`), and brace by brace on a line with a hole. mpigen's renderer must read each as
    Helm does, `}}` inside the literal included."""
    pi = (CHARTS.parent / "profiles" / "jobs" / "pi.yaml").read_text(encoding="utf-8")
    env = {"RAW": "{{ .Values.x }} }}", "TICK": "`{{ x }}` \\ \"q\"", "CLOSE": "` }}{{ `", "SLASH_R": "a\\r{{"}
    root = profiles_copy({"jobs/pi.yaml": pi + "env:\n" + "".join(f"  {k}: {json.dumps(v)}\n" for k, v in env.items())
                          + "mpirunArgs: ['{{-', '-}}']\n"})
    out = tmp_path / "charts"
    assert run_mpigen("render", root, "-o", out).returncode == 0
    chart = discover([out / "dgx-lab" / "jobs" / "pi"]).charts[0]
    template = (chart.path / "templates" / "mpijob.yaml").read_text(encoding="utf-8")
    assert "{{ `" in template and '{{ "' in template
    mine, problems = own_render(chart)
    assert problems == []
    theirs, problems = helm_template(str(helm), chart, None)
    assert problems == []
    assert _key(mine) == _key(theirs)
    launcher = next(d.obj for d in mine if d.kind == "MPIJob")["spec"]["mpiReplicaSpecs"]["Launcher"]
    container = launcher["template"]["spec"]["containers"][0]
    assert {e["name"]: e["value"] for e in container["env"] if e["name"] in env} == env
    assert {"{{-", "-}}"} <= set(container["command"])


def test_own_renderer_follows_changed_values(tmp_path):
    chart_dir = shutil.copytree(CHARTS / "dgx-lab" / "jobs" / "resnet50-dgx", tmp_path / "resnet50-dgx")
    values = (chart_dir / "values.yaml").read_text(encoding="utf-8").replace("workers: 2", "workers: 3")
    (chart_dir / "values.yaml").write_text(values, encoding="utf-8")
    chart = discover([chart_dir]).charts[0]
    documents, problems = own_render(chart)
    assert problems == []
    mpijob = next(d.obj for d in documents if d.kind == "MPIJob")
    hostfile = next(d.obj for d in documents if d.kind == "ConfigMap")
    assert mpijob["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == 3
    run = mpijob["metadata"]["name"]
    assert is_run_of(run, "resnet50-dgx")
    assert hostfile["data"]["hostfile"].splitlines()[-1] == f"{run}-worker-2.{run}.ml-training.svc slots=8"
    assert "24" in mpijob["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["command"]


def test_own_renderer_refuses_template_code_it_does_not_write(tmp_path):
    chart_dir = shutil.copytree(CHARTS / "dgx-lab" / "jobs" / "pi", tmp_path / "pi")
    template = chart_dir / "templates" / "mpijob.yaml"
    template.write_text(template.read_text(encoding="utf-8") + "# {{ .Release.Namespace }}\n", encoding="utf-8")
    documents, problems = own_render(discover([chart_dir]).charts[0])
    assert documents == []
    assert [p.message for p in problems] == [
        "cannot render without helm: template action `{{ .Release.Namespace }}`; install helm or pass --helm"]


def test_helm_lint_reports_a_values_schema_violation(helm, tmp_path):
    chart_dir = shutil.copytree(CHARTS / "dgx-lab" / "jobs" / "pi", tmp_path / "pi")
    values = (chart_dir / "values.yaml").read_text(encoding="utf-8").replace("workers: 2", "workers: 0")
    (chart_dir / "values.yaml").write_text(values, encoding="utf-8")
    findings = helm_lint(str(helm), discover([chart_dir]).charts[0])
    assert findings and all(f.rule == "lint" for f in findings)
    assert any("workers" in f.message for f in findings), [f.message for f in findings]


def test_charts_linted_together_say_what_each_says_alone(helm, tmp_path):
    """One Helm process lints charts that all pass; where one fails, each finding still names its own chart, exactly
    as linting it alone says it."""
    clean = [shutil.copytree(CHARTS / "dgx-lab" / folder, tmp_path / name)
             for folder, name in (("jobs/pi", "pi"), ("infra", "infra"))]
    assert helm_lint_all(str(helm), discover(clean).charts) == [[], []]
    broken = shutil.copytree(CHARTS / "dgx-lab" / "jobs" / "pi", tmp_path / "broken")
    values = (broken / "values.yaml").read_text(encoding="utf-8").replace("workers: 2", "workers: 0")
    (broken / "values.yaml").write_text(values, encoding="utf-8")
    charts = discover([*clean, broken]).charts
    together = helm_lint_all(str(helm), charts)
    alone = [helm_lint(str(helm), chart) for chart in charts]
    assert together == alone
    assert [bool(found) for found in together] == [chart.path == broken for chart in charts]


def test_parse_documents_names_each_template_from_helms_source_comments():
    text = ("---\n# Source: pi/templates/a.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"
            "---\n# Source: pi/templates/b.yaml\napiVersion: v1\nkind: Secret\nmetadata: {name: b}\n---\n")
    documents, problems = parse_documents(text, "charts/pi", "charts/pi")
    assert problems == []
    assert [(d.source, d.label) for d in documents] == [("charts/pi/templates/a.yaml", "ConfigMap/a"),
                                                        ("charts/pi/templates/b.yaml", "Secret/b")]


@pytest.mark.parametrize(("text", "messages"), [("- 1\n- 2\n", ["a manifest must be a mapping"] * 2),
                                                ("a: [\n", ["not valid YAML"]),
                                                ("replicas: 3\nimage: x\n", ["not a Kubernetes object"])])
def test_bad_manifest_documents_are_findings(tmp_path, text, messages):
    file = tmp_path / "m.yaml"
    file.write_text(text, encoding="utf-8")
    documents, problems = read_manifest_file(file)
    assert documents == []
    assert [p.message[:len(m)] for p, m in zip(problems, messages, strict=True)] == messages
    assert {p.source for p in problems} == {Path(file).as_posix()}


def test_lists_and_commented_separators_are_read(tmp_path):
    file = tmp_path / "m.yaml"
    file.write_text("apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n"
                    "--- # the second\napiVersion: v1\nkind: Secret\nmetadata: {name: b}\n", encoding="utf-8")
    documents, problems = read_manifest_file(file)
    assert problems == []
    assert [d.label for d in documents] == ["ConfigMap/a", "Secret/b"]


# --- Linear scanners: every one that reads chart or manifest text, on adversarial input of 1 MiB ---------

MIB = 1024 * 1024


def _bounded(seconds: float, work: Callable[..., object], *args: object) -> None:
    """Run `work` and require it to end within `seconds` (a backtracking scan of this input takes minutes).
    Refusing the input is fine: only the time is judged here."""
    started = time.monotonic()
    with contextlib.suppress(Exception):
        work(*args)
    assert time.monotonic() - started < seconds, work


@pytest.mark.parametrize("text", ["{{" * (MIB // 2), "{{ " * (MIB // 3), '{{ "{{"' * (MIB // 7),
                                  "{{- " + "}" * (MIB - 4), "{{ x }}" * (MIB // 7)])
def test_template_actions_are_scanned_in_linear_time(text):
    _bounded(5, template_actions, text)
    chart = discover([CHARTS / "dgx-lab" / "jobs" / "pi"]).charts[0]
    _bounded(5, render_template_text, text, {"workers": 1}, chart, _Helpers(), "0.1.0")


def test_template_actions_follow_gos_trim_markers():
    actions = template_actions('a {{- "{{" -}} b {{-3}} {{ .Values.suspend }}')
    assert [(trim_before, expression, trim_after) for _, _, trim_before, expression, trim_after in actions] == [
        (True, '"{{"', True), (False, "-3", False), (False, ".Values.suspend", False)]


@pytest.mark.parametrize("text", ["---" + " " * (MIB - 4) + "x", ("--- \t" * 50 + "x\n") * (MIB // 256),
                                  "# Source: " + "a" * MIB, ("# Source: " + "a" * 100 + "\n") * (MIB // 111),
                                  "---\n" * (MIB // 4)])
def test_documents_are_split_in_linear_time(text):
    _bounded(5, split_documents, text)
    _bounded(5, parse_documents, text, "m.yaml", "chart")


@pytest.mark.parametrize("text", ["Error: " + "1" * MIB, "[ERROR] " + "1 chart(s) linte" * (MIB // 16),
                                  ("Error: " + "9" * 1000 + "\n") * 1000])
def test_helm_error_lines_are_read_in_linear_time(text):
    _bounded(5, _error_lines, text)


def test_helm_lint_summary_is_not_an_error_line():
    assert _error_lines("Error: 1 chart(s) linted, 1 chart(s) failed\nError: x chart(s) linted\n[ERROR] a\n") == [
        "Error: x chart(s) linted", "[ERROR] a"]


@pytest.mark.parametrize("tail", ['\n{{/* Hostfile lines, one per worker, exactly as mpi-operator names its workers. '
                                  '*/}}\n{{- define "pi.hostfile" -}}\n{{- range $i := until (int .Values.workers) '
                                  '}}\n{{ printf "' + "\\a" * (MIB // 2), "\n" * MIB, "{{ printf " * (MIB // 10)])
def test_helpers_are_matched_in_linear_time(tail):
    from mpigen.objects.chartfiles import helpers_tpl as _helpers
    from mpigen.objects.labels import ChartRef
    _bounded(5, _parse_helpers, _helpers(ChartRef("pi", "pi")) + tail, "pi")


@pytest.mark.parametrize("text", ["[" * MIB, "{a: " * (MIB // 4), "- " * (MIB // 2), "a: &a [" * (MIB // 7),
                                  "x: " + "'" * MIB, "".join(f"{' ' * i}a:\n" for i in range(1400))])
def test_manifests_are_parsed_in_linear_time_within_the_nesting_limit(text):
    _bounded(5, parse_documents, text, "m.yaml")
    documents, problems = parse_documents(text, "m.yaml")
    assert documents == [] and problems


def test_documents_split_where_kubernetes_yaml_reader_splits():
    text = "a: 1\n---\r\nb: 2\n---#c\nc: 3\n--- # d\nd: 4\n----\ne: 5\n"
    assert [chunk.strip() for chunk, _ in split_documents(text)] == ["a: 1", "b: 2", "c: 3", "d: 4\n----\ne: 5"]
