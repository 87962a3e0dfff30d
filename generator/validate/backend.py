"""A job's backend (`backend`, else its cluster's `jobBackend`): the controller it needs is there, and the job asks
for nothing that controller cannot do. Everything else a profile says means the same under every backend."""

from __future__ import annotations

import json
from typing import Any

from mpigen.load import ProfileFile
from mpigen.model import Backend, MpiImplementation, Naming, admission, defaults, names
from mpigen.model.derive import backend_of
from mpigen.support.diagnostics import Diagnostic, Location, raises
from mpigen.support.profile_rules import BACKEND
from mpigen.vocabulary import mpi_operator
from mpigen.vocabulary.kubernetes import DNS1035_MAX

# runPolicy settings a Volcano Job has no field for: (key, value it may keep, why).
_VOLCANO_UNSUPPORTED = (
    ("activeDeadlineSeconds", None, "a Volcano Job has no deadline of its own (a pod's activeDeadlineSeconds would "
     "stop each pod on its own clock, not the job)"),
    ("suspend", False, "a Volcano Job has no suspend field (Volcano suspends a job through a Command object, which no "
     "GitOps tool should create)"),
    ("cleanPodPolicy", defaults.CLEAN_POD_POLICY, "a Volcano Job ends as the launcher task completes "
     "(TaskCompleted -> CompleteJob), which kills the workers that still run: `Running`, and nothing else"),
)


# runPolicy settings a TrainJob has no field for: (key, value it may keep, why).
_TRAINJOB_UNSUPPORTED = (
    ("cleanPodPolicy", defaults.CLEAN_POD_POLICY, "a TrainJob ends as its launcher completes (JobSet's successPolicy), "
     "and JobSet then deletes the workers' Job: `Running`, and nothing else"),
)
_TRAINJOB_SCHEDULERS = (admission.NONE, admission.KUEUE)


@raises(BACKEND)
def check_backend(document: ProfileFile, job: dict[str, Any], cluster: dict[str, Any]) -> list[Diagnostic]:
    backend = backend_of(job, cluster)
    if backend == Backend.MPIJOB.value:
        return []
    chosen = f"backend {backend}" + ("" if "backend" in job else f" (cluster '{cluster['name']}'s jobBackend)")
    where = document.location("backend") if "backend" in job else document.location("cluster")
    check = _check_trainjob if backend == Backend.TRAINJOB.value else _check_volcano_job
    return check(document, job, cluster, chosen, where)


def _check_volcano_job(document: ProfileFile, job: dict[str, Any], cluster: dict[str, Any], chosen: str,
                       where: Location) -> list[Diagnostic]:
    found = []
    if admission.scheduler_of(cluster) != admission.VOLCANO:
        kai_reason = ("; KAI's podgrouper has no grouper for a Volcano Job, so KAI would schedule its pods one by one, "
                      "without a gang" if admission.scheduler_of(cluster) == admission.KAI else "")
        found.append(Diagnostic(where, f"{chosen} needs Volcano, but cluster '{cluster['name']}' has "
                                f"scheduling.scheduler {admission.scheduler_of(cluster)}: Volcano's job controller "
                                f"and scheduler run the job{kai_reason}",
                                "set `scheduling.scheduler: volcano` on the cluster, or choose `backend: mpijob`"))
    found += _stable_naming(document, job, chosen, "Volcano's admission webhook refuses every change to a created "
                            "Job but its replicas and minAvailable, so the GitOps tool could never apply a later edit",
                            "Job")
    if job.get("runAsUser"):
        found.append(Diagnostic(document.location("runAsUser"), f"runAsUser {job['runAsUser']} cannot be used under "
                                f"{chosen}: Volcano's ssh plugin mounts the job's keys owned by root with mode 0600, "
                                "so sshd and ssh running as another user cannot read them",
                                "run the image as root (no runAsUser), or choose `backend: mpijob`"))
    return found + _unsupported_run_policy(document, job, _VOLCANO_UNSUPPORTED, chosen)


def _check_trainjob(document: ProfileFile, job: dict[str, Any], cluster: dict[str, Any], chosen: str,
                    where: Location) -> list[Diagnostic]:
    found = []
    implementation = job.get("mpiImplementation", mpi_operator.DEFAULT_MPI_IMPLEMENTATION)
    if implementation != MpiImplementation.OPENMPI.value:
        found.append(Diagnostic(document.location("mpiImplementation"), f"mpiImplementation {implementation} cannot "
                                f"be used under {chosen}: Trainer's MPI plugin writes the hostfile for OpenMPI only "
                                "(the TrainingRuntime's mlPolicy.mpi.mpiImplementation allows only OpenMPI)",
                                "use an OpenMPI image, or choose `backend: mpijob`"))
    scheduler = admission.scheduler_of(cluster)
    if scheduler == admission.KAI:
        delayed = job.get("launcherCreationPolicy", defaults.LAUNCHER_CREATION_POLICY) == \
            mpi_operator.WAIT_FOR_WORKERS_READY
        why = ("KAI groups a TrainJob through its JobSet, whose PodGroup needs a pod of every replicated job at once "
               "(minSubGroup), while under launcherCreationPolicy WaitForWorkersReady the launcher's Job is created "
               "only once the workers are Ready, so the gang never completes" if delayed else
               "mpigen compiles a TrainJob's gang under KAI not yet (the queue label and schedulerName in the "
               "TrainingRuntime's pods)")
        found.append(Diagnostic(where, f"{chosen} cannot run under cluster '{cluster['name']}'s scheduling.scheduler "
                                f"kai: {why}", "choose `backend: mpijob` on a KAI cluster"))
    elif scheduler not in _TRAINJOB_SCHEDULERS:
        found.append(Diagnostic(where, f"{chosen} cannot run under cluster '{cluster['name']}'s scheduling.scheduler "
                                f"{scheduler}: mpigen compiles a TrainJob's gang only through Kueue (Trainer's own "
                                "podGroupPolicy is not compiled yet)",
                                "choose `backend: mpijob` (or `volcano-job` under Volcano)"))
    found += _stable_naming(document, job, chosen, "a TrainJob's runtimeRef and trainer fields are immutable, and "
                            "Trainer builds the JobSet once and never applies a later runtime edit to it", "TrainJob")
    hashed = job.get("naming", defaults.JOB_NAMING) == Naming.CONTENT_HASH.value
    launcher = names.trainjob_launcher_host(names.sized_mpijob_name(job["name"], hashed))
    if len(launcher) > DNS1035_MAX:
        room = DNS1035_MAX - (len(launcher) - len(job["name"]))
        found.append(Diagnostic(document.location("name"), "Kubeflow Trainer would reject this job: its launcher's "
                                f"hostname <trainjob>-launcher-0-0 would be {len(launcher)} characters, more than "
                                f"{DNS1035_MAX} (a DNS label)",
                                f"shorten the job name to at most {room} characters"
                                + (f" (the TrainJob name adds {names.RUN_DIGEST_LENGTH + 1} characters of content "
                                   "hash)" if hashed else "")))
    return found + _unsupported_run_policy(document, job, _TRAINJOB_UNSUPPORTED, chosen)


def _stable_naming(document: ProfileFile, job: dict[str, Any], chosen: str, why: str, noun: str) -> list[Diagnostic]:
    """`naming: stable` under a backend whose controller never applies an edit to a created job object."""
    if job.get("naming") != Naming.STABLE.value:
        return []
    return [Diagnostic(document.location("naming"), f"naming stable cannot be used under {chosen}: {why}",
                       f"remove it (content-hash naming makes an edited job a new {noun}), or choose "
                       "`backend: mpijob`")]


def _unsupported_run_policy(document: ProfileFile, job: dict[str, Any],
                            unsupported: tuple[tuple[str, Any, str], ...], chosen: str) -> list[Diagnostic]:
    """The runPolicy settings the chosen backend has no field for, each where the profile sets it."""
    policy = job.get("runPolicy", {})
    return [Diagnostic(document.location("runPolicy", key), f"runPolicy.{key} {json.dumps(policy[key])} cannot be "
                       f"expressed under {chosen}: {why}", "remove it, or choose `backend: mpijob`")
            for key, allowed, why in unsupported if key in policy and policy[key] != allowed]
