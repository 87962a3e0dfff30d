"""The bootstrap files (generator/manifests/bootstrap.py) of a private repository: Flux on an existing GitRepository
(`sourceRef`, as `flux bootstrap` creates it) or on mpigen's own with credentials (`secretRef`); Argo CD told where
its credentials go. Every object is judged by the upstream Flux and Argo CD CRDs."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from test_manifests_gitops import (
    DGX_LAB_ACCEPTANCE,
    DGX_POD_ACCEPTANCE,
    FLUX_FILES,
    bootstrap_of,
    by_name,
    edited_profiles,
    gitops_crds,
    of_kind,
    passes_crds,
)

from mpigen.check.schemas import SchemaSet
from mpigen.commands.pipeline import compile_profiles
from mpigen.package import output_files

assert gitops_crds  # the module-scoped fixture, shared
ACCEPTANCE = len(DGX_LAB_ACCEPTANCE) + len(DGX_POD_ACCEPTANCE)
"""The acceptance Applications (test_manifests_gitops.py) every count below holds beside the fleet's 14 objects."""
REPO_LINE = "  repoURL: https://git.example.com/platform/gpu-fleet.git\n"
FLUX_SYSTEM = {"kind": "GitRepository", "name": "flux-system", "namespace": "flux-system"}


def test_a_source_ref_puts_the_kustomization_and_every_helmrelease_on_that_git_repository(
        profiles_copy: Callable, gitops_crds: SchemaSet) -> None:
    result = edited_profiles(profiles_copy, "cpu-lab", (REPO_LINE, "  sourceRef:\n    name: flux-system\n"))
    files = bootstrap_of(result)
    assert sorted(p for p in files if p.startswith("cpu-lab/")) == sorted(FLUX_FILES)
    (kustomization,) = files["cpu-lab/bootstrap/root/root-sync.yaml"]  # no GitRepository of mpigen's own
    assert kustomization["kind"] == "Kustomization"
    assert kustomization["spec"]["sourceRef"] == FLUX_SYSTEM
    assert kustomization["spec"]["path"] == "./charts/cpu-lab/bootstrap/apps"
    releases = by_name(files["cpu-lab/bootstrap/apps/helmreleases.yaml"])
    assert sorted(releases) == ["cpu-lab-cpu-pi", "cpu-lab-infra"]
    for release in releases.values():
        assert release["spec"]["chart"]["spec"]["sourceRef"] == FLUX_SYSTEM
    assert of_kind(files, "GitRepository") == []
    assert passes_crds(files, gitops_crds) == 14 - 1 + ACCEPTANCE
    header = output_files(result.charts)["cpu-lab/bootstrap/root/root-sync.yaml"].decode().splitlines()[1]
    assert header.startswith("# Flux sync of cluster cpu-lab, from the GitRepository flux-system/flux-system. ")


def test_a_source_ref_in_another_namespace_is_named_there(profiles_copy: Callable) -> None:
    result = edited_profiles(profiles_copy, "cpu-lab", (
        REPO_LINE, "  namespace: gitops\n  sourceRef:\n    kind: GitRepository\n    name: fleet\n    namespace: shared\n"))
    files = bootstrap_of(result)
    (kustomization,) = files["cpu-lab/bootstrap/root/root-sync.yaml"]
    where = {"kind": "GitRepository", "name": "fleet", "namespace": "shared"}
    assert kustomization["metadata"]["namespace"] == "gitops" and kustomization["spec"]["sourceRef"] == where
    assert {hr["spec"]["chart"]["spec"]["sourceRef"]["namespace"] for hr in of_kind(files, "HelmRelease")} == {"shared"}


def test_a_secret_ref_is_the_git_repositorys_credentials(profiles_copy: Callable, gitops_crds: SchemaSet) -> None:
    result = edited_profiles(profiles_copy, "cpu-lab", (REPO_LINE, REPO_LINE + "  secretRef: gpu-fleet-deploy-key\n"))
    files = bootstrap_of(result)
    git, kustomization = files["cpu-lab/bootstrap/root/root-sync.yaml"]
    assert git["kind"] == "GitRepository" and git["spec"]["secretRef"] == {"name": "gpu-fleet-deploy-key"}
    assert git["spec"]["url"] == "https://git.example.com/platform/gpu-fleet.git"
    assert kustomization["spec"]["sourceRef"] == {"kind": "GitRepository", "name": "cpu-lab", "namespace": "flux-system"}
    assert passes_crds(files, gitops_crds) == 14 + ACCEPTANCE
    text = output_files(result.charts)["cpu-lab/bootstrap/root/root-sync.yaml"].decode()
    assert ("The repository's credentials are Secret flux-system/gpu-fleet-deploy-key: create it outside git (flux "
            "create secret git gpu-fleet-deploy-key --namespace flux-system --url https://git.example.com/platform/"
            "gpu-fleet.git ...).") in text.splitlines()[1]
    assert "password" not in text and "identity:" not in text  # a name, never secret data


def test_without_a_secret_ref_the_git_repository_has_none(profiles_copy: Callable) -> None:
    result = compile_profiles([profiles_copy()])
    git, _ = bootstrap_of(result)["cpu-lab/bootstrap/root/root-sync.yaml"]
    assert list(git["spec"]) == ["interval", "url", "ref", "ignore"]


@pytest.mark.parametrize("cluster", ["dgx-lab", "dgx-pod"])
def test_the_argo_cd_root_says_where_a_private_repositorys_credentials_go(example, cluster: str) -> None:
    header = output_files(example.charts)[f"{cluster}/bootstrap/root/root-application.yaml"].decode().splitlines()[1]
    assert header.endswith(" A private repository: create, outside git, a Secret in Argo CD's namespace labelled "
                           "argocd.argoproj.io/secret-type: repo-creds whose url is "
                           "https://git.example.com/platform/gpu-fleet.git or a prefix of it (argocd repocreds add).")


def test_a_values_path_gives_every_application_its_per_environment_values_file(
        profiles_copy: Callable, gitops_crds: SchemaSet) -> None:
    result = edited_profiles(profiles_copy, "dgx-lab", (REPO_LINE, REPO_LINE + "  valuesPath: environments/lab\n"))
    files = bootstrap_of(result)
    apps = by_name(files["dgx-lab/bootstrap/apps/applications.yaml"])
    # A path starting with `/` is the repository root's, for Argo CD, whatever the chart's folder.
    assert apps["dgx-lab-pi"]["spec"]["source"]["helm"] == {
        "releaseName": "pi", "valueFiles": ["/environments/lab/pi.yaml"], "ignoreMissingValueFiles": True}
    assert apps["dgx-lab-infra"]["spec"]["source"]["helm"]["valueFiles"] == ["/environments/lab/dgx-lab-infra.yaml"]
    (root,) = files["dgx-lab/bootstrap/root/root-application.yaml"]
    assert "helm" not in root["spec"]["source"]
    dgx_lab = {p: o for p, o in files.items() if p.startswith("dgx-lab/")}
    assert passes_crds(dgx_lab, gitops_crds) == 6 + len(DGX_LAB_ACCEPTANCE)


def test_a_values_path_gives_every_helmrelease_its_values_file_and_the_artifact_holds_it(
        profiles_copy: Callable, gitops_crds: SchemaSet) -> None:
    result = edited_profiles(profiles_copy, "cpu-lab", (REPO_LINE, REPO_LINE + "  valuesPath: environments/cpu-lab\n"))
    files = bootstrap_of(result)
    git, _ = files["cpu-lab/bootstrap/root/root-sync.yaml"]
    assert git["spec"]["ignore"] == "/*\n!/charts/\n!/environments/cpu-lab/\n"
    release = by_name(files["cpu-lab/bootstrap/apps/helmreleases.yaml"])["cpu-lab-cpu-pi"]
    chart = release["spec"]["chart"]["spec"]
    assert chart["valuesFiles"] == ["./charts/cpu-lab/jobs/cpu-pi/values.yaml", "./environments/cpu-lab/cpu-pi.yaml"]
    assert chart["ignoreMissingValuesFiles"] is True
    assert passes_crds(files, gitops_crds) == 14 + ACCEPTANCE
