"""The objects that hand a cluster's charts to its GitOps tool (`charts/<cluster>/bootstrap/`).

Plain manifests, not a chart: `root/` is applied by hand once, and keeps `apps/` in sync from git, so a
new job profile becomes a new Application or HelmRelease with nothing more to apply. The root never
points at its own folder, so it cannot loop.

- Argo CD: a root Application (app of apps) over `apps/`, which holds one Application per chart, the
  infra chart in sync wave 0 before the jobs in wave 1 (or one ApplicationSet: applicationset.py).
- Flux: a GitRepository (or the profile's `sourceRef`) and a Kustomization over `apps/`, which holds one
  HelmRelease per chart, every job release depending on the infra release.

The files themselves are assembled in bootstrap.py.

Every value comes from the model: no timestamps, no random names, so a re-render changes nothing.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mpigen.model import Backend, Cluster, GitOps, GitOpsTool, Job, Scheduler, names
from mpigen.objects import chartfiles
from mpigen.vocabulary import helm, mpi_operator, trainer, volcano_job
from mpigen.vocabulary import scheduling as kueue
from mpigen.vocabulary.gitops import (
    APPLICATION,
    ARGOCD_API_VERSION,
    FLUX_HELM_API_VERSION,
    FLUX_KUSTOMIZE_API_VERSION,
    FLUX_SOURCE_API_VERSION,
    GIT_REPOSITORY,
    HELM_RELEASE,
    IN_CLUSTER,
    KUSTOMIZATION,
    RESOURCES_FINALIZER,
    SYNC_WAVE,
    argocd_health_key,
)

INFRA_WAVE = 0
JOB_WAVE = 1

# How often Flux looks at git, and re-checks each release and the apps/ folder for drift.
SOURCE_INTERVAL = "1m"
RECONCILE_INTERVAL = "10m"


@dataclass(frozen=True)
class Delivery:
    """One chart as the GitOps tool deploys it."""

    name: str
    """The Application or HelmRelease."""
    chart_dir: str
    """The chart's folder under the charts folder: `dgx-lab/jobs/pi`."""
    release: str
    """Helm release name: the chart's name, as `helm template <release> <chart>` in the README."""
    namespace: str
    """Destination (Argo CD) or target (Flux) namespace."""
    wave: int
    depends_on: tuple[str, ...]
    kueue_managed: bool = False
    """A job chart whose job object Kueue suspends, unsuspends and places: the tool must leave those fields alone."""
    backend: Backend = Backend.MPIJOB
    """A job chart's backend: the kind of its job object."""
    manual: bool = False
    """A fabric acceptance job's chart: run by a person when the fabric is to be proven, never synced by itself
    (Argo CD: no automated sync; Flux: a suspended HelmRelease)."""


def deliveries(cluster: Cluster, jobs: tuple[Job, ...] | list[Job]) -> list[Delivery]:
    """The infra chart first, then every job of the cluster, in job name order."""
    infra = Delivery(name=names.gitops_infra_name(cluster.name), chart_dir=names.chart_dir_of_infra(cluster.name),
                     release=names.infra_chart_name(cluster.name), namespace=cluster.namespaces[0],
                     wave=INFRA_WAVE, depends_on=())
    return [infra] + [_job_delivery(cluster, job, infra.name) for job in sorted(jobs, key=lambda j: j.name)]


def acceptance_deliveries(cluster: Cluster, jobs: tuple[Job, ...] | list[Job]) -> list[Delivery]:
    """The cluster's fabric acceptance charts, in job name order, each run by hand."""
    return [_job_delivery(cluster, job, names.gitops_infra_name(cluster.name))
            for job in sorted(jobs, key=lambda j: j.name)]


def _job_delivery(cluster: Cluster, job: Job, infra: str) -> Delivery:
    return Delivery(name=names.gitops_job_name(cluster.name, job.name), chart_dir=job.chart_dir, release=job.name,
                    namespace=job.namespace, wave=JOB_WAVE, depends_on=(infra,),
                    kueue_managed=cluster.scheduling.scheduler is Scheduler.KUEUE, backend=job.backend,
                    manual=job.acceptance is not None)


def repo_path(gitops: GitOps, directory: str) -> str:
    """A folder under the charts folder, as a path inside the git repository: `charts/dgx-lab/infra`."""
    return f"{gitops.path}/{directory}"


def gitops_of(cluster: Cluster) -> GitOps:
    """The cluster's `gitops` block, for builders only called where it has one."""
    if cluster.gitops is None:
        raise ValueError(f"cluster {cluster.name} has no gitops block")
    return cluster.gitops


def repo_url(gitops: GitOps) -> str:
    """The repository's URL, which only a Flux `sourceRef` leaves out (validate refuses it anywhere else)."""
    if gitops.repo_url is None:
        raise ValueError("gitops names no repository URL")
    return gitops.repo_url


def values_file(gitops: GitOps, release: str) -> str | None:
    """A chart's per-environment values file (`<valuesPath>/<release>.yaml`), as a path inside the repository."""
    return None if gitops.values_path is None else f"{gitops.values_path}/{release}.yaml"


def argocd_helm(gitops: GitOps, release: str) -> dict[str, Any]:
    """An Application's `source.helm`: the release name, and the per-environment values file where it exists (a
    path starting with `/` is the repository's, whatever the chart's folder)."""
    helm_source: dict[str, Any] = {"releaseName": release}
    extra = values_file(gitops, release)
    if extra is not None:
        helm_source["valueFiles"] = [f"/{extra}"]
        helm_source["ignoreMissingValueFiles"] = True
    return helm_source


def gitops_metadata(name: str, cluster: Cluster, annotations: dict[str, str] | None = None,
                    finalizers: list[str] | None = None) -> dict[str, Any]:
    """Name, GitOps namespace and mpigen's labels, which every bootstrap object carries."""
    meta: dict[str, Any] = {
        "name": name,
        "namespace": gitops_of(cluster).namespace,
        "labels": {helm.MANAGED_BY_LABEL: "mpigen", chartfiles.CLUSTER: cluster.name},
    }
    if annotations:
        meta["annotations"] = annotations
    if finalizers:
        meta["finalizers"] = finalizers
    return meta


# --- Argo CD -------------------------------------------------------------------------------------

def automated_sync(create_namespace: bool, respect_ignore_differences: bool = False,
                   manual: bool = False) -> dict[str, Any]:
    """Prune and self-heal: a removed job's object is deleted, a deleted one is put back from git. `manual`: the
    same options, but no automated sync (a person syncs the Application)."""
    policy: dict[str, Any] = {} if manual else {"automated": {"prune": True, "selfHeal": True}}
    options = ["CreateNamespace=true"] if create_namespace else []
    if respect_ignore_differences:
        options.append("RespectIgnoreDifferences=true")
    if options:
        policy["syncOptions"] = options
    return policy


ARGOCD_RUNTIME_RETRY = {"limit": 10, "backoff": {"duration": "10s", "factor": 2, "maxDuration": "3m"}}
"""A TrainJob's Application retries a failed sync: Trainer's webhook refuses a TrainJob until its TrainingRuntime
exists, and on a renamed run the infra Application (which carries it) syncs the same commit independently. Argo CD
never retries a failed automated sync of the same commit on its own."""
FLUX_RUNTIME_RETRIES = 10
"""The same for Flux: `dependsOn` holds a job release until the infra release is Ready, which it still is, at the
previous revision, when both see a new commit."""


def kueue_ignore_differences(backend: Backend = Backend.MPIJOB) -> list[dict[str, Any]]:
    """The job object's fields Kueue owns (suspend, and what it injects into the pods on admission): Argo CD
    neither reports them as drift nor, with `RespectIgnoreDifferences=true`, puts git's values back on sync.
    Without it, self-heal would set `suspend: true` on a running job (Kueue reads that as the job being
    stopped), or a sync after any commit would."""
    if backend is Backend.TRAINJOB:
        # Kueue unsuspends a TrainJob on admission and injects its flavors' node selectors and tolerations as
        # runtime patches of its own (the pods are in the TrainingRuntime, which Kueue leaves alone).
        return [{"group": trainer.GROUP, "kind": trainer.TRAINJOB_KIND,
                 "jsonPointers": ["/spec/suspend", "/spec/runtimePatches"]}]
    return [{
        "group": mpi_operator.GROUP,
        "kind": mpi_operator.KIND,
        "jsonPointers": list(kueue.KUEUE_OWNED_POINTERS),
        "jqPathExpressions": [f".spec.{mpi_operator.SpecField.MPI_REPLICA_SPECS}[].template.spec.{field}"
                              for field in kueue.KUEUE_OWNED_TEMPLATE_FIELDS],
    }]


def build_argocd_application(cluster: Cluster, delivery: Delivery) -> dict[str, Any]:
    """One chart, rendered by Argo CD as `helm template <release> <path> --namespace <namespace>`."""
    gitops = gitops_of(cluster)
    return {
        "apiVersion": ARGOCD_API_VERSION,
        "kind": APPLICATION,
        "metadata": gitops_metadata(delivery.name, cluster, {SYNC_WAVE: str(delivery.wave)}, [RESOURCES_FINALIZER]),
        "spec": {
            "project": gitops.project,
            "source": {
                "repoURL": repo_url(gitops),
                "targetRevision": gitops.revision,
                "path": repo_path(gitops, delivery.chart_dir),
                "helm": argocd_helm(gitops, delivery.release),
            },
            "destination": {"server": gitops.destination, "namespace": delivery.namespace},
            **({"ignoreDifferences": kueue_ignore_differences(delivery.backend)} if delivery.kueue_managed else {}),
            "syncPolicy": {**automated_sync(create_namespace=True, respect_ignore_differences=delivery.kueue_managed,
                                            manual=delivery.manual),
                           **({"retry": ARGOCD_RUNTIME_RETRY} if delivery.backend is Backend.TRAINJOB else {})},
        },
    }


def build_argocd_root_application(cluster: Cluster) -> dict[str, Any]:
    """The app of apps: syncs `bootstrap/apps/` (never its own folder) into Argo CD's own namespace.

    Its destination is the cluster Argo CD runs in, whatever cluster the charts go to: Applications
    are created where Argo CD reads them. No finalizer: deleting the root leaves the jobs running.
    """
    gitops = gitops_of(cluster)
    return {
        "apiVersion": ARGOCD_API_VERSION,
        "kind": APPLICATION,
        "metadata": gitops_metadata(names.gitops_root_name(cluster.name), cluster),
        "spec": {
            "project": gitops.project,
            "source": {
                "repoURL": repo_url(gitops),
                "targetRevision": gitops.revision,
                "path": repo_path(gitops, names.bootstrap_apps_dir(cluster.name)),
            },
            "destination": {"server": IN_CLUSTER, "namespace": gitops.namespace},
            "syncPolicy": automated_sync(create_namespace=False),
        },
    }


# --- Flux ----------------------------------------------------------------------------------------

def _source_ref(cluster: Cluster) -> dict[str, str]:
    """The GitRepository the Kustomization and every HelmRelease read: the profile's `sourceRef` (such as
    `flux bootstrap`'s `flux-system`), else the one mpigen writes."""
    gitops = gitops_of(cluster)
    if gitops.source_ref is not None:
        source = gitops.source_ref
        return {"kind": source.kind, "name": source.name, "namespace": source.namespace}
    return {"kind": GIT_REPOSITORY, "name": names.gitops_root_name(cluster.name), "namespace": gitops.namespace}


def build_flux_git_repository(cluster: Cluster) -> dict[str, Any]:
    """The repository, followed on one branch; the artifact holds the charts folder only. A private repository's
    credentials are a Secret the profile names (`secretRef`) and a person creates: mpigen writes no secret data."""
    gitops = gitops_of(cluster)
    spec: dict[str, Any] = {
        "interval": SOURCE_INTERVAL,
        "url": repo_url(gitops),
        "ref": {"branch": gitops.revision},
    }
    if gitops.secret_ref is not None:
        spec["secretRef"] = {"name": gitops.secret_ref}
    spec["ignore"] = "/*\n" + "".join(f"!/{folder}/\n" for folder in (gitops.path, gitops.values_path) if folder)
    return {
        "apiVersion": FLUX_SOURCE_API_VERSION,
        "kind": GIT_REPOSITORY,
        "metadata": gitops_metadata(names.gitops_root_name(cluster.name), cluster),
        "spec": spec,
    }


def build_flux_kustomization(cluster: Cluster) -> dict[str, Any]:
    """Applies `bootstrap/apps/` (never its own folder); prune deletes the HelmRelease of a removed job."""
    gitops = gitops_of(cluster)
    return {
        "apiVersion": FLUX_KUSTOMIZE_API_VERSION,
        "kind": KUSTOMIZATION,
        "metadata": gitops_metadata(names.gitops_root_name(cluster.name), cluster),
        "spec": {
            "interval": RECONCILE_INTERVAL,
            "path": f"./{repo_path(gitops, names.bootstrap_apps_dir(cluster.name))}",
            "prune": True,
            "sourceRef": _source_ref(cluster),
        },
    }


def build_flux_helm_release(cluster: Cluster, delivery: Delivery) -> dict[str, Any]:
    """One chart from the GitRepository. `reconcileStrategy: Revision`: every chart's version stays
    0.1.0, so with the default `ChartVersion` Flux would never pick up a change."""
    gitops = gitops_of(cluster)
    spec: dict[str, Any] = {
        "interval": RECONCILE_INTERVAL,
        "releaseName": delivery.release,
        "targetNamespace": delivery.namespace,
        "chart": {"spec": {
            "chart": f"./{repo_path(gitops, delivery.chart_dir)}",
            "reconcileStrategy": "Revision",
            "sourceRef": _source_ref(cluster),
        }},
    }
    extra = values_file(gitops, delivery.release)
    if extra is not None:  # valuesFiles replace the chart's own values.yaml, so it comes first
        spec["chart"]["spec"]["valuesFiles"] = [f"./{repo_path(gitops, delivery.chart_dir)}/{chartfiles.VALUES_YAML}",
                                                f"./{extra}"]
        spec["chart"]["spec"]["ignoreMissingValuesFiles"] = True
    if delivery.manual:
        spec["suspend"] = True  # `flux resume helmrelease` runs it; the Kustomization suspends it again
    if delivery.depends_on:
        spec["dependsOn"] = [{"name": name} for name in delivery.depends_on]
    if delivery.kueue_managed:
        # Client-side patches carry only what changed in git between two releases, so git's unchanged
        # `suspend: true` is never sent again to a job Kueue has admitted. Server-side apply (Helm 4's default)
        # sends the whole object, `suspend: true` with it.
        spec["install"] = {"serverSideApply": False}
        spec["upgrade"] = {"serverSideApply": "disabled"}
    if delivery.backend is Backend.TRAINJOB:
        for action in ("install", "upgrade"):
            spec[action] = {**spec.get(action, {}), "remediation": {"retries": FLUX_RUNTIME_RETRIES}}
    return {
        "apiVersion": FLUX_HELM_API_VERSION,
        "kind": HELM_RELEASE,
        "metadata": gitops_metadata(delivery.name, cluster),
        "spec": spec,
    }


# --- files ---------------------------------------------------------------------------------------

MPIJOB_HEALTH_KEY = argocd_health_key(mpi_operator.GROUP, mpi_operator.KIND)
"""The argocd-cm key Argo CD reads an MPIJob's health check from (`resource.customizations.health.<group>_<kind>`)."""


VOLCANO_JOB_HEALTH_KEY = argocd_health_key(volcano_job.GROUP, volcano_job.KIND)
"""The argocd-cm key of a Volcano Job's health check."""
TRAINJOB_HEALTH_KEY = argocd_health_key(trainer.GROUP, trainer.TRAINJOB_KIND)
"""The argocd-cm key of a TrainJob's health check."""


@functools.cache
def _lua(name: str) -> str:
    return (Path(__file__).parent / name).read_text(encoding="utf-8")


def volcano_job_health_check() -> str:
    """The Lua that maps a Volcano Job's phase to Argo CD's health, for clusters with `volcano-job` jobs."""
    return _lua("volcano_job_health.lua")


def trainjob_health_check() -> str:
    """The Lua that maps a TrainJob's conditions to Argo CD's health, for clusters with `trainjob` jobs: Argo CD
    ships no health check for trainer.kubeflow.org kinds."""
    return _lua("trainjob_health.lua")


def mpijob_health_check() -> str:
    """The Lua that maps an MPIJob's conditions to Argo CD's health: Argo CD ships no health check for
    kubeflow.org kinds, so without it a running, suspended, finished and failed MPIJob look alike."""
    return _lua("mpijob_health.lua")


@dataclass(frozen=True)
class HealthCheck:
    """A Lua health check an Argo CD cluster's bootstrap carries: where, for which argocd-cm key, of what."""

    path: str
    key: str
    lua: str
    noun: str


def argocd_health_checks(cluster: Cluster, jobs: tuple[Job, ...] | list[Job]) -> tuple[HealthCheck, ...]:
    """The health checks of an Argo CD cluster: MPIJobs' always, Volcano Jobs' and TrainJobs' where it runs any."""
    if cluster.gitops is None or cluster.gitops.tool is not GitOpsTool.ARGOCD:
        return ()
    keys = health_check_keys(cluster.name)
    path = names.argocd_health_check_path(cluster.name)
    checks = [HealthCheck(path, keys[path], mpijob_health_check(), Backend.MPIJOB.noun)]
    if any(job.backend is Backend.VOLCANO_JOB for job in jobs):
        path = names.argocd_volcano_health_check_path(cluster.name)
        checks.append(HealthCheck(path, keys[path], volcano_job_health_check(), Backend.VOLCANO_JOB.noun))
    if any(job.backend is Backend.TRAINJOB for job in jobs):
        path = names.argocd_trainjob_health_check_path(cluster.name)
        checks.append(HealthCheck(path, keys[path], trainjob_health_check(), Backend.TRAINJOB.noun))
    return tuple(checks)


def health_check_keys(cluster: str) -> dict[str, str]:
    """The argocd-cm key of each Lua health check an Argo CD cluster's bootstrap may carry, by the file's path under
    the output folder: what a person sets by hand when the file changes (argocd-cm is Argo CD's, not mpigen's)."""
    return {names.argocd_health_check_path(cluster): MPIJOB_HEALTH_KEY,
            names.argocd_volcano_health_check_path(cluster): VOLCANO_JOB_HEALTH_KEY,
            names.argocd_trainjob_health_check_path(cluster): TRAINJOB_HEALTH_KEY}
