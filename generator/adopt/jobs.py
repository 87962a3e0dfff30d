"""Adoption of hand-written MPIJobs: each becomes a job profile whose values say which MPIJob field they came from,
and the import says, job by job, what mpigen will do differently (`adopt_jobs`).

A value the MPIJob states is kept, in the profile field that means the same; what the profile has no field for is
said in a note, never dropped without a word; facts of the nodes' network (NCCL_IB_HCA, NCCL_SOCKET_IFNAME...) are
left to mpigen, which derives them from the rails (the example fleet's netapp-resnet50 was moved over the same way).
The profile is then compiled on the fleet it joins (generator/adopt/compiled.py) and its MPIJob compared with the
hand-written one (generator/adopt/differences.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from mpigen.adopt.compiled import JOBS_FOLDER, TargetFleet, compile_job, profile_path, read_fleet
from mpigen.adopt.differences import differences, mpirun_mca
from mpigen.adopt.job_fields import adopted_fields, gpus_of, without_env
from mpigen.adopt.mpijob_input import HandWrittenJob, read_mpijob
from mpigen.adopt.profile_text import guess, profile_text
from mpigen.adopt.result import Adoption, AdoptionError, ProfileText
from mpigen.load import load_bytes
from mpigen.model import Fleet
from mpigen.readback.findings import RenderedObject
from mpigen.support.diagnostics import errors, one_line
from mpigen.validate.secrets import check_secrets, masked
from mpigen.vocabulary import mpi_operator
from mpigen.vocabulary.repository import STARTING_CLUSTER, STARTING_POOL


def adopt_jobs(objects: Sequence[RenderedObject], cluster: str | None, pool: str | None,
               fleet: Sequence[Path] | None) -> Adoption:
    """A job profile for each MPIJob of `objects`, and the notes of what mpigen does differently, one line each.

    `cluster`, `pool`: where the jobs run (`--cluster`, `--pool`); where not given, a guess marked in the profile.
    `fleet`: the profile paths (the profiles folder) the jobs join: their hardware and clusters are read, each
    profile is compiled beside them and its MPIJob compared with the hand-written one; None compares nothing.
    Raises AdoptionError, naming the file and line, for an MPIJob that cannot be adopted: then nothing is written.
    """
    target = read_fleet(fleet) if fleet else None
    notes: list[str] = []
    if target is not None and target.fleet is None:
        shown = "; ".join(d.format() for d in errors(list(target.problems))[:3])
        notes.append(one_line(f"{target.folder}: the profiles there do not compile ({shown}): the adopted jobs are "
                              "not compared with what mpigen compiles"))
    profiles: list[ProfileText] = []
    seen: dict[str, str] = {}
    for document in objects:
        if document.kind != mpi_operator.KIND:
            notes.append(one_line(masked(f"{document.source}: {document.label}: not an MPIJob: skipped")))
            continue
        written = read_mpijob(document)
        if written.name in seen:
            notes.append(one_line(f"{document.source}: {written.label}: a second MPIJob of this name (the first is in "
                                  f"{seen[written.name]}): skipped; rename one and import it again"))
            continue
        seen[written.name] = document.source
        profile, said = _adopt(written, cluster, pool, target)
        profiles.append(profile)
        notes += [one_line(masked(f"{document.source}: {written.label}: {note}")) for note in said]
    return Adoption(tuple(profiles), tuple(notes))


def _adopt(written: HandWrittenJob, cluster: str | None, pool: str | None,
           target: TargetFleet | None) -> tuple[ProfileText, list[str]]:
    """One MPIJob's profile and what is said about it. On a fleet the profile is compiled twice: without the
    MPIJob's variables and mpirun flags (what mpigen derives on its own, and the MCA parameters its mpirun line sets,
    which the profile must then leave out), and as adopted, whose MPIJob is compared with the hand-written one."""
    where = _where(gpus_of(written.worker)[1] > 0, cluster, pool, target)
    adopted = adopted_fields(written, *where)
    compared: list[str] = []
    if target is not None and target.fleet is not None:
        bare = compile_job(target, written.name, profile_text([], without_env(adopted)))
        owned = mpirun_mca(bare)
        if owned:
            adopted = adopted_fields(written, *where, owned)
        text = profile_text(_header(written.label, written.source), adopted.fields)
        compared = differences(adopted, compile_job(target, written.name, text), profile_path(target, written.name),
                               bare)
        if written.name in target.jobs:
            compared.append(f"{target.jobs[written.name]} is a job profile of this name already: the adopted one "
                            "would take its place")
    text = profile_text(_header(written.label, written.source), adopted.fields)
    _refuse_secrets(written.document, written.name, text)
    return ProfileText("Job", written.name, text), [*adopted.notes, *compared]


def _refuse_secrets(document: RenderedObject, name: str, text: str) -> None:
    """The last word on secrets: a profile that would hold one (by its shape, anywhere) is not written, and the line
    says where it is without its value (validate/secrets.py, as `mpigen validate` judges profiles)."""
    profile, _ = load_bytes(text.encode("utf-8"), f"{JOBS_FOLDER}/{name}.yaml", f"{JOBS_FOLDER}/{name}.yaml")
    found = check_secrets(profile) if profile is not None else []
    if found:
        raise AdoptionError(one_line(f"{document.source}: {document.label}: the job profile would hold a secret: "
                                     f"{found[0].message.split(':')[0]}; nothing is written: {found[0].hint}"))


def _where(uses_gpus: bool, cluster: str | None, pool: str | None,
           target: TargetFleet | None) -> tuple[tuple[str, str], tuple[str, str]]:
    """(value, comment) of `cluster` and `pool`: as asked, else a guess: a pool of the fleet with GPUs for a GPU job
    and without for a CPU job (the first cluster that has one), else the names `mpigen init` starts with."""
    fleet = target.fleet if target is not None else None
    found = _fitting_pool(fleet, uses_gpus, cluster) if pool is None else None
    listing = "the cluster profiles' `name`: the cluster this job runs on (`mpigen import --cluster`)"
    pools = "`nodePools` of that cluster's profile: the pool the workers run on (`mpigen import --pool`)"
    if cluster is not None:
        where_cluster = (cluster, "mpigen import --cluster")
    elif found is not None:
        where_cluster = (found[0], guess(f"the first cluster with a {'GPU' if uses_gpus else 'CPU'} pool; " + listing))
    else:
        where_cluster = (STARTING_CLUSTER, guess(listing))
    if pool is not None:
        where_pool = (pool, "mpigen import --pool")
    elif found is not None and found[0] == where_cluster[0]:
        where_pool = (found[1], guess(f"a pool {'with' if uses_gpus else 'without'} GPUs; " + pools))
    else:
        where_pool = (STARTING_POOL, guess(pools))
    return where_cluster, where_pool


def _fitting_pool(fleet: Fleet | None, uses_gpus: bool, cluster: str | None) -> tuple[str, str] | None:
    for candidate in fleet.clusters if fleet is not None else ():
        if cluster is not None and candidate.name != cluster:
            continue
        for node_pool in candidate.pools:
            if (node_pool.hardware.gpu is not None and node_pool.hardware.gpu.count > 0) == uses_gpus:
                return candidate.name, node_pool.name
    return None


def _header(label: str, source: str) -> list[str]:
    return [f"Adopted by `mpigen import` from {label}, {source}.",
            "Each comment names the MPIJob field its value came from; a comment that starts with 'a guess' marks a",
            "value the MPIJob does not hold, and says what to read to replace it. What mpigen derives differently",
            "from the MPIJob is what the import said about it."]
