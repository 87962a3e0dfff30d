"""`mpigen init`: a starting fleet for one built-in hardware profile, which validates and renders as it is, and
whose every fact mpigen cannot know is a guess marked in a comment with what to read, on a node or in the
cluster, to replace it.

`starting_fleet` gives the files as text by path (reading only the built-in profiles), `starting_repository` those
and the repository config beside them; `write_new` puts them on
disk all or none, and never replaces a file nor writes through a link.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mpigen.load import to_plain
from mpigen.load.catalogue import builtin_names, expand_hardware, load_builtin
from mpigen.model import GitOpsTool, NetworkProvider
from mpigen.model.defaults import GITOPS
from mpigen.support.project import page_url
from mpigen.support.schema_files import CONFIG_SCHEMA_FILE, KIND_SCHEMA_FILES, exported_schemas, repository_schemas
from mpigen.vocabulary.node_facts import READ_ON_NODE
from mpigen.vocabulary.repository import CONFIG_FILE, DEFAULT_PROFILES, EDITOR_SCHEMAS, STARTING_CLUSTER, STARTING_POOL
from mpigen.write.target import AlreadyExists, create_files

GITOPS_TOOLS = (*(tool.value for tool in GitOpsTool), "none")
SCHEMA_LINE = "# yaml-language-server: $schema={}"
_KIND_LINE = re.compile(r"^kind: (\w+)$", re.MULTILINE)

# The Mellanox / NVIDIA PCI device ids (vendor 15b3) of each built-in's NICs and of their SR-IOV virtual
# functions, for the facts a built-in leaves out: ConnectX-4 1013/1014, ConnectX-5 1017/1018, ConnectX-6
# 101b/101c, ConnectX-7 1021/101e (the mlx5 "ConnectX family" VF).
_PCI_IDS = {"dgx-2": ("1017", "1018"), "dgx-a100": ("101b", "101c"), "dgx-h100": ("1021", "101e"),
            "gb200-nvl72": ("1021", "101e")}
_PUBLISHED_PORTS = {
    "dgx-h100": (("mlx5_0", "ibp24s0"), ("mlx5_3", "ibp64s0"), ("mlx5_4", "ibp79s0"), ("mlx5_5", "ibp94s0"),
                 ("mlx5_6", "ibp154s0"), ("mlx5_9", "ibp192s0"), ("mlx5_10", "ibp206s0"), ("mlx5_11", "ibp220s0")),
}
"""The default RDMA device and interface of each compute NIC, in the order of the GPU beside it, where NVIDIA
publishes them (DGX H100 User Guide, table "Network Modules"); elsewhere mpigen guesses mlx5_N and ibN."""
_PUBLISHED_HCAS = {"gb200-nvl72": ("mlx5_0", "mlx5_1", "mlx5_4", "mlx5_5")}
"""The default RDMA device of each compute NIC where NVIDIA publishes only those, not the interface names nor the
GPU beside each (GB200: the Mission Control north-south network guide; the BlueField-3 ports take the others)."""


class ScaffoldError(Exception):
    """The fleet cannot be written as asked; the message says why and what to do."""


@dataclass(frozen=True)
class HardwareFacts:
    """What the starting fleet takes from a built-in hardware profile: its NICs as the built-in has them."""

    name: str
    description: str
    gpus: int
    nics: tuple[dict[str, Any], ...]
    multi_node_nvlink: bool = False
    """NVLink reaches other nodes (GB200 NVL72): the starting cluster allocates through DRA, so jobs join a
    ComputeDomain."""


def hardware_facts(name: str) -> HardwareFacts:
    if name not in builtin_names():
        raise ScaffoldError(f"no built-in hardware '{name}'; choose one of: {', '.join(builtin_names())}")
    document, _ = load_builtin(name)
    assert document is not None, f"the built-in hardware {name} does not load"
    # As a node pool sees it: a built-in that extends another (dgx-1-32gb) has its base's GPUs and NICs too.
    (expanded,) = [d for d in expand_hardware([document]).documents if d.data.get("name") == name]
    data = to_plain(expanded.data)
    gpu = data.get("gpu") or {}
    return HardwareFacts(name=name, description=str(data.get("description", name)), gpus=int(gpu.get("count", 0)),
                         nics=tuple(data.get("nics") or ()),
                         multi_node_nvlink=int(gpu.get("nvlinkDomainGpus", 0)) > int(gpu.get("count", 0)))


def starting_fleet(hardware: str, gitops: str, cluster: str = STARTING_CLUSTER) -> dict[str, str]:
    """The files of a starting fleet by their path under the profiles folder, the editors' schemas beside them."""
    return dict(sorted(with_editor_schemas(_profiles(hardware, gitops, cluster)).items()))


def _profiles(hardware: str, gitops: str, cluster: str = STARTING_CLUSTER) -> dict[str, str]:
    if gitops not in GITOPS_TOOLS:
        raise ScaffoldError(f"--gitops {gitops}: choose one of {', '.join(GITOPS_TOOLS)}")
    facts = hardware_facts(hardware)
    rdma = bool(facts.gpus and facts.nics)
    nodes = f"my-{hardware}" if rdma else hardware
    files = {f"clusters/{cluster}.yaml": _cluster(facts, nodes, rdma, gitops, cluster),
             "jobs/hello.yaml": _job(facts, cluster)}
    if rdma:
        files[f"hardware/{nodes}.yaml"] = _hardware(facts, nodes)
    return files


def with_editor_schemas(files: dict[str, str]) -> dict[str, str]:
    """The profiles among `files` (by path) each with a first line pointing an editor at its kind's schema, by a
    path relative to it, and the schemas themselves under EDITOR_SCHEMAS: the fleet is checked as it is typed,
    offline, whichever way mpigen was installed."""
    out: dict[str, str] = {}
    for path, text in files.items():
        kind = _KIND_LINE.search(text)
        if kind is not None and kind[1] in KIND_SCHEMA_FILES:
            schema = posixpath.relpath(f"{EDITOR_SCHEMAS}/{KIND_SCHEMA_FILES[kind[1]]}", posixpath.dirname(path) or ".")
            text = SCHEMA_LINE.format(schema) + "\n" + text
        out[path] = text
    return out | {f"{EDITOR_SCHEMAS}/{name}": text for name, text in exported_schemas().items()}


def starting_repository(hardware: str, gitops: str) -> dict[str, str]:
    """The files of a new repository by their path in it: the starting fleet under `profiles/`, the editors' schemas
    in `.mpigen/schemas/` (the config's too), and the repository config that lets every command run there with no
    paths (the charts go to `charts/`, the `gitops.path` the starting cluster's GitOps objects name by default)."""
    config = "\n".join([
        SCHEMA_LINE.format(f"{EDITOR_SCHEMAS}/{CONFIG_SCHEMA_FILE}"),
        "# mpigen's defaults in this repository: `mpigen validate`, `render`, `plan`, `check` and `diff` need no paths",
        "# here or in any folder below. Paths are relative to this file; an option on the command line wins.",
        f"profiles: {DEFAULT_PROFILES}",
        f"charts: {GITOPS['path']}  # where `mpigen render` writes: the clusters' gitops.path (from the git root) too",
    ]) + "\n"
    profiles = {f"{DEFAULT_PROFILES}/{path}": text for path, text in _profiles(hardware, gitops).items()}
    files = with_editor_schemas(profiles) | {f"{EDITOR_SCHEMAS}/{name}": text for name, text in repository_schemas().items()}
    return dict(sorted({CONFIG_FILE: config, **files}.items()))


def _hardware(facts: HardwareFacts, name: str) -> str:
    device, vf_device = _PCI_IDS.get(facts.name, ("", ""))
    guesses = {"vendorId": "15b3", "deviceId": device, "vfDeviceId": vf_device, "linkType": "InfiniBand"}
    lines = [
        f"# Your {facts.name} nodes: the built-in's published facts, plus what only a node can tell. Each value",
        "# below is a guess; read the real one where its comment says, on one node of the pool (they must agree).",
        "apiVersion: mpigen/v1alpha1",
        "kind: Hardware",
        f"name: {name}",
        f"extends: {facts.name}",
    ]
    if facts.multi_node_nvlink:
        lines += ["gpu:",
                  "  nicDistance: NODE  # a guess: GB200's GPUs hang off the Grace CPUs (NVLink-C2C), the NICs off "
                  "their PCIe; check with `nvidia-smi topo -m`"]
    lines += [
        "nics:  # merged into the built-in's by name",
    ]
    published = _PUBLISHED_PORTS.get(facts.name)
    hcas = _PUBLISHED_HCAS.get(facts.name)
    for index, nic in enumerate(facts.nics):
        lines.append(f"  - name: {nic['name']}")
        hca, pf_name = published[index] if published else (hcas[index] if hcas else f"mlx5_{index}", f"ib{index}")
        wanted = {"hca": hca, "pfName": pf_name,
                  **{key: value for key, value in guesses.items() if value and key not in nic}}
        for key, value in wanted.items():
            shown = f'"{value}"' if key.endswith("Id") else value
            said = ("hca", "pfName") if published else ("hca",) if hcas else ()
            where = "NVIDIA's default; check with " if key in said else ""
            lines.append(f"    {key}: {shown}  # {where}{READ_ON_NODE[key]}")
        if "gpus" in nic:
            continue
        if published:
            lines.append(f"    gpus: [{index}]  # NVIDIA's table: GPU {index} sits beside this NIC; "
                         "check with `nvidia-smi topo -m` (PIX)")
        elif facts.multi_node_nvlink:
            continue  # its GPUs sit beside no NIC: `gpu.nicDistance` above says so
        else:
            lines.append("    # gpus: [0, 1]  # `nvidia-smi topo -m`: the GPUs at PIX from this NIC; ranks bind to them")
    return "\n".join(lines) + "\n"


def _cluster(facts: HardwareFacts, nodes: str, rdma: bool, gitops: str, cluster: str) -> str:
    lines = [
        f"# A starting cluster of {facts.name} nodes: {facts.description}.",
        "# Every value below is a guess to check: each comment says what to read, on a node or with kubectl, to",
        "# replace it. `mpigen validate` checks the form (file:line:col), not these facts: only the nodes know them.",
        "apiVersion: mpigen/v1alpha1",
        "kind: Cluster",
        f"name: {cluster}",
        'kubernetesVersion: "1.31"  # `kubectl version`: the Server Version, major.minor',
        "namespaces:  # where the jobs run; mpigen's infra chart creates and labels them",
        "  - training",
        "network:",
    ]
    dra = rdma and facts.multi_node_nvlink
    if dra:
        lines[lines.index('kubernetesVersion: "1.31"  # `kubectl version`: the Server Version, major.minor')] = (
            'kubernetesVersion: "1.34"  # `kubectl version`: the Server Version, major.minor (DRA needs 1.34)')
        lines += ["  # NVIDIA's GPU DRA driver and DRANET (`kubectl get deviceclasses`): GPUs and NICs claimed together; "
                  f"{page_url('docs/dra.md')}",
                  f"  provider: {NetworkProvider.DRANET.value}",
                  "dra: {}  # multi-node NVLink: each job joins a ComputeDomain, or NCCL cannot use NVLink between nodes"]
    elif rdma:
        lines += ["  # `kubectl get node <node> -o jsonpath='{.status.allocatable}'` lists one RDMA resource per rail:",
                  f"  # nvidia.com/... (SR-IOV VFs: {NetworkProvider.SRIOV_DEVICE_PLUGIN.value}) or rdma/... "
                  f"({NetworkProvider.RDMA_SHARED.value}); {page_url('docs/network-providers.md')}",
                  f"  provider: {NetworkProvider.SRIOV_DEVICE_PLUGIN.value}"]
    else:
        lines.append(f"  provider: {NetworkProvider.TCP.value}  # no RDMA NICs in this hardware: MPI over the pod "
                     "network")
    lines += [
        "nodePools:",
        f"  - name: {STARTING_POOL}",
        f"    hardware: {nodes}",
        "    nodes: 2  # `kubectl get nodes -l <the label these nodes share>`: how many there are",
    ]
    if rdma:
        lines.append("rails:  # one per RDMA NIC the jobs use, each its own fabric")
        for index, nic in enumerate(facts.nics):
            lines += [f"  - name: rail{index}",
                      f"    nic: {nic['name']}"]
            if not dra:  # DRANET moves the NIC into the pod with its own address
                lines += ["    ipam:",
                          f"      range: 192.168.{100 + index}.0/24  # a subnet of this rail's fabric no one else "
                          "uses: ask who runs it"]
    if gitops != "none":
        lines += ["gitops:",
                  f"  tool: {gitops}",
                  "  repoURL: https://git.example.com/platform/fleet.git  # where the charts are committed "
                  "(`git remote get-url origin`)"]
        if gitops == GitOpsTool.FLUX.value:
            lines.append("  # bootstrapped by `flux bootstrap`? Replace repoURL with `sourceRef: {name: flux-system}` "
                         "to read its GitRepository and credentials")
    return "\n".join(lines) + "\n"


def _job(facts: HardwareFacts, cluster: str) -> str:
    lines = [
        "# A starting MPI job: replace the image and program with your training's; `mpigen validate` checks it.",
        "apiVersion: mpigen/v1alpha1",
        "kind: Job",
        "name: hello",
        f"cluster: {cluster}",
        f"pool: {STARTING_POOL}",
        "namespace: training",
        "image: mpioperator/mpi-pi:openmpi  # your training image, with sshd and the MPI your program is built with",
        "workers: 2",
    ]
    if facts.gpus:
        lines.append(f"gpusPerWorker: {facts.gpus}  # one rank per GPU: all {facts.gpus} GPUs of a node per worker")
    else:
        lines += ["slotsPerWorker: 1", "resources:", '  cpu: "1"', "  memory: 1Gi"]
    lines.append("program: [/home/mpiuser/pi]  # what mpirun starts in every rank")
    return "\n".join(lines) + "\n"


def write_new(root: Path, files: dict[str, str]) -> list[Path]:
    """Write each file under `root`, all or none, never over anything that exists and never through a link
    (generator/write/target.py, the rule of every file mpigen writes). WriteError when the folder refuses."""
    try:
        return create_files(root, {relative: text.encode("utf-8") for relative, text in files.items()})
    except AlreadyExists as exc:
        raise ScaffoldError(f"{exc}; mpigen init writes only new files: choose another folder") from None
