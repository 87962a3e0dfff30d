"""Volcano's own Job (`batch.volcano.sh/v1alpha1`), as its controller and job plugins treat it.

Sources: tests/upstream/scheduling/batch.volcano.sh_jobs.yaml (the CRD) and Volcano's MPI examples
(tasks `mpimaster` and `mpiworker`, plugins `ssh` and `svc`, the master ending the job on TaskCompleted); Volcano's
job controller: a task's pods are `<job>-<task>-<i>` (PodNameFmt); the svc plugin gives each pod its own name as
hostname and the job's name as subdomain, behind a headless Service `<job>`, with a ConfigMap `<job>-svc` and a
NetworkPolicy `<job>`; the ssh plugin's Secret `<job>-ssh` is mounted at /root/.ssh unless
`--ssh-key-file-path` says otherwise.
"""

from __future__ import annotations

GROUP = "batch.volcano.sh"
API_VERSION = f"{GROUP}/v1alpha1"
KIND = "Job"
SCHEDULER_NAME = "volcano"
TASKS = "tasks"
"""JobSpec's tasks: each a pod template and its replicas."""
MIN_AVAILABLE = "minAvailable"
"""JobSpec's gang: the pods that must be schedulable together before any starts."""

SSH_PLUGIN = "ssh"
SVC_PLUGIN = "svc"
SSH_KEY_FILE_PATH_FLAG = "--ssh-key-file-path"

TASK_COMPLETED = "TaskCompleted"
COMPLETE_JOB = "CompleteJob"
"""The launcher task's policy: when mpirun ends, the job completes and Volcano kills the workers still running."""
TASK_FAILED = "TaskFailed"
"""Raised once a task's pods have restarted its maxRetry times (Volcano's job controller counts their restarts)."""
POD_FAILED = "PodFailed"
TERMINATE_JOB = "TerminateJob"
DISABLE_NETWORK_POLICY_FLAG = "--disable-network-policy"
"""The svc plugin's flag: no NetworkPolicy `<job>` admitting only the job's pods by their labels."""


def plugin_owned_names(job: str) -> tuple[str, ...]:
    """Objects the svc and ssh plugins create for Job `job` (besides its pods): a chart must not take them."""
    return (f"{job}-svc", f"{job}-ssh")
