"""The hostfile ConfigMap `<mpijob>-hostfile`: one line per worker, in the operator's own format.

mpi-operator writes the same lines into `<job>-config` (which it owns); mpigen ships its own copy
so that mpirun can be given `--hostfile` explicitly, which OpenMPI 5 needs (it ignores the
operator's `OMPI_MCA_orte_*` variables).
"""

from __future__ import annotations

from typing import Any

from generator import names
from generator.build.labels import ChartRef, metadata
from generator.model import Job, MpiImplementation


def hostfile_line(host: str, slots: int, implementation: MpiImplementation) -> str:
    if implementation is MpiImplementation.OPENMPI:
        return f"{host} slots={slots}"
    return f"{host}:{slots}"


def hostfile_lines(job: Job, mpijob: str, worker_count: int) -> list[str]:
    """`mpijob` is the MPIJob's name, which the worker pods and the service are named after."""
    return [
        hostfile_line(names.worker_host(mpijob, job.namespace, i), job.slots_per_worker, job.mpi_implementation)
        for i in range(worker_count)
    ]


def hostfile_text(job: Job, mpijob: str, worker_count: int) -> str:
    return "".join(f"{line}\n" for line in hostfile_lines(job, mpijob, worker_count))


def build_hostfile_configmap(job: Job, chart: ChartRef, mpijob: str, worker_count: int | None = None) -> dict[str, Any]:
    count = job.worker_count if worker_count is None else worker_count
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata(names.hostfile_configmap_name(mpijob), chart, job.namespace),
        "data": {names.HOSTFILE_KEY: hostfile_text(job, mpijob, count)},
    }
