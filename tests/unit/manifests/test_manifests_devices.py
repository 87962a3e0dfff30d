"""generator/manifests/devices.py: the ResourceClaimTemplate of a job on a DRA cluster, the worker pods that claim it
under each backend, and the NCCL variables that name what it hands out.

Upstream shapes (tests/upstream/dra/, SOURCES.yaml): DRANET's examples/demo_nvidia_dranet/resourceclaims.yaml (GPU and
NIC requests in one claim, `constraints: [{matchAttribute: resource.kubernetes.io/pcieRoot}]`),
examples/mpi_operator/dra_resources.yaml (a NIC selected by `device.attributes["dra.net"].ifName`, its interface in the
pod named by the opaque config `interface.name`, which NCCL is given); Kubernetes' resource.k8s.io/v1 DeviceRequest
(`exactly.deviceClassName`, `count`) and DeviceConstraint (`requests`, `matchAttribute`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import PROFILES

from mpigen.commands.pipeline import CompileResult, compile_profiles
from mpigen.manifests.job import pod_specs, pods_object

# profiles/hardware/dgx-h100-ib.yaml: nicN -> (HCA, interface on the node), by hand.
H100_NICS = {"nic0": ("mlx5_0", "ibp24s0"), "nic1": ("mlx5_3", "ibp64s0"), "nic2": ("mlx5_4", "ibp79s0"),
             "nic3": ("mlx5_5", "ibp94s0"), "nic4": ("mlx5_6", "ibp154s0"), "nic5": ("mlx5_9", "ibp192s0"),
             "nic6": ("mlx5_10", "ibp206s0"), "nic7": ("mlx5_11", "ibp220s0")}


def chart_objects(result: CompileResult, directory: str) -> list[dict[str, Any]]:
    (chart,) = [c for c in result.charts if c.directory == directory]
    return [m.obj for m in chart.manifests]


def of_kind(objects: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    (found,) = [o for o in objects if o["kind"] == kind]
    return found


def test_each_rails_nic_is_claimed_beside_the_gpu_under_its_pcie_root(example: CompileResult):
    objects = chart_objects(example, "h100-dra/jobs/llm-pretrain")
    template = of_kind(objects, "ResourceClaimTemplate")
    mpijob = of_kind(objects, "MPIJob")
    assert template["apiVersion"] == "resource.k8s.io/v1"
    assert template["metadata"]["name"] == f"{mpijob['metadata']['name']}-devices"
    assert template["metadata"]["namespace"] == "llm"
    devices = template["spec"]["spec"]["devices"]
    requests = {r["name"]: r["exactly"] for r in devices["requests"]}
    for i in range(8):
        assert requests[f"gpus-rail{i}"] == {"deviceClassName": "gpu.nvidia.com", "count": 1}
        nic = requests[f"nic-rail{i}"]
        assert (nic["deviceClassName"], nic["count"]) == ("dranet-rdma", 1)
        assert nic["selectors"] == [{"cel": {"expression":
                                             f'device.attributes["dra.net"].ifName == "{H100_NICS[f"nic{i}"][1]}"'}}]
    assert len(requests) == 16
    assert devices["constraints"] == [{"requests": [f"gpus-rail{i}", f"nic-rail{i}"],
                                       "matchAttribute": "resource.kubernetes.io/pcieRoot"} for i in range(8)]
    assert devices["config"] == [{"requests": [f"nic-rail{i}"], "opaque": {
        "driver": "dra.net", "parameters": {"interface": {"name": f"rail{i}"}}}} for i in range(8)]


def _env(container: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e.get("value", "") for e in container.get("env", [])}


def test_workers_claim_the_template_and_ask_for_no_device_twice(example: CompileResult):
    objects = chart_objects(example, "h100-dra/jobs/llm-pretrain")
    mpijob = of_kind(objects, "MPIJob")
    worker = mpijob["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]
    launcher = mpijob["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]
    assert worker["resourceClaims"] == [{"name": "devices",
                                         "resourceClaimTemplateName": f"{mpijob['metadata']['name']}-devices"}]
    (container,) = worker["containers"]
    assert container["resources"] == {"claims": [{"name": "devices"}]}  # no nvidia.com/gpu, no rail resource
    assert "resourceClaims" not in launcher
    env = _env(container)
    # The interfaces DRANET names in the pod, and the HCAs of the NICs the claim selects.
    assert env["NCCL_SOCKET_IFNAME"] == "=" + ",".join(f"rail{i}" for i in range(8))
    hcas = ",".join(f"{H100_NICS[f'nic{i}'][0]}:1" for i in range(8))
    assert env["NCCL_IB_HCA"] == f"={hcas}"
    assert env["UCX_NET_DEVICES"] == hcas
    assert container["securityContext"] == {"capabilities": {"add": ["IPC_LOCK"]}}  # RDMA, not privileged


@pytest.mark.parametrize("backend", ["trainjob", "volcano-job"])
def test_every_backend_carries_the_claim(profiles_copy: Callable[..., Path], backend: str):
    job = (PROFILES / "jobs" / "llm-pretrain.yaml").read_text(encoding="utf-8")
    cluster = (PROFILES / "clusters" / "h100-dra.yaml").read_text(encoding="utf-8")
    if backend == "volcano-job":  # a Volcano Job runs under Volcano
        assert "  scheduler: kueue\n" in cluster
        cluster = cluster.replace("  scheduler: kueue\n", "  scheduler: volcano\n")
    result = compile_profiles([profiles_copy({"jobs/llm-pretrain.yaml": job + f"backend: {backend}\n",
                                              "clusters/h100-dra.yaml": cluster})])
    assert result.ok, [d.format() for d in result.diagnostics]
    (llm,) = [j for j in result.fleet.jobs if j.name == "llm-pretrain"]
    (chart,) = [c for c in result.charts if c.directory == "h100-dra/jobs/llm-pretrain"]
    template = of_kind([m.obj for m in chart.manifests], "ResourceClaimTemplate")
    specs = pod_specs(pods_object(llm, chart.manifests))
    claimed = [s for s in specs if "resourceClaims" in s]
    assert len(claimed) == 1 and claimed[0]["resourceClaims"][0]["resourceClaimTemplateName"] == \
        template["metadata"]["name"]
    assert claimed[0]["containers"][0]["resources"]["claims"] == [{"name": "devices"}]
    assert all("nvidia.com/gpu" not in c.get("resources", {}).get("limits", {}) for s in specs for c in s["containers"])


def test_a_gb200_job_joins_its_compute_domain_in_every_worker(example: CompileResult):
    """NVIDIA/k8s-dra-driver-gpu @ 22407113: demo/specs/imex/nvbandwidth-test-job.yaml (a ComputeDomain whose
    `spec.channel.resourceClaimTemplate.name` every MPIJob worker claims; the launcher claims nothing), the CRD's
    `numNodes` (0 recommended under IMEXDaemonsWithDNSNames, the default)."""
    objects = chart_objects(example, "gb200-rack/jobs/mnnvl-allreduce")
    mpijob = of_kind(objects, "MPIJob")
    run = mpijob["metadata"]["name"]
    domain = of_kind(objects, "ComputeDomain")
    assert domain["apiVersion"] == "resource.nvidia.com/v1beta1"
    assert domain["metadata"]["annotations"] == {"argocd.argoproj.io/sync-options": "SkipDryRunOnMissingResource=true"}
    assert (domain["metadata"]["name"], domain["metadata"]["namespace"]) == (f"{run}-compute-domain", "frontier")
    assert domain["spec"] == {"numNodes": 0, "channel": {"resourceClaimTemplate": {"name": f"{run}-channel"}}}
    worker = mpijob["spec"]["mpiReplicaSpecs"]["Worker"]["template"]
    assert worker["spec"]["resourceClaims"] == [
        {"name": "devices", "resourceClaimTemplateName": f"{run}-devices"},
        {"name": "channel", "resourceClaimTemplateName": f"{run}-channel"}]
    (container,) = worker["spec"]["containers"]
    assert container["resources"]["claims"] == [{"name": "devices"}, {"name": "channel"}]
    env = _env(container)
    assert (env["NCCL_MNNVL_ENABLE"], env["NCCL_CUMEM_ENABLE"]) == ("1", "1")
    launcher = mpijob["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]
    assert "resourceClaims" not in launcher
    # A tray's GPUs share no PCIe root with its NICs (profiles/hardware/gb200-ib.yaml: nicDistance NODE): one GPU and
    # one NIC a rail, counted, with no constraint the scheduler could never meet.
    devices = of_kind(objects, "ResourceClaimTemplate")["spec"]["spec"]["devices"]
    assert [r["exactly"]["count"] for r in devices["requests"]] == [1] * 8
    assert "constraints" not in devices
    # Placed within one NVLink domain (GFD's clique label) by pod affinity: Kueue's topology-aware scheduling counts
    # no claimed device, so the job asks it for no topology.
    (term,) = worker["spec"]["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert term["topologyKey"] == "nvidia.com/gpu.clique"
    assert not [k for k in worker["metadata"].get("annotations", {}) if k.startswith("kueue.x-k8s.io/podset")]


def test_gb200_without_a_compute_domain_turns_multi_node_nvlink_off(profiles_copy: Callable[..., Path]):
    cluster = (PROFILES / "clusters" / "gb200-rack.yaml").read_text(encoding="utf-8")
    assert "dra: {}\n" in cluster
    result = compile_profiles([profiles_copy({"clusters/gb200-rack.yaml": cluster.replace(
        "dra: {}\n", "dra: {computeDomains: false}\n")})])
    objects = chart_objects(result, "gb200-rack/jobs/mnnvl-allreduce")
    assert not [o for o in objects if o["kind"] == "ComputeDomain"]
    (container,) = of_kind(objects, "MPIJob")["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"]
    assert container["resources"]["claims"] == [{"name": "devices"}]
    assert _env(container)["NCCL_MNNVL_ENABLE"] == "0" and "NCCL_CUMEM_ENABLE" not in _env(container)


@pytest.mark.parametrize(("trays", "kind"), [(18, "requiredDuringSchedulingIgnoredDuringExecution"),
                                              (36, "preferredDuringSchedulingIgnoredDuringExecution")])
def test_a_compute_domains_workers_share_one_nvlink_clique(profiles_copy: Callable[..., Path], trays: int,
                                                                      kind: str):
    """NVLink between trays reaches only within one clique (GFD's nvidia.com/gpu.clique; NVIDIA/nccl init.cc:
    NCCL_MNNVL_CROSS_CLIQUE 0 by default): a job whose workers can all fit one (18 trays) must share it; on a pool of
    36 trays the chart may take 36 workers, so it is only preferred."""
    cluster = (PROFILES / "clusters" / "gb200-rack.yaml").read_text(encoding="utf-8")
    assert "    nodes: 18\n" in cluster
    result = compile_profiles([profiles_copy({
        "clusters/gb200-rack.yaml": cluster.replace("    nodes: 18\n", f"    nodes: {trays}\n").replace(
            "      nodes: {gb200: 18}\n", f"      nodes: {{gb200: {trays}}}\n")})])
    assert result.ok, [d.format() for d in result.diagnostics]
    mpijob = of_kind(chart_objects(result, "gb200-rack/jobs/mnnvl-allreduce"), "MPIJob")
    worker = mpijob["spec"]["mpiReplicaSpecs"]["Worker"]["template"]
    (term,) = worker["spec"]["affinity"]["podAffinity"][kind]
    term = term.get("podAffinityTerm", term)
    assert term == {"labelSelector": {"matchLabels": {"mpigen/worker-of": mpijob["metadata"]["name"]}},
                    "topologyKey": "nvidia.com/gpu.clique"}
    assert worker["metadata"]["labels"]["mpigen/worker-of"] == mpijob["metadata"]["name"]
