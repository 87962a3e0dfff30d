"""Every built-in hardware profile x network provider x MPI implementation that makes sense compiles, passes
`mpigen check --strict` with real Helm 4, renders with real Helm 3 and Helm 4 to exactly the objects mpigen built, and
its custom resources validate against the upstream CRDs.

One profiles folder holds the whole matrix: a site Hardware profile extending each built-in, one cluster per
provider x GPU hardware (a homogeneous GPU cluster, as sites build them; the DGX-1 clusters of the RDMA providers
also carry a pool of cpu-node, and `tcp-cpu` is a CPU-only cluster), and one job per combination. It is rendered
once (by the real command line), checked once (in this process: Helm 4's renders are the check's own) and rendered
by Helm 3 once, so the matrix costs a few seconds, not one render+check per combination.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import (
    CustomResourceSchemas,
    is_run_of,
    profile_verdict_disagreements,
    require_helm,
    run_mpigen,
    schema_verdict_disagreements,
)
from test_charts_helm import identity, template

from mpigen.check import CheckOptions, run_check
from mpigen.commands.pipeline import CompileResult, compile_profiles
from mpigen.load import load_paths
from mpigen.readback.findings import RenderedObject

API = "apiVersion: mpigen/v1alpha1\n"

# --- the matrix, as data ---------------------------------------------------------------------------

PROVIDERS = {"sriov-device-plugin": "sdp", "sriov-network-operator": "sno", "rdma-shared": "rs",
             "host-network": "hn", "tcp": "tcp"}
MULTUS = ("sriov-device-plugin", "sriov-network-operator", "rdma-shared")
RDMA = (*MULTUS, "host-network")
GPU_HARDWARE = {"dgx-1": "dgx1", "dgx-1-32gb": "dgx1-32", "dgx-2": "dgx2", "dgx-a100": "a100", "dgx-h100": "h100",
                "gb200-nvl72": "gb200"}
HARDWARE = (*GPU_HARDWARE, "cpu-node")
GPUS = {"dgx-1": 8, "dgx-1-32gb": 8, "dgx-2": 16, "dgx-a100": 8, "dgx-h100": 8, "gb200-nvl72": 4, "cpu-node": 0}
MPI = {"OpenMPI": "ompi", "Intel": "intel", "MPICH": "mpich"}

# (provider, MPI implementation) pairs that do not make sense, with the reason (mpigen refuses them: see
# test_host_network_refuses_intel_and_mpich). Every hardware x provider pair makes sense: tcp runs anything over the
# cluster network, the RDMA providers get the NIC facts they read from the site profiles below, and cpu-node jobs
# attach no rails whatever the provider.
EXCLUDED = {
    ("host-network", "Intel"): "host-network: sshd listens on network.sshPort and mpigen passes it to OpenMPI's mpirun only",
    ("host-network", "MPICH"): "host-network: sshd listens on network.sshPort and mpigen passes it to OpenMPI's mpirun only",
}
# Hardware run with OpenMPI only: what differs between MPI implementations is the launcher, which the other hardware
# covers; each such hardware still meets every provider, and each combination costs a render and a Helm check.
OPENMPI_ONLY = ("gb200-nvl72",)
COMBINATIONS = [(hw, provider, mpi) for hw in HARDWARE for provider in PROVIDERS for mpi in MPI
                if (provider, mpi) not in EXCLUDED and (mpi == "OpenMPI" or hw not in OPENMPI_ONLY)]
assert len(COMBINATIONS) == ((len(HARDWARE) - len(OPENMPI_ONLY)) * (len(PROVIDERS) * len(MPI) - len(EXCLUDED))
                             + len(OPENMPI_ONLY) * len(PROVIDERS)) == 83

# Each provider's clusters on another Kubernetes version: `check` validates built-in kinds for the cluster's version.
KUBERNETES = {"sriov-device-plugin": "1.31", "sriov-network-operator": "1.32", "rdma-shared": "1.33",
              "host-network": "1.30", "tcp": "1.29"}
GITOPS = {"sriov-device-plugin": "argocd", "sriov-network-operator": "flux", "rdma-shared": "argocd",
          "host-network": "flux", "tcp": "argocd"}
GPU_NAMESPACE, CPU_NAMESPACE = "train", "hpc"
NODES = 4
WORKERS = 2

# What a site writes for its nodes: each built-in extended with the facts it leaves out. The values are examples,
# as one site's nodes show them (`ibdev2netdev`, `lspci -nn`, `nvidia-smi topo -m`, `lscpu`); read your own.
SITE_HARDWARE = {
    "dgx-1": """\
kind: Hardware
name: site-dgx-1
extends: dgx-1
# Example values, as one site's DGX-1 nodes show them (ibdev2netdev, nvidia-smi topo -m, lscpu): read your own.
cpu: {threadsPerCore: 2}
nics:
  - {name: ib0, hca: mlx5_0, pfName: ib0, gpus: [0, 1]}
  - {name: ib1, hca: mlx5_1, pfName: ib1, gpus: [2, 3]}
  - {name: ib2, hca: mlx5_2, pfName: ib2, gpus: [4, 5]}
  - {name: ib3, hca: mlx5_3, pfName: ib3, gpus: [6, 7]}
nodeLabels: {nvidia.com/gpu.product: Tesla-V100-SXM2-16GB}
""",
    "dgx-1-32gb": """\
kind: Hardware
name: site-dgx-1-32gb
extends: dgx-1-32gb
# Example values, as one site's DGX-1 (32 GB) nodes show them (ibdev2netdev, nvidia-smi topo -m): read your own.
gpu: {model: Tesla-V100-SXM2-32GB}
nics:
  - {name: ib0, hca: mlx5_0, pfName: ib0}
  - {name: ib1, hca: mlx5_1, pfName: ib1}
  - {name: ib2, hca: mlx5_2, pfName: ib2}
  - {name: ib3, hca: mlx5_3, pfName: ib3}
nodeLabels: {nvidia.com/gpu.product: Tesla-V100-SXM2-32GB}
""",
    # This site's DGX-2s run their 100 GbE option (RoCE): the Ethernet paths of every provider are covered too.
    "dgx-2": """\
kind: Hardware
name: site-dgx-2
extends: dgx-2
# Example values, as one site's DGX-2 nodes (ConnectX-5, 100 GbE) show them (lspci -nn, ibdev2netdev,
# nvidia-smi topo -m, lscpu): read your own.
gpu: {model: Tesla-V100-SXM3-32GB}
cpu: {coresPerSocket: 24, threadsPerCore: 2}
nics:
  - {name: nic0, linkType: Ethernet, vendorId: "15b3", deviceId: "1017", vfDeviceId: "1018", hca: mlx5_0,
     pfName: enp53s0, numaNode: 0, gpus: [0, 1]}
  - {name: nic1, linkType: Ethernet, vendorId: "15b3", deviceId: "1017", vfDeviceId: "1018", hca: mlx5_1,
     pfName: enp58s0, numaNode: 0, gpus: [2, 3]}
  - {name: nic2, linkType: Ethernet, vendorId: "15b3", deviceId: "1017", vfDeviceId: "1018", hca: mlx5_2,
     pfName: enp93s0, numaNode: 0, gpus: [4, 5]}
  - {name: nic3, linkType: Ethernet, vendorId: "15b3", deviceId: "1017", vfDeviceId: "1018", hca: mlx5_3,
     pfName: enp98s0, numaNode: 0, gpus: [6, 7]}
  - {name: nic4, linkType: Ethernet, vendorId: "15b3", deviceId: "1017", vfDeviceId: "1018", hca: mlx5_4,
     pfName: enp181s0, numaNode: 1, gpus: [8, 9]}
  - {name: nic5, linkType: Ethernet, vendorId: "15b3", deviceId: "1017", vfDeviceId: "1018", hca: mlx5_5,
     pfName: enp186s0, numaNode: 1, gpus: [10, 11]}
  - {name: nic6, linkType: Ethernet, vendorId: "15b3", deviceId: "1017", vfDeviceId: "1018", hca: mlx5_6,
     pfName: enp219s0, numaNode: 1, gpus: [12, 13]}
  - {name: nic7, linkType: Ethernet, vendorId: "15b3", deviceId: "1017", vfDeviceId: "1018", hca: mlx5_7,
     pfName: enp224s0, numaNode: 1, gpus: [14, 15]}
nodeLabels: {nvidia.com/gpu.product: Tesla-V100-SXM3-32GB}
""",
    "dgx-a100": """\
kind: Hardware
name: site-dgx-a100
extends: dgx-a100
# Example values, as one site's DGX A100 nodes show them (lspci -nn, ibdev2netdev, nvidia-smi topo -m, lscpu):
# read your own. mlx5_4 and mlx5_5 are the storage NICs, which carry no rail.
gpu: {model: NVIDIA-A100-SXM4-80GB, memoryGiB: 80}
cpu: {coresPerSocket: 64, threadsPerCore: 2}
nics:
  - {name: ib0, hca: mlx5_0, pfName: ibp12s0, vfDeviceId: "101c", gpus: [0]}
  - {name: ib1, hca: mlx5_1, pfName: ibp18s0, vfDeviceId: "101c", gpus: [1]}
  - {name: ib2, hca: mlx5_2, pfName: ibp75s0, vfDeviceId: "101c", gpus: [2]}
  - {name: ib3, hca: mlx5_3, pfName: ibp84s0, vfDeviceId: "101c", gpus: [3]}
  - {name: ib4, hca: mlx5_6, pfName: ibp141s0, vfDeviceId: "101c", gpus: [4]}
  - {name: ib5, hca: mlx5_7, pfName: ibp148s0, vfDeviceId: "101c", gpus: [5]}
  - {name: ib6, hca: mlx5_8, pfName: ibp186s0, vfDeviceId: "101c", gpus: [6]}
  - {name: ib7, hca: mlx5_9, pfName: ibp204s0, vfDeviceId: "101c", gpus: [7]}
nodeLabels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}
""",
    "dgx-h100": """\
kind: Hardware
name: site-dgx-h100
extends: dgx-h100
# Example values, as one site's DGX H100 nodes (ConnectX-7, NDR InfiniBand) show them (lspci -nn, ibdev2netdev,
# nvidia-smi topo -m, lscpu): read your own.
gpu: {model: NVIDIA-H100-80GB-HBM3}
cpu: {coresPerSocket: 56, threadsPerCore: 2}
nics:
  - {name: nic0, linkType: InfiniBand, vendorId: "15b3", deviceId: "1021", vfDeviceId: "101e", hca: mlx5_0,
     pfName: ibp24s0, numaNode: 0, gpus: [0]}
  - {name: nic1, linkType: InfiniBand, vendorId: "15b3", deviceId: "1021", vfDeviceId: "101e", hca: mlx5_3,
     pfName: ibp64s0, numaNode: 0, gpus: [1]}
  - {name: nic2, linkType: InfiniBand, vendorId: "15b3", deviceId: "1021", vfDeviceId: "101e", hca: mlx5_4,
     pfName: ibp79s0, numaNode: 0, gpus: [2]}
  - {name: nic3, linkType: InfiniBand, vendorId: "15b3", deviceId: "1021", vfDeviceId: "101e", hca: mlx5_5,
     pfName: ibp94s0, numaNode: 0, gpus: [3]}
  - {name: nic4, linkType: InfiniBand, vendorId: "15b3", deviceId: "1021", vfDeviceId: "101e", hca: mlx5_6,
     pfName: ibp154s0, numaNode: 1, gpus: [4]}
  - {name: nic5, linkType: InfiniBand, vendorId: "15b3", deviceId: "1021", vfDeviceId: "101e", hca: mlx5_9,
     pfName: ibp192s0, numaNode: 1, gpus: [5]}
  - {name: nic6, linkType: InfiniBand, vendorId: "15b3", deviceId: "1021", vfDeviceId: "101e", hca: mlx5_10,
     pfName: ibp206s0, numaNode: 1, gpus: [6]}
  - {name: nic7, linkType: InfiniBand, vendorId: "15b3", deviceId: "1021", vfDeviceId: "101e", hca: mlx5_11,
     pfName: ibp220s0, numaNode: 1, gpus: [7]}
nodeLabels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
""",
    "gb200-nvl72": """\
kind: Hardware
name: site-gb200-nvl72
extends: gb200-nvl72
# Example values, as one site's GB200 NVL72 compute trays (ConnectX-7, NDR InfiniBand) show them (lspci -nn,
# ibdev2netdev, nvidia-smi topo -m): read your own. mlx5_2, mlx5_3 and mlx5_6 on are the BlueField-3 ports, no rails.
gpu: {model: NVIDIA-GB200}
nics:
  - {name: nic0, vendorId: "15b3", deviceId: "1021", vfDeviceId: "101e", hca: mlx5_0, pfName: ibp3s0, gpus: [0]}
  - {name: nic1, vendorId: "15b3", deviceId: "1021", vfDeviceId: "101e", hca: mlx5_1, pfName: ibP2p3s0, gpus: [1]}
  - {name: nic2, vendorId: "15b3", deviceId: "1021", vfDeviceId: "101e", hca: mlx5_4, pfName: ibP16p3s0, gpus: [2]}
  - {name: nic3, vendorId: "15b3", deviceId: "1021", vfDeviceId: "101e", hca: mlx5_5, pfName: ibP18p3s0, gpus: [3]}
nodeLabels: {nvidia.com/gpu.product: NVIDIA-GB200}
""",
    "cpu-node": """\
kind: Hardware
name: site-cpu-node
extends: cpu-node
# Example values: the label one site's CPU nodes carry (the built-in has every fact a job reads, but no labels).
nodeLabels: {node.kubernetes.io/instance-type: cpu-2s64c}
""",
}
SITE = {hw: yaml.safe_load(text) for hw, text in SITE_HARDWARE.items()}
NICS = {hw: [nic["name"] for nic in SITE[hw].get("nics", [])] for hw in HARDWARE}
# Some rails run over a child interface of the PF (`hostInterface` on the rail): a VLAN of the DGX-2's RoCE PFs under
# host-network, an IPoIB partition (P_Key) child of the DGX H100's PFs under rdma-shared; the others over the PFs.
CHILD_INTERFACE = {("host-network", "dgx-2"): ".3091", ("rdma-shared", "dgx-h100"): ".8001"}


def host_interfaces(provider: str, hw: str) -> list[str]:
    return [nic["pfName"] + CHILD_INTERFACE.get((provider, hw), "") for nic in SITE[hw]["nics"]]


def cluster_name(provider: str, hw: str) -> str:
    return f"{PROVIDERS[provider]}-{GPU_HARDWARE.get(hw, 'cpu')}"


def placement(hw: str, provider: str, mpi: str) -> tuple[str, str, str, str]:
    """(cluster, pool, namespace, job) of one combination. cpu-node runs in the CPU-only cluster `tcp-cpu` under
    tcp, and in a `cpu` pool of the provider's DGX-1 cluster under the RDMA providers."""
    if hw == "cpu-node":
        cluster = "tcp-cpu" if provider == "tcp" else cluster_name(provider, "dgx-1")
        return cluster, "cpu", CPU_NAMESPACE, f"cpu-{MPI[mpi]}"
    return cluster_name(provider, hw), "gpu", GPU_NAMESPACE, MPI[mpi]


def rails_yaml(provider: str, hw: str, index: int) -> str:
    if provider == "tcp":
        return ""
    lines = ["rails:\n"]
    for i, nic in enumerate(NICS[hw]):
        lines.append(f"  - name: r{i}\n    nic: {nic}\n")
        if (provider, hw) in CHILD_INTERFACE:
            lines.append(f"    hostInterface: {host_interfaces(provider, hw)[i]}\n")
        if provider in MULTUS:  # host-network pods use the nodes' own addresses: no ipam
            lines.append(f"    ipam:\n      range: 10.{index}.{i}.0/24\n")
    return "".join(lines)


def cluster_yaml(provider: str, hw: str, index: int, bare: bool = False) -> str:
    """A cluster of 4 nodes of `hw` (the site profile, or the `bare` built-in) with one rail per NIC; the RDMA
    providers' DGX-1 clusters add a pool of cpu-node. `index` makes its rails' whereabouts ranges its own."""
    name, _, _, _ = placement(hw, provider, "OpenMPI")
    hardware = (lambda builtin: builtin) if bare else (lambda builtin: f"site-{builtin}")
    pools = f"  - {{name: {'cpu' if hw == 'cpu-node' else 'gpu'}, hardware: {hardware(hw)}, nodes: {NODES}}}\n"
    if hw == "dgx-1" and provider != "tcp":
        pools += f"  - {{name: cpu, hardware: {hardware('cpu-node')}, nodes: {NODES}}}\n"
    tool = GITOPS[provider]
    return (f"{API}kind: Cluster\nname: {name}\nkubernetesVersion: \"{KUBERNETES[provider]}\"\n"
            f"namespaces: [{GPU_NAMESPACE}, {CPU_NAMESPACE}]\ncpuManagerPolicy: none\nnetwork:\n  provider: {provider}\n"
            f"nodePools:\n{pools}{rails_yaml(provider, hw, index)}"
            f"gitops:\n  tool: {tool}\n  repoURL: https://git.example.com/platform/{tool}-fleet.git\n")


IMAGES = {"OpenMPI": "openmpi", "Intel": "intel", "MPICH": "mpich"}
# OpenMPI 5 (PRTE variables, `--map-by rankfile:file=`) on half the hardware, OpenMPI 4 on the rest.
OPENMPI_5 = ("dgx-2", "dgx-a100", "cpu-node")  # dgx-2: its site profile places ranks by rankfile


def openmpi_version(hw: str, mpi: str) -> int | None:
    return None if mpi != "OpenMPI" else 5 if hw in OPENMPI_5 else 4


def job_yaml(hw: str, provider: str, mpi: str) -> str:
    cluster, pool, namespace, job = placement(hw, provider, mpi)
    head = (f"{API}kind: Job\nname: {job}\ncluster: {cluster}\npool: {pool}\nnamespace: {namespace}\n"
            f"mpiImplementation: {mpi}\n")
    if openmpi_version(hw, mpi) == 5:
        head += "openMPIVersion: 5\n"
    if hw == "cpu-node":
        return head + (f"image: mpioperator/mpi-pi:{IMAGES[mpi]}\nworkers: {WORKERS}\nprogram: [/home/mpiuser/pi]\n"
                       "resources: {cpu: \"8\", memory: 16Gi}\n")
    return head + (f"image: nvcr.io/nvidia/pytorch:24.03-py3\ntotalGpus: {WORKERS * GPUS[hw]}\n"
                   "program: [python, /workspace/train.py, --epochs=1]\n"
                   "resources: {cpu: \"32\", memory: 256Gi}\nshmSize: 64Gi\n")


def write(root: Path, files: dict[str, str]) -> Path:
    for relpath, text in files.items():
        (root / relpath).parent.mkdir(parents=True, exist_ok=True)
        (root / relpath).write_text(text, encoding="utf-8")
    return root


def site_hardware_files() -> dict[str, str]:
    return {f"hardware/site-{hw}.yaml": API + text for hw, text in SITE_HARDWARE.items()}


def matrix_files(combinations: list[tuple[str, str, str]]) -> dict[str, str]:
    """The site hardware, the clusters the combinations run on, and one job per combination."""
    files = site_hardware_files()
    # The clusters, as (provider, the hardware of their first pool): cpu-node runs in a DGX-1 cluster but under tcp.
    clusters = {(provider, "dgx-1" if hw == "cpu-node" and provider != "tcp" else hw) for hw, provider, _ in combinations}
    for index, (provider, hw) in enumerate(sorted(clusters), start=10):
        files[f"clusters/{placement(hw, provider, 'OpenMPI')[0]}.yaml"] = cluster_yaml(provider, hw, index)
    for hw, provider, mpi in combinations:
        cluster, _, _, job = placement(hw, provider, mpi)
        files[f"jobs/{cluster}/{job}.yaml"] = job_yaml(hw, provider, mpi)
    return files


# --- the matrix, rendered once and checked once per Helm version -----------------------------------

def render_matrix(root: Path, files: dict[str, str]) -> tuple[Path, Path]:
    """(profiles, charts): `files` written under `root` and rendered once by the real command line."""
    profiles = write(root.resolve() / "profiles", files)
    charts = root / "charts"
    rendered = run_mpigen("render", profiles, "-o", charts)
    assert rendered.returncode == 0, rendered.stdout + rendered.stderr
    return profiles, charts


def check_matrix_strict(helm: Path, upstream: Path, charts: Path, kinds: set[str], compiled: CompileResult) -> str:
    """`mpigen check --strict` over a rendered matrix with real Helm, given the upstream CRDs of the operators' and
    GitOps tools' kinds among `kinds` (with --strict any other kind fails; `check` validates each CRD it is given,
    which costs seconds for large ones the charts do not need): asserts it passes, and that Helm rendered each chart
    to exactly the objects mpigen built for it (`compiled`), and returns its summary line. In this process, as
    run_check: `mpigen check` as a process of its own is tests/acceptance/test_check_cli.py's."""
    crds = [path for name, paths in crd_files(upstream).items() if name in ("sriov-network-operator", "gitops")
            for path in paths if {kind for _, kind in CustomResourceSchemas([path]).keys} & kinds]
    report = run_check([charts], CheckOptions(helm=str(helm), crds=tuple(crds), strict=True))
    assert not report.findings, [finding.format() for finding in report.findings]
    rendered: dict[str, list[dict[str, Any]]] = {}
    for document in report.documents:
        rendered.setdefault(document.chart, []).append(document.obj)
    for chart in compiled.charts:
        built = sorted((manifest.obj for manifest in chart.manifests), key=identity)
        assert sorted(rendered.get(f"{charts.as_posix()}/{chart.directory}", []), key=identity) == built, chart.directory
    return report.summary()


def assert_helm_renders_the_compiled_objects(helm: Path, charts: Path, compiled: CompileResult) -> None:
    """Each chart of a rendered matrix, rendered by `helm` (`helm template`), is exactly the objects mpigen built for
    it: for Helm 3, whose renders no check here makes."""
    for chart in compiled.charts:
        rendered = sorted(template(helm, chart.ref.release, charts / chart.directory), key=identity)
        built = sorted((manifest.obj for manifest in chart.manifests), key=identity)
        assert rendered == built, chart.directory


def compile_matrix(profiles: Path) -> CompileResult:
    result = compile_profiles([profiles])
    assert result.ok, [d.format() for d in result.diagnostics]
    return result


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(profiles, charts): the whole matrix."""
    return render_matrix(tmp_path_factory.mktemp("matrix"), matrix_files(COMBINATIONS))


@pytest.fixture(scope="module")
def compiled(matrix: tuple[Path, Path]) -> CompileResult:
    return compile_matrix(matrix[0])


def crd_files(upstream: Path) -> dict[str, list[Path]]:
    network = upstream / "network"
    return {
        "mpi-operator": [upstream / "mpi-operator" / "kubeflow.org_mpijobs.yaml"],
        "nad": [network / "nad-client" / "artifacts__networks-crd.yaml"],
        "sriov-network-operator": sorted((network / "sriov-network-operator").glob("config__crd__bases__*.yaml")),
        "gitops": [*sorted((upstream / "gitops" / "argocd").glob("*-crd.yaml")),
                   *sorted((upstream / "gitops" / "flux").glob("*.yaml"))],
    }


@pytest.fixture(scope="module")
def upstream_crds(upstream: Path) -> CustomResourceSchemas:
    return CustomResourceSchemas([path for paths in crd_files(upstream).values() for path in paths])


def test_every_combination_has_a_chart_with_its_mpijob(matrix, compiled):
    """No combination is silently skipped: each has its job chart, with an MPIJob of its MPI implementation."""
    _, charts = matrix
    expected = {f"{c}/jobs/{j}" for c, _, _, j in (placement(*combination) for combination in COMBINATIONS)}
    assert {str(p.parent.relative_to(charts)) for p in charts.glob("*/jobs/*/Chart.yaml")} == expected
    mpijobs = {chart.directory: [m.obj for m in chart.manifests if m.obj["kind"] == "MPIJob"] for chart in compiled.charts}
    for combination in COMBINATIONS:
        cluster, pool, namespace, job = placement(*combination)
        directory = f"{cluster}/jobs/{job}"
        chart_yaml = yaml.safe_load((charts / directory / "Chart.yaml").read_text(encoding="utf-8"))
        (mpijob,) = mpijobs[directory]
        name = mpijob["metadata"]["name"]
        assert is_run_of(name, job) and chart_yaml["annotations"]["mpigen/mpijob"] == name, combination
        assert chart_yaml["annotations"]["mpigen/pool"] == pool, combination
        assert mpijob["metadata"]["namespace"] == namespace and mpijob["spec"]["mpiImplementation"] == combination[2]
        template = (charts / directory / "templates" / "mpijob.yaml").read_text(encoding="utf-8")
        assert f"\n  name: {name}\n" in template and f"\n  mpiImplementation: {combination[2]}\n" in template
        launcher = mpijob["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
        prte = {e["name"] for e in launcher.get("env", []) if e["name"].startswith("PRTE_MCA_")}
        if openmpi_version(combination[0], combination[2]) == 5:  # mpi-operator #842: ORTE's variables are ignored
            assert "PRTE_MCA_prte_default_hostfile" in prte and "PRTE_MCA_plm_ssh_args" in prte, combination
            assert "--rankfile" not in launcher["command"], combination  # deprecated in 5: --map-by rankfile:file=
            if combination[0] == "dgx-2":
                assert "rankfile:file=/etc/mpigen/rankfile" in launcher["command"], combination
        else:
            assert not prte, combination
    infra = {str(p.parent.relative_to(charts)) for p in charts.glob("*/infra/Chart.yaml")}
    assert len(infra) == len(PROVIDERS) * len(GPU_HARDWARE) + 1  # + tcp-cpu


def test_helm3_renders_every_matrix_chart_to_the_objects_mpigen_built(matrix, compiled):
    assert_helm_renders_the_compiled_objects(require_helm(3), matrix[1], compiled)


def test_the_matrix_passes_check_strict_with_real_helm(helm4, upstream, matrix, compiled):
    """With Helm 4, whose render of every chart is exactly what mpigen built."""
    _, charts = matrix
    kinds = {doc["kind"] for _, doc in _objects(compiled)}
    crds = [path for name, paths in crd_files(upstream).items() if name in ("sriov-network-operator", "gitops")
            for path in paths if {kind for _, kind in CustomResourceSchemas([path]).keys} & kinds]
    # SriovNetworkNodePolicy, SriovNetworkPoolConfig, SriovNetwork, SriovIBNetwork; Argo CD and Flux
    assert len(crds) == 8, crds
    summary = check_matrix_strict(helm4, upstream, charts, kinds, compiled)
    charts_checked = len(COMBINATIONS) + len(PROVIDERS) * len(GPU_HARDWARE) + 1
    gitops_files = 2 * (len(PROVIDERS) * len(GPU_HARDWARE) + 1)  # root/ and apps/ of every cluster
    assert re.fullmatch(rf"0 error\(s\), 0 warning\(s\) in \d+ document\(s\) of {charts_checked} chart\(s\) and "
                        rf"{gitops_files} manifest file\(s\)", summary), summary


def _objects(compiled: CompileResult) -> list[tuple[str, dict[str, Any]]]:
    """(chart folder or bootstrap file, object) for every object of every chart and GitOps bootstrap file."""
    objects = [(chart.directory, m.obj) for chart in compiled.charts for m in chart.manifests]
    objects += [(path, doc) for chart in compiled.charts for path, text in chart.bootstrap if path.endswith(".yaml")
                for doc in yaml.safe_load_all(text) if doc]
    return objects


def test_custom_resources_validate_against_the_upstream_crds(compiled, upstream_crds):
    results: dict[tuple[str, str, str, str], list[str]] = {}
    for source, doc in _objects(compiled):
        if (doc["apiVersion"], doc["kind"]) in upstream_crds:
            where = (source, doc["kind"], doc["metadata"].get("namespace", ""), doc["metadata"]["name"])
            assert where not in results, f"{where} twice"
            results[where] = upstream_crds.problems(doc)
    counts: dict[str, int] = {}
    for _, kind, _, _ in results:
        counts[kind] = counts.get(kind, 0) + 1
    assert counts["MPIJob"] == len(COMBINATIONS)
    # sriov-network-operator: a policy per rail and pool (DGX-2 8, A100 8, H100 8, DGX-1 4, DGX-1 32 GB 4, GB200 4),
    # and a network per rail and namespace: SriovIBNetwork for the InfiniBand rails, SriovNetwork for the DGX-2's RoCE.
    assert counts["SriovNetworkNodePolicy"] == 36
    # and the RDMA subsystem in exclusive mode on each pool with rails (one a cluster: DGX-2, A100, H100, DGX-1 16 and
    # 32 GB, GB200).
    assert counts["SriovNetworkPoolConfig"] == 6
    assert counts["SriovIBNetwork"] == 2 * 28 and counts["SriovNetwork"] == 2 * 8
    assert {"NetworkAttachmentDefinition", "Application", "HelmRelease", "GitRepository", "Kustomization"} <= set(counts)
    assert results == {key: [] for key in results}


def test_the_compiled_validators_judge_the_matrix_as_jsonschema_does(matrix, compiled, upstream_crds):
    """Every profile and object of the matrix, by the compiled validators (with the upstream CRDs, as above) and by
    jsonschema: the same verdict (tests/unit/*/test_*compiled_schema*.py)."""
    profiles = profile_verdict_disagreements(load_paths([matrix[0]]).documents)
    assert profiles.disagreements == [] and profiles.compiled > len(COMBINATIONS)
    objects = [RenderedObject(source, obj) for source, obj in _objects(compiled)]
    judged = schema_verdict_disagreements(upstream_crds.schema_set, objects)
    assert judged.disagreements == [] and judged.compiled == len(objects)


# --- what each combination's workers get -----------------------------------------------------------

RESOURCE_PREFIX = {"sriov-device-plugin": "nvidia.com", "sriov-network-operator": "openshift.io",
                   "rdma-shared": "rdma", "host-network": "rdma"}


@pytest.mark.parametrize(("hw", "provider", "mpi"), COMBINATIONS, ids=["-".join(c) for c in COMBINATIONS])
def test_workers_attach_the_rails_of_their_hardware(compiled, hw, provider, mpi):
    cluster, _, _, job = placement(hw, provider, mpi)
    (chart,) = [c for c in compiled.charts if c.directory == f"{cluster}/jobs/{job}"]
    (mpijob,) = [m.obj for m in chart.manifests if m.obj["kind"] == "MPIJob"]
    worker = mpijob["spec"]["mpiReplicaSpecs"]["Worker"]
    assert worker["replicas"] == WORKERS
    pod = worker["template"]
    (container,) = pod["spec"]["containers"]
    limits = container["resources"]["limits"]
    env = {e["name"]: e.get("value") for e in container.get("env", [])}
    rails = [f"r{i}" for i in range(len(NICS[hw]))] if provider in RDMA else []
    assert limits.get("nvidia.com/gpu", 0) == GPUS[hw]
    assert sorted(k for k in limits if k not in ("cpu", "memory", "nvidia.com/gpu")) == sorted(
        f"{RESOURCE_PREFIX[provider]}/rdma_{rail}" for rail in rails)
    networks = pod.get("metadata", {}).get("annotations", {}).get("k8s.v1.cni.cncf.io/networks")
    assert (networks is not None) == bool(rails and provider in MULTUS)
    assert pod["spec"].get("hostNetwork", False) is (provider == "host-network")
    if rails:
        assert container["securityContext"]["capabilities"]["add"] == ["IPC_LOCK"]
    else:
        assert "securityContext" not in container, "no RDMA, no IPC_LOCK"
    if GPUS[hw]:
        assert env.get("NCCL_IB_DISABLE") == (None if rails else "1")
    if provider == "host-network" and rails:
        # NCCL uses the nodes' own rail interfaces: the rails' hostInterface, else the NICs' PF names.
        assert env["NCCL_SOCKET_IFNAME"] == "=" + ",".join(host_interfaces(provider, hw))
    if provider == "rdma-shared" and rails:
        # Pods see every HCA of the node: NCCL gets exactly the rails' HCAs, from the site profile.
        assert env["NCCL_IB_HCA"] == "=" + ",".join(f"{n['hca']}:1" for n in SITE[hw]["nics"])


@pytest.mark.parametrize("hw", GPU_HARDWARE)
def test_rdma_shared_networks_run_over_the_rails_host_interfaces(compiled, hw):
    cluster = cluster_name("rdma-shared", hw)
    (infra,) = [c for c in compiled.charts if c.directory == f"{cluster}/infra"]
    nads = {(m.obj["metadata"]["namespace"], m.obj["metadata"]["name"]): json.loads(m.obj["spec"]["config"])
            for m in infra.manifests if m.obj["kind"] == "NetworkAttachmentDefinition"}
    assert sorted(nads) == sorted((ns, f"r{i}") for ns in (GPU_NAMESPACE, CPU_NAMESPACE) for i in range(len(NICS[hw])))
    kind = {"InfiniBand": "ipoib", "Ethernet": "macvlan"}[SITE[hw]["nics"][0].get("linkType", "InfiniBand")]
    for i, interface in enumerate(host_interfaces("rdma-shared", hw)):
        config = nads[(GPU_NAMESPACE, f"r{i}")]
        assert (config["type"], config["master"]) == (kind, interface)
        assert config["ipam"]["type"] == "whereabouts"


# --- what makes sense and what does not ------------------------------------------------------------

# What each built-in leaves out (docs/profiles.md, "Built-in hardware"; the site profiles above fill it in).
BUILTIN_UNSET = {
    "dgx-1": {"hca", "pfName"},
    "dgx-1-32gb": {"hca", "pfName"},
    "dgx-2": {"hca", "pfName", "vendorId", "deviceId", "vfDeviceId", "linkType", "coresPerSocket"},
    "dgx-a100": {"hca", "pfName", "vfDeviceId", "coresPerSocket"},
    "dgx-h100": {"hca", "pfName", "vendorId", "deviceId", "vfDeviceId", "linkType", "coresPerSocket"},
    "gb200-nvl72": {"hca", "pfName", "vendorId", "deviceId", "vfDeviceId"},
}
# What a rail's NIC must state under each provider (docs/network-providers.md): every RDMA provider derives
# NCCL_IB_HCA from `hca` and the network type from `linkType`; the SR-IOV device plugin selects VFs by vendor,
# VF device id and PF name; the operator and rdma-shared-dev-plugin select the PF by vendor, device id and PF name.
# A job asking for `resources.cpu` needs the node's cores.
NEEDED = {
    "sriov-device-plugin": {"hca", "pfName", "vendorId", "vfDeviceId", "linkType"},
    "sriov-network-operator": {"hca", "pfName", "vendorId", "deviceId", "linkType"},
    "rdma-shared": {"hca", "pfName", "vendorId", "deviceId", "linkType"},
    "host-network": {"hca", "pfName", "vendorId", "deviceId", "linkType"},
    "tcp": set(),
}
# cpu-node is left out: its built-in states every fact a job reads (cores, memory); its site profile only adds labels.
BARE = [(hw, provider) for hw in GPU_HARDWARE for provider in PROVIDERS]
DIAGNOSTIC = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+):\d+: (?P<severity>error|warning): (?P<message>.*)$")


def _diagnostics(output: str) -> list[dict[str, str]]:
    """Every diagnostic but the warning each GB200 NVL72 cluster of the matrix earns: none allocates through DRA, so
    its jobs join no ComputeDomain (tests/unit/validate/test_validate_devices.py holds that warning)."""
    lines = output.splitlines()
    parsed = [DIAGNOSTIC.match(line) for line in lines[:-1]]
    assert all(parsed), output
    return [m.groupdict() for m in parsed if m and not (m["severity"] == "warning" and "ComputeDomain" in m["message"])]


@pytest.fixture(scope="module")
def bare(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """Each GPU built-in used as it is (no extends) by a cluster of each provider and a job asking for CPUs:
    validated once, every cluster and job in one run."""
    profiles = tmp_path_factory.mktemp("bare").resolve() / "profiles"
    files = {}
    for index, (hw, provider) in enumerate(BARE, start=10):
        files[f"clusters/{cluster_name(provider, hw)}.yaml"] = cluster_yaml(provider, hw, index, bare=True)
        files[f"jobs/{cluster_name(provider, hw)}.yaml"] = job_yaml(hw, provider, "OpenMPI")
    write(profiles, files)
    return profiles, run_mpigen("validate", profiles)


@pytest.mark.parametrize(("hw", "provider"), BARE, ids=["-".join(c) for c in BARE])
def test_a_bare_builtin_is_refused_naming_the_missing_facts(bare, hw, provider):
    """The site profiles' extends are needed: without them the cluster's rails, and the job's CPU request, are
    refused with an error naming exactly the facts the provider reads and the built-in leaves out."""
    profiles, result = bare
    assert "Traceback" not in result.stderr and result.returncode == 1, result.stdout + result.stderr
    name = cluster_name(provider, hw)
    mine = [d for d in _diagnostics(result.stderr)
            if Path(d["file"]).resolve() in {profiles / "clusters" / f"{name}.yaml", profiles / "jobs" / f"{name}.yaml"}]
    assert all(d["severity"] == "error" for d in mine), mine
    named: set[str] = set()
    rails_named: set[str] = set()
    for d in mine:
        message = d["message"]
        if found := re.search(r"whose (.+?) (?:is|are) not known", message):
            named.update(re.split(r", | and ", found.group(1)))
            assert f"in a hardware profile that extends {hw}" in message, message
            rails_named.update(re.findall(r"^rail '(r\d+)'", message))
        elif "does not name its pfName" in message:
            named.add("pfName")
            rails_named.update(re.findall(r"^rail '(r\d+)'", message))
        elif "its cpu.coresPerSocket is not known" in message:
            named.add("coresPerSocket")
            assert f"in a hardware profile that extends {hw}" in message, message
        elif "carries rails but has no node labels" in message:
            named.add("nodeLabels")  # a built-in names none: its nodes' labels are the site's
        else:
            pytest.fail(f"unexpected error: {message}")
    # sriov-network-operator's SriovNetworkPoolConfig selects the pool's nodes by their labels alone.
    pool_config = {"nodeLabels"} if provider == "sriov-network-operator" else set()
    expected = BUILTIN_UNSET[hw] & (NEEDED[provider] | {"coresPerSocket"}) | pool_config
    assert named == expected, mine
    assert rails_named == ({f"r{i}" for i in range(len(NICS[hw]))} if expected & NEEDED[provider] else set())


HYDRA = [(hw, mpi) for hw in HARDWARE for mpi in MPI if ("host-network", mpi) in EXCLUDED]


@pytest.fixture(scope="module")
def hydra(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """The excluded host-network combinations, on the matrix's own (valid) host-network clusters, in one run."""
    profiles = tmp_path_factory.mktemp("hydra").resolve() / "profiles"
    files = matrix_files([(hw, "host-network", "OpenMPI") for hw in HARDWARE])
    files = {path: text for path, text in files.items() if not path.startswith("jobs/")}
    for hw, mpi in HYDRA:
        cluster, _, _, job = placement(hw, "host-network", mpi)
        files[f"jobs/{cluster}/{job}.yaml"] = job_yaml(hw, "host-network", mpi)
    write(profiles, files)
    return profiles, run_mpigen("validate", profiles)


@pytest.mark.parametrize(("hw", "mpi"), HYDRA, ids=["-".join(c) for c in HYDRA])
def test_host_network_refuses_intel_and_mpich(hydra, hw, mpi):
    profiles, result = hydra
    assert "Traceback" not in result.stderr and result.returncode == 1, result.stdout + result.stderr
    diagnostics = _diagnostics(result.stderr)
    assert len(diagnostics) == len(HYDRA), "nothing but the MPI implementations is refused"
    cluster, _, _, job = placement(hw, "host-network", mpi)
    path = profiles / "jobs" / cluster / f"{job}.yaml"
    (mine,) = [d for d in diagnostics if Path(d["file"]).resolve() == path]
    assert mine["severity"] == "error"
    assert f"cluster '{cluster}' uses host networking" in mine["message"] and "OpenMPI" in mine["message"], \
        EXCLUDED[("host-network", mpi)]
    assert path.read_text(encoding="utf-8").splitlines()[int(mine["line"]) - 1] == f"mpiImplementation: {mpi}"


# --- least privilege, in every combination ------------------------------------------------------------------------


def test_every_pod_asks_for_the_least_privilege_its_combination_needs(compiled):
    """IPC_LOCK only for RDMA rails, hostNetwork only under host-network, never privileged, hostPath, hostPID or
    hostIPC, and no service account token: mpi-operator's pods never talk to the API server."""
    seen = 0
    for chart in compiled.charts:
        for manifest in chart.manifests:
            if manifest.obj["kind"] != "MPIJob":
                continue
            job = next(j for j in compiled.fleet.jobs if chart.directory.endswith(f"/jobs/{j.name}")
                       and chart.directory.startswith(f"{j.cluster.name}/"))
            provider = job.cluster.network.provider.value
            replicas = manifest.obj["spec"]["mpiReplicaSpecs"]
            for role, replica in replicas.items():
                spec = replica["template"]["spec"]
                assert spec["automountServiceAccountToken"] is False
                assert not {"hostPID", "hostIPC"} & set(spec)
                assert all("hostPath" not in volume for volume in spec["volumes"])
                host_network = role == "Worker" and provider == "host-network"
                assert spec.get("hostNetwork", False) is host_network, (chart.directory, role)
                (container,) = spec["containers"]
                security = container.get("securityContext", {})
                assert "privileged" not in security
                rdma = role == "Worker" and provider in RDMA and bool(job.rails)
                assert security.get("capabilities", {}).get("add", []) == (["IPC_LOCK"] if rdma else []), \
                    (chart.directory, role)
            seen += 1
    assert seen == len(compiled.fleet.jobs) == len(COMBINATIONS)


def test_every_namespace_enforces_the_level_its_jobs_need(compiled):
    """By hand: RDMA rails (IPC_LOCK) or the host's network need privileged; the matrix's jobs run as root, which
    `restricted` forbids, so every other namespace is baseline."""
    for chart in compiled.charts:
        if not chart.directory.endswith("/infra"):
            continue
        cluster = next(c for c in compiled.fleet.clusters if chart.directory == f"{c.name}/infra")
        jobs = [j for j in compiled.fleet.jobs if j.cluster.name == cluster.name]
        for manifest in chart.manifests:
            if manifest.obj["kind"] != "Namespace":
                continue
            name = manifest.obj["metadata"]["name"]
            here = [j for j in jobs if j.namespace == name]
            provider = cluster.network.provider.value
            needs_privileged = any(provider == "host-network" or (provider in RDMA and j.rails) for j in here)
            expected = "privileged" if needs_privileged else "baseline" if here else "restricted"
            labels = manifest.obj["metadata"]["labels"]
            assert labels["pod-security.kubernetes.io/enforce"] == expected, (chart.directory, name)
            assert labels["pod-security.kubernetes.io/enforce-version"] == f"v{cluster.kubernetes_version}"
