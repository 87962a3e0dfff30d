"""`mpigen explain` and `mpigen plan` on a job whose workers claim their devices through DRA
(generator/insight/device_facts.py): each rail's chain from the hardware profile's line to the claim to the NCCL and
UCX variables, the ComputeDomain's origin, and each value the chart's own."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from conftest import PROFILES
from ruamel.yaml import YAML

from mpigen.commands.pipeline import check_profiles
from mpigen.insight.device_facts import claims_text, pair_text
from mpigen.insight.explain import Explanation, explain_job
from mpigen.insight.node_picture import node_layout
from mpigen.insight.picture import fleet_svg
from mpigen.insight.plan import plan_fleet
from mpigen.insight.report import plan_text
from mpigen.load.catalogue import BUILTIN_DIR, BUILTIN_PREFIX
from mpigen.model.devices import Alignment, DevicePair, WorkerDevices
from mpigen.package.stream import manifest_stream
from mpigen.vocabulary import dra


def _explain(result: Any, name: str) -> Explanation:
    return explain_job(next(j for j in result.fleet.jobs if j.name == name), result.documents)


def _facts(explanation: Explanation, section: str) -> dict[str, Any]:
    return {fact.name: fact for fact in explanation.facts if fact.section == section}


@pytest.fixture(scope="module")
def objects(example) -> list[dict[str, Any]]:
    return [o for o in YAML(typ="safe").load_all(manifest_stream(example.charts)) if o]


def _of(objects: list[dict[str, Any]], kind: str, prefix: str) -> dict[str, Any]:
    return next(o for o in objects if o["kind"] == kind and o["metadata"]["name"].startswith(prefix))


def test_each_rail_is_explained_from_the_hardware_line_through_the_claim_to_the_variables(example, objects):
    # profiles/hardware/dgx-h100-ib.yaml: line 13 `nicDistance: PIX` (8 NICs, 8 GPUs: one GPU under each NIC's PCIe
    # root); line 18 nic0 with hca mlx5_0 and pfName ibp24s0. h100-dra's rail0 runs over nic0.
    explanation = _explain(example, "llm-pretrain")
    devices = _facts(explanation, "devices")
    hardware = PROFILES / "hardware/dgx-h100-ib.yaml"
    pairing = devices["rail0 pairing"]
    assert pairing.value == "NIC nic0 + 1 GPU, same PCIe root"
    assert pairing.origin.startswith(f"{hardware}:13: gpu.nicDistance PIX: each of the 8 NICs sits under one PCIe root "
                                     "with 1 of the 8 GPUs") and pairing.origin_kind == "profile"
    claim = devices["rail0 claim"]
    assert claim.value == ('requests gpus-rail0 (1 x gpu.nvidia.com) and nic-rail0 (1 x dranet-rdma, '
                           'device.attributes["dra.net"].ifName == "ibp24s0"), matchAttribute '
                           'resource.kubernetes.io/pcieRoot; DRANET names it rail0 in the pod')
    assert claim.origin.startswith(f"{hardware}:18: pfName ibp24s0 of NIC nic0: ")
    named = devices["rail0 in NCCL and UCX"]
    assert named.value == "NCCL_SOCKET_IFNAME rail0; NCCL_IB_HCA mlx5_0:1; UCX_NET_DEVICES mlx5_0:1"
    assert named.origin.startswith(f"{hardware}:18: hca mlx5_0 of NIC nic0; ")
    # Every rail's chain names what the chart holds: its two requests, the selector, the constraint, the interface
    # DRANET gives it in the pod, and the variables' items that name it.
    template = _of(objects, "ResourceClaimTemplate", "llm-pretrain-")["spec"]["spec"]["devices"]
    mpijob = _of(objects, "MPIJob", "llm-pretrain-")
    worker = mpijob["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
    env = {var["name"]: var["value"] for var in worker["env"]}
    interfaces = {item["requests"][0]: item["opaque"]["parameters"]["interface"]["name"] for item in template["config"]}
    requests = {request["name"]: request["exactly"] for request in template["requests"]}
    assert len(template["constraints"]) == 8
    for constraint in template["constraints"]:
        gpus, nic = constraint["requests"]
        rail = nic.removeprefix("nic-")
        said = devices[f"{rail} claim"].value
        assert f"requests {gpus} ({requests[gpus]['count']} x {requests[gpus]['deviceClassName']}) and {nic} (1 x " \
            f"{requests[nic]['deviceClassName']}, {requests[nic]['selectors'][0]['cel']['expression']}), " \
            f"matchAttribute {constraint['matchAttribute']}; DRANET names it {interfaces[nic]} in the pod" == said
        for item in devices[f"{rail} in NCCL and UCX"].value.split("; "):
            variable, value = item.split(" ")
            assert value in env[variable].lstrip("=").split(","), (rail, item)
    assert devices["claim"].value == f"ResourceClaimTemplate {mpijob['metadata']['name']}-devices: one ResourceClaim " \
        "a worker, pod claim devices"
    # No extended resource beside the claim, and explain says why.
    assert "limits" not in worker["resources"] and worker["resources"]["claims"] == [{"name": "devices"}]
    gpu = _facts(explanation, "worker resources")["nvidia.com/gpu"]
    assert gpu.value == "none: 8 GPUs claimed through DRA (claim devices)"
    assert gpu.origin.startswith(f"{PROFILES / 'clusters/h100-dra.yaml'}:14: dra: the GPUs come from DeviceClass "
                                 "gpu.nvidia.com, which stands for nvidia.com/gpu")
    rail = _facts(explanation, "networks")["rail rail0"]
    assert rail.value.startswith("DRANET device of request nic-rail0 in claim devices, interface rail0 in the pod")
    assert explanation.binding_rule.endswith("so no rank's NIC is known; the workers' claim still places each NIC "
                                             "beside its share of the GPUs (devices)")


def _line_of(origin: str) -> tuple[str, str]:
    """The profile line an origin cites, and what it says is there."""
    match = re.match(r"^(\S+):([0-9]+): (.*)$", origin)
    assert match, origin
    path = match.group(1).replace(BUILTIN_PREFIX, str(BUILTIN_DIR))
    return Path(path).read_text(encoding="utf-8").splitlines()[int(match.group(2)) - 1], match.group(3)


def test_a_job_on_multi_node_nvlink_is_told_where_its_compute_domain_and_each_pair_come_from(example, objects):
    # profiles/hardware/gb200-ib.yaml line 14: `nicDistance: NODE` (a GPU and its NIC share no PCIe root); its base,
    # the built-in gb200-nvl72, sets nvlinkDomainGpus 72 (line 48); gb200-rack leaves dra.computeDomains at its default.
    explanation = _explain(example, "mnnvl-allreduce")
    devices = _facts(explanation, "devices")
    assert devices["rail0 pairing"].origin.startswith(
        f"{PROFILES / 'hardware/gb200-ib.yaml'}:14: gpu.nicDistance NODE: each GPU reaches its NIC across PCIe host "
        "bridges, so they share no PCIe root: counted, not aligned")
    domain = _of(objects, "ComputeDomain", "mnnvl-allreduce-")
    channel = domain["spec"]["channel"]["resourceClaimTemplate"]["name"]
    said = devices["ComputeDomain"]
    assert said.value == (f"{domain['metadata']['name']}; every worker claims its IMEX channel (ResourceClaimTemplate "
                          f"{channel}, pod claim channel)")
    assert said.origin.startswith(f"{BUILTIN_PREFIX}/gb200-nvl72.yaml:48: gpu.nvlinkDomainGpus 72 of hardware "
                                  "gb200-ib: NVLink joins 72 GPUs across nodes (4 a node); default: "
                                  "dra.computeDomains true")
    for fact in explanation.facts:  # each cited line holds the key the origin names
        if fact.section == "devices" and fact.origin_kind == "profile":
            text, what = _line_of(fact.origin)
            key = what.split(":")[0].split(" ")[0].split(".")[-1]
            assert key in text, (fact, text)


def test_without_compute_domains_explain_says_why_the_job_has_none(profiles_copy):
    cluster = (PROFILES / "clusters/gb200-rack.yaml").read_text(encoding="utf-8")
    assert "\ndra: {}\n" in cluster
    root = profiles_copy({"clusters/gb200-rack.yaml": cluster.replace("\ndra: {}\n", "\ndra: {computeDomains: false}\n")})
    result = check_profiles([root])
    assert result.ok, [d.format() for d in result.diagnostics]
    said = _facts(_explain(result, "mnnvl-allreduce"), "devices")["ComputeDomain"]
    assert said.value == "none"
    assert f"{root / 'clusters/gb200-rack.yaml'}:15: dra.computeDomains: no IMEX channel" in said.origin


def test_a_pair_is_said_by_its_rail_nic_interface_gpus_and_alignment():
    aligned = DevicePair(2, "rail1", "nic1", "ens1", Alignment.NUMA_NODE, "nics[nic1].numaNode 0")
    loose = DevicePair(1, "rail2", "nic2", None, Alignment.NONE, "nics[nic2]")
    alone = DevicePair(8, None, None, None, Alignment.NONE, "no rail's NIC is claimed through DRA")
    assert pair_text(aligned) == "rail1 NIC nic1 (ens1) + 2 GPUs (same NUMA node)"
    assert pair_text(loose) == "rail2 NIC nic2 + 1 GPU (not aligned)"
    assert pair_text(alone) == "8 GPUs (no NIC)"
    assert claims_text(WorkerDevices("gpu.nvidia.com", None, (alone,), True)) == \
        "8 GPUs (no NIC), its ComputeDomain's IMEX channel"


def test_nics_whose_hardware_says_only_their_numa_node_are_paired_by_it_everywhere(profiles_copy, monkeypatch):
    """dgx-h100-ib without its GPU-NIC distance, each NIC's NUMA node stated (nic0-3 on 0, nic4-7 on 1), where both
    drivers publish the standard NUMA node (KEP-6072; NVIDIA's GPU DRA driver and DRANET do not at their pinned
    commits: then the NICs are counted, not aligned): explain cites each NIC's numaNode line, plan says `same NUMA
    node`, the picture groups each NIC with one GPU of its NUMA node."""
    for driver in (dra.GPU_DRIVER, dra.NIC_DRIVER):
        published = dra.DRIVERS[driver]
        monkeypatch.setitem(dra.DRIVERS, driver, replace(published, attributes=published.attributes | {dra.NUMA_NODE}))
    text = (PROFILES / "hardware/dgx-h100-ib.yaml").read_text(encoding="utf-8")
    assert "  nicDistance: PIX\n" in text and text.count(", pfName: ") == 8
    for i in range(8):
        text = text.replace(f"  - {{name: nic{i}, ", f"  - {{name: nic{i}, numaNode: {i // 4}, ")
    root = profiles_copy({"hardware/dgx-h100-ib.yaml": text.replace("  nicDistance: PIX\n", "")})
    result = check_profiles([root], set_aside_unfit=True)
    assert result.ok, [d.format() for d in result.diagnostics]
    pairing = _facts(_explain(result, "llm-pretrain"), "devices")["rail5 pairing"]
    assert pairing.value == "NIC nic5 + 1 GPU, same NUMA node"
    assert pairing.origin.startswith(f"{root / 'hardware/dgx-h100-ib.yaml'}:22: nics[nic5].numaNode 1: only the "
                                     "NIC's NUMA node is known")
    plan = plan_fleet(result.fleet, result.documents, result.unfit)
    assert "llm-pretrain worker claims: rail0 NIC nic0 (ibp24s0) + 1 GPU (same NUMA node), " in plan_text(plan)
    hardware = next(h for h in result.fleet.hardware if h.name == "dgx-h100-ib")
    assert [(numa.label, [(g.nic.name, g.gpus, g.in_order) for g in numa.groups])
            for numa in node_layout(hardware, paired=True)] == [
        ("NUMA 0", [(f"nic{i}", (i,), True) for i in range(4)]), ("NUMA 1", [(f"nic{i}", (i,), True) for i in range(4, 8)])]
    assert 'data-pair="nic5" data-alignment="numaNode" data-pair-gpus="1" data-claims="llm-pretrain/0">' in \
        fleet_svg(result.fleet, plan)


def test_a_worker_with_part_of_a_node_claims_its_share_of_the_rails_and_dra_chooses_its_gpus(profiles_copy):
    job = (PROFILES / "jobs/llm-pretrain.yaml").read_text(encoding="utf-8")
    assert "gpusPerWorker: 8\n" in job
    root = profiles_copy({"jobs/llm-pretrain.yaml": job.replace(
        "gpusPerWorker: 8\n", "gpusPerWorker: 4\nrails: [rail4, rail5, rail6, rail7]\n")})
    result = check_profiles([root], set_aside_unfit=True)
    assert result.ok, [d.format() for d in result.diagnostics]
    explanation = _explain(result, "llm-pretrain")
    assert "a worker has 4 of a node's 8 GPUs and its DRA claim's allocation chooses which" in explanation.binding_rule
    devices = _facts(explanation, "devices")
    assert sorted(name for name in devices if name.endswith(" pairing")) == [f"rail{i} pairing" for i in range(4, 8)]
    assert devices["rail6 in NCCL and UCX"].value == "NCCL_SOCKET_IFNAME rail6; NCCL_IB_HCA mlx5_10:1; " \
        "UCX_NET_DEVICES mlx5_10:1"
    plan = plan_fleet(result.fleet, result.documents, result.unfit)
    assert "    llm-pretrain worker claims: rail4 NIC nic4 (ibp154s0) + 1 GPU (same PCIe root), rail5 " in plan_text(plan)
