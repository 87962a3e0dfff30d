"""Checks no JSON Schema can express: references between profiles, capacity, names, overlaps."""

from __future__ import annotations

import difflib
import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from generator import derive, names
from generator.catalogue import builtin_names
from generator.diagnostics import Diagnostic, Severity, did_you_mean
from generator.load import Document, Unreadable, to_plain
from generator.schema_files import load_schema
from generator.validate.facts import check_core_facts, check_rail_facts
from generator.validate.topology import check_hardware_topology, check_job_topology
from generator.vocabulary import mpi_operator

# Volumes mpigen adds, and those mpi-operator adds to the launcher and workers (at the sshAuthMountPath and
# /etc/mpi): a second volume or mount there makes the pod invalid.
RESERVED_VOLUMES = ("dshm", "mpigen-hostfile", mpi_operator.SSH_AUTH_VOLUME, mpi_operator.CONFIG_VOLUME)
RESERVED_MOUNTS = ("/dev/shm", names.HOSTFILE_DIR, mpi_operator.CONFIG_MOUNT_PATH)
KINDS = ("Hardware", "Cluster", "Job")
GITOPS_TOOLS = {"argocd": "Argo CD", "flux": "Flux"}
GITOPS_OBJECTS = {"argocd": "Application", "flux": "HelmRelease"}
ARGOCD_ONLY = {"destination": "Flux syncs the cluster it runs in", "project": "Flux has no projects"}


@dataclass
class Index:
    """Schema-valid profiles by name, plus names of profiles that failed (to stay quiet about them)."""

    hardware: dict[str, Document] = field(default_factory=dict)
    clusters: dict[str, Document] = field(default_factory=dict)
    jobs: list[Document] = field(default_factory=list)
    broken: dict[str, set[str]] = field(default_factory=lambda: {kind: set() for kind in KINDS})

    def mark_broken(self, kind: object, name: object) -> None:
        """Remember a profile that is already reported, so references to it raise nothing more."""
        if not isinstance(name, str):
            return
        for known in KINDS if kind not in KINDS else (kind,):
            self.broken[known].add(name)



def check_references(valid: list[Document], invalid: list[Document],
                     unreadable: list[Unreadable] = ()) -> list[Diagnostic]:
    index = Index()
    found: list[Diagnostic] = []
    for document in invalid:
        kind = document.kind if isinstance(document.kind, str) else None
        index.mark_broken(kind, document.data.get("name"))
    for file in unreadable:
        index.mark_broken(*file.identity)
    firsts: dict[tuple[str, str], Document] = {}
    for document in valid:
        name = document.data["name"]
        scope = document.data.get("cluster", "") if document.kind == "Job" else ""
        key = (document.kind, f"{scope}/{name}")
        if key in firsts:
            where = "cluster '" + scope + "'" if scope else "the profiles"
            found.append(Diagnostic(document.location("name"),
                                    f"{document.kind.lower()} name '{name}' is used twice in {where}",
                                    f"the other is at {firsts[key].location('name')}; rename one"))
            continue
        firsts[key] = document
        if document.kind == "Hardware":
            index.hardware[name] = document
        elif document.kind == "Cluster":
            index.clusters[name] = document
        else:
            index.jobs.append(document)
    for document in index.hardware.values():
        found.extend(_check_hardware(document))
    for document in index.clusters.values():
        found.extend(_check_cluster(document, index))
    for document in index.jobs:
        found.extend(_check_job(document, index))
    found.extend(_check_argocd_application_names(index))
    return found


def _check_argocd_application_names(index: Index) -> list[Diagnostic]:
    """One Argo CD may sync many clusters, with every Application in one namespace: cluster `a`'s job `b-x`
    and cluster `a-b`'s job `x` would both be Application `a-b-x`, and two clusters would fight over it."""
    found: list[Diagnostic] = []
    claimed: dict[tuple[str, str], tuple[Document, str]] = {}

    def claim(document: Document, namespace: str, name: str, what: str) -> None:
        key = (namespace, name)
        if key in claimed:
            other, other_what = claimed[key]
            found.append(Diagnostic(document.location("name"), f"{what} and {other_what} are both Argo CD Application "
                                    f"'{name}' in namespace '{namespace}'",
                                    f"the other is at {other.location('name')}; rename one"))
        else:
            claimed[key] = (document, what)

    argocd = {name: doc for name, doc in index.clusters.items()
              if (doc.data.get("gitops") or {}).get("tool") == "argocd"}
    for name, document in argocd.items():
        namespace = derive.gitops_namespace(document.data["gitops"])
        claim(document, namespace, names.gitops_root_name(name), f"the root of cluster '{name}'")
        claim(document, namespace, names.gitops_infra_name(name), f"the infra chart of cluster '{name}'")
    for document in index.jobs:
        cluster = argocd.get(document.data["cluster"])
        if cluster is not None and document.data["name"] != "infra":  # reported by _check_gitops_job
            namespace = derive.gitops_namespace(cluster.data["gitops"])
            job, cluster_name = document.data["name"], document.data["cluster"]
            claim(document, namespace, names.gitops_job_name(cluster_name, job),
                  f"job '{job}' of cluster '{cluster_name}'")
    return found


def _duplicates(document: Document, items: list[Any], key: str, list_path: tuple[str, ...],
                what: str) -> Iterable[Diagnostic]:
    seen: dict[Any, int] = {}
    for i, item in enumerate(items):
        value = item[key] if key else item
        path = (*list_path, i, key) if key else (*list_path, i)
        if value in seen:
            first, here = document.location(*list_path, seen[value], *((key,) if key else ())), document.location(*path)
            # In a profile merged through `extends`, the first may stand in another file.
            at = f"line {first.line}" if first.path == here.path else f"{first.path}:{first.line}"
            yield Diagnostic(here, f"{what} '{value}' appears twice", f"the first is at {at}; remove or rename one")
        else:
            seen[value] = i


def _check_hardware(document: Document) -> list[Diagnostic]:
    data = to_plain(document.data)
    nics = data.get("nics", [])
    found = list(_duplicates(document, nics, "name", ("nics",), "NIC name"))
    # A NIC whose HCA is not known (yet) clashes with nothing: each gets a value equal to no other.
    found += _duplicates(document, [f"{n['hca']}:{n.get('port', 1)}" if "hca" in n else object() for n in nics], "",
                         ("nics",), "HCA and port")
    found += _check_label_keys(document, data.get("nodeLabels", {}), ("nodeLabels",))
    gpus = derive.gpu_count(data)
    for i, nic in enumerate(nics):
        for j, gpu in enumerate(nic.get("gpus", [])):
            if gpu >= gpus:
                found.append(Diagnostic(document.location("nics", i, "gpus", j),
                                        f"GPU index {gpu} does not exist: this hardware has {gpus} GPU(s)",
                                        f"use indexes 0 to {gpus - 1}" if gpus else "remove `gpus:`"))
    return found + check_hardware_topology(document, data)


def _check_label_keys(document: Document, labels: dict[str, str], path: tuple[str | int, ...]) -> list[Diagnostic]:
    found = []
    for key in labels:
        prefix, _, name = key.rpartition("/")
        if len(prefix) > 253 or len(name) > 63:
            found.append(Diagnostic(document.location(*path, key, at_key=True), f"label key '{key}' is too long",
                                    "Kubernetes allows a prefix of 253 and a name of 63 characters"))
    return found


def _check_release_name(document: Document, release: str, what: str) -> list[Diagnostic]:
    if len(release) <= names.HELM_RELEASE_MAX:
        return []
    room = names.HELM_RELEASE_MAX - (len(release) - len(document.data["name"]))
    return [Diagnostic(document.location("name"),
                       f"{what} '{release}' is {len(release)} characters; Helm release names may have "
                       f"{names.HELM_RELEASE_MAX}", f"shorten the name to at most {room} characters")]


def _resolve_hardware(document: Document, path: tuple[str | int, ...], name: str,
                      index: Index) -> tuple[dict[str, Any] | None, list[Diagnostic]]:
    if name in index.hardware:
        return to_plain(index.hardware[name].data), []
    if name in index.broken["Hardware"]:
        return None, []
    return None, [Diagnostic(document.location(*path), f"no hardware profile is named '{name}'",
                             did_you_mean(name, [*index.hardware, *builtin_names()]))]


def _check_cluster(document: Document, index: Index) -> list[Diagnostic]:
    data = to_plain(document.data)
    pools, rails = data["nodePools"], data.get("rails", [])
    found = list(_duplicates(document, pools, "name", ("nodePools",), "node pool"))
    found += _duplicates(document, data["namespaces"], "", ("namespaces",), "namespace")
    found += _duplicates(document, rails, "name", ("rails",), "rail")
    found += _duplicates(document, rails, "nic", ("rails",), "rail NIC")
    resources = [r.get("resourceName", names.default_rail_resource_name(r["name"])) for r in rails]
    found += _duplicates(document, resources, "", ("rails",), "rail resource name")
    found += _check_release_name(document, names.infra_chart_name(data["name"]), "infra chart release")
    for namespace in data.get("podSecurity", {}):
        if namespace not in data["namespaces"]:
            found.append(Diagnostic(document.location("podSecurity", namespace, at_key=True),
                                    f"`podSecurity` names namespace '{namespace}', which is not in `namespaces`",
                                    did_you_mean(namespace, data["namespaces"])))
    prefix = data.get("network", {}).get("resourcePrefix", "")
    if prefix == "kubernetes.io" or prefix.endswith(".kubernetes.io") or prefix.startswith("requests."):
        found.append(Diagnostic(document.location("network", "resourcePrefix"),
                                f"'{prefix}' cannot prefix an extended resource: Kubernetes reserves it",
                                "use the device plugin's own domain, e.g. nvidia.com"))
    for i, pool in enumerate(pools):
        found += _check_label_keys(document, pool.get("nodeLabels", {}), ("nodePools", i, "nodeLabels"))
    all_nics: set[str] = set()
    carriers: list[tuple[dict[str, Any], dict[str, Any]]] = []
    resolvable = True
    for i, pool in enumerate(pools):
        hardware, problems = _resolve_hardware(document, ("nodePools", i, "hardware"), pool["hardware"], index)
        found += problems
        if hardware is None:
            resolvable = False
        else:
            all_nics.update(derive.nic_names(hardware))
            carriers.append((pool, hardware))
    if resolvable:
        for i, rail in enumerate(rails):
            if rail["nic"] not in all_nics:
                found.append(Diagnostic(document.location("rails", i, "nic"),
                                        f"rail '{rail['name']}' uses NIC '{rail['nic']}', which no node "
                                        "pool's hardware has", did_you_mean(rail["nic"], all_nics) if all_nics else
                                        "the hardware of this cluster's pools has no NICs at all: add it to `nics` "
                                        "of the hardware profile, or remove the rail"))
                continue
            found += _check_rail_carriers(document, i, rail, carriers)
    found += _check_ipam(document, rails, carriers if resolvable else [])
    found += _check_provider(document, data, carriers if resolvable else [])
    found += check_rail_facts(document, data, carriers if resolvable else [], index.hardware)
    found += _check_gitops(document, data.get("gitops"))
    return found


# Network settings that only one provider reads, and who reads them.
PROVIDER_ONLY = {"operatorNamespace": ("sriov-network-operator",), "numVfs": ("sriov-network-operator",),
                 "sshPort": ("host-network",), "devicePluginNamespace": ("sriov-device-plugin", "rdma-shared",
                                                                         "host-network")}


def _check_provider(document: Document, data: dict[str, Any],
                    carriers: list[tuple[dict[str, Any], dict[str, Any]]]) -> list[Diagnostic]:
    """What the cluster's network provider needs of its rails, and settings it would ignore."""
    found: list[Diagnostic] = []
    network = data.get("network", {})
    provider = network.get("provider", "sriov-device-plugin")
    rails = data.get("rails", [])
    for key, readers in PROVIDER_ONLY.items():
        if key in network and provider not in readers:
            found.append(Diagnostic(document.location("network", key, at_key=True),
                                    f"`network.{key}` has no effect under provider '{provider}'",
                                    f"remove it (only {' and '.join(readers)} read it)", Severity.WARNING))
    if provider == "tcp":
        if rails:
            found.append(Diagnostic(document.location("rails", at_key=True),
                                    "provider 'tcp' attaches no RDMA rails: MPI and NCCL use the cluster network",
                                    "remove `rails`, or choose an RDMA provider (sriov-device-plugin, "
                                    "sriov-network-operator, rdma-shared, host-network)"))
        return found
    for i, rail in enumerate(rails):
        if provider == "host-network":
            if "ipam" in rail:
                found.append(Diagnostic(document.location("rails", i, "ipam", at_key=True),
                                        f"rail '{rail['name']}': `ipam` has no effect under host-network (pods use "
                                        "the nodes' own addresses)", "remove it", Severity.WARNING))
        elif "ipam" not in rail:
            found.append(Diagnostic(document.location("rails", i),
                                    f"rail '{rail['name']}' has no `ipam`: provider '{provider}' attaches it to "
                                    "pods through Multus, and each attachment needs an address",
                                    "add `ipam: {range: <IPv4 CIDR of the rail>}`"))
        if provider in ("rdma-shared", "host-network") and "hostInterface" not in rail:
            for pool, hardware in carriers:
                nic = next((n for n in hardware.get("nics", []) if n["name"] == rail["nic"]), None)
                if nic is not None and not nic.get("pfName"):
                    found.append(Diagnostic(document.location("rails", i),
                                            f"rail '{rail['name']}': provider '{provider}' needs the node's interface "
                                            f"of NIC '{rail['nic']}', and hardware '{hardware['name']}' (pool "
                                            f"'{pool['name']}') does not name its pfName",
                                            "set `hostInterface` on the rail, or pfName on the NIC"))
                    break
            names_seen: dict[str, str] = {}
            for pool, hardware in carriers:
                nic = next((n for n in hardware.get("nics", []) if n["name"] == rail["nic"]), None)
                if nic is not None and nic.get("pfName"):
                    names_seen.setdefault(nic["pfName"], pool["name"])
            if provider == "rdma-shared" and len(names_seen) > 1:
                # One NAD per rail and namespace names one `master` interface for every node.
                shown = ", ".join(f"{name} on pool '{pool}'" for name, pool in names_seen.items())
                found.append(Diagnostic(document.location("rails", i),
                                        f"rail '{rail['name']}': provider 'rdma-shared' attaches it through one "
                                        f"NetworkAttachmentDefinition over one node interface, but NIC '{rail['nic']}' "
                                        f"is {shown}",
                                        "set `hostInterface` on the rail to a name every pool's nodes have (e.g. a "
                                        "udev-renamed interface), or give each pool its own rail"))
    return found


def _check_gitops(document: Document, gitops: dict[str, Any] | None) -> list[Diagnostic]:
    if gitops is None or gitops["tool"] == "argocd":
        return []
    return [Diagnostic(document.location("gitops", key, at_key=True), f"`gitops.{key}` is for Argo CD only; {why}",
                       "remove it") for key, why in ARGOCD_ONLY.items() if key in gitops]


def _check_rail_carriers(document: Document, i: int, rail: dict[str, Any],
                         carriers: list[tuple[dict[str, Any], dict[str, Any]]]) -> list[Diagnostic]:
    """One rail is one network and one device-plugin resource: its NIC must be the same kind of link
    on every pool that carries it, or the NetworkAttachmentDefinition is wrong for some of them."""
    link_types: dict[str, str] = {}
    for pool, hardware in carriers:
        for nic in hardware.get("nics", []):
            if nic["name"] == rail["nic"] and "linkType" in nic:  # an unknown one: check_rail_facts
                link_types.setdefault(nic["linkType"], pool["name"])
    if len(link_types) < 2:
        return []
    seen = ", ".join(f"{link} on pool '{pool}'" for link, pool in sorted(link_types.items()))
    return [Diagnostic(document.location("rails", i, "nic"),
                       f"rail '{rail['name']}' runs over NIC '{rail['nic']}', which is {seen}",
                       "give InfiniBand and Ethernet NICs different names and a rail each")]


def _check_ipam(document: Document, rails: list[dict[str, Any]],
                carriers: list[tuple[dict[str, Any], dict[str, Any]]]) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    networks: list[tuple[int, ipaddress.IPv4Network]] = []
    for i, rail in enumerate(rails):
        if "ipam" not in rail:
            continue  # _check_provider says whether the provider needs it
        text = rail["ipam"]["range"]
        try:
            network = ipaddress.ip_network(text, strict=False)
        except ValueError:
            found.append(Diagnostic(document.location("rails", i, "ipam", "range"),
                                    f"'{text}' is not an IPv4 CIDR", "write it like 192.168.100.0/24"))
            continue
        if str(network) != text:
            found.append(Diagnostic(document.location("rails", i, "ipam", "range"),
                                    f"'{text}' has host bits set", f"did you mean '{network}'?"))
        for j, other in networks:
            if network.overlaps(other):
                found.append(Diagnostic(document.location("rails", i, "ipam", "range"),
                                        f"range {network} of rail '{rail['name']}' overlaps range {other} "
                                        f"of rail '{rails[j]['name']}'",
                                        "give every rail its own subnet"))
        networks.append((i, network))
        for k, excluded in enumerate(rail["ipam"].get("exclude", [])):
            where = document.location("rails", i, "ipam", "exclude", k)
            try:
                sub = ipaddress.ip_network(excluded, strict=False)
            except ValueError:
                found.append(Diagnostic(where, f"'{excluded}' is not an IPv4 CIDR", "write it like 192.168.100.0/28"))
                continue
            if not sub.subnet_of(network):
                found.append(Diagnostic(where, f"excluded {sub} is not inside the rail's range {network}",
                                        "exclude only addresses of this rail's range"))
        found += _check_ipam_size(document, i, rail, network, carriers)
    return found


def _check_ipam_size(document: Document, i: int, rail: dict[str, Any], network: ipaddress.IPv4Network,
                     carriers: list[tuple[dict[str, Any], dict[str, Any]]]) -> list[Diagnostic]:
    """Every node that carries the rail must be able to run at least one pod on it."""
    nodes = sum(int(pool["nodes"]) for pool, hardware in carriers if rail["nic"] in derive.nic_names(hardware))
    excluded = set()
    for text in rail["ipam"].get("exclude", []):
        try:
            sub = ipaddress.ip_network(text, strict=False)
        except ValueError:
            continue
        if sub.subnet_of(network):
            excluded.add(sub)
    usable = network.num_addresses - (2 if network.prefixlen < 31 else 0)
    usable -= sum(sub.num_addresses for sub in ipaddress.collapse_addresses(excluded))
    if usable >= nodes:
        return []
    return [Diagnostic(document.location("rails", i, "ipam", "range"),
                       f"range {network} of rail '{rail['name']}' leaves {max(usable, 0)} address(es) for the "
                       f"{nodes} node(s) that carry it", "give the rail a larger range, or exclude less")]


def _misspelt(job: dict[str, Any]) -> set[str]:
    """Keys of the job schema that unknown keys of `job` look like misspellings of: each is reported already
    (an unknown key with its did-you-mean), so that the key itself is missing is not a second error."""
    known = list(load_schema("Job")["properties"])
    return {match for key in job if key not in known
            for match in difflib.get_close_matches(key, known, n=1, cutoff=0.6)}


def _check_job(document: Document, index: Index) -> list[Diagnostic]:
    job = to_plain(document.data)
    found: list[Diagnostic] = []
    given = [k for k in ("workers", "totalGpus") if k in job]
    misspelt = _misspelt(job)
    if len(given) > 1 or (not given and not misspelt & {"workers", "totalGpus"}):
        found.append(Diagnostic(document.location(given[1]) if given else document.location(),
                                "give exactly one of `workers` and `totalGpus`" if given else
                                "missing the job's size",
                                "add `workers: N`, or `totalGpus: N` for GPU jobs" if not given else
                                "keep one; the other follows from gpusPerWorker"))
    found += _check_release_name(document, job["name"], "job chart release")
    commands = [k for k in ("program", "launcherCommand") if k in job]
    if len(commands) == 2:
        found.append(Diagnostic(document.location("launcherCommand"), "give exactly one of `program` and "
                                "`launcherCommand`", "keep `program` to have mpigen build the mpirun line, or "
                                "`launcherCommand` to write the whole launcher command yourself"))
    elif not commands and not misspelt & {"program", "launcherCommand"}:
        found.append(Diagnostic(document.location(), "missing what the job runs",
                                "add `program: [python, train.py]`; mpigen wraps it in mpirun"))
    for key in ("mpirunArgs",):
        if key in job and "launcherCommand" in job:
            found.append(Diagnostic(document.location(key), f"`{key}` has no effect with `launcherCommand`",
                                    "put the arguments into launcherCommand", Severity.WARNING))
    cluster_name = job["cluster"]
    if cluster_name not in index.clusters:
        if cluster_name not in index.broken["Cluster"]:
            found.append(Diagnostic(document.location("cluster"), f"no cluster profile is named '{cluster_name}'",
                                    did_you_mean(cluster_name, index.clusters)))
        return found
    cluster_doc = index.clusters[cluster_name]
    cluster = to_plain(cluster_doc.data)
    namespaces = cluster["namespaces"]
    namespace = job.get("namespace", namespaces[0])
    if namespace not in namespaces:
        found.append(Diagnostic(document.location("namespace"),
                                f"cluster '{cluster_name}' has no namespace '{namespace}'",
                                did_you_mean(namespace, namespaces) + f" (or add it to {cluster_doc.path})"))
    found += _check_gitops_job(document, job, cluster)
    pools = {p["name"]: p for p in cluster["nodePools"]}
    pool = pools.get(job["pool"])
    if pool is None:
        found.append(Diagnostic(document.location("pool"),
                                f"cluster '{cluster_name}' has no node pool '{job['pool']}'",
                                did_you_mean(job["pool"], pools)))
        return found
    hardware = to_plain(index.hardware[pool["hardware"]].data) if pool["hardware"] in index.hardware else None
    if hardware is None:
        return found
    host_network = cluster.get("network", {}).get("provider") == "host-network"
    unknown = check_core_facts(document, job, pool, hardware, index.hardware.get(pool["hardware"]))
    layout_problems = unknown or _check_layout(document, job, pool, hardware, host_network)
    found += layout_problems
    if not any(d.severity is Severity.ERROR for d in layout_problems):
        shape = derive.layout(job, hardware, pool["nodes"], one_per_node=host_network)
        found += check_job_topology(document, job, cluster, pool, hardware, shape)
    if host_network and job.get("mpiImplementation", mpi_operator.DEFAULT_MPI_IMPLEMENTATION) != "OpenMPI":
        found.append(Diagnostic(document.location("mpiImplementation"),
                                f"cluster '{cluster['name']}' uses host networking, where sshd listens on a port of its "
                                f"own; mpigen passes that port to OpenMPI's mpirun only",
                                "use OpenMPI, or another network provider"))
    found += _check_memory(document, job, pool, hardware)
    found += _check_rails(document, job, cluster, pool, hardware)
    found += _check_volumes(document, job)
    found += _check_user(document, job)
    return found


def _check_gitops_job(document: Document, job: dict[str, Any], cluster: dict[str, Any]) -> list[Diagnostic]:
    """Under GitOps a job's MPIJob is re-created from git whenever it is missing; and its Application or
    HelmRelease must not take the infra chart's name."""
    found: list[Diagnostic] = []
    gitops = cluster.get("gitops")
    ttl = job.get("runPolicy", {}).get("ttlSecondsAfterFinished")
    allowed = job.get("allowRerunAfterTtl", False)
    if gitops is not None:
        tool, kind = GITOPS_TOOLS[gitops["tool"]], GITOPS_OBJECTS[gitops["tool"]]
        if ttl is not None and not allowed:
            found.append(Diagnostic(
                document.location("runPolicy", "ttlSecondsAfterFinished"),
                f"runPolicy.ttlSecondsAfterFinished deletes the MPIJob {ttl} s after it finishes, and {tool}, which "
                f"syncs cluster '{cluster['name']}', re-creates it from git: the job runs again",
                "remove ttlSecondsAfterFinished and delete the job profile once the job is done (render prunes its "
                f"chart and {tool} deletes the MPIJob), or set `runPolicy.suspend: true` to keep it in git without "
                "running it; if running it again is intended, set `allowRerunAfterTtl: true`"))
        infra = names.infra_chart_name(cluster["name"])
        if job["name"] == "infra":
            found.append(Diagnostic(document.location("name"), f"job name 'infra' names its {kind} "
                                    f"'{names.gitops_job_name(cluster['name'], 'infra')}', the name of the infra chart's "
                                    f"{kind} on cluster '{cluster['name']}'", "rename the job"))
        elif job["name"] == infra:
            found.append(Diagnostic(document.location("name"), f"job name '{infra}' is the Helm release name of "
                                    f"the infra chart of cluster '{cluster['name']}'", "rename the job"))
    if allowed and (gitops is None or ttl is None):
        reason = (f"cluster '{cluster['name']}' has no `gitops` block" if gitops is None
                  else "the job has no runPolicy.ttlSecondsAfterFinished")
        found.append(Diagnostic(document.location("allowRerunAfterTtl"), f"`allowRerunAfterTtl` has no effect: {reason}",
                                "remove it", Severity.WARNING))
    return found


def _check_layout(document: Document, job: dict[str, Any], pool: dict[str, Any],
                  hardware: dict[str, Any], host_network: bool = False) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    gpus = derive.gpu_count(hardware)
    where_pool = f"pool '{pool['name']}' (hardware '{hardware['name']}')"
    if not gpus:
        for key in ("gpusPerWorker", "totalGpus"):
            if key in job:
                found.append(Diagnostic(document.location(key), f"`{key}` is set but {where_pool} has no GPUs",
                                        "remove it, or pick a GPU pool"))
    cpu = job.get("resources", {}).get("cpu")
    if cpu is not None and derive.quantity(cpu) == 0:
        found.append(Diagnostic(document.location("resources", "cpu"), "a worker asks for 0 CPUs",
                                "ask for at least 1m, or leave `cpu` out"))
        return found
    if cpu is not None and derive.quantity(cpu) > derive.logical_cpus(hardware):
        found.append(Diagnostic(document.location("resources", "cpu"),
                                f"a worker asks for {cpu} CPUs but a node of {where_pool} has "
                                f"{derive.logical_cpus(hardware)}", "ask for fewer CPUs per worker"))
        return found
    if gpus:
        per_worker = int(job.get("gpusPerWorker", gpus))
        if per_worker > gpus:
            found.append(Diagnostic(document.location("gpusPerWorker"),
                                    f"a worker asks for {per_worker} GPUs but a node of {where_pool} has {gpus}",
                                    f"use at most {gpus}, and more workers"))
            return found
        total = job.get("totalGpus")
        if total is not None and total % per_worker:
            lower, upper = total - total % per_worker, total + per_worker - total % per_worker
            found.append(Diagnostic(document.location("totalGpus"),
                                    f"totalGpus {total} is not a multiple of {per_worker} GPUs per worker",
                                    f"use {lower} or {upper}" if lower else f"use {upper}, or fewer GPUs per worker"))
            return found
    shape = derive.layout(job, hardware, int(pool["nodes"]), one_per_node=host_network)
    if shape.workers_per_node == 0:
        found.append(Diagnostic(document.location("resources", "cpu"), "a worker does not fit on one node",
                                "ask for less"))
    elif shape.worker_count > shape.capacity:
        size_key = "workers" if "workers" in job else "totalGpus"
        if host_network:
            message = (f"{shape.worker_count} workers need {shape.worker_count} nodes under host networking (one "
                       f"worker per node: each binds the sshd port) but {where_pool} has {shape.nodes}")
        elif shape.workers_per_node == 1:
            message = (f"{shape.worker_count} full-node workers need {shape.worker_count} nodes but "
                       f"{where_pool} has {shape.nodes}")
        else:
            message = (f"{shape.worker_count} workers need more than the {shape.nodes} nodes of {where_pool}: "
                       f"{shape.workers_per_node} fit on a node, {shape.capacity} in all")
        found.append(Diagnostic(document.location(size_key), message,
                                f"use at most {shape.capacity} workers, or a bigger pool"))
    hashed = job.get("naming", "content-hash") == "content-hash"
    problem = names.last_worker_name_problem(job["name"], shape.worker_count, hashed=hashed)
    if problem:
        last = names.worker_name(names.mpijob_name(job["name"], names.RUN_DIGEST_PLACEHOLDER if hashed else None),
                                 max(shape.worker_count - 1, 0))
        room = names.DNS1035_MAX - (len(last) - len(job["name"]))
        found.append(Diagnostic(document.location("name"), f"mpi-operator would reject this job: {problem}",
                                (f"shorten the job name to at most {room} characters" if len(last) >
                                 names.DNS1035_MAX else "shorten the job name")
                                + (f" (the MPIJob name adds {names.RUN_DIGEST_LENGTH + 1} characters of content "
                                   "hash; `naming: stable` drops them)" if hashed else "")))
    return found


def _check_memory(document: Document, job: dict[str, Any], pool: dict[str, Any],
                  hardware: dict[str, Any]) -> list[Diagnostic]:
    """Memory and the memory-backed /dev/shm must fit a node; shm counts against the memory limit."""
    found: list[Diagnostic] = []
    node = derive.quantity(f"{hardware['memoryGiB']}Gi")
    memory = job.get("resources", {}).get("memory")
    for path, text, what in ((("resources", "memory"), memory, "memory"), (("shmSize",), job.get("shmSize"), "/dev/shm")):
        if text is not None and derive.quantity(text) > node:
            found.append(Diagnostic(document.location(*path),
                                    f"a worker's {what} of {text} is more than a node of pool '{pool['name']}' "
                                    f"has ({hardware['memoryGiB']}Gi)", f"ask for less {what}"))
    shm = job.get("shmSize")
    if not found and memory is not None and shm is not None and derive.quantity(shm) >= derive.quantity(memory):
        found.append(Diagnostic(document.location("shmSize"),
                                f"/dev/shm of {shm} is not smaller than the worker's memory limit of {memory}; "
                                "files in it count against that limit", "raise resources.memory or lower shmSize",
                                Severity.WARNING))
    return found


def _check_rails(document: Document, job: dict[str, Any], cluster: dict[str, Any], pool: dict[str, Any],
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


def _check_user(document: Document, job: dict[str, Any]) -> list[Diagnostic]:
    if job.get("runAsUser", 0) == 0 or "sshAuthMountPath" in job:
        return []
    return [Diagnostic(document.location("runAsUser"),
                       f"mpi-operator mounts the ssh keys at {mpi_operator.DEFAULT_SSH_AUTH_MOUNT_PATH}, which a "
                       "non-root user cannot use",
                       "set sshAuthMountPath to that user's ~/.ssh, and a workerCommand that runs sshd as that "
                       "user (see profiles/jobs/pi.yaml)", Severity.WARNING)]


def _check_volumes(document: Document, job: dict[str, Any]) -> list[Diagnostic]:
    volumes = job.get("volumes", [])
    found = list(_duplicates(document, volumes, "name", ("volumes",), "volume name"))
    found += _duplicates(document, volumes, "mountPath", ("volumes",), "mount path")
    reserved = (*RESERVED_MOUNTS, job.get("sshAuthMountPath", mpi_operator.DEFAULT_SSH_AUTH_MOUNT_PATH).rstrip("/"))
    for i, volume in enumerate(volumes):
        sources = [key for key in ("claim", "hostPath") if key in volume]
        if len(sources) != 1:
            found.append(Diagnostic(document.location("volumes", i, *sources[1:]),
                                    f"volume '{volume['name']}' gives both `claim` and `hostPath`" if sources else
                                    f"volume '{volume['name']}' mounts nothing",
                                    "keep one: `claim` (preferred) or `hostPath`" if sources else
                                    "give one: `claim:` a PersistentVolumeClaim (preferred), or `hostPath:` a folder "
                                    "of the node"))
        if volume["name"] in RESERVED_VOLUMES:
            found.append(Diagnostic(document.location("volumes", i, "name"),
                                    f"volume name '{volume['name']}' is used by mpigen or mpi-operator",
                                    "pick another name"))
        path = PurePosixPath(volume["mountPath"])
        clash = next((r for r in reserved if path == PurePosixPath(r) or PurePosixPath(r).is_relative_to(path)
                      or path.is_relative_to(r)), None)
        if clash:
            found.append(Diagnostic(document.location("volumes", i, "mountPath"),
                                    f"mount path '{volume['mountPath']}' collides with {clash}, which mpigen or "
                                    "mpi-operator mounts", "mount the claim somewhere else, e.g. /data"))
    return found


