"""GitOps delivery (generator/manifests/gitops.py): the bootstrap manifests under charts/<cluster>/bootstrap/.

The example fleet has one cluster of each tool: dgx-lab (Argo CD, every default) and cpu-lab (Flux, every
default), and dgx-pod (Argo CD, its jobs admitted by Kueue). The objects are checked against the upstream Argo CD
and Flux CRDs, every chart they point at is rendered with real Helm 3 and 4, and the order (sync waves, dependsOn)
and determinism are pinned.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import PROFILES, run_helm
from ruamel.yaml import YAML

from mpigen.check.schemas import SchemaSet
from mpigen.commands.pipeline import CompileResult, compile_profiles
from mpigen.manifests.bootstrap import build_bootstrap
from mpigen.package import output_files
from mpigen.readback.findings import RenderedObject

ARGOCD_FILES = ["dgx-lab/bootstrap/apps/applications.yaml", "dgx-lab/bootstrap/root/root-application.yaml"]
KUEUE_FILES = ["dgx-pod/bootstrap/apps/applications.yaml", "dgx-pod/bootstrap/root/root-application.yaml"]
FLUX_FILES = ["cpu-lab/bootstrap/apps/helmreleases.yaml", "cpu-lab/bootstrap/root/root-sync.yaml"]
REPO_URL = "https://git.example.com/platform/gpu-fleet.git"
DGX_JOBS = {"pi": "hpc", "resnet50-dgx": "ml-training", "resnet50-trainjob": "ml-training",
            "tensorflow-benchmarks": "ml-training"}
SKIP_DRY_RUN = "SkipDryRunOnMissingResource=true"
# The fabric acceptance charts' Applications, apart (no automated sync): per GPU pool of more than two nodes, a pair and
# a pool run per collective, and a perftest run per rail. dgx-lab: pool dgx (4 nodes, 4 rails), all_reduce and
# all_gather; dgx-pod: pool dgx (8 nodes, 4 rails), all_reduce.
ACCEPTANCE_FILES = ["dgx-lab/bootstrap/apps/acceptance.yaml", "dgx-pod/bootstrap/apps/acceptance.yaml"]
RAIL_TESTS = [f"perftest-rail{n}" for n in range(4)]
DGX_LAB_ACCEPTANCE = ["all-gather-pair", "all-gather-pool", "all-reduce-pair", "all-reduce-pool", *RAIL_TESTS]
DGX_POD_ACCEPTANCE = ["all-reduce-pair", "all-reduce-pool", *RAIL_TESTS]


def load_all(text: str) -> list[dict[str, Any]]:
    return [doc for doc in YAML(typ="safe", pure=True).load_all(text) if doc is not None]


def bootstrap_of(result: CompileResult) -> dict[str, list[dict[str, Any]]]:
    """Every bootstrap manifest of the compiled output, parsed, by its path under the charts folder (the Argo CD
    health check beside them is Lua: tests/unit/manifests/test_manifests_mpijob_health.py)."""
    return {path: load_all(data.decode("utf-8")) for path, data in output_files(result.charts).items()
            if "/bootstrap/" in path and path.endswith(".yaml")}


@pytest.fixture(scope="module")
def files(example: CompileResult) -> dict[str, list[dict[str, Any]]]:
    return bootstrap_of(example)


@pytest.fixture(scope="module")
def rendered(example: CompileResult, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The charts folder as `mpigen render` writes it, under the repository path `charts/` the objects use."""
    root = tmp_path_factory.mktemp("repo") / "charts"
    for path, data in output_files(example.charts).items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return root


def of_kind(files: dict[str, list[dict[str, Any]]], kind: str) -> list[dict[str, Any]]:
    return [obj for objects in files.values() for obj in objects if obj["kind"] == kind]


def by_name(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    found = {obj["metadata"]["name"]: obj for obj in objects}
    assert len(found) == len(objects), "two objects with one name"
    return found


def edited_profiles(profiles_copy: Callable[..., Path], cluster: str, replace: tuple[str, str]) -> CompileResult:
    path = PROFILES / "clusters" / f"{cluster}.yaml"
    text = path.read_text(encoding="utf-8")
    assert replace[0] in text
    result = compile_profiles([profiles_copy({f"clusters/{cluster}.yaml": text.replace(*replace)})])
    assert result.ok, [d.format() for d in result.diagnostics]
    return result


# --- which files, which objects ----------------------------------------------------------------------


def test_each_gitops_cluster_gets_a_root_and_an_apps_folder(files: dict) -> None:
    assert sorted(files) == sorted(FLUX_FILES + ARGOCD_FILES + KUEUE_FILES + ACCEPTANCE_FILES)
    assert [(o["apiVersion"], o["kind"]) for o in files["dgx-lab/bootstrap/root/root-application.yaml"]] == [
        ("argoproj.io/v1alpha1", "Application")]
    assert {(o["apiVersion"], o["kind"]) for o in files["dgx-lab/bootstrap/apps/applications.yaml"]} == {
        ("argoproj.io/v1alpha1", "Application")}
    assert [(o["apiVersion"], o["kind"]) for o in files["cpu-lab/bootstrap/root/root-sync.yaml"]] == [
        ("source.toolkit.fluxcd.io/v1", "GitRepository"), ("kustomize.toolkit.fluxcd.io/v1", "Kustomization")]
    assert {(o["apiVersion"], o["kind"]) for o in files["cpu-lab/bootstrap/apps/helmreleases.yaml"]} == {
        ("helm.toolkit.fluxcd.io/v2", "HelmRelease")}


def test_one_application_or_helmrelease_per_chart(example: CompileResult, files: dict) -> None:
    applications = by_name(of_kind({p: files[p] for p in ARGOCD_FILES + KUEUE_FILES + ACCEPTANCE_FILES}, "Application"))
    assert sorted(applications) == sorted([
        "dgx-lab", "dgx-lab-infra", "dgx-lab-pi", "dgx-lab-resnet50-dgx", "dgx-lab-resnet50-trainjob",
        "dgx-lab-tensorflow-benchmarks", "dgx-pod", "dgx-pod-infra", "dgx-pod-language-bert", "dgx-pod-vision-resnet50",
        *(f"dgx-lab-accept-dgx-{test}" for test in DGX_LAB_ACCEPTANCE),
        *(f"dgx-pod-accept-dgx-{test}" for test in DGX_POD_ACCEPTANCE)])
    releases = by_name(of_kind(files, "HelmRelease"))
    assert sorted(releases) == ["cpu-lab-cpu-pi", "cpu-lab-infra"]
    delivered = {cluster.name for cluster in example.fleet.clusters if cluster.gitops is not None}
    charts = {chart.directory for chart in example.charts if chart.directory.split("/")[0] in delivered}
    pointed = {app["spec"]["source"]["path"].removeprefix("charts/") for app in applications.values()}
    pointed |= {hr["spec"]["chart"]["spec"]["chart"].removeprefix("./charts/") for hr in releases.values()}
    assert pointed == charts | {"dgx-lab/bootstrap/apps", "dgx-pod/bootstrap/apps"}


def test_bootstrap_files_say_where_they_come_from_and_how_to_apply_them(example: CompileResult) -> None:
    files = output_files(example.charts)
    root = files["dgx-lab/bootstrap/root/root-application.yaml"].decode()
    assert root.startswith("# Generated by mpigen from profiles/clusters/dgx-lab.yaml. Edit the profile and run "
                           "`mpigen render`; do not edit this file.\n# Argo CD app of apps of cluster dgx-lab. Apply once, "
                           "by hand: kubectl apply -f charts/dgx-lab/bootstrap/root/ ")
    assert "do not apply by hand" in files["cpu-lab/bootstrap/apps/helmreleases.yaml"].decode()


def test_a_cluster_without_gitops_gets_no_bootstrap(example: CompileResult, profiles_copy: Callable) -> None:
    text = (PROFILES / "clusters" / "dgx-lab.yaml").read_text(encoding="utf-8")
    without = text[:text.index("gitops:")]
    result = compile_profiles([profiles_copy({"clusters/dgx-lab.yaml": without})])
    assert result.ok, [d.format() for d in result.diagnostics]
    assert sorted(bootstrap_of(result)) == sorted(FLUX_FILES + KUEUE_FILES + ACCEPTANCE_FILES[1:])
    dgx = next(c for c in result.fleet.clusters if c.name == "dgx-lab")
    assert dgx.gitops is None and build_bootstrap(dgx, result.fleet.jobs_of(dgx)) == []
    # The charts themselves do not depend on the GitOps tool: the Argo CD annotations are always there.
    before = {p: d for p, d in output_files(example.charts).items() if "/bootstrap/" not in p}
    after = {p: d for p, d in output_files(result.charts).items() if "/bootstrap/" not in p}
    assert before == after


# --- the upstream CRDs -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gitops_crds(upstream: Path) -> SchemaSet:
    """What `mpigen check --strict --crds` judges with: the real Argo CD and Flux CRDs (unknown kinds are errors)."""
    schema_set = SchemaSet("1.31", strict=True)
    gitops = upstream / "gitops"
    assert schema_set.add_crds([gitops / "argocd" / "application-crd.yaml", gitops / "flux"]) == []
    return schema_set


def passes_crds(files: dict[str, list[dict[str, Any]]], crds: SchemaSet) -> int:
    """How many bootstrap objects there are, once each has passed its CRD."""
    checked = 0
    for path, objects in files.items():
        for obj in objects:
            findings = crds.check(RenderedObject(path, obj))
            assert findings == [], [f"{path} {f.path}: {f.message}" for f in findings]
            checked += 1
    return checked


def test_every_bootstrap_object_passes_its_upstream_crd(files: dict, gitops_crds: SchemaSet) -> None:
    assert passes_crds(files, gitops_crds) == 14 + len(DGX_LAB_ACCEPTANCE) + len(DGX_POD_ACCEPTANCE)


@pytest.mark.parametrize(("path", "kind", "mutate", "where"), [
    (ARGOCD_FILES[0], "Application", lambda o: o["spec"]["source"]["helm"].update(release="x"),
     ".spec.source.helm.release"),
    (ARGOCD_FILES[0], "Application", lambda o: o["spec"]["syncPolicy"]["automated"].update(prune="yes"),
     ".spec.syncPolicy.automated.prune"),
    (FLUX_FILES[0], "HelmRelease", lambda o: o["spec"]["chart"]["spec"].update(reconcileStrategy="Always"),
     ".spec.chart.spec.reconcileStrategy"),
    (FLUX_FILES[1], "GitRepository", lambda o: o["spec"].update(url="git@git.example.com:platform/gpu-fleet.git"),
     ".spec.url"),
    (FLUX_FILES[1], "Kustomization", lambda o: o["spec"].pop("prune"), ".spec"),
], ids=["app-unknown-field", "app-prune-not-bool", "hr-strategy-enum", "git-scp-url", "ks-without-prune"])
def test_the_crd_check_is_not_vacuous(files: dict, gitops_crds: SchemaSet, path: str, kind: str,
                                      mutate: Callable, where: str) -> None:
    obj = copy.deepcopy(next(o for o in files[path] if o["kind"] == kind))
    mutate(obj)
    assert [f.path for f in gitops_crds.check(RenderedObject(path, obj))] == [where]


# --- every chart they reference exists and renders ----------------------------------------------------


def test_every_referenced_chart_exists_and_helm_renders_it(files: dict, rendered: Path, helm: Path) -> None:
    repo = rendered.parent
    targets = [(app["spec"]["source"]["path"], app["spec"]["source"]["helm"]["releaseName"],
                app["spec"]["destination"]["namespace"]) for app in of_kind(files, "Application") if "helm" in
               app["spec"]["source"]]
    targets += [(hr["spec"]["chart"]["spec"]["chart"].removeprefix("./"), hr["spec"]["releaseName"],
                 hr["spec"]["targetNamespace"]) for hr in of_kind(files, "HelmRelease")]
    assert len(targets) == 10 + len(DGX_LAB_ACCEPTANCE) + len(DGX_POD_ACCEPTANCE)
    for path, release, namespace in targets:
        chart = repo / path
        chart_yaml = YAML(typ="safe", pure=True).load((chart / "Chart.yaml").read_text(encoding="utf-8"))
        assert chart_yaml["name"] == release, path
        # As Argo CD renders it: `helm template <release> <path> --namespace <destination namespace>`.
        docs = load_all(run_helm(helm, "template", release, chart, "--namespace", namespace).stdout)
        assert docs, path
        instances = {doc["metadata"]["labels"]["app.kubernetes.io/instance"] for doc in docs}
        assert instances == {release}, path
        for doc in docs:
            if doc["kind"] in ("MPIJob", "TrainJob", "ConfigMap") and "/jobs/" in path:
                assert doc["metadata"]["namespace"] == namespace, (path, doc["kind"])


def test_the_root_syncs_the_apps_folder_and_never_itself(files: dict, rendered: Path) -> None:
    (root,) = files["dgx-lab/bootstrap/root/root-application.yaml"]
    assert root["spec"]["source"]["path"] == "charts/dgx-lab/bootstrap/apps"
    assert "helm" not in root["spec"]["source"]
    # Applications are created where Argo CD reads them: its own cluster and namespace.
    assert root["spec"]["destination"] == {"server": "https://kubernetes.default.svc", "namespace": "argocd"}
    assert "finalizers" not in root["metadata"]  # deleting the root must not delete every job
    kustomization = next(o for o in files["cpu-lab/bootstrap/root/root-sync.yaml"] if o["kind"] == "Kustomization")
    assert kustomization["spec"]["path"] == "./charts/cpu-lab/bootstrap/apps"
    assert kustomization["spec"]["prune"] is True
    for cluster in ("dgx-lab", "cpu-lab"):
        apps = rendered / cluster / "bootstrap" / "apps"
        assert sorted(p.name for p in apps.iterdir()) == (["acceptance.yaml", "applications.yaml"] if cluster == "dgx-lab"
                                                          else ["helmreleases.yaml"])
        for file in apps.iterdir():
            kinds = {obj["kind"] for obj in load_all(file.read_text(encoding="utf-8"))}
            assert kinds <= {"Application", "HelmRelease"}
    children = by_name(of_kind({ARGOCD_FILES[0]: files[ARGOCD_FILES[0]]}, "Application"))
    assert root["metadata"]["name"] not in children
    assert all("bootstrap" not in app["spec"]["source"]["path"] for app in children.values())


# --- Argo CD ----------------------------------------------------------------------------------------


def test_applications_follow_the_profiles(files: dict) -> None:
    apps = by_name(files["dgx-lab/bootstrap/apps/applications.yaml"])
    expected = {"dgx-lab-infra": ("charts/dgx-lab/infra", "dgx-lab-infra", "ml-training")}
    expected |= {f"dgx-lab-{job}": (f"charts/dgx-lab/jobs/{job}", job, ns) for job, ns in DGX_JOBS.items()}
    assert {name: (app["spec"]["source"]["path"], app["spec"]["source"]["helm"]["releaseName"],
                   app["spec"]["destination"]["namespace"]) for name, app in apps.items()} == expected
    for name, app in apps.items():
        assert app["metadata"]["namespace"] == "argocd"
        assert app["metadata"]["finalizers"] == ["resources-finalizer.argocd.argoproj.io"]
        assert app["spec"]["project"] == "default"
        assert app["spec"]["source"]["repoURL"] == REPO_URL
        assert app["spec"]["source"]["targetRevision"] == "main"
        assert app["spec"]["destination"]["server"] == "https://kubernetes.default.svc"
        policy = {k: v for k, v in app["spec"]["syncPolicy"].items() if not (k == "retry" and "trainjob" in name)}
        assert policy == {"automated": {"prune": True, "selfHeal": True}, "syncOptions": ["CreateNamespace=true"]}


def test_sync_waves_put_the_infra_chart_before_every_job(files: dict) -> None:
    apps = files["dgx-lab/bootstrap/apps/applications.yaml"]
    waves = {app["metadata"]["name"]: app["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"] for app in apps}
    assert all(isinstance(wave, str) for wave in waves.values())  # an annotation value is a string
    assert waves == {"dgx-lab-infra": "0", **{f"dgx-lab-{job}": "1" for job in DGX_JOBS}}
    assert int(waves["dgx-lab-infra"]) < min(int(wave) for name, wave in waves.items() if name != "dgx-lab-infra")
    assert apps[0]["metadata"]["name"] == "dgx-lab-infra"


def test_custom_resources_may_be_synced_before_their_crd_exists(example: CompileResult) -> None:
    for chart in example.charts:
        for manifest in chart.manifests:
            annotations = manifest.obj["metadata"].get("annotations", {})
            group = manifest.obj["apiVersion"].rpartition("/")[0]
            if "." in group and not group.endswith(".k8s.io"):  # a custom resource
                assert annotations["argocd.argoproj.io/sync-options"] == SKIP_DRY_RUN, chart.directory
            elif manifest.obj["kind"] == "Namespace":  # Argo CD's helm.sh/resource-policy: keep
                assert annotations["argocd.argoproj.io/sync-options"] == "Prune=false,Delete=false"
            else:
                assert "argocd.argoproj.io/sync-options" not in annotations


def test_argocd_settings_flow_through(profiles_copy: Callable) -> None:
    result = edited_profiles(profiles_copy, "dgx-lab", (
        "  repoURL: https://git.example.com/platform/gpu-fleet.git\n",
        "  repoURL: ssh://git@git.example.com/platform/gpu-fleet.git\n  revision: release-2\n  path: deploy/charts\n"
        "  destination: https://gpu.example.com:6443\n  project: gpu-fleet\n  namespace: gitops\n"))
    files = bootstrap_of(result)
    assert sorted(files) == sorted(FLUX_FILES + ARGOCD_FILES + KUEUE_FILES + ACCEPTANCE_FILES)
    (root,) = files["dgx-lab/bootstrap/root/root-application.yaml"]
    assert root["metadata"]["namespace"] == "gitops"
    assert root["spec"]["source"] == {"repoURL": "ssh://git@git.example.com/platform/gpu-fleet.git",
                                      "targetRevision": "release-2", "path": "deploy/charts/dgx-lab/bootstrap/apps"}
    assert root["spec"]["destination"] == {"server": "https://kubernetes.default.svc", "namespace": "gitops"}
    assert root["spec"]["project"] == "gpu-fleet"
    for app in files["dgx-lab/bootstrap/apps/applications.yaml"] + files["dgx-lab/bootstrap/apps/acceptance.yaml"]:
        assert app["metadata"]["namespace"] == "gitops"
        assert app["spec"]["project"] == "gpu-fleet"
        assert app["spec"]["destination"]["server"] == "https://gpu.example.com:6443"
        assert app["spec"]["source"]["path"].startswith("deploy/charts/dgx-lab/")
        assert app["spec"]["source"]["targetRevision"] == "release-2"


# --- Flux -------------------------------------------------------------------------------------------


def test_helmreleases_follow_the_profiles(files: dict) -> None:
    git, kustomization = files["cpu-lab/bootstrap/root/root-sync.yaml"]
    assert git["metadata"] == {"name": "cpu-lab", "namespace": "flux-system",
                               "labels": {"app.kubernetes.io/managed-by": "mpigen", "mpigen/cluster": "cpu-lab"}}
    assert git["spec"]["url"] == REPO_URL and git["spec"]["ref"] == {"branch": "main"}
    assert git["spec"]["ignore"] == "/*\n!/charts/\n"  # the artifact holds the charts folder only
    source = {"kind": "GitRepository", "name": "cpu-lab", "namespace": "flux-system"}
    assert kustomization["spec"]["sourceRef"] == source
    releases = by_name(files["cpu-lab/bootstrap/apps/helmreleases.yaml"])
    assert {name: (hr["spec"]["chart"]["spec"]["chart"], hr["spec"]["releaseName"], hr["spec"]["targetNamespace"])
            for name, hr in releases.items()} == {"cpu-lab-infra": ("./charts/cpu-lab/infra", "cpu-lab-infra", "mpi"),
                                                  "cpu-lab-cpu-pi": ("./charts/cpu-lab/jobs/cpu-pi", "cpu-pi", "mpi")}
    for hr in releases.values():
        assert hr["metadata"]["namespace"] == "flux-system"
        # Every chart stays at version 0.1.0: only `Revision` makes Flux build a new artifact for a new commit.
        assert hr["spec"]["chart"]["spec"]["reconcileStrategy"] == "Revision"
        assert hr["spec"]["chart"]["spec"]["sourceRef"] == source


def test_every_job_release_depends_on_the_infra_release(files: dict) -> None:
    releases = by_name(files["cpu-lab/bootstrap/apps/helmreleases.yaml"])
    assert "dependsOn" not in releases["cpu-lab-infra"]["spec"]
    jobs = [hr for name, hr in releases.items() if name != "cpu-lab-infra"]
    assert jobs
    for hr in jobs:
        assert hr["spec"]["dependsOn"] == [{"name": "cpu-lab-infra"}]
        # dependsOn without a namespace means the HelmRelease's own: the infra release is there.
        assert releases["cpu-lab-infra"]["metadata"]["namespace"] == hr["metadata"]["namespace"]


def test_a_second_flux_job_depends_on_the_infra_release_too(profiles_copy: Callable) -> None:
    job = (PROFILES / "jobs" / "cpu-pi.yaml").read_text(encoding="utf-8").replace("name: cpu-pi", "name: cpu-pi-2")
    result = compile_profiles([profiles_copy({"jobs/cpu-pi-2.yaml": job})])
    assert result.ok, [d.format() for d in result.diagnostics]
    releases = by_name(bootstrap_of(result)["cpu-lab/bootstrap/apps/helmreleases.yaml"])
    assert list(releases) == ["cpu-lab-infra", "cpu-lab-cpu-pi", "cpu-lab-cpu-pi-2"]
    assert releases["cpu-lab-cpu-pi-2"]["spec"]["dependsOn"] == [{"name": "cpu-lab-infra"}]


def test_flux_namespace_and_revision_flow_through(profiles_copy: Callable) -> None:
    result = edited_profiles(profiles_copy, "cpu-lab", ("  tool: flux\n", "  tool: flux\n  namespace: gitops\n"
                                                                          "  revision: release-2\n  path: deploy\n"))
    files = bootstrap_of(result)
    git, kustomization = files["cpu-lab/bootstrap/root/root-sync.yaml"]
    assert git["spec"]["ref"] == {"branch": "release-2"} and git["spec"]["ignore"] == "/*\n!/deploy/\n"
    assert kustomization["spec"]["path"] == "./deploy/cpu-lab/bootstrap/apps"
    for hr in files["cpu-lab/bootstrap/apps/helmreleases.yaml"]:
        assert hr["metadata"]["namespace"] == "gitops"
        assert hr["spec"]["chart"]["spec"]["sourceRef"]["namespace"] == "gitops"
        assert hr["spec"]["chart"]["spec"]["chart"].startswith("./deploy/cpu-lab/")


# --- following the profiles, deterministically -------------------------------------------------------


def test_a_removed_job_leaves_the_apps_folder(profiles_copy: Callable) -> None:
    result = compile_profiles([profiles_copy({"jobs/pi.yaml": None, "jobs/cpu-pi.yaml": None})])
    assert result.ok, [d.format() for d in result.diagnostics]
    files = bootstrap_of(result)
    assert "dgx-lab-pi" not in by_name(files["dgx-lab/bootstrap/apps/applications.yaml"])
    assert list(by_name(files["cpu-lab/bootstrap/apps/helmreleases.yaml"])) == ["cpu-lab-infra"]


def test_rendering_twice_gives_the_same_bytes_and_nothing_time_based_or_random(example: CompileResult) -> None:
    again = compile_profiles([PROFILES])
    first = {p: d for p, d in output_files(example.charts).items() if "/bootstrap/" in p}
    second = {p: d for p, d in output_files(again.charts).items() if "/bootstrap/" in p}
    # and the Argo CD health checks: of MPIJobs on dgx-lab and dgx-pod, of dgx-lab's TrainJob; and their acceptance files
    assert first == second and len(first) == 6 + 2 + 1 + len(ACCEPTANCE_FILES)
    for path, data in first.items():
        text = data.decode("utf-8")
        assert "{{" not in text, path  # plain manifests: nothing for a template engine to evaluate
        assert not re.search(r"creationTimestamp|generateName|resourceVersion|uid:|\b20[0-9]{2}-[0-9]{2}-[0-9]{2}", text)
        for obj in load_all(text) if path.endswith(".yaml") else ():
            assert set(obj["metadata"]) <= {"name", "namespace", "labels", "annotations", "finalizers"}, path


# --- Kueue: the GitOps tool leaves to Kueue what Kueue owns --------------------------------------------------------

KUEUE_APPS = "dgx-pod/bootstrap/apps/applications.yaml"
KUEUE_OWNED = {"group": "kubeflow.org", "kind": "MPIJob", "jsonPointers": ["/spec/runPolicy/suspend"],
               "jqPathExpressions": [".spec.mpiReplicaSpecs[].template.spec.nodeSelector",
                                     ".spec.mpiReplicaSpecs[].template.spec.tolerations",
                                     ".spec.mpiReplicaSpecs[].template.spec.schedulingGates"]}


def test_argocd_applications_of_kueue_jobs_ignore_and_respect_what_kueue_owns(files: dict,
                                                                              gitops_crds: SchemaSet) -> None:
    """Kueue unsuspends an admitted job and injects its flavor's placement into the pod templates; self-heal would
    put git's `suspend: true` back (a sync after any commit too). The job Applications ignore those fields, and with
    RespectIgnoreDifferences=true a sync keeps the live values; the infra Application is a plain one."""
    apps = by_name(files[KUEUE_APPS])
    for name in ("dgx-pod-vision-resnet50", "dgx-pod-language-bert"):
        spec = apps[name]["spec"]
        assert spec["ignoreDifferences"] == [KUEUE_OWNED]
        assert spec["syncPolicy"]["syncOptions"] == ["CreateNamespace=true", "RespectIgnoreDifferences=true"]
        assert gitops_crds.check(RenderedObject(KUEUE_APPS, apps[name])) == []
    assert "ignoreDifferences" not in apps["dgx-pod-infra"]["spec"]
    for app in files["dgx-lab/bootstrap/apps/applications.yaml"]:  # no Kueue there
        assert "ignoreDifferences" not in app["spec"]


def test_a_kueue_trainjobs_application_ignores_what_kueue_owns_of_a_trainjob(profiles_copy: Callable) -> None:
    """Kueue unsuspends an admitted TrainJob and puts its flavor's placement into runtime patches of its own (the
    pods are in the TrainingRuntime): those two fields, and no MPIJob's, for a job whose backend is trainjob."""
    from mpigen.commands.pipeline import compile_profiles
    from mpigen.manifests.gitops import build_argocd_application, deliveries

    text = (PROFILES / "jobs/vision-resnet50.yaml").read_text(encoding="utf-8") + "backend: trainjob\n"
    result = compile_profiles([profiles_copy({"jobs/vision-resnet50.yaml": text})])
    assert result.ok, [d.format() for d in result.diagnostics]
    cluster = next(c for c in result.fleet.clusters if c.name == "dgx-pod")
    apps = {d.release: build_argocd_application(cluster, d) for d in deliveries(cluster, result.fleet.jobs_of(cluster))}
    assert apps["vision-resnet50"]["spec"]["ignoreDifferences"] == [
        {"group": "trainer.kubeflow.org", "kind": "TrainJob", "jsonPointers": ["/spec/suspend", "/spec/runtimePatches"]}]
    assert apps["language-bert"]["spec"]["ignoreDifferences"] == [KUEUE_OWNED]


def test_flux_releases_of_kueue_jobs_patch_only_what_git_changed(profiles_copy: Callable,
                                                                 gitops_crds: SchemaSet) -> None:
    """Under Flux, the same cluster's job releases install and upgrade with client-side patches, which carry only
    what changed in git between two releases: git's unchanged `suspend: true` is never sent to an admitted job.
    (Server-side apply, Helm 4's default, sends the whole object.)"""
    result = edited_profiles(profiles_copy, "dgx-pod", ("  tool: argocd\n", "  tool: flux\n"))
    releases = by_name(bootstrap_of(result)["dgx-pod/bootstrap/apps/helmreleases.yaml"])
    for name in ("dgx-pod-vision-resnet50", "dgx-pod-language-bert"):
        spec = releases[name]["spec"]
        assert spec["install"] == {"serverSideApply": False}
        assert spec["upgrade"] == {"serverSideApply": "disabled"}
        assert gitops_crds.check(RenderedObject("helmreleases.yaml", releases[name])) == []
    assert "install" not in releases["dgx-pod-infra"]["spec"]
    broken = copy.deepcopy(releases["dgx-pod-vision-resnet50"])
    broken["spec"]["upgrade"]["serverSideApply"] = False  # a boolean only at install
    assert {f.path for f in gitops_crds.check(RenderedObject("helmreleases.yaml", broken))} == {
        ".spec.upgrade.serverSideApply"}


def test_a_trainjobs_delivery_retries_until_its_runtime_exists(files: dict, profiles_copy: Callable,
                                                                gitops_crds: SchemaSet) -> None:
    """Trainer's webhook refuses a TrainJob whose TrainingRuntime does not exist yet ("specified trainingRuntime must
    be created before the TrainJob is created"), and a renamed run's runtime arrives with the infra chart, which the
    tool syncs independently of the job's: the TrainJob's Application retries a failed sync (Argo CD never retries a
    failed automated sync of one commit by itself), its HelmRelease remediates install and upgrade by retrying. The
    MPIJobs' deliveries are left as they were."""
    apps = by_name(files["dgx-lab/bootstrap/apps/applications.yaml"])
    retry = apps["dgx-lab-resnet50-trainjob"]["spec"]["syncPolicy"]["retry"]
    assert retry == {"limit": 10, "backoff": {"duration": "10s", "factor": 2, "maxDuration": "3m"}}
    assert gitops_crds.check(RenderedObject("apps.yaml", apps["dgx-lab-resnet50-trainjob"])) == []
    assert all("retry" not in app["spec"]["syncPolicy"] for name, app in apps.items() if "trainjob" not in name)
    result = edited_profiles(profiles_copy, "dgx-lab", ("  tool: argocd\n", "  tool: flux\n"))
    releases = by_name(bootstrap_of(result)["dgx-lab/bootstrap/apps/helmreleases.yaml"])
    spec = releases["dgx-lab-resnet50-trainjob"]["spec"]
    assert spec["install"] == {"remediation": {"retries": 10}} and spec["upgrade"] == {"remediation": {"retries": 10}}
    assert gitops_crds.check(RenderedObject("hr.yaml", releases["dgx-lab-resnet50-trainjob"])) == []
    assert "install" not in releases["dgx-lab-resnet50-dgx"]["spec"]


# --- fabric acceptance charts: delivered, never synced by themselves ------------------------------------------------


def test_acceptance_applications_have_no_automated_sync_but_the_same_options(files: dict) -> None:
    """A person runs an acceptance chart (`argocd app sync`); it keeps what every job Application has besides:
    the namespace made on sync, Kueue's fields left to Kueue (dgx-pod), the finalizer that deletes its job with it."""
    lab = by_name(files["dgx-lab/bootstrap/apps/acceptance.yaml"])
    assert sorted(lab) == sorted(f"dgx-lab-accept-dgx-{test}" for test in DGX_LAB_ACCEPTANCE)
    for name, app in lab.items():
        assert app["spec"]["syncPolicy"] == {"syncOptions": ["CreateNamespace=true"]}, name
        assert app["metadata"]["finalizers"] == ["resources-finalizer.argocd.argoproj.io"]
        test = name.removeprefix("dgx-lab-")
        assert app["spec"]["source"]["path"] == f"charts/dgx-lab/acceptance/{test}"
        assert app["spec"]["source"]["helm"] == {"releaseName": test}
    pod = by_name(files["dgx-pod/bootstrap/apps/acceptance.yaml"])
    assert sorted(pod) == sorted(f"dgx-pod-accept-dgx-{test}" for test in DGX_POD_ACCEPTANCE)
    for app in pod.values():
        assert "automated" not in app["spec"]["syncPolicy"]
        assert app["spec"]["syncPolicy"]["syncOptions"] == ["CreateNamespace=true", "RespectIgnoreDifferences=true"]
        assert app["spec"]["ignoreDifferences"] == [KUEUE_OWNED]
    # Every real job's Application still syncs by itself.
    for path in ARGOCD_FILES[:1] + KUEUE_FILES[:1]:
        for app in files[path]:
            assert app["spec"]["syncPolicy"]["automated"] == {"prune": True, "selfHeal": True}


def test_acceptance_helmreleases_are_suspended_and_wait_for_the_infra(profiles_copy: Callable) -> None:
    result = edited_profiles(profiles_copy, "dgx-lab", ("  tool: argocd\n", "  tool: flux\n"))
    files = bootstrap_of(result)
    releases = by_name(files["dgx-lab/bootstrap/apps/acceptance.yaml"])
    assert sorted(releases) == sorted(f"dgx-lab-accept-dgx-{test}" for test in DGX_LAB_ACCEPTANCE)
    for name, release in releases.items():
        assert release["kind"] == "HelmRelease" and release["spec"]["suspend"] is True, name
        assert release["spec"]["dependsOn"] == [{"name": "dgx-lab-infra"}]
        assert release["spec"]["chart"]["spec"]["chart"] == f"./charts/dgx-lab/acceptance/{name.removeprefix('dgx-lab-')}"
    assert all("suspend" not in release["spec"] for release in files["dgx-lab/bootstrap/apps/helmreleases.yaml"])


def test_an_applicationset_cluster_keeps_its_acceptance_applications_apart(profiles_copy: Callable) -> None:
    """The ApplicationSet's one template syncs automatically, so the acceptance charts are not among its folders."""
    result = edited_profiles(profiles_copy, "dgx-lab",
                             ("  tool: argocd\n", "  tool: argocd\n  applications: applicationset\n"))
    files = bootstrap_of(result)
    (appset,) = files["dgx-lab/bootstrap/apps/applicationset.yaml"]
    folders = [d["path"] for g in appset["spec"]["generators"] for d in g["git"]["directories"]]
    assert folders and not any("/acceptance/" in folder for folder in folders)
    assert all("automated" not in app["spec"]["syncPolicy"] for app in files["dgx-lab/bootstrap/apps/acceptance.yaml"])
