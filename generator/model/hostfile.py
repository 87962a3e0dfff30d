"""The form of a job's hostfile and rankfile lines, and what they come to in bytes, counted without writing them.

Both grow with the workers, while their Helm template is a loop of a few lines: validation bounds their size from
the profile (`HostfileFormat.of`) before there is a model, resolve from the model; generator/manifests/hostfile.py
writes the lines in this form.
"""

from __future__ import annotations

from dataclasses import dataclass

from mpigen.model import names
from mpigen.model.cluster import Backend
from mpigen.model.job import Job, MpiImplementation, Placement
from mpigen.vocabulary import mpi_operator
from mpigen.vocabulary.kubernetes import OBJECT_BOUND


def hostfile_line(host: str, slots: int, implementation: MpiImplementation) -> str:
    if implementation is MpiImplementation.OPENMPI:
        return f"{host} slots={slots}"
    return f"{host}:{slots}"


def rankfile_line(rank: int | str, host: str, socket: int, cores_per_socket: int) -> str:
    """OpenMPI rankfile line: `rank` runs on `host`, bound to every core of `socket` (logical numbering)."""
    return f"rank {rank}={host} slot={socket}:0-{cores_per_socket - 1}"


# --- what the lines of a job come to, counted without writing them --------------------------------------------

def digits_total(count: int, stride: int = 1, offset: int = 0) -> int:
    """How many digits `offset`, `offset + stride`, ... (`count` numbers) take written out, in a step per digit."""
    total, width, below = 0, 1, 0
    while below < count:
        within = min(count, max(0, -(-(10**width - offset) // stride)))  # the numbers of at most `width` digits
        total += (within - below) * width
        below, width = within, width + 1
    return total


_WORKER, _RANK = "\x00", "\x01"
"""Stand-ins for a worker's index and a rank in a line that is measured, not written: no name holds them."""


def _lines_bytes(line: str, count: int, stride: int = 1, offset: int = 0) -> int:
    """Bytes of `count` lines of `line`'s form, each with its newline: the i-th with i for every `_WORKER` in it and
    `offset + i * stride` for every `_RANK`."""
    data = line.encode("utf-8")
    workers, ranks = data.count(_WORKER.encode()), data.count(_RANK.encode())
    return (count * (len(data) - workers - ranks + 1) + workers * digits_total(count)
            + ranks * digits_total(count, stride, offset))


@dataclass(frozen=True)
class LinesObject:
    """An object holding a line per worker (or rank), and the bytes of its lines."""

    name: str
    holds: str
    size: int
    refused: str
    """What happens to an object of this size: who cannot store it, and what follows."""


@dataclass(frozen=True)
class HostfileFormat:
    """What the lines of a job's hostfile and rankfile are made of: the model's (`of_job`), or where validation has
    no model yet the profile's. Enough to write the lines, or to count their bytes without writing them."""

    namespace: str
    backend: Backend
    slots: int
    implementation: MpiImplementation
    rank_sockets: tuple[int, ...] = ()
    """The socket of each local rank where a rankfile binds them; none without a rankfile."""
    cores_per_socket: int = 0

    @classmethod
    def of(cls, namespace: str, backend: Backend, slots: int, implementation: MpiImplementation,
           placement: Placement) -> HostfileFormat:
        return cls(namespace, backend, slots, implementation,
                   placement.rank_sockets if placement.rankfile else (), placement.cores_per_socket)

    @classmethod
    def of_job(cls, job: Job) -> HostfileFormat:
        return cls.of(job.namespace, job.backend, job.slots_per_worker, job.mpi_implementation, job.placement)

    def host(self, mpijob: str, index: int | str) -> str:
        return names.worker_host(mpijob, self.namespace, index, self.backend.value)

    def hostfile_line(self, mpijob: str, worker: int | str) -> str:
        return hostfile_line(self.host(mpijob, worker), self.slots, self.implementation)

    def rankfile_line(self, mpijob: str, rank: int | str, worker: int | str, local: int) -> str:
        return rankfile_line(rank, self.host(mpijob, worker), self.rank_sockets[local], self.cores_per_socket)

    def objects(self, mpijob: str, workers: int) -> tuple[LinesObject, ...]:
        """Each object that holds a line per worker, with the bytes of its lines: mpigen's hostfile ConfigMap, and
        an MPIJob's `<mpijob>-config`, which mpi-operator fills with the same hostfile and discover_hosts.sh (an
        `echo <host>` per running worker). Trainer's and Volcano's own hostfiles of a TrainJob or a Volcano Job are no
        longer than mpigen's (the same lines, or shorter ones), give or take one line for the launcher."""
        hostfile = _lines_bytes(self.hostfile_line(mpijob, _WORKER), workers)
        rankfile = sum(_lines_bytes(self.rankfile_line(mpijob, _RANK, _WORKER, local), workers, self.slots, local)
                       for local in range(len(self.rank_sockets)))
        found = [LinesObject(f"ConfigMap {names.hostfile_configmap_name(mpijob)}",
                             "hostfile and rankfile" if rankfile else "hostfile",
                             hostfile + rankfile, "applying the chart would fail with `etcdserver: request is too "
                             "large`")]
        if self.backend is Backend.MPIJOB:
            discover = len(mpi_operator.DISCOVER_HOSTS_HEADER) + _lines_bytes(
                mpi_operator.discover_hosts_line(self.host(mpijob, _WORKER)), workers)
            found.append(LinesObject(f"mpi-operator's ConfigMap {names.operator_config_name(mpijob)}",
                                     "hostfile and discover_hosts.sh",
                                     hostfile + discover, "mpi-operator could not create it, and the job would never "
                                     "start"))
        return tuple(found)

    def largest_object(self, mpijob: str, workers: int) -> LinesObject:
        return max(self.objects(mpijob, workers), key=lambda found: found.size)

    def max_workers(self, mpijob: str, most: int = OBJECT_BOUND) -> int:
        """The most workers, up to `most`, whose objects' lines all fit `OBJECT_BOUND`: each worker adds bytes to
        each, so the count is found by halving, where `most` do not fit. (A line has more than one byte, so no more
        than `OBJECT_BOUND` workers ever fit.)"""
        if self.largest_object(mpijob, most).size <= OBJECT_BOUND:
            return most
        low, high = 0, min(most, OBJECT_BOUND)
        while low < high:
            middle = (low + high + 1) // 2
            if self.largest_object(mpijob, middle).size <= OBJECT_BOUND:
                low = middle
            else:
                high = middle - 1
        return low
