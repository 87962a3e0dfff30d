"""The MPIJob's name under the job's naming policy.

mpi-operator creates a job's launcher once and never applies a later spec edit to it (DOMAIN.md
section 5). So by default the name carries a digest of everything that defines the run: an edited
job is a new MPIJob, and the GitOps tool prunes the old one. The digest is taken over the objects
the run is made of, built under the plain job name, so whatever a future builder adds to them is
covered without a list to keep up to date. Only `runPolicy.suspend` is left out: suspending and
resuming from git must act on the same MPIJob.

A compile builds each spec twice (`named_spec`): under the plain job name for the digest, and under the
MPIJob's name for the object.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from generator import names
from generator.manifests.hostfile import configmap_data
from generator.manifests.manifest import Variable, plain
from generator.manifests.mpijob import build_mpijob_spec, workers_variable
from generator.manifests.trainjob import build_training_runtime_spec, build_trainjob_spec
from generator.manifests.volcano_job import build_volcano_job_spec
from generator.model import Backend, Job, Naming

RUN_DIGEST_COVERS = ("the job object's spec (without suspend; a TrainJob's with its TrainingRuntime), its namespace, "
                     "and its hostfile (and rankfile), "
                     "built under the plain job name: no controller applies a spec edit to a run it started "
                     "(mpi-operator keeps its launcher, DOMAIN.md section 5; Volcano's webhook refuses the edit; "
                     "Trainer builds the JobSet once), so an edited run is a new job object and the GitOps tool "
                     "prunes the old one; suspend is left out so that suspending from git acts on the same object")
"""What the digest in a job object's name covers, and why, in a reader's words (`mpigen explain`)."""


def run_digest(job: Job) -> str:
    """Short hex digest of the run: the MPIJob spec without `suspend`, its namespace, its hostfile (and rankfile)."""
    return _digest(job, build_job_spec(job, job.name, workers_variable(job)))


def _digest(job: Job, spec: dict[str, Any]) -> str:
    """`run_digest` of the job object's `spec`, built under the plain job name with the profile's worker count.
    The hostfile and rankfile are written out whole to be hashed: validation keeps their lines within what etcd
    stores in one object (1.5 MiB, `validate.sizing.check_hostfile_size`), so this costs a few MB at most."""
    spec = plain(spec)
    spec.get("runPolicy", {}).pop("suspend", None)  # an MPIJob's
    if job.backend is Backend.TRAINJOB:
        spec.pop("suspend", None)
        spec["runtime"] = build_training_runtime_spec(job, job.name)  # the pods live in the TrainingRuntime
    run = {"namespace": job.namespace, "spec": spec, **configmap_data(job, job.name, job.worker_count)}
    canonical = json.dumps(run, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:names.RUN_DIGEST_LENGTH]


def mpijob_name(job: Job) -> str:
    """`<job>-<digest>`, or `<job>` under the `stable` policy."""
    return names.mpijob_name(job.name, run_digest(job) if job.naming is Naming.CONTENT_HASH else None)


def named_spec(job: Job, workers: Variable) -> tuple[str, dict[str, Any]]:
    """The MPIJob's name and its spec (marked, see `build_mpijob_spec`): the digest is taken over the spec built
    under the plain job name, and the object is built under the name that gives. Building a spec costs a tenth
    of a millisecond; putting a name into a built spec afterwards would cost more and trust every builder to
    use the name only inside strings."""
    if job.naming is Naming.STABLE:
        name = names.mpijob_name(job.name, None)
    elif workers.value == job.worker_count:
        name = names.mpijob_name(job.name, _digest(job, build_job_spec(job, job.name, workers)))
    else:  # the run is the profile's, whatever workers the objects are built for
        name = mpijob_name(job)
    return name, build_job_spec(job, name, workers)


def build_job_spec(job: Job, name: str, workers: Variable) -> dict[str, Any]:
    """The spec of the job's object under its backend: an MPIJob's, a Volcano Job's, or a TrainJob's (whose
    runtime, which the digest covers too, is built for the infra chart)."""
    if job.backend is Backend.VOLCANO_JOB:
        return build_volcano_job_spec(job, name, workers)
    if job.backend is Backend.TRAINJOB:
        return build_trainjob_spec(job, name, workers)
    return build_mpijob_spec(job, name, workers)
