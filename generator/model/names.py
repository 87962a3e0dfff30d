"""Every Kubernetes name mpigen writes or predicts comes from here, never retyped.

Mirrors mpi-operator's naming: workers `<job>-worker-<i>`, launcher `<job>-launcher`, headless
service `<job>`, host names `<pod>.<job>.<namespace>.svc`. An index may be a string such as `%d`
when the caller builds a Helm `printf` format instead of a concrete name.
"""

from __future__ import annotations

from mpigen.vocabulary import mpi_operator, trainer
from mpigen.vocabulary.kubernetes import DNS1035_LABEL, DNS1035_MAX

HOSTFILE_DIR = "/etc/mpigen"
HOSTFILE_KEY = "hostfile"
HOSTFILE_PATH = f"{HOSTFILE_DIR}/{HOSTFILE_KEY}"
RANKFILE_KEY = "rankfile"
RANKFILE_PATH = f"{HOSTFILE_DIR}/{RANKFILE_KEY}"


# The short content hash an MPIJob's name carries under the default `content-hash` naming policy.
RUN_DIGEST_LENGTH = 7
# Stands for the digest where only the name's length matters (validation runs before anything is built).
RUN_DIGEST_PLACEHOLDER = "0" * RUN_DIGEST_LENGTH


def mpijob_name(job: str, digest: str | None) -> str:
    """The MPIJob's name: `<job>-<digest>` (a new run is a new object), or `<job>` (stable naming).

    Every other name of a run (workers, launcher, service, hostfile ConfigMap, host names) is made from
    this one, never from the job's profile name.
    """
    return f"{job}-{digest}" if digest else job


def sized_mpijob_name(job: str, hashed: bool) -> str:
    """The job object's name where only its length matters (validation runs before its digest is known)."""
    return mpijob_name(job, RUN_DIGEST_PLACEHOLDER if hashed else None)


WORKER_ROLES = {"mpijob": "worker", "volcano-job": "mpiworker", "trainjob": f"{trainer.NODE}-{trainer.JOB_INDEX}"}
"""The worker pods' part of their names, by backend: mpi-operator's `<mpijob>-worker-<i>`; a Volcano Job names a
task's pods `<job>-<task>-<i>` (its PodNameFmt), and mpigen's worker task is `mpiworker`; JobSet names a TrainJob's
pods' hostnames `<trainjob>-<replicatedJob>-<jobIndex>-<i>`, and the workers are replicated job `node`, Job index 0
(the pods' own names carry a random suffix: the hostname is what the hostfile and DNS use)."""
LAUNCHER_TASK = "mpimaster"
"""The launcher's task of a Volcano Job, as Volcano's own MPI examples and its mpi plugin call it."""


def worker_name(job: str, index: int | str, backend: str = "mpijob") -> str:
    return f"{job}-{WORKER_ROLES[backend]}-{index}"


def launcher_name(job: str) -> str:
    return f"{job}-launcher"


def volcano_launcher_name(job: str) -> str:
    """The launcher pod of a Volcano Job: task `mpimaster`, its only replica."""
    return f"{job}-{LAUNCHER_TASK}-0"


def service_name(job: str) -> str:
    return job


def host_fqdn(pod: str, job: str, namespace: str, backend: str = "mpijob") -> str:
    """Every backend gives each pod its own name as hostname and the job's headless service (named after the job)
    as subdomain: mpi-operator, Volcano's svc plugin, and JobSet for a TrainJob. A TrainJob's hosts are written as
    Trainer's MPI plugin writes them into its own hostfile, `<pod>.<trainjob>`."""
    if backend == "trainjob":
        return f"{pod}.{service_name(job)}"
    return f"{pod}.{service_name(job)}.{namespace}.svc"


def worker_host(job: str, namespace: str, index: int | str, backend: str = "mpijob") -> str:
    return host_fqdn(worker_name(job, index, backend), job, namespace, backend)


def trainjob_launcher_job(job: str) -> str:
    """The launcher's batch Job of a TrainJob: JobSet names it `<jobset>-<replicatedJob>-<jobIndex>`."""
    return f"{job}-{trainer.LAUNCHER}-{trainer.JOB_INDEX}"


def trainjob_launcher_host(job: str) -> str:
    """The launcher pod's hostname (JobSet's `<job>-<podIndex>`): a DNS label, so at most 63 characters."""
    return f"{trainjob_launcher_job(job)}-0"


def hostfile_configmap_name(job: str) -> str:
    """Our own ConfigMap; `<job>-config` belongs to the operator and must never be written."""
    return f"{job}-hostfile"


def device_claim_template_name(run: str) -> str:
    """The ResourceClaimTemplate of a run's workers' devices (Dynamic Resource Allocation)."""
    return f"{run}-devices"


def compute_domain_name(run: str) -> str:
    """The ComputeDomain of a run on multi-node NVLink."""
    return f"{run}-compute-domain"


def channel_template_name(run: str) -> str:
    """The ResourceClaimTemplate of a run's ComputeDomain channel, which the ComputeDomain's controller makes."""
    return f"{run}-channel"


DEVICES_CLAIM = "devices"
"""The worker pod's claim (`spec.resourceClaims[].name`) of its GPUs and NICs."""
CHANNEL_CLAIM = "channel"
"""The worker pod's claim of its ComputeDomain's IMEX channel."""


def operator_config_name(job: str) -> str:
    """The ConfigMap mpi-operator writes for an MPIJob: the hostfile and discover_hosts.sh."""
    return f"{job}{mpi_operator.CONFIG_SUFFIX}"


def operator_owned_names(job: str) -> tuple[str, ...]:
    return (operator_config_name(job), f"{job}-ssh", launcher_name(job))


def last_worker_name_problem(job: str, worker_count: int, hashed: bool = False, backend: str = "mpijob") -> str:
    """Why the controller would reject this job's last worker name, or '' when it is fine.

    `hashed`: the job object's name carries the run digest, whose value is not known yet but whose length is.
    """
    last = max(worker_count - 1, 0)
    name = worker_name(sized_mpijob_name(job, hashed), last, backend)
    shown = worker_name(mpijob_name(job, "<hash>" if hashed else None), last, backend)
    if len(name) > DNS1035_MAX:
        return f"worker pod name '{shown}' is {len(name)} characters, more than {DNS1035_MAX}"
    if not DNS1035_LABEL.fullmatch(name):
        return f"worker pod name '{shown}' is not a DNS-1035 label"
    return ""


HELM_RELEASE_MAX = 53


def max_workers_for_name(job: str, hashed: bool = False, backend: str = "mpijob") -> int:
    """The most workers whose last pod name `<mpijob>-worker-<n-1>` still fits in a DNS-1035 label."""
    room = DNS1035_MAX - len(worker_name(sized_mpijob_name(job, hashed), "", backend))
    return 10**room if room > 0 else 0


def nad_name(rail: str) -> str:
    return rail


def rail_interface(rail: str) -> str:
    """Interface name of a rail inside the pod; Linux allows 15 characters, the schema enforces it."""
    return rail


def rail_resource(prefix: str, resource_name: str) -> str:
    return f"{prefix}/{resource_name}"


def default_rail_resource_name(rail: str) -> str:
    return f"rdma_{rail}".replace("-", "_")


def chart_dir_of_job(cluster: str, job: str) -> str:
    return f"{cluster}/jobs/{job}"


ACCEPTANCE_FOLDER = "acceptance"


def chart_dir_of_acceptance(cluster: str, job: str) -> str:
    """A fabric acceptance job's chart: apart from the jobs, as it is delivered without automated sync."""
    return f"{cluster}/{ACCEPTANCE_FOLDER}/{job}"


def chart_dir_of_infra(cluster: str) -> str:
    return f"{cluster}/infra"


def infra_chart_name(cluster: str) -> str:
    return f"{cluster}-infra"


# --- GitOps delivery objects (charts/<cluster>/bootstrap/) -------------------------------------------

BOOTSTRAP_FOLDER = "bootstrap"


def bootstrap_dir(cluster: str) -> str:
    """Plain manifests (not a chart) that hand a cluster's charts to its GitOps tool."""
    return f"{cluster}/{BOOTSTRAP_FOLDER}"


def bootstrap_root_dir(cluster: str) -> str:
    """What a team applies by hand, once: the root Application, or Flux's GitRepository and Kustomization."""
    return f"{bootstrap_dir(cluster)}/root"


def argocd_health_check_path(cluster: str) -> str:
    """The Lua health check of MPIJobs for the cluster's Argo CD (an argocd-cm key, installed by hand)."""
    return f"{bootstrap_dir(cluster)}/argocd/mpijob-health.lua"


def argocd_volcano_health_check_path(cluster: str) -> str:
    """The Lua health check of Volcano Jobs for the cluster's Argo CD, where it has any."""
    return f"{bootstrap_dir(cluster)}/argocd/volcano-job-health.lua"


def argocd_trainjob_health_check_path(cluster: str) -> str:
    """The Lua health check of TrainJobs for the cluster's Argo CD, where it has any."""
    return f"{bootstrap_dir(cluster)}/argocd/trainjob-health.lua"


def bootstrap_apps_dir(cluster: str) -> str:
    """One Application or HelmRelease per chart; the root keeps this folder in sync (never itself)."""
    return f"{bootstrap_dir(cluster)}/apps"


def gitops_root_name(cluster: str) -> str:
    """The root Application (Argo CD), or the GitRepository and Kustomization (Flux), of a cluster."""
    return cluster


def gitops_infra_name(cluster: str) -> str:
    """The Application or HelmRelease of the cluster's infra chart."""
    return infra_chart_name(cluster)


def gitops_job_name(cluster: str, job: str) -> str:
    """The Application or HelmRelease of a job chart: prefixed with the cluster, since one Argo CD
    holds the Applications of every cluster it manages in one namespace."""
    return f"{cluster}-{job}"
