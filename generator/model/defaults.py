"""What a profile means where it leaves a field out, decided once: validate judges the job resolve builds.

Where mpigen's default differs from mpi-operator's own (generator/vocabulary/mpi_operator.py), the reason
is given; the profile schemas' descriptions say the same.
"""

from __future__ import annotations

from mpigen.vocabulary import dra, gitops, mpi_operator

# An edited job is a new MPIJob, pruned and replaced by the GitOps tool: mpi-operator creates a launcher Job once and
# never applies a later spec edit to it (pkg/controller/mpi_job_controller.go).
JOB_NAMING = "content-hash"
DRA_GPU_CLASS = dra.GPU_DEVICE_CLASS  # `dra.gpuDeviceClass`: what NVIDIA's GPU DRA driver installs
DRA_NIC_CLASS = dra.NIC_DEVICE_CLASS  # `dra.nicDeviceClass`: the infra chart writes it
JOB_BACKEND = "mpijob"  # the backend of a job whose profile and cluster choose none
OPENMPI_VERSION = 4
OPENMPI_UCX = True
"""Whether an OpenMPI image has the UCX component when the job does not say (`openMPIUcx`): NVIDIA's NGC images and
mpi-operator's examples do."""
# The launcher starts once every worker is Ready: no "could not resolve hostname" race at start-up
# (mpi-operator #481, #386). Under --gang-scheduling the operator's PodGroup counts workers + 1 unless told
# otherwise, which with this policy deadlocks (#608): mpigen sets minAvailable to the workers there
# (manifests/scheduling.py `min_available`, and `check` refuses the rest).
# (The operator's own default is AtStartup.)
LAUNCHER_CREATION_POLICY = mpi_operator.WAIT_FOR_WORKERS_READY
# Running pods are removed once the job ends, so a finished job holds no GPUs (the operator's default is None).
CLEAN_POD_POLICY = mpi_operator.CLEAN_POD_POLICY_RUNNING
LAUNCHER_CPU = "1"
LAUNCHER_MEMORY = "1Gi"
GITOPS = {"revision": "main", "path": "charts", "destination": gitops.IN_CLUSTER, "project": "default",
          "applications": "app-of-apps"}
READINESS_PROBE_DELAY_SECONDS = 2
"""The `initialDelaySeconds` of the workers' sshd readiness probe (manifests/mpijob.py): sshd binds its port within
a second or two of the container's start; the probe's period is Kubernetes' default."""
