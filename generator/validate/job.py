"""What a job profile must hold together: its size and command given once, and the cluster, namespace, pool,
rails and memory it asks for there. Sizing is in sizing.py, volumes in volumes.py, GitOps rules in gitops.py."""

from __future__ import annotations

import difflib
from typing import Any

from mpigen.load import ProfileFile, to_plain
from mpigen.model import defaults, derive
from mpigen.providers import provider_of
from mpigen.support.diagnostics import NEVER_FITS, Diagnostic, Severity, did_you_mean, raises
from mpigen.support.profile_rules import JOB, REFERENCES
from mpigen.support.schema_files import load_schema
from mpigen.validate.backend import check_backend
from mpigen.validate.devices import check_job_devices
from mpigen.validate.facts import check_core_facts
from mpigen.validate.fields import check_label_keys, check_release_name
from mpigen.validate.gitops import check_gitops_job
from mpigen.validate.index import Index
from mpigen.validate.job_scheduling import check_job_scheduling
from mpigen.validate.network import host_network, one_worker_per_node
from mpigen.validate.sizing import check_hostfile_size, check_layout
from mpigen.validate.topology import check_job_topology
from mpigen.validate.volumes import check_volumes
from mpigen.vocabulary import kubernetes, mpi_operator, reserved


@raises(JOB)
def check_job(document: ProfileFile, index: Index) -> list[Diagnostic]:
    job = to_plain(document.data)
    found = _check_own_fields(document, job)
    cluster_doc = index.clusters.get(job["cluster"])
    if cluster_doc is None:
        return found + _unknown_cluster(document, job["cluster"], index)
    cluster = index.cluster_data(job["cluster"])
    found += _check_namespace(document, job, cluster_doc, cluster)
    found += check_backend(document, job, cluster)
    found += check_gitops_job(document, job, cluster)
    pool = {p["name"]: p for p in cluster["nodePools"]}.get(job["pool"])
    if pool is None:
        return found + _unknown_pool(document, job, cluster)
    hardware_doc = index.hardware.get(pool["hardware"])
    if hardware_doc is None:
        return found
    hardware = index.hardware_data(pool["hardware"])
    shaped = _check_shape(document, job, cluster, pool, hardware, hardware_doc)
    found += shaped
    # Only a queue looks beyond the job's own pool.
    pool_hardware = {p["name"]: index.hardware_data(p["hardware"]) for p in cluster["nodePools"]
                     if p["hardware"] in index.hardware} if "scheduling" in cluster else {pool["name"]: hardware}
    found += check_job_scheduling(document, job, cluster, index.cluster_queues(job["cluster"]), pool, pool_hardware,
                                  sized=not any(d.severity is Severity.ERROR for d in shaped))
    found += _check_host_network_job(document, job, cluster)
    found += _check_memory(document, job, pool, hardware)
    found += _check_rails(document, job, cluster, pool, hardware)
    found += check_volumes(document, job)
    found += _check_user(document, job)
    found += _check_ssh_port(document, job, cluster)
    found += _check_own_launcher_port(document, job, cluster)
    return found


def _misspelt(job: dict[str, Any]) -> set[str]:
    """Keys of the job schema that unknown keys of `job` look like misspellings of: each is reported already
    (an unknown key with its did-you-mean), so that the key itself is missing is not a second error."""
    known = list(load_schema("Job")["properties"])
    return {match for key in job if key not in known
            for match in difflib.get_close_matches(key, known, n=1, cutoff=0.6)}


def _check_own_fields(document: ProfileFile, job: dict[str, Any]) -> list[Diagnostic]:
    """What the job says of itself: its size and what it runs, each given once, and a release name Helm takes."""
    found: list[Diagnostic] = []
    given = [k for k in ("workers", "totalGpus") if k in job]
    misspelt = _misspelt(job)
    if len(given) > 1 or (not given and not misspelt & {"workers", "totalGpus"}):
        found.append(Diagnostic(document.location(given[1]) if given else document.location(),
                                "give exactly one of `workers` and `totalGpus`" if given else
                                "missing the job's size",
                                "add `workers: N`, or `totalGpus: N` for GPU jobs" if not given else
                                "keep one; the other follows from gpusPerWorker"))
    found += check_release_name(document, job["name"], "job chart release")
    commands = [k for k in ("program", "launcherCommand") if k in job]
    if len(commands) == 2:
        found.append(Diagnostic(document.location("launcherCommand"), "give exactly one of `program` and "
                                "`launcherCommand`", "keep `program` to have mpigen build the mpirun line, or "
                                "`launcherCommand` to write the whole launcher command yourself"))
    elif not commands and not misspelt & {"program", "launcherCommand"}:
        found.append(Diagnostic(document.location(), "missing what the job runs",
                                "add `program: [python, train.py]`; mpigen wraps it in mpirun"))
    found += _check_metadata(document, job)
    for key in ("mpirunArgs",):
        if key in job and "launcherCommand" in job:
            found.append(Diagnostic(document.location(key), f"`{key}` has no effect with `launcherCommand`",
                                    "put the arguments into launcherCommand", Severity.WARNING))
    return found


METADATA_FIELDS = {"labels": "label", "annotations": "annotation", "objectLabels": "label",
                   "objectAnnotations": "annotation"}
"""The profile's labels and annotations (of the job object and its pods, or of the job object only), and what
each entry is."""


def _check_metadata(document: ProfileFile, job: dict[str, Any]) -> list[Diagnostic]:
    """The profile's own labels and annotations: within Kubernetes' limits, and none of the keys mpigen, Kubernetes,
    the controllers or the cluster's network read as instructions (a label of theirs would change what their
    selectors match; an annotation of Multus' would move the pods to another network)."""
    found: list[Diagnostic] = []
    for field, noun in METADATA_FIELDS.items():
        given = job.get(field, {})
        found += check_label_keys(document, given, (field,), noun)
        for key in given:
            domain = reserved.reserved_key_domain(key)
            if domain is not None:
                found.append(Diagnostic(document.location(field, key, at_key=True),
                                        f"{noun} key '{key}' is in domain {domain}, which a job may not use: "
                                        f"{reserved.RESERVED_KEY_DOMAINS[domain]}", "use a domain of your own, e.g. "
                                        f"example.com/{key.rpartition('/')[2]}"))
    for both, only in (("labels", "objectLabels"), ("annotations", "objectAnnotations")):
        for key in job.get(only, {}):
            if key in job.get(both, {}):
                found.append(Diagnostic(document.location(only, key, at_key=True),
                                        f"{METADATA_FIELDS[only]} key '{key}' is in both `{both}` and `{only}`",
                                        f"keep it in `{both}` for the job object and its pods, or in `{only}` for "
                                        "the job object only"))
    annotations = {**job.get("annotations", {}), **job.get("objectAnnotations", {})}
    size = kubernetes.annotations_size(annotations)
    if size > kubernetes.TOTAL_ANNOTATION_SIZE:
        field = "annotations" if "annotations" in job else "objectAnnotations"
        found.append(Diagnostic(document.location(field, at_key=True), f"the annotations are {size} bytes; "
                                f"Kubernetes refuses an object whose annotations pass {kubernetes.TOTAL_ANNOTATION_SIZE}",
                                "keep long text elsewhere and link to it"))
    return found


@raises(REFERENCES)
def _unknown_cluster(document: ProfileFile, cluster_name: str, index: Index) -> list[Diagnostic]:
    if cluster_name in index.broken["Cluster"]:
        return []
    return [Diagnostic(document.location("cluster"), f"no cluster profile is named '{cluster_name}'",
                       did_you_mean(cluster_name, index.clusters))]


@raises(REFERENCES)
def _check_namespace(document: ProfileFile, job: dict[str, Any], cluster_doc: ProfileFile,
                     cluster: dict[str, Any]) -> list[Diagnostic]:
    namespaces = cluster["namespaces"]
    namespace = job.get("namespace", namespaces[0])
    if namespace in namespaces:
        return []
    return [Diagnostic(document.location("namespace"), f"cluster '{cluster['name']}' has no namespace '{namespace}'",
                       did_you_mean(namespace, namespaces) + f" (or add it to {cluster_doc.path})")]


@raises(REFERENCES)
def _unknown_pool(document: ProfileFile, job: dict[str, Any], cluster: dict[str, Any]) -> list[Diagnostic]:
    pools = [p["name"] for p in cluster["nodePools"]]
    return [Diagnostic(document.location("pool"), f"cluster '{cluster['name']}' has no node pool '{job['pool']}'",
                       did_you_mean(job["pool"], pools))]


def _check_shape(document: ProfileFile, job: dict[str, Any], cluster: dict[str, Any], pool: dict[str, Any],
                 hardware: dict[str, Any], hardware_doc: ProfileFile) -> list[Diagnostic]:
    """The facts sizing needs, the size on the pool, then (if it fits) the placement of its GPUs and NICs."""
    one_per_node = one_worker_per_node(cluster, job, hardware)
    unknown = check_core_facts(document, job, pool, hardware, hardware_doc)
    found = unknown or check_layout(document, job, pool, hardware, one_per_node, derive.backend_of(job, cluster))
    if not any(d.severity is Severity.ERROR for d in found):
        shape = derive.layout(job, hardware, pool["nodes"], one_per_node=one_per_node)
        found += check_job_topology(document, job, cluster, pool, hardware, shape)
        found += check_job_devices(document, job, cluster, hardware, shape)
        if not any(d.severity is Severity.ERROR for d in found):
            found += check_hostfile_size(document, job, cluster, hardware, shape)
    return found


def _check_host_network_job(document: ProfileFile, job: dict[str, Any], cluster: dict[str, Any]) -> list[Diagnostic]:
    if not host_network(cluster):
        return []
    found = []
    if job.get("mpiImplementation", mpi_operator.DEFAULT_MPI_IMPLEMENTATION) != mpi_operator.OPENMPI:
        found.append(Diagnostic(document.location("mpiImplementation"),
                                f"cluster '{cluster['name']}' uses host networking, where sshd listens on a port of "
                                "its own; mpigen passes that port to OpenMPI's mpirun only",
                                "use OpenMPI, or another network provider"))
    if job.get("workerSpread") == "pack":
        found.append(Diagnostic(document.location("workerSpread"), f"cluster '{cluster['name']}' uses host "
                                "networking, where two workers on a node would both bind sshd's port: its workers "
                                "run one a node, and cannot be packed", "remove workerSpread"))
    return found


def _check_memory(document: ProfileFile, job: dict[str, Any], pool: dict[str, Any],
                  hardware: dict[str, Any]) -> list[Diagnostic]:
    """Memory and the memory-backed /dev/shm must fit a node; shm counts against the memory limit."""
    found: list[Diagnostic] = []
    node = derive.quantity(f"{hardware['memoryGiB']}Gi")
    memory = job.get("resources", {}).get("memory")
    for path, text, what in ((("resources", "memory"), memory, "memory"), (("shmSize",), job.get("shmSize"), "/dev/shm")):
        if text is not None and derive.quantity(text) > node:
            found.append(Diagnostic(document.location(*path),
                                    f"a worker's {what} of {text} is more than a node of pool '{pool['name']}' "
                                    f"has ({hardware['memoryGiB']}Gi)", f"ask for less {what}", code=NEVER_FITS))
    shm = job.get("shmSize")
    if not found and memory is not None and shm is not None and derive.quantity(shm) >= derive.quantity(memory):
        found.append(Diagnostic(document.location("shmSize"),
                                f"/dev/shm of {shm} is not smaller than the worker's memory limit of {memory}; "
                                "files in it count against that limit", "raise resources.memory or lower shmSize",
                                Severity.WARNING))
    return found


def _check_rails(document: ProfileFile, job: dict[str, Any], cluster: dict[str, Any], pool: dict[str, Any],
                 hardware: dict[str, Any]) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    cluster_rails = {r["name"] for r in cluster.get("rails", [])}
    usable = {r["name"] for r in derive.pool_rails(cluster, hardware)}
    attached = job.get("rails", sorted(usable))
    if attached and job.get("runAsUser", 0) != 0:
        found.append(Diagnostic(document.location("runAsUser"),
                                "RDMA needs IPC_LOCK, which only takes effect for root",
                                "run as root (leave out runAsUser), or set `rails: []`; otherwise memory "
                                "registration may fail", Severity.WARNING))
    for i, rail in enumerate(job.get("rails", [])):
        where = document.location("rails", i)
        if rail not in cluster_rails:
            found.append(Diagnostic(where, f"cluster '{cluster['name']}' has no rail '{rail}'",
                                    did_you_mean(rail, cluster_rails)))
        elif rail not in usable:
            found.append(Diagnostic(where, f"rail '{rail}' is not on pool '{pool['name']}': its hardware "
                                    f"'{hardware['name']}' has no NIC it runs over",
                                    "remove it" + (f"; the pool's rails are {', '.join(sorted(usable))}"
                                                   if usable else "; this pool has no rails")))
    return found


def _check_user(document: ProfileFile, job: dict[str, Any]) -> list[Diagnostic]:
    if job.get("runAsUser", 0) == 0 or "sshAuthMountPath" in job:
        return []
    return [Diagnostic(document.location("runAsUser"),
                       f"mpi-operator mounts the ssh keys at {mpi_operator.DEFAULT_SSH_AUTH_MOUNT_PATH}, which a "
                       "non-root user cannot use",
                       "set sshAuthMountPath to that user's ~/.ssh, and a workerCommand that runs sshd as that "
                       "user (e.g. `sshAuthMountPath: /home/mpiuser/.ssh`, `workerCommand: [/usr/sbin/sshd, -De, -f, "
                       "/home/mpiuser/.sshd_config]`)", Severity.WARNING)]


def _nodes_ssh_port(cluster: dict[str, Any]) -> int | None:
    """sshd's port on the nodes' network (the cluster's `network.sshPort`, else its provider's default), or None."""
    provider = provider_of(cluster.get("network", {})) if host_network(cluster) else None
    return cluster.get("network", {}).get("sshPort", provider.settings["sshPort"]) if provider else None


def _check_ssh_port(document: ProfileFile, job: dict[str, Any], cluster: dict[str, Any]) -> list[Diagnostic]:
    """sshd's port (`sshPort`): the cluster's `network.sshPort` on the nodes' network, which a job may only repeat;
    one that sshd run as a user other than root can bind; and, for Hydra, said where the job starts sshd itself, so
    its workers keep their readiness probe."""
    cluster_port = _nodes_ssh_port(cluster)
    if cluster_port is not None and job.get("sshPort", cluster_port) != cluster_port:
        return [Diagnostic(document.location("sshPort"), f"cluster '{cluster['name']}' uses host networking, where "
                           f"the workers' sshd listens on its `network.sshPort` ({cluster_port})",
                           f"remove sshPort, or set it to {cluster_port}")]
    user = job.get("runAsUser", 0)
    port = job.get("sshPort", cluster_port or mpi_operator.SSHD_PORT)
    if user != 0 and "sshAuthMountPath" in job and ("workerCommand" not in job or "sshPort" in job) and \
            port < kubernetes.FIRST_UNPRIVILEGED_PORT:  # without sshAuthMountPath, _check_user says what to do
        where = document.location("sshPort" if "sshPort" in job else "runAsUser")
        return [Diagnostic(where, f"sshd run as user {user} cannot bind port {port}, below "
                           f"{kubernetes.FIRST_UNPRIVILEGED_PORT} (the workers hold no capability), so the workers "
                           "get no readiness probe", f"run sshd as that user on a port of its own and say it, as "
                           f"mpi-operator's images do: `sshPort: {mpi_operator.IMAGES_SSHD_PORT}` and `workerCommand: "
                           "[/usr/sbin/sshd, -De, -f, /home/mpiuser/.sshd_config]`", Severity.WARNING)]
    implementation = job.get("mpiImplementation", mpi_operator.DEFAULT_MPI_IMPLEMENTATION)
    if "workerCommand" in job and "sshPort" not in job and implementation != mpi_operator.OPENMPI:
        return [Diagnostic(document.location("workerCommand"), "a workerCommand of the job's own gets no readiness "
                           "probe without sshPort: a worker is Ready once its container starts, and Hydra's mpirun "
                           f"({implementation}) may reach it before sshd listens",
                           "set sshPort to the port its sshd listens on (mpi-operator's images: "
                           f"{mpi_operator.IMAGES_SSHD_PORT})", Severity.WARNING)]
    return []



def _check_own_launcher_port(document: ProfileFile, job: dict[str, Any], cluster: dict[str, Any]) -> list[Diagnostic]:
    """sshd's port where it is not 22 reaches OpenMPI 4's and Hydra's mpirun only on the command line mpigen writes
    (mpi-operator sets their ssh variables on the launcher after the container's own): a `launcherCommand` of the
    job's own must say it, or the image's ssh_config (`Port`, as mpi-operator's images set). OpenMPI 5 reads it from
    PRTE_MCA_plm_ssh_args, which no controller sets."""
    cluster_port = _nodes_ssh_port(cluster)
    port = job.get("sshPort", cluster_port or mpi_operator.SSHD_PORT)
    implementation = job.get("mpiImplementation", mpi_operator.DEFAULT_MPI_IMPLEMENTATION)
    if "launcherCommand" not in job or port == mpi_operator.SSHD_PORT or (
            implementation == mpi_operator.OPENMPI and job.get("openMPIVersion", defaults.OPENMPI_VERSION) >= 5):
        return []
    said = "plm_rsh_args" if implementation == mpi_operator.OPENMPI else mpi_operator.HYDRA_SSH_ARGS_VARIABLE[implementation]
    if any(said in str(part) for part in job["launcherCommand"]):
        return []  # it gives ssh its options itself (mpigen's own line, imported, does)
    how = ("`--mca plm_rsh_args \"-p {port} {args}\"`" if implementation == mpi_operator.OPENMPI else
           f"`env {said}=\"-p {{port}} {{args}}\"` before mpirun")
    return [Diagnostic(document.location("launcherCommand"), f"sshd listens on port {port}, which mpigen gives only to "
                       "the mpirun it writes: this launcherCommand's ssh connects to port 22 unless the image's "
                       "ssh_config says another", "give it the port: " + how.format(port=port,
                       args=derive.OPERATOR_SSH_ARGS) + ", or an image whose ssh_config sets `Port` (mpi-operator's "
                       f"images: {mpi_operator.IMAGES_SSHD_PORT})", Severity.WARNING)]
