"""Kubeflow Trainer v2 (`trainer.kubeflow.org/v1alpha1`): a TrainJob on a TrainingRuntime, as Trainer treats them.

Sources: tests/upstream/trainer/ (the TrainJob and TrainingRuntime CRDs, and the MPI plugin's source), the runtimes
Trainer ships. The runtime's template is a JobSet spec; JobSet names a
replicated job's pods' hostnames `<jobset>-<replicatedJob>-<jobIndex>-<podIndex>`, one Job per replicated job, behind a
headless Service named after the JobSet (the TrainJob), which is the pods' subdomain (the pods' own names end in a
random suffix). Under `mlPolicy.mpi` Trainer
writes the hostfile ConfigMap `<trainjob>-mpi-hostfile` (lines `<trainjob>-node-0-<i>.<trainjob> slots=<n>`, OpenMPI
only), makes the ssh Secret `<trainjob>-mpi-ssh-auth`, mounts it at `sshAuthMountPath` in every container named
`node` of the `node` and `launcher` replicated jobs, mounts the hostfile at /etc/mpi in the launcher's and sets
OpenMPI's ORTE variables there. Its admission webhook refuses a TrainJob whose TrainingRuntime does not exist yet.
"""

from __future__ import annotations

GROUP = "trainer.kubeflow.org"
API_VERSION = f"{GROUP}/v1alpha1"
TRAINJOB_KIND = "TrainJob"
RUNTIME_KIND = "TrainingRuntime"

NODE = "node"
"""The workers' replicated job, and the name of the one container in each pod that Trainer's MPI plugin touches."""
LAUNCHER = "launcher"
JOB_INDEX = 0
"""Each replicated job has one replica: its Job is index 0, so the workers' hostnames are `<trainjob>-node-0-<i>`."""
RUNTIME_REF = "runtimeRef"
"""TrainJobSpec's reference to the TrainingRuntime it runs on."""
SUSPEND = "suspend"
TRAINER = "trainer"
"""TrainJobSpec's trainer: the nodes and processes per node (and the image and command of the node container)."""
ACTIVE_DEADLINE_SECONDS = "activeDeadlineSeconds"
MANAGED_BY = "managedBy"
SUSPEND_PATH = ("spec", SUSPEND)
"""Where a TrainJob says it is suspended (TrainJobSpec.suspend): Kueue sets it, Trainer acts on a change of it."""
REPLICATED_JOBS = "replicatedJobs"
"""The JobSet spec's replicated jobs, in a TrainingRuntime's `spec.template.spec`: each one Job's pod template."""
ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
ANCESTOR_TRAINER = "trainer"
"""The replicated job whose pod count is the TrainJob's `numNodes`: under `runLauncherAsNode: false`, the nodes."""
OPENMPI = "OpenMPI"
"""The only `mpiImplementation` the CRD allows: the plugin writes no hostfile for any other."""
READY = "Ready"
ALL = "All"


def trainer_owned_names(trainjob: str) -> tuple[str, ...]:
    """Objects Trainer and JobSet create for TrainJob `trainjob` (besides its pods): a chart must not take them.
    The JobSet and its headless Service share the TrainJob's own name."""
    return (f"{trainjob}-mpi-hostfile", f"{trainjob}-mpi-ssh-auth")
