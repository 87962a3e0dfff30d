"""The launcher's command: mpirun as each MPI implementation takes it, with the hostfile, the ranks' environment,
OpenMPI's placement and sshd's port, or the profile's own launcher command."""

from __future__ import annotations

from mpigen.model import Backend, Job, MpiImplementation, derive, names
from mpigen.objects.manifest import Variable
from mpigen.vocabulary import mpi_operator

RANK_COUNT_FLAG = {MpiImplementation.OPENMPI: "-np", MpiImplementation.INTEL: "-n", MpiImplementation.MPICH: "-n"}


def literal(text: str) -> str:
    """Kubernetes expands `$(VAR)` in command, args and env values; `$$` keeps a `$` literal."""
    return text.replace("$", "$$")


def mpirun_command(job: Job, workers: Variable) -> list[str | Variable]:
    """mpirun with the hostfile given explicitly and every env variable exported to the ranks; the rank
    count follows the `workers` value.

    Variables set on a worker container do not reach processes started over ssh, so they are
    exported by name from the launcher (`-x NAME`, OpenMPI) or by value (`-genv NAME VALUE`, Hydra).
    """
    ranks = workers.scaled(job.slots_per_worker)
    flag = RANK_COUNT_FLAG[job.mpi_implementation]
    command: list[str | Variable]
    if job.mpi_implementation is MpiImplementation.OPENMPI:
        command = ["mpirun"]
        if job.runs_as_root:
            command.append("--allow-run-as-root")
        command += ["--hostfile", names.HOSTFILE_PATH]
        if job.backend is not Backend.TRAINJOB:
            # Under a TrainJob the launcher lives in the infra chart's runtime, which no value of the job chart
            # reaches: without -np, OpenMPI runs one rank per slot of the hostfile, which follows the workers.
            command += [flag, ranks]
        command += placement_flags(job)
        port = job.ssh_port
        if port is not None and job.openmpi_version == 4:
            # Command line, not OMPI_MCA_plm_rsh_args: the operator appends that variable to the launcher.
            # (OpenMPI 5 takes PRTE_MCA_plm_ssh_args, which resolve derives with the port.)
            command += ["--mca", "plm_rsh_args", f"-p {port} {derive.OPERATOR_SSH_ARGS}"]
        command += ["-x", "PATH", "-x", "LD_LIBRARY_PATH"]
        for var in job.env:
            command += ["-x", var.name]
    else:
        command = [*hydra_ssh_port(job), "mpirun", "-hostfile", names.HOSTFILE_PATH, flag, ranks]
        for var in job.env:
            if var.secret is None and var.run_ref is None:
                command += ["-genv", var.name, var.value]
        # By name: a Secret's value must not stand in the command line, and a name of the run is the launcher's
        # variable, filled in with the job object's name.
        by_name = [var.name for var in job.env if var.secret is not None or var.run_ref is not None]
        if by_name:
            command += ["-genvlist", ",".join(by_name)]
    command += [*job.mpirun_args, *job.program]
    return [part if isinstance(part, Variable) else literal(part) for part in command]


def hydra_ssh_port(job: Job) -> list[str]:
    """`env NAME=-p <port> ...` before Hydra's mpirun where sshd's port is not 22: Intel MPI and MPICH take ssh's
    options from a variable (vocabulary/mpi_operator.py), Intel MPI's set by mpi-operator on the launcher after the
    container's own (its `-o ConnectionAttempts=10`, kept here), so the port is given to mpirun's process alone."""
    if job.ssh_port is None:
        return []
    variable = mpi_operator.HYDRA_SSH_ARGS_VARIABLE[job.mpi_implementation.value]
    return ["env", f"{variable}=-p {job.ssh_port} {derive.OPERATOR_SSH_ARGS}"]


def placement_flags(job: Job) -> list[str]:
    """OpenMPI's mapping and binding flags; a rankfile places every rank itself."""
    placement = job.placement
    if placement.rankfile:
        if job.openmpi_version == 4:
            return ["--rankfile", names.RANKFILE_PATH]
        return ["--map-by", f"rankfile:file={names.RANKFILE_PATH}"]  # OpenMPI 5 (PRRTE): --rankfile is deprecated
    flags = []
    if placement.bind_to is not None:
        flags += ["--bind-to", placement.bind_to.value]
    if placement.map_by is not None:
        flags += ["--map-by", placement.map_by]
    return flags


def launcher_command(job: Job, workers: Variable) -> list[str | Variable]:
    if job.launcher_command is not None:
        return [literal(part) for part in job.launcher_command]
    return mpirun_command(job, workers)
