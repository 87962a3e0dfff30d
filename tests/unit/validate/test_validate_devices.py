"""generator/validate/devices.py: what a cluster's `dra` needs and what the drivers can align; the refusals (Kubernetes
before 1.34, Kueue before v0.18, dranet without `dra`, a GPU-NIC split the hardware cannot give) are corpus cases
(tests/acceptance/corpus/dra-*, dranet-without-dra).

Driver facts (vocabulary/dra.py): NVIDIA's GPU DRA driver publishes `resource.kubernetes.io/pcieRoot` on a whole GPU
and no NUMA node (cmd/gpu-kubelet-plugin/deviceinfo.go @ 22407113); a ComputeDomain's IMEX channel is what lets NCCL use
NVLink between the trays of a GB200 NVL72 (the driver's README and demo/specs/imex).
"""

from __future__ import annotations

import pytest
from conftest import PROFILES, expect, nvl72_edits

from mpigen.support.diagnostics import Severity

CLUSTER = "clusters/h100-dra.yaml"
HARDWARE = "hardware/dgx-h100-ib.yaml"
H100_DRA = (PROFILES / CLUSTER).read_text(encoding="utf-8")
H100_IB = (PROFILES / HARDWARE).read_text(encoding="utf-8")
DISTANCE = "  nicDistance: PIX\n"
assert DISTANCE in H100_IB


def test_the_example_dra_cluster_is_clean(diagnose):
    assert [d for d in diagnose({}).diagnostics if "h100" in str(d.location)] == []


def test_nics_of_unknown_place_are_claimed_by_count_with_a_warning(diagnose):
    outcome = diagnose({HARDWARE: H100_IB.replace(DISTANCE, "")})
    expect(outcome, (CLUSTER, 17, 15, "hardware 'dgx-h100-ib' says nothing of where NICs nic0, nic1, nic2, nic3, nic4, "
                     "nic5, nic6, nic7 sit, so the claims pair them with GPUs by count only",
                     "`nics[].gpus`"), severity=Severity.WARNING)


def test_a_nic_of_known_numa_node_only_is_counted_with_a_warning_that_the_drivers_publish_none(diagnose):
    hardware = H100_IB.replace(DISTANCE, "").replace("pfName: ibp24s0}", "pfName: ibp24s0, numaNode: 0}")
    outcome = diagnose({HARDWARE: hardware})
    shown = outcome.shown()
    assert len(shown) == 2, shown
    numa = next(d for d in outcome.diagnostics if "NUMA node" in d.message)
    assert numa.severity is Severity.WARNING
    assert "says only the NUMA node of NICs nic0, and NVIDIA's GPU DRA driver and DRANET publish no " \
        "resource.kubernetes.io/numaNode" in numa.message
    assert "so the claims pair them with GPUs by count only" in numa.message
    assert str(numa.location) == outcome.at(CLUSTER, 17, 15)


def test_gpus_through_dra_and_rails_through_a_device_plugin_cannot_be_aligned(diagnose):
    pod = (PROFILES / "clusters" / "dgx-pod.yaml").read_text(encoding="utf-8")
    pod = pod.replace('kubernetesVersion: "1.31"', 'kubernetesVersion: "1.34"').replace("nodePools:", "dra: {}\nnodePools:")
    outcome = diagnose({"clusters/dgx-pod.yaml": pod})
    (warning,) = [d for d in outcome.diagnostics if str(d.location).endswith("clusters/dgx-pod.yaml:15:1")]
    assert warning.severity is Severity.WARNING
    assert "GPUs are claimed through DRA and the rails through 'sriov-network-operator'" in warning.message
    assert "network.provider: dranet" in warning.hint
    # dgx-pod's jobs ask Kueue for topology levels, which counts no claimed device: refused at each job.
    assert sorted(d.location.path.rsplit("/", 1)[1] for d in outcome.diagnostics if d is not warning) == [
        "language-bert.yaml", "vision-resnet50.yaml"]


def test_multi_node_nvlink_without_a_compute_domain_warns_that_nccl_falls_back_to_the_network(diagnose):
    edits = nvl72_edits()
    outcome = diagnose(edits)
    expect(outcome, ("clusters/dgx-pod.yaml", 17, 15, "pool 'dgx': hardware 'gb200-tray' joins 72 GPUs over NVLink "
                     "across nodes, but its jobs get no ComputeDomain: without its IMEX channel NCCL cannot use NVLink "
                     "between nodes and falls back to the network", "add `dra: {}`"), severity=Severity.WARNING)


def test_volcano_queues_are_said_not_to_limit_the_devices_workers_claim(diagnose):
    """Volcano's queues count pods' requests, which a claim is not (volcano-sh/volcano #4400): at the cluster's `dra`
    (volcano-lab declares queues; its rails stay on host-network, which the second warning is about)."""
    lab = (PROFILES / "clusters" / "volcano-lab.yaml").read_text(encoding="utf-8")
    lab = lab.replace('kubernetesVersion: "1.31"', 'kubernetesVersion: "1.34"').replace("nodePools:", "dra: {}\nnodePools:")
    outcome = diagnose({"clusters/volcano-lab.yaml": lab})
    expect(outcome, ("clusters/volcano-lab.yaml", 14, 1, "GPUs are claimed through DRA and the rails through "
                     "'host-network'"),
           ("clusters/volcano-lab.yaml", 14, 1, "Volcano's queues count what pods request, and a device claimed through "
            "DRA is no request (volcano-sh/volcano #4400): the capability of the cluster's queues holds none of the "
            "devices its workers claim", "use Kueue"), severity=Severity.WARNING)


@pytest.mark.parametrize(("dra", "key", "message"), [
    ("dra: {nicDeviceClass: gpu.nvidia.com}", "nicDeviceClass", "the NIC DeviceClass 'gpu.nvidia.com' is the GPU "
     "DeviceClass"),
    ("dra: {nicDeviceClass: compute-domain-default-channel.nvidia.com}", "nicDeviceClass",
     "the NIC DeviceClass 'compute-domain-default-channel.nvidia.com' is a DeviceClass NVIDIA's GPU DRA driver installs"),
    ("dra: {gpuDeviceClass: h100.example.com, nicDeviceClass: h100.example.com}", "nicDeviceClass",
     "the NIC DeviceClass 'h100.example.com' is the GPU DeviceClass"),
    ("dra: {gpuDeviceClass: mig.nvidia.com}", "gpuDeviceClass", "'mig.nvidia.com' is not a class of whole GPUs"),
])
def test_a_device_class_that_takes_another_ones_name_is_refused(diagnose, dra, key, message):
    """The infra chart writes the NIC class: named as the GPU class or a driver's, it would replace it (GPU requests
    selecting NICs); Kueue's pkg/config/validation.go (validateDeviceClassMappings) refuses a class mapped twice."""
    outcome = diagnose({CLUSTER: H100_DRA.replace("dra: {}", dra)})
    (refused,) = outcome.diagnostics
    assert refused.severity is Severity.ERROR and message in refused.message, outcome.shown()
    line = next(i for i, text in enumerate(H100_DRA.splitlines(), 1) if text.startswith("dra: {}"))
    assert str(refused.location).startswith(outcome.at(CLUSTER, line, 0).rsplit(":", 1)[0]), outcome.shown()
    assert f"{key}: " in H100_DRA.replace("dra: {}", dra).splitlines()[line - 1]


def test_a_rails_host_interface_names_the_nic_the_claim_selects(diagnose):
    """dranet selects each rail's NIC by its interface on the node (DRANET's `ifName`): the NIC's pfName, or the rail's
    `hostInterface`, which the refusal of a NIC without pfName offers as the fix, and which then suffices."""
    hardware = H100_IB.replace(", pfName: ibp24s0}", "}")
    refused = diagnose({HARDWARE: hardware})
    expect(refused, (CLUSTER, 21, 5, "rail 'rail0': provider 'dranet' needs the node's interface of NIC 'nic0'",
                     "set `hostInterface` on the rail"))
    rails = H100_DRA.replace("  - {name: rail0, nic: nic0}", "  - {name: rail0, nic: nic0, hostInterface: ibp24s0}")
    assert diagnose({HARDWARE: hardware, CLUSTER: rails}).diagnostics == []
