"""The hostfile ConfigMap `<mpijob>-hostfile`: one line per worker, in the operator's own format.

mpi-operator writes the same lines into `<job>-config` (which it owns); mpigen ships its own copy
so that mpirun can be given `--hostfile` explicitly, which OpenMPI 5 needs (it ignores the
operator's `OMPI_MCA_orte_*` variables). Where ranks are bound to their GPU's NIC socket, the same
ConfigMap carries OpenMPI's rankfile.

Both grow with the workers, while their Helm template is a loop of a few lines: their size is counted here
from the lines' form, without writing them (generator/model/hostfile.py), and bounded by validation.
"""

from __future__ import annotations

from typing import Any

from mpigen.model import Job, names
from mpigen.model.hostfile import HostfileFormat
from mpigen.objects.labels import ChartRef, metadata


def job_host(job: Job, name: str, index: int | str) -> str:
    """Worker `index`'s host name, under the job object's `name` and the job's backend."""
    return names.worker_host(name, job.namespace, index, job.backend.value)


def hostfile_lines(job: Job, mpijob: str, worker_count: int) -> list[str]:
    """`mpijob` is the MPIJob's name, which the worker pods and the service are named after."""
    form = HostfileFormat.of_job(job)
    return [form.hostfile_line(mpijob, i) for i in range(worker_count)]


def rankfile_lines(job: Job, mpijob: str, worker_count: int) -> list[str]:
    """Ranks fill workers in hostfile order; local rank i drives GPU i and is bound to its NIC's socket."""
    form = HostfileFormat.of_job(job)
    return [form.rankfile_line(mpijob, worker * form.slots + local, worker, local)
            for worker in range(worker_count) for local in range(len(form.rank_sockets))]


def build_hostfile_configmap(job: Job, chart: ChartRef, mpijob: str, worker_count: int | None = None) -> dict[str, Any]:
    count = job.worker_count if worker_count is None else worker_count
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata(names.hostfile_configmap_name(mpijob), chart, job.namespace),
        "data": configmap_data(job, mpijob, count),
    }


def configmap_keys(job: Job) -> list[str]:
    """The files the ConfigMap holds, each mounted into the launcher under its key."""
    return [names.HOSTFILE_KEY, *([names.RANKFILE_KEY] if job.placement.rankfile else [])]


def configmap_data(job: Job, mpijob: str, worker_count: int) -> dict[str, str]:
    lines = {names.HOSTFILE_KEY: hostfile_lines, names.RANKFILE_KEY: rankfile_lines}
    return {key: "".join(f"{line}\n" for line in lines[key](job, mpijob, worker_count)) for key in configmap_keys(job)}


