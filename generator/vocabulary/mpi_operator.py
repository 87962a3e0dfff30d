"""mpi-operator's `kubeflow.org/v2beta1` API: kind, field names and values, defaults and the volumes it adds.

Sources (kubeflow/mpi-operator v0.8): pkg/apis/kubeflow/v2beta1/types.go and default.go (defaults applied before
validation: Launcher replicas 1 / restartPolicy OnFailure, Worker replicas 0 / restartPolicy Never,
cleanPodPolicy None, slotsPerWorker 1, sshAuthMountPath /root/.ssh, OpenMPI), pkg/apis/kubeflow/validation
(the values it accepts) and pkg/controller/mpi_job_controller.go (the volumes it adds to the pods).
"""

from __future__ import annotations

GROUP = "kubeflow.org"
API_VERSION = f"{GROUP}/v2beta1"
KIND = "MPIJob"

LAUNCHER = "Launcher"
WORKER = "Worker"
"""The replica types: the keys of `spec.mpiReplicaSpecs`."""


# The MPIJob's field names (the json tags of types.go), by the type that holds them: what manifests/mpijob.py
# writes and the check rules and diff read. A job profile has keys of the same names (`runPolicy`,
# `slotsPerWorker`...): those are the profile schema's, not these.
class SpecField:
    """MPIJobSpec (`spec`)."""

    SLOTS_PER_WORKER = "slotsPerWorker"
    RUN_POLICY = "runPolicy"
    MPI_IMPLEMENTATION = "mpiImplementation"
    LAUNCHER_CREATION_POLICY = "launcherCreationPolicy"
    SSH_AUTH_MOUNT_PATH = "sshAuthMountPath"
    MPI_REPLICA_SPECS = "mpiReplicaSpecs"


class RunPolicyField:
    """RunPolicy (`spec.runPolicy`)."""

    CLEAN_POD_POLICY = "cleanPodPolicy"
    TTL_SECONDS_AFTER_FINISHED = "ttlSecondsAfterFinished"
    ACTIVE_DEADLINE_SECONDS = "activeDeadlineSeconds"
    BACKOFF_LIMIT = "backoffLimit"
    SCHEDULING_POLICY = "schedulingPolicy"
    SUSPEND = "suspend"
    MANAGED_BY = "managedBy"


class SchedulingPolicyField:
    """SchedulingPolicy (`spec.runPolicy.schedulingPolicy`): what the operator makes the job's PodGroup from."""

    MIN_AVAILABLE = "minAvailable"
    QUEUE = "queue"
    PRIORITY_CLASS = "priorityClass"
    SCHEDULE_TIMEOUT_SECONDS = "scheduleTimeoutSeconds"


RUN_POLICY_PATH = ("spec", SpecField.RUN_POLICY)
SUSPEND_PATH = (*RUN_POLICY_PATH, RunPolicyField.SUSPEND)
"""Where an MPIJob says it is suspended: Kueue sets it, the operator acts on a change of it."""

# Values the operator's validation accepts (validMPIImplementations, validCleanPolicies, validRestartPolicies,
# validManagedBy).
OPENMPI = "OpenMPI"
INTEL = "Intel"
MPICH = "MPICH"
MPI_IMPLEMENTATIONS = (INTEL, MPICH, OPENMPI)
CLEAN_POD_POLICY_ALL = "All"
CLEAN_POD_POLICY_NONE = "None"
CLEAN_POD_POLICY_RUNNING = "Running"
CLEAN_POD_POLICIES = (CLEAN_POD_POLICY_ALL, CLEAN_POD_POLICY_NONE, CLEAN_POD_POLICY_RUNNING)
RESTART_POLICIES = ("Never", "OnFailure")
MANAGED_BY = ("kubeflow.org/mpi-operator", "kueue.x-k8s.io/multikueue")
# Not validated by the operator: any value but AtStartup waits for the workers.
AT_STARTUP = "AtStartup"
WAIT_FOR_WORKERS_READY = "WaitForWorkersReady"
LAUNCHER_CREATION_POLICIES = (AT_STARTUP, WAIT_FOR_WORKERS_READY)

# What default.go sets when a field is left out.
DEFAULT_MPI_IMPLEMENTATION = OPENMPI
DEFAULT_CLEAN_POD_POLICY = CLEAN_POD_POLICY_NONE
DEFAULT_SSH_AUTH_MOUNT_PATH = "/root/.ssh"
DEFAULT_REPLICAS = {LAUNCHER: 1, WORKER: 0}
DEFAULT_RESTART_POLICY = {LAUNCHER: "OnFailure", WORKER: "Never"}

# The volumes the controller adds to the launcher and workers: a second volume or mount there makes the pod
# invalid. `mpi-job-config` holds the hostfile and discover_hosts.sh.
SSH_AUTH_VOLUME = "ssh-auth"
CONFIG_VOLUME = "mpi-job-config"
CONFIG_MOUNT_PATH = "/etc/mpi"

# sshd's port in a worker where nothing says another: mpi-operator runs `/usr/sbin/sshd -De` in a worker container
# without a command (newWorker), which listens where the image's sshd_config says, 22 unless it says another.
SSHD_PORT = 22
# The port sshd listens on in mpi-operator's own images, as root or not (build/base/Dockerfile `ARG port=2222`, written
# to /etc/ssh/sshd_config, ssh_config and ~mpiuser/.sshd_config), and their pi-intel and pi-mpich examples probe.
IMAGES_SSHD_PORT = 2222
# Hydra's variables for ssh's options. Intel MPI's is set by the controller on the launcher after the container's own
# (newLauncherPodTemplate's intelEnvVars), to its `-o ConnectionAttempts=10`. MPICH's Hydra reads
# HYDRA_LAUNCHER_EXTRA_ARGS (src/pm/hydra/.../bootstrap/external/external_common_launch.c, in every release); the
# controller's mpichEnvVars set HYDRA_LAUNCH_EXTRA_ARGS, a name it never reads.
HYDRA_SSH_ARGS_VARIABLE = {"Intel": "I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS", "MPICH": "HYDRA_LAUNCHER_EXTRA_ARGS"}

# The OpenMPI MCA parameters the controller sets on the launcher as OMPI_MCA_* variables, after the container's own
# (newLauncherPodTemplate): a container's variable of the same name is overridden; `-mca` on mpirun's command line
# wins over both.
LAUNCHER_MCA = ("orte_default_hostfile", "orte_keep_fqdn_hostnames", "plm_rsh_args", "orte_set_default_slots")

# The ConfigMap `<mpijob>-config` the controller writes (newConfigMap, updateDiscoverHostsInConfigMap): key `hostfile`,
# a line per worker as mpigen writes its own; and key `discover_hosts.sh`, this header, then `echo <host>` for each
# running worker.
CONFIG_SUFFIX = "-config"
DISCOVER_HOSTS_HEADER = "#!/bin/sh\n"


def discover_hosts_line(host: str) -> str:
    return f"echo {host}"
