"""Kubeflow Trainer v2: the TrainJob of a job whose backend is `trainjob`, and the TrainingRuntime it runs on.

The same pods as the MPIJob's (generator/manifests/mpijob.py builds both), said in Trainer's words: the runtime's
JobSet template has a replicated job `node` (the workers, running sshd) and a replicated job `launcher` (mpirun),
each pod's one container named `node`, the only name Trainer's MPI plugin gives the ssh keys (and the launcher its
hostfile and OpenMPI variables). `mlPolicy.mpi` says OpenMPI, the slots of each worker (`numProcPerNode`), where
the keys go, and that the launcher is no node. `WaitForWorkersReady` is the launcher's `dependsOn` the nodes being
Ready; the job ends when the launcher does (`successPolicy`), and JobSet then deletes the workers' Job.

The runtime carries the pods whole, job by job, and lives in the cluster's infra chart:
- Trainer's admission webhook refuses a TrainJob whose TrainingRuntime does not exist yet, and Helm creates the
  kinds it does not know in alphabetical order (TrainJob before TrainingRuntime): in the job's own chart a first
  install would fail. The infra chart is synced before the job charts (Argo CD wave 0, Flux `dependsOn`).
- A TrainJob can set a pod's image, command and resources only through `spec.trainer`, which Trainer applies to
  every container named `node`, so to the launcher and the sshd workers alike; `runtimePatches` cannot set them.
  So the TrainJob sets only what the job chart's values follow: `numNodes` (the workers) and `suspend`.
The runtime is named as the TrainJob (content hash included): an edited job is a new runtime and a new TrainJob.
"""

from __future__ import annotations

from typing import Any

from mpigen.manifests.mpijob import (
    build_launcher_pod_spec,
    build_worker_pod_template,
    hide_gpus_from_launcher,
    host_path_annotation,
    job_metadata,
    launcher_template_metadata,
    privileged_annotation,
)
from mpigen.manifests.scheduling import job_labels
from mpigen.model import Job
from mpigen.objects import chartfiles
from mpigen.objects.labels import ChartRef, metadata
from mpigen.objects.manifest import Variable, plain
from mpigen.vocabulary import mpi_operator, trainer
from mpigen.vocabulary.gitops import ARGOCD_SYNC_OPTIONS, SKIP_DRY_RUN_ON_MISSING_RESOURCE
from mpigen.vocabulary.mpi_operator import WAIT_FOR_WORKERS_READY


def build_trainjob_spec(job: Job, name: str, workers: Variable) -> dict[str, Any]:
    """The TrainJob `name`: its runtime, the worker count (a chart value), the slots of each, and suspend (a chart
    value)."""
    spec: dict[str, Any] = {
        trainer.RUNTIME_REF: {"apiGroup": trainer.GROUP, "kind": trainer.RUNTIME_KIND, "name": name},
        # numProcPerNode here too: with the runtime's at 1, Trainer would otherwise count the node container's GPUs
        # as its slots (mpi.go, EnforceMLPolicy), against the job's own slotsPerWorker.
        trainer.TRAINER: {"numNodes": workers, "numProcPerNode": job.slots_per_worker},
    }
    if job.run_policy.active_deadline_seconds is not None:
        spec[trainer.ACTIVE_DEADLINE_SECONDS] = job.run_policy.active_deadline_seconds
    spec[trainer.SUSPEND] = Variable(chartfiles.SUSPEND, job.run_policy.suspend)
    return spec


def _name_node(pod_spec: dict[str, Any]) -> None:
    """Name the pod's one container `node`: Trainer's MPI plugin mounts the ssh keys (and, in the launcher, the
    hostfile and the OpenMPI variables) only into a container of that name."""
    pod_spec["containers"] = [{**pod_spec["containers"][0], "name": trainer.NODE}, *pod_spec["containers"][1:]]


def build_training_runtime_spec(job: Job, name: str) -> dict[str, Any]:
    """The TrainingRuntime `name` of the job's run: the pods as the MPIJob's, literal (the infra chart has no value
    of the job's), the worker count only as the default the TrainJob's `numNodes` overrides."""
    workers = Variable(chartfiles.WORKERS, job.worker_count)
    launcher_spec = hide_gpus_from_launcher(job, build_launcher_pod_spec(job, name, workers))
    launcher_spec["restartPolicy"] = mpi_operator.DEFAULT_RESTART_POLICY[mpi_operator.LAUNCHER]
    _name_node(launcher_spec)
    launcher_template: dict[str, Any] = {**launcher_template_metadata(job), "spec": launcher_spec}
    worker_template = build_worker_pod_template(job, name)
    worker_template["spec"]["restartPolicy"] = mpi_operator.DEFAULT_RESTART_POLICY[mpi_operator.WORKER]
    _name_node(worker_template["spec"])
    launcher_job: dict[str, Any] = {"template": launcher_template}
    if job.run_policy.backoff_limit is not None:
        launcher_job["backoffLimit"] = job.run_policy.backoff_limit  # the launcher is a batch Job, as mpi-operator's
    launcher: dict[str, Any] = {"name": trainer.LAUNCHER}
    if job.launcher_creation_policy == WAIT_FOR_WORKERS_READY:
        launcher["dependsOn"] = [{"name": trainer.NODE, "status": trainer.READY}]
    launcher["template"] = {"spec": launcher_job}
    jobset: dict[str, Any] = {
        # DNS names for the workers as soon as they have an address, as mpi-operator's Service publishes them.
        "network": {"publishNotReadyAddresses": True},
        "successPolicy": {"operator": trainer.ALL, "targetReplicatedJobs": [trainer.LAUNCHER]},
    }
    if job.run_policy.ttl_seconds_after_finished is not None:
        jobset["ttlSecondsAfterFinished"] = job.run_policy.ttl_seconds_after_finished
    # Nodes first: JobSet's dependsOn may name only a replicated job listed before.
    jobset[trainer.REPLICATED_JOBS] = [
        {"name": trainer.NODE, "template": {"metadata": {"labels": {trainer.ANCESTOR_LABEL: trainer.ANCESTOR_TRAINER}},
                                            "spec": {"template": worker_template}}},
        launcher,
    ]
    return plain({
        "mlPolicy": {"numNodes": job.worker_count, "mpi": {
            "numProcPerNode": job.slots_per_worker,
            "mpiImplementation": trainer.OPENMPI,
            # mpi-operator's default and Trainer's alike (the CRDs' `sshAuthMountPath` defaults)
            "sshAuthMountPath": job.ssh_auth_mount_path or mpi_operator.DEFAULT_SSH_AUTH_MOUNT_PATH,
            "runLauncherAsNode": False,
        }},
        "template": {"spec": jobset},
    })


def _annotations(job: Job) -> dict[str, str]:
    """Argo CD may apply the objects before Trainer's CRDs exist; reviewers see the profile's reasons for privilege
    and host folders on both objects."""
    return {ARGOCD_SYNC_OPTIONS: SKIP_DRY_RUN_ON_MISSING_RESOURCE, **privileged_annotation(job),
            **host_path_annotation(job)}


def trainjob_object(job: Job, chart: ChartRef, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    """The TrainJob named `name` (see `manifests.run_name.named_spec`) around its `spec`, with Kueue's labels."""
    return {"apiVersion": trainer.API_VERSION, "kind": trainer.TRAINJOB_KIND,
            "metadata": job_metadata(job, chart, name, job_labels(job)), "spec": spec}


def training_runtime_object(job: Job, chart: ChartRef, name: str) -> dict[str, Any]:
    """The runtime of the job's run, for the infra chart `chart`."""
    return {"apiVersion": trainer.API_VERSION, "kind": trainer.RUNTIME_KIND,
            "metadata": metadata(name, chart, job.namespace, annotations=_annotations(job)),
            "spec": build_training_runtime_spec(job, name)}
