"""The files of `charts/<cluster>/bootstrap/`: which objects (gitops.py, applicationset.py) go in which file, and
the header that says what each file is for and how it is applied."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mpigen.manifests.applicationset import build_argocd_applicationset
from mpigen.manifests.gitops import (
    acceptance_deliveries,
    argocd_health_checks,
    build_argocd_application,
    build_argocd_root_application,
    build_flux_git_repository,
    build_flux_helm_release,
    build_flux_kustomization,
    deliveries,
    repo_path,
    repo_url,
)
from mpigen.model import Cluster, GitOps, GitOpsApplications, GitOpsTool, Job, names
from mpigen.vocabulary.gitops import REPO_CREDS, SECRET_TYPE_LABEL


@dataclass(frozen=True)
class BootstrapFile:
    """One manifest file under the charts folder, and what it is for (its header comment)."""

    path: str
    purpose: str
    objects: tuple[dict[str, Any], ...]


def argocd_credentials_note(gitops: GitOps) -> str:
    """Where Argo CD finds a private repository's credentials: a Secret it matches by URL, which mpigen never writes
    (secret data has no place in git)."""
    return (f" A private repository: create, outside git, a Secret in Argo CD's namespace labelled "
            f"{SECRET_TYPE_LABEL}: {REPO_CREDS} whose url is {repo_url(gitops)} or a prefix of it "
            f"(argocd repocreds add).")


def build_bootstrap(cluster: Cluster, jobs: tuple[Job, ...] | list[Job],
                    acceptance: tuple[Job, ...] | list[Job] = ()) -> list[BootstrapFile]:
    """The files of `<cluster>/bootstrap/`, or none when the cluster has no GitOps tool."""
    if cluster.gitops is None:
        return []
    return _build_bootstrap(cluster, jobs) + _acceptance_file(cluster, acceptance)


def _acceptance_file(cluster: Cluster, acceptance: tuple[Job, ...] | list[Job]) -> list[BootstrapFile]:
    """The fabric acceptance charts' Applications or HelmReleases, which never sync by themselves: one file apart,
    also under an ApplicationSet (whose one template syncs automatically)."""
    if not acceptance:
        return []
    gitops = cluster.gitops
    assert gitops is not None
    charts = acceptance_deliveries(cluster, acceptance)
    path = f"{names.bootstrap_apps_dir(cluster.name)}/acceptance.yaml"
    root_name = names.gitops_root_name(cluster.name)
    if gitops.tool is GitOpsTool.ARGOCD:
        return [BootstrapFile(path, f"One Argo CD Application per fabric acceptance chart of cluster {cluster.name}, "
                              f"without automated sync: run one with `argocd app sync <name>`, then judge its "
                              f"launcher's log with `mpigen verify`; synced by the root Application {root_name}; do not "
                              f"apply by hand.",
                              tuple(build_argocd_application(cluster, d) for d in charts))]
    return [BootstrapFile(path, f"One suspended Flux HelmRelease per fabric acceptance chart of cluster {cluster.name}: "
                          f"run one with `flux resume helmrelease <name> -n {gitops.namespace}`, then judge its "
                          f"launcher's log with `mpigen verify`; applied by the Kustomization {root_name}; do not "
                          f"apply by hand.",
                          tuple(build_flux_helm_release(cluster, d) for d in charts))]


def _build_bootstrap(cluster: Cluster, jobs: tuple[Job, ...] | list[Job]) -> list[BootstrapFile]:
    gitops = cluster.gitops
    assert gitops is not None
    charts = deliveries(cluster, jobs)
    root_dir = repo_path(gitops, names.bootstrap_root_dir(cluster.name))
    apps_dir = repo_path(gitops, names.bootstrap_apps_dir(cluster.name))
    root_name = names.gitops_root_name(cluster.name)
    apply_once = f"Apply once, by hand: kubectl apply -f {root_dir}/"
    if gitops.tool is GitOpsTool.ARGOCD:
        install = "".join(f" For {check.noun} health, add {repo_path(gitops, check.path)}"
                          f"{' to argocd-cm' if i == 0 else ''} as {check.key}."
                          for i, check in enumerate(argocd_health_checks(cluster, jobs)))
        root = BootstrapFile(f"{names.bootstrap_root_dir(cluster.name)}/root-application.yaml",
                             f"Argo CD app of apps of cluster {cluster.name}. {apply_once} (into the cluster Argo CD "
                             f"runs in); it keeps {apps_dir}/ in sync.{install}{argocd_credentials_note(gitops)}",
                             (build_argocd_root_application(cluster),))
        if gitops.applications is GitOpsApplications.APPLICATIONSET:
            return [root, BootstrapFile(
                f"{names.bootstrap_apps_dir(cluster.name)}/applicationset.yaml",
                f"One Argo CD ApplicationSet making an Application of each chart of cluster {cluster.name}, synced "
                f"by the root Application {root_name}; do not apply by hand.",
                (build_argocd_applicationset(cluster, charts),))]
        return [root, BootstrapFile(f"{names.bootstrap_apps_dir(cluster.name)}/applications.yaml",
                                    f"One Argo CD Application per chart of cluster {cluster.name}, synced by the root "
                                    f"Application {root_name}; do not apply by hand.",
                                    tuple(build_argocd_application(cluster, d) for d in charts))]
    source = gitops.source_ref
    root_objects = (build_flux_kustomization(cluster),) if source is not None else (
        build_flux_git_repository(cluster), build_flux_kustomization(cluster))
    what = (f"Flux sync of cluster {cluster.name}, from the {source.kind} {source.namespace}/{source.name}"
            if source is not None else f"Flux source and sync of cluster {cluster.name}")
    credentials = "" if gitops.secret_ref is None else (
        f" The repository's credentials are Secret {gitops.namespace}/{gitops.secret_ref}: create it outside git "
        f"(flux create secret git {gitops.secret_ref} --namespace {gitops.namespace} --url {repo_url(gitops)} ...).")
    return [
        BootstrapFile(f"{names.bootstrap_root_dir(cluster.name)}/root-sync.yaml",
                      f"{what}. {apply_once} (into the cluster itself); it keeps {apps_dir}/ in sync.{credentials}",
                      root_objects),
        BootstrapFile(f"{names.bootstrap_apps_dir(cluster.name)}/helmreleases.yaml",
                      f"One Flux HelmRelease per chart of cluster {cluster.name}, applied by the Kustomization "
                      f"{root_name}; do not apply by hand.",
                      tuple(build_flux_helm_release(cluster, d) for d in charts)),
    ]
