"""The Volcano Job (`batch.volcano.sh/v1alpha1`) of a job whose backend is `volcano-job`.

The same pods as the MPIJob's (generator/manifests/mpijob.py builds both): a launcher task `mpimaster` that runs
mpirun with mpigen's hostfile, and a worker task `mpiworker` running sshd. What mpi-operator does for an MPIJob is
said here in Volcano's words: the gang is the Job's `minAvailable` (the workers, and the launcher unless it waits
for them); `WaitForWorkersReady` is the launcher task's `dependsOn` the workers; the job ends when the launcher
task completes; the `ssh` plugin gives every pod the job's key, the `svc` plugin the host names the hostfile uses.
"""

from __future__ import annotations

from typing import Any

from mpigen.manifests.mpijob import (
    build_launcher_pod_spec,
    build_worker_pod_template,
    hide_gpus_from_launcher,
    job_metadata,
    launcher_template_metadata,
)
from mpigen.manifests.scheduling import min_available
from mpigen.model import Job
from mpigen.model.names import LAUNCHER_TASK, WORKER_ROLES
from mpigen.objects.labels import ChartRef
from mpigen.objects.manifest import Variable
from mpigen.providers import pod_network
from mpigen.vocabulary import mpi_operator, volcano_job
from mpigen.vocabulary.mpi_operator import WAIT_FOR_WORKERS_READY

WORKER_TASK = WORKER_ROLES["volcano-job"]
NEVER = "Never"


def build_volcano_job_spec(job: Job, name: str, workers: Variable) -> dict[str, Any]:
    """The spec of Volcano Job `name`, the values a chart value sets marked as Variables."""
    launcher_spec = hide_gpus_from_launcher(job, build_launcher_pod_spec(job, name, workers))
    launcher_template: dict[str, Any] = {
        **launcher_template_metadata(job),
        "spec": {**launcher_spec, "restartPolicy": mpi_operator.DEFAULT_RESTART_POLICY[mpi_operator.LAUNCHER]},
    }
    worker_template = build_worker_pod_template(job, name)
    worker_template["spec"]["restartPolicy"] = mpi_operator.DEFAULT_RESTART_POLICY[mpi_operator.WORKER]
    launcher_task: dict[str, Any] = {"name": LAUNCHER_TASK, "replicas": 1, "policies": _launcher_policies(job)}
    if job.run_policy.backoff_limit == 0:
        launcher_template["spec"]["restartPolicy"] = NEVER  # fails for good at the first failure
    elif job.run_policy.backoff_limit is not None:
        launcher_task["maxRetry"] = job.run_policy.backoff_limit
    if job.launcher_creation_policy == WAIT_FOR_WORKERS_READY:
        launcher_task["dependsOn"] = {"name": [WORKER_TASK]}
    launcher_task["template"] = launcher_template
    ssh = [f"{volcano_job.SSH_KEY_FILE_PATH_FLAG}={job.ssh_auth_mount_path}"] if job.ssh_auth_mount_path else []
    # The svc plugin's NetworkPolicy admits only the job's pods by their labels; on the nodes' network the workers'
    # daemons connect back to mpirun from their node's address, which no pod selector matches.
    svc = [volcano_job.DISABLE_NETWORK_POLICY_FLAG] if pod_network(job, name).host_network else []
    spec: dict[str, Any] = {"schedulerName": volcano_job.SCHEDULER_NAME,
                            volcano_job.MIN_AVAILABLE: min_available(job, workers)}
    if job.scheduling.queue is not None:
        spec["queue"] = job.scheduling.queue
    if job.scheduling.priority_class is not None:
        spec["priorityClassName"] = job.scheduling.priority_class
    if job.run_policy.ttl_seconds_after_finished is not None:
        spec["ttlSecondsAfterFinished"] = job.run_policy.ttl_seconds_after_finished
    spec["plugins"] = {volcano_job.SSH_PLUGIN: ssh, volcano_job.SVC_PLUGIN: svc}
    # Workers first: where minAvailable is less than the tasks' pods, Volcano sizes the PodGroup's minimum resources
    # from the first minAvailable pods in task order (calcPGMinResources), which must be the workers.
    spec[volcano_job.TASKS] = [{"name": WORKER_TASK, "replicas": workers, "template": worker_template}, launcher_task]
    return spec


def _launcher_policies(job: Job) -> list[dict[str, str]]:
    """The job completes when mpirun does, and ends failed once the launcher has failed as often as mpi-operator's
    launcher Job would retry (`backoffLimit`): the task's own maxRetry raises TaskFailed (Volcano counts the
    launcher's restarts); the job-level maxRetry counts only RestartJob actions and would never stop it."""
    failed = volcano_job.POD_FAILED if job.run_policy.backoff_limit == 0 else volcano_job.TASK_FAILED
    return [{"event": volcano_job.TASK_COMPLETED, "action": volcano_job.COMPLETE_JOB},
            {"event": failed, "action": volcano_job.TERMINATE_JOB}]


def volcano_job_object(job: Job, chart: ChartRef, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": volcano_job.API_VERSION, "kind": volcano_job.KIND,
            "metadata": job_metadata(job, chart, name, {}), "spec": spec}
