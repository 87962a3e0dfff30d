"""The MPIJob's name under the job's naming policy.

mpi-operator creates a job's launcher once and never applies a later spec edit to it (DOMAIN.md
section 5). So by default the name carries a digest of everything that defines the run: an edited
job is a new MPIJob, and the GitOps tool prunes the old one. The digest is taken over the objects
the run is made of, built under the plain job name, so whatever a future builder adds to them is
covered without a list to keep up to date. Only `runPolicy.suspend` is left out: suspending and
resuming from git must act on the same MPIJob.
"""

from __future__ import annotations

import hashlib
import json

from generator import names
from generator.manifests.hostfile import configmap_data
from generator.manifests.manifest import plain
from generator.manifests.mpijob import build_mpijob_spec, workers_variable
from generator.model import Job, Naming


def run_digest(job: Job) -> str:
    """Short hex digest of the run: the MPIJob spec without `suspend`, its namespace, its hostfile (and rankfile)."""
    spec = plain(build_mpijob_spec(job, job.name, workers_variable(job)))
    del spec["runPolicy"]["suspend"]
    run = {"namespace": job.namespace, "spec": spec, **configmap_data(job, job.name, job.worker_count)}
    canonical = json.dumps(run, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:names.RUN_DIGEST_LENGTH]


def mpijob_name(job: Job) -> str:
    """`<job>-<digest>`, or `<job>` under the `stable` policy."""
    return names.mpijob_name(job.name, run_digest(job) if job.naming is Naming.CONTENT_HASH else None)
