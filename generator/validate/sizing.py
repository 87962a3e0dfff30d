"""A job's size on its node pool: CPUs and GPUs a worker asks for, workers the pool can hold, worker pod names
mpi-operator can make (63 characters), and hostfiles a cluster can store (etcd's 1.5 MiB)."""

from __future__ import annotations

from typing import Any

from mpigen.load import ProfileFile
from mpigen.model import Backend, MpiImplementation, defaults, derive, names
from mpigen.model.derive import Layout
from mpigen.model.hostfile import HostfileFormat
from mpigen.model.placement import resolve_placement
from mpigen.support.diagnostics import NEVER_FITS, Diagnostic, raises
from mpigen.support.profile_rules import SIZING
from mpigen.vocabulary import mpi_operator
from mpigen.vocabulary.kubernetes import ETCD_MAX_REQUEST_BYTES, OBJECT_BOUND


@raises(SIZING)
def check_layout(document: ProfileFile, job: dict[str, Any], pool: dict[str, Any],
                 hardware: dict[str, Any], one_per_node: str | None = None, backend: str = "mpijob") -> list[Diagnostic]:
    """Each step stops the next where it makes the size meaningless: a worker that cannot ask for what it does
    has no layout to check."""
    gpus = derive.gpu_count(hardware)
    where_pool = f"pool '{pool['name']}' (hardware '{hardware['name']}')"
    found = _check_gpu_keys(document, job, gpus, where_pool)
    refused = (_check_cpu_request(document, job, hardware, where_pool)
               or _check_gpu_request(document, job, gpus, where_pool))
    if refused:
        return found + refused
    shape = derive.layout(job, hardware, int(pool["nodes"]), one_per_node=one_per_node)
    return found + _check_capacity(document, job, shape, where_pool, one_per_node) + \
        _check_worker_names(document, job, shape, backend)


def _check_gpu_keys(document: ProfileFile, job: dict[str, Any], gpus: int, where_pool: str) -> list[Diagnostic]:
    if gpus:
        return []
    return [Diagnostic(document.location(key), f"`{key}` is set but {where_pool} has no GPUs",
                       "remove it, or pick a GPU pool") for key in ("gpusPerWorker", "totalGpus") if key in job]


def _check_cpu_request(document: ProfileFile, job: dict[str, Any], hardware: dict[str, Any],
                       where_pool: str) -> list[Diagnostic]:
    cpu = job.get("resources", {}).get("cpu")
    if cpu is not None and derive.quantity(cpu) == 0:
        return [Diagnostic(document.location("resources", "cpu"), "a worker asks for 0 CPUs",
                           "ask for at least 1m, or leave `cpu` out")]
    if cpu is not None and derive.quantity(cpu) > derive.logical_cpus(hardware):
        return [Diagnostic(document.location("resources", "cpu"),
                           f"a worker asks for {cpu} CPUs but a node of {where_pool} has "
                           f"{derive.logical_cpus(hardware)}", "ask for fewer CPUs per worker", code=NEVER_FITS)]
    return []


def _check_gpu_request(document: ProfileFile, job: dict[str, Any], gpus: int, where_pool: str) -> list[Diagnostic]:
    if not gpus:
        return []
    per_worker = derive.requested_gpus_per_worker(job, gpus)
    if per_worker > gpus:
        return [Diagnostic(document.location("gpusPerWorker"),
                           f"a worker asks for {per_worker} GPUs but a node of {where_pool} has {gpus}",
                           f"use at most {gpus}, and more workers", code=NEVER_FITS)]
    total = job.get("totalGpus")
    if total is not None and total % per_worker:
        lower, upper = total - total % per_worker, total + per_worker - total % per_worker
        return [Diagnostic(document.location("totalGpus"),
                           f"totalGpus {total} is not a multiple of {per_worker} GPUs per worker",
                           f"use {lower} or {upper}" if lower else f"use {upper}, or fewer GPUs per worker")]
    return []


def _check_capacity(document: ProfileFile, job: dict[str, Any], shape: Layout, where_pool: str,
                    one_per_node: str | None) -> list[Diagnostic]:
    if shape.workers_per_node == 0:
        if shape.per_node_bound == "memory":
            return []  # validate/job.py's memory check says it, with the numbers
        return [Diagnostic(document.location("resources", "cpu"), "a worker does not fit on one node", "ask for less",
                           code=NEVER_FITS)]
    if shape.worker_count <= shape.capacity:
        return []
    size_key = "workers" if "workers" in job else "totalGpus"
    if one_per_node == derive.ONE_PER_NODE_HOST_NETWORK:
        message = (f"{shape.worker_count} workers need {shape.worker_count} nodes under host networking (one "
                   f"worker per node: each binds the sshd port) but {where_pool} has {shape.nodes}")
    elif one_per_node == derive.ONE_PER_NODE_CLAIMED_NICS:
        message = (f"{shape.worker_count} workers need {shape.worker_count} nodes (one worker per node: each claims "
                   f"the NICs of its rails, which a second worker there would find taken) but {where_pool} has "
                   f"{shape.nodes}")
    elif shape.per_node_bound.startswith("workerSpread"):
        message = (f"{shape.worker_count} workers need {shape.worker_count} nodes with `{shape.per_node_bound}` "
                   f"but {where_pool} has {shape.nodes}")
    elif shape.workers_per_node == 1 and shape.per_node_bound in ("GPUs", "a whole node"):
        message = (f"{shape.worker_count} full-node workers need {shape.worker_count} nodes but "
                   f"{where_pool} has {shape.nodes}")
    else:
        natural = "GPUs" if shape.gpus_per_worker else "CPUs"  # what bounds a worker of such a pool anyway
        by = "" if shape.per_node_bound == natural else \
            f" (by their {'CPU' if shape.per_node_bound == 'CPUs' else shape.per_node_bound} requests)"
        message = (f"{shape.worker_count} workers need more than the {shape.nodes} nodes of {where_pool}: "
                   f"{shape.workers_per_node} fit on a node{by}, {shape.capacity} in all")
    return [Diagnostic(document.location(size_key), message, f"use at most {shape.capacity} workers, or a bigger pool",
                       code=NEVER_FITS)]


def _check_worker_names(document: ProfileFile, job: dict[str, Any], shape: Layout, backend: str) -> list[Diagnostic]:
    """The last worker's pod name must be a DNS-1035 label, content hash included."""
    hashed = job.get("naming", defaults.JOB_NAMING) == "content-hash"
    problem = names.last_worker_name_problem(job["name"], shape.worker_count, hashed=hashed, backend=backend)
    if not problem:
        return []
    last = names.worker_name(names.sized_mpijob_name(job["name"], hashed), max(shape.worker_count - 1, 0), backend)
    room = names.DNS1035_MAX - (len(last) - len(job["name"]))
    kind = Backend(backend)
    return [Diagnostic(document.location("name"), f"{kind.controller} would reject this job: {problem}",
                       (f"shorten the job name to at most {room} characters" if len(last) >
                        names.DNS1035_MAX else "shorten the job name")
                       + (f" (the {kind.noun} name adds {names.RUN_DIGEST_LENGTH + 1} characters of content hash"
                          + ("; `naming: stable` drops them)" if kind is Backend.MPIJOB else ")") if hashed else ""))]


def hostfile_format(job: dict[str, Any], cluster: dict[str, Any], hardware: dict[str, Any],
                    shape: Layout) -> HostfileFormat:
    """The form of the job's hostfile and rankfile lines, from its profile as the model will have it."""
    implementation = MpiImplementation(job.get("mpiImplementation", mpi_operator.DEFAULT_MPI_IMPLEMENTATION))
    placement = resolve_placement(job, hardware, implementation, shape.gpus_per_worker, shape.slots_per_worker,
                                  cluster.get("cpuManagerPolicy"))
    return HostfileFormat.of(job.get("namespace", cluster["namespaces"][0]), Backend(derive.backend_of(job, cluster)),
                             shape.slots_per_worker, implementation, placement)


@raises(SIZING)
def check_hostfile_size(document: ProfileFile, job: dict[str, Any], cluster: dict[str, Any],
                        hardware: dict[str, Any], shape: Layout) -> list[Diagnostic]:
    """The objects that hold a line per worker (or per rank) must be ones a cluster stores. Their Helm template is
    a loop of a few lines, so no measure of the chart's text sees their size: it is counted from the lines' form.
    (Run only on a job whose placement validation passed.)"""
    form = hostfile_format(job, cluster, hardware, shape)
    hashed = job.get("naming", defaults.JOB_NAMING) == "content-hash"
    mpijob = names.sized_mpijob_name(job["name"], hashed)
    largest = form.largest_object(mpijob, shape.worker_count)
    if largest.size <= OBJECT_BOUND:
        return []
    shown = largest.name.replace(mpijob, names.mpijob_name(job["name"], "<hash>" if hashed else None), 1)
    return [Diagnostic(document.location("workers" if "workers" in job else "totalGpus"),
                       f"{shape.worker_count} workers give {shown} {largest.size:,} bytes of {largest.holds} (a line "
                       f"per worker{' and per rank' if form.rank_sockets else ''}), more than the {OBJECT_BOUND:,} an "
                       f"object may hold beside its metadata under etcd's default limit of {ETCD_MAX_REQUEST_BYTES:,} "
                       f"bytes: {largest.refused}",
                       f"use at most {form.max_workers(mpijob)} workers, or shorten the job name and namespace (each "
                       "line holds both)", code=NEVER_FITS)]
