"""A job's run identity, and the committed run it continues under the same name."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from mpigen.load import ProfileFile
from mpigen.load.catalogue import builtin_names
from mpigen.model import Backend, CommittedRun, Job, Naming, names
from mpigen.objects import chartfiles
from mpigen.providers import PROVIDERS
from mpigen.resolve.identity import Resolved, claims_of, hardware_parts, run_identity
from mpigen.vocabulary import mpi_operator


class Written:
    """The profiles as written, for run identities, and the committed runs."""

    def __init__(self, hardware: dict[str, ProfileFile], clusters: dict[str, dict[str, Any]],
                 committed: Mapping[str, CommittedRun]) -> None:
        self.hardware = hardware_parts(hardware, frozenset(builtin_names()))
        self.clusters = clusters
        self.committed = committed


def identity_and_continuation(job: Job, data: dict[str, Any], written: Written) -> Job:
    """The job with its run identity, and the committed run it continues under the same name, if any."""
    scheduling = job.scheduling
    resolved = Resolved((job.worker_count, job.gpus_per_worker, job.slots_per_worker),
                        tuple(attachment.rail.name for attachment in job.rails), scheduling.queue,
                        scheduling.topology_label, job.backend.value, job.namespace,
                        (slices.domain.node_label, slices.size) if (slices := scheduling.slices) else None,
                        claims_of(job.devices),
                        PROVIDERS[job.cluster.network.provider].worker_ssh_port(job.cluster.network)
                        or mpi_operator.SSHD_PORT)
    identity = run_identity(data, written.clusters[job.cluster.name], written.hardware, resolved)
    record = written.committed.get(names.chart_dir_of_job(job.cluster.name, job.name))
    continued = record if record is not None and _continues(job, identity, record) else None
    return replace(job, identity=identity, committed=continued)


def _continues(job: Job, identity: str, record: CommittedRun) -> bool:
    """Whether the new render's run is the committed one: same naming, a name of the form this job's runs have,
    the same kind of job object, and the same identity; for a chart compiled before identities were recorded
    (mpigen 0.1.0), the same image and worker count, which its values.yaml says (what else changed since,
    `mpigen diff` shows as held back)."""
    if job.naming is not Naming.CONTENT_HASH or record.naming != Naming.CONTENT_HASH.value:
        return False
    if not re.fullmatch(re.escape(job.name) + f"-[0-9a-f]{{{names.RUN_DIGEST_LENGTH}}}", record.name):
        return False
    if record.template != chartfiles.JOB_TEMPLATES[job.backend.value]:
        return False
    if record.identity is not None:
        return record.identity == identity
    same_image = record.image is None or job.backend is Backend.TRAINJOB or record.image == job.image
    return same_image and record.workers == job.worker_count
