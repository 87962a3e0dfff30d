"""The job object's name under the job's naming policy.

No controller applies a spec edit to a run it started (mpi-operator creates its launcher Job once;
Volcano's webhook refuses the edit; Trainer builds its JobSet once). So by default the name carries a digest of
the run's identity, what the profiles ask the run to do (generator/resolve/identity.py): a run asked to do
something else is a new object, and the GitOps tool prunes the old one. A run that continues a committed one
keeps the committed name (`Job.committed`), whatever this release compiles it to.
"""

from __future__ import annotations

from typing import Any

from mpigen.manifests.mpijob import build_mpijob_spec
from mpigen.manifests.trainjob import build_trainjob_spec
from mpigen.manifests.volcano_job import build_volcano_job_spec
from mpigen.model import Backend, Job, Naming, names
from mpigen.objects.manifest import Variable
from mpigen.resolve.identity import identity_digest

RUN_DIGEST_COVERS = ("what the profiles ask the run to do: the job profile but for what only describes it (labels, "
                     "annotations, description, runPolicy.suspend), and of its cluster the node pool, hardware, "
                     "rails, network settings, scheduler, queue and topology level it depends on; never what a "
                     "release of mpigen compiles it to. No controller applies a spec edit to a run it started "
                     "(mpi-operator creates its launcher Job once; Volcano's webhook refuses the edit; "
                     "Trainer builds the JobSet once), so a run asked to do something else is a new job object and "
                     "the GitOps tool prunes the old one")
"""What the digest in a job object's name covers, and why, in a reader's words (`mpigen explain`)."""


def run_digest(job: Job) -> str:
    """The short digest of the run's identity that a new run's name carries."""
    return identity_digest(job.identity)[:names.RUN_DIGEST_LENGTH]


def mpijob_name(job: Job) -> str:
    """`<job>` under the `stable` policy; else the committed run's name where this run continues it, and
    `<job>-<digest>` for a new run."""
    if job.naming is Naming.STABLE:
        return names.mpijob_name(job.name, None)
    if job.committed is not None:
        return job.committed.name
    return names.mpijob_name(job.name, run_digest(job))


def named_spec(job: Job, workers: Variable) -> tuple[str, dict[str, Any]]:
    """The job object's name and its spec (marked, see `build_mpijob_spec`), built under that name."""
    name = mpijob_name(job)
    return name, build_job_spec(job, name, workers)


def build_job_spec(job: Job, name: str, workers: Variable) -> dict[str, Any]:
    """The spec of the job's object under its backend: an MPIJob's, a Volcano Job's, or a TrainJob's (whose
    runtime is built for the infra chart)."""
    if job.backend is Backend.VOLCANO_JOB:
        return build_volcano_job_spec(job, name, workers)
    if job.backend is Backend.TRAINJOB:
        return build_trainjob_spec(job, name, workers)
    return build_mpijob_spec(job, name, workers)
