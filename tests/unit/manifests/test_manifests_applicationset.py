"""One Argo CD ApplicationSet instead of the app of apps (generator/manifests/applicationset.py).

The ApplicationSet is expanded here as Argo CD's controller expands it (a git directory generator yields each listed
folder that exists at the revision, with `path.path`, `path.basename` and its `values` templated from them; the
template's `{{ .x.y }}` are then filled in), and the Applications it makes are compared with the app of apps' own:
the same in everything but the sync wave (no parent syncs them, so it orders nothing) and the retry, which every
Application then carries."""

from __future__ import annotations

import copy
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import PROFILES, UPSTREAM
from test_manifests_gitops import bootstrap_of, by_name

from mpigen.check.schemas import SchemaSet
from mpigen.commands.pipeline import CompileResult, compile_profiles
from mpigen.manifests.gitops import ARGOCD_RUNTIME_RETRY
from mpigen.package import output_files
from mpigen.readback.findings import RenderedObject

APPLICATIONSET = "  applications: applicationset\n"
HOLE = re.compile(r"\{\{ \.([a-z]+)\.([a-z]+) \}\}")


def with_applicationset(profiles_copy: Callable[..., Path], clusters: tuple[str, ...] = ("dgx-lab", "dgx-pod"),
                        edits: dict[str, str | None] | None = None) -> CompileResult:
    texts = {f"clusters/{c}.yaml": (PROFILES / "clusters" / f"{c}.yaml").read_text(encoding="utf-8") + APPLICATIONSET
             for c in clusters}
    result = compile_profiles([profiles_copy({**texts, **(edits or {})})])
    assert result.ok, [d.format() for d in result.diagnostics]
    return result


def fill(node: Any, params: dict[str, dict[str, str]]) -> Any:
    """A template with every `{{ .group.key }}` replaced, as Go's text/template with missingkey=error does."""
    if isinstance(node, dict):
        return {key: fill(value, params) for key, value in node.items()}
    if isinstance(node, list):
        return [fill(value, params) for value in node]
    if isinstance(node, str):
        return HOLE.sub(lambda m: params[m.group(1)][m.group(2)], node)
    return node


def expand(appset: dict[str, Any], repo: Path) -> list[dict[str, Any]]:
    """The Applications Argo CD's ApplicationSet controller makes of it, with the repository checked out at `repo`."""
    spec = appset["spec"]
    assert spec["goTemplate"] is True and spec["goTemplateOptions"] == ["missingkey=error"]
    made = []
    for generator in spec["generators"]:
        git = generator["git"]
        for directory in git["directories"]:
            if not (repo / directory["path"]).is_dir():
                continue
            params = {"path": {"path": directory["path"], "basename": directory["path"].rpartition("/")[2]}}
            params["values"] = fill(git["values"], params)
            app = fill(copy.deepcopy(spec["template"]), params)
            made.append({"apiVersion": appset["apiVersion"], "kind": "Application",
                         "metadata": {**app["metadata"], "namespace": appset["metadata"]["namespace"]},
                         "spec": app["spec"]})
    return made


def checked_out(result: CompileResult, root: Path) -> Path:
    for path, data in output_files(result.charts).items():
        target = root / "charts" / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return root


@pytest.fixture(scope="module")
def applicationset_crd() -> SchemaSet:
    schema_set = SchemaSet("1.31", strict=True)
    assert schema_set.add_crds([UPSTREAM / "gitops" / "argocd" / "applicationset-crd.yaml"]) == []
    return schema_set


def test_the_apps_folder_holds_one_applicationset_and_the_root_is_unchanged(example: CompileResult,
                                                                             profiles_copy: Callable) -> None:
    result = with_applicationset(profiles_copy)
    files = bootstrap_of(result)
    before = bootstrap_of(example)
    for cluster in ("dgx-lab", "dgx-pod"):
        assert f"{cluster}/bootstrap/apps/applications.yaml" not in files
        (appset,) = files[f"{cluster}/bootstrap/apps/applicationset.yaml"]
        assert (appset["apiVersion"], appset["kind"]) == ("argoproj.io/v1alpha1", "ApplicationSet")
        assert appset["metadata"] == {"name": cluster, "namespace": "argocd", "labels": {
            "app.kubernetes.io/managed-by": "mpigen", "mpigen/cluster": cluster}}
        root = f"{cluster}/bootstrap/root/root-application.yaml"
        assert files[root] == before[root]  # the root syncs apps/ either way
    assert files["cpu-lab/bootstrap/apps/helmreleases.yaml"] == before["cpu-lab/bootstrap/apps/helmreleases.yaml"]
    charts = {p: d for p, d in output_files(result.charts).items() if "/bootstrap/" not in p}
    assert charts == {p: d for p, d in output_files(example.charts).items() if "/bootstrap/" not in p}


def test_app_of_apps_written_out_is_the_default_byte_for_byte(example: CompileResult, profiles_copy: Callable) -> None:
    text = (PROFILES / "clusters" / "dgx-lab.yaml").read_text(encoding="utf-8") + "  applications: app-of-apps\n"
    result = compile_profiles([profiles_copy({"clusters/dgx-lab.yaml": text})])
    assert result.ok, [d.format() for d in result.diagnostics]
    assert output_files(result.charts) == output_files(example.charts)


@pytest.mark.parametrize("cluster", ["dgx-lab", "dgx-pod"])
def test_the_applicationset_makes_the_app_of_apps_applications(example: CompileResult, profiles_copy: Callable,
                                                               tmp_path: Path, cluster: str) -> None:
    """dgx-lab: jobs in two namespaces, one a TrainJob; dgx-pod: Kueue jobs, whose fields Kueue owns are ignored."""
    result = with_applicationset(profiles_copy)
    (appset,) = bootstrap_of(result)[f"{cluster}/bootstrap/apps/applicationset.yaml"]
    made = by_name(expand(appset, checked_out(result, tmp_path)))
    expected = by_name(bootstrap_of(example)[f"{cluster}/bootstrap/apps/applications.yaml"])
    assert sorted(made) == sorted(expected)
    ignored = [entry for app in expected.values() for entry in app["spec"].get("ignoreDifferences", [])]
    for name, app in expected.items():
        app["metadata"].pop("annotations")  # the sync wave
        app["metadata"].pop("finalizers")  # the ApplicationSet controller adds it to every Application it makes
        app["spec"]["syncPolicy"]["retry"] = ARGOCD_RUNTIME_RETRY
        if ignored:  # Kueue's fields of every backend: the infra chart has none of those objects
            app["spec"]["ignoreDifferences"] = [entry for i, entry in enumerate(ignored) if entry not in ignored[:i]]
            app["spec"]["syncPolicy"]["syncOptions"] = ["CreateNamespace=true", "RespectIgnoreDifferences=true"]
        assert made[name] == app, name


def test_a_new_job_in_a_new_namespace_gets_a_generator_of_its_own(profiles_copy: Callable, tmp_path: Path) -> None:
    job = (PROFILES / "jobs" / "pi.yaml").read_text(encoding="utf-8").replace("name: pi", "name: pi-2")
    result = with_applicationset(profiles_copy, ("dgx-lab",), {"jobs/pi-2.yaml": job})
    (appset,) = bootstrap_of(result)["dgx-lab/bootstrap/apps/applicationset.yaml"]
    generators = [(g["git"]["values"], [d["path"] for d in g["git"]["directories"]]) for g in appset["spec"]["generators"]]
    assert generators == [
        ({"namespace": "ml-training", "release": "dgx-lab-infra"}, ["charts/dgx-lab/infra"]),
        ({"namespace": "hpc", "release": "{{ .path.basename }}"}, ["charts/dgx-lab/jobs/pi", "charts/dgx-lab/jobs/pi-2"]),
        ({"namespace": "ml-training", "release": "{{ .path.basename }}"},
         ["charts/dgx-lab/jobs/resnet50-dgx", "charts/dgx-lab/jobs/resnet50-trainjob",
          "charts/dgx-lab/jobs/tensorflow-benchmarks"])]
    made = by_name(expand(appset, checked_out(result, tmp_path)))
    assert made["dgx-lab-pi-2"]["spec"]["source"]["helm"] == {"releaseName": "pi-2"}
    assert made["dgx-lab-pi-2"]["spec"]["destination"]["namespace"] == "hpc"


def test_a_chart_folder_missing_from_git_makes_no_application(profiles_copy: Callable, tmp_path: Path) -> None:
    result = with_applicationset(profiles_copy, ("dgx-lab",))
    (appset,) = bootstrap_of(result)["dgx-lab/bootstrap/apps/applicationset.yaml"]
    repo = checked_out(result, tmp_path)
    assert "dgx-lab-pi" in by_name(expand(appset, repo))
    shutil.rmtree(repo / "charts" / "dgx-lab" / "jobs" / "pi")
    assert "dgx-lab-pi" not in by_name(expand(appset, repo))


def test_the_applicationset_passes_its_upstream_crd(profiles_copy: Callable, applicationset_crd: SchemaSet) -> None:
    result = with_applicationset(profiles_copy)
    for cluster in ("dgx-lab", "dgx-pod"):
        path = f"{cluster}/bootstrap/apps/applicationset.yaml"
        (appset,) = bootstrap_of(result)[path]
        assert applicationset_crd.check(RenderedObject(path, appset)) == []
        broken = copy.deepcopy(appset)
        broken["spec"]["generators"][0]["git"]["directories"][0]["exclude"] = "no"
        assert [f.path for f in applicationset_crd.check(RenderedObject(path, broken))] == [
            ".spec.generators[0].git.directories[0].exclude"]


def test_a_values_path_reaches_every_application_the_applicationset_makes(profiles_copy: Callable,
                                                                         tmp_path: Path) -> None:
    text = (PROFILES / "clusters" / "dgx-lab.yaml").read_text(encoding="utf-8") + "  valuesPath: environments/lab\n"
    result = with_applicationset(profiles_copy, ("dgx-lab",), {"clusters/dgx-lab.yaml": text + APPLICATIONSET})
    (appset,) = bootstrap_of(result)["dgx-lab/bootstrap/apps/applicationset.yaml"]
    made = by_name(expand(appset, checked_out(result, tmp_path)))
    assert made["dgx-lab-pi"]["spec"]["source"]["helm"] == {
        "releaseName": "pi", "valueFiles": ["/environments/lab/pi.yaml"], "ignoreMissingValueFiles": True}
    assert made["dgx-lab-infra"]["spec"]["source"]["helm"]["valueFiles"] == ["/environments/lab/dgx-lab-infra.yaml"]
