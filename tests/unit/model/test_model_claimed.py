"""generator/model/claimed.py and the DRA side of generator/model/admission.py: what a node of a DRA pool offers
queues and what a worker claims, under the names Kueue's deviceClassMappings count them by.

Numbers by hand: a DGX H100 node (profiles/hardware/dgx-h100-ib.yaml over the catalogue's dgx-h100) has 2 x 56 cores
x 2 threads = 224 CPUs, 2048 GiB, 8 GPUs and 8 NICs, one beside each GPU. A GB200 NVL72 tray (the catalogue's
gb200-nvl72) has 4 GPUs in a 72-GPU NVLink domain; NVIDIA's kubelet plugin publishes one ComputeDomain channel device
a node (cmd/compute-domain-kubelet-plugin/driver.go @ 22407113: every channel id but 0 is left out), which one claim
at a time holds.
"""

from __future__ import annotations

from decimal import Decimal

from conftest import PROFILES

from mpigen.commands.pipeline import compile_profiles
from mpigen.model import Dra, admission, claimed
from mpigen.support.diagnostics import NEVER_FITS

GPU, NIC, CHANNEL = "nvidia.com/gpu", "dra.net/rdma-nic", "compute-domain.nvidia.com/channel"
H100 = {"cpu": {"sockets": 2, "coresPerSocket": 56, "threadsPerCore": 2}, "memoryGiB": 2048,
        "gpu": {"count": 8, "resource": GPU}}
TRAY = {"cpu": {"sockets": 2, "coresPerSocket": 72}, "memoryGiB": 960,
        "gpu": {"count": 4, "resource": GPU, "nvlinkDomainGpus": 72}}
RAILS = [f"dra.net/rdma_rail{i}" for i in range(8)]


def test_a_dra_node_offers_its_gpus_and_one_nic_a_rail_under_kueues_names_instead_of_extended_resources() -> None:
    offer = admission.node_offer(H100, RAILS, True, {}, Dra(), nics_claimed=True)
    assert offer.resources == (("cpu", 224, ""), ("memory", 2048, "Gi"), (GPU, 8, ""), (NIC, 8, ""))
    assert offer.claimed == (GPU, NIC)
    # GPUs through DRA, rails through a device plugin: the rails stay what pods request, one VF a GPU.
    plugin = admission.node_offer(H100, ["nvidia.com/rdma_rail0"], True, {}, Dra(), nics_claimed=False)
    assert plugin.resources[2:] == ((GPU, 8, ""), ("nvidia.com/rdma_rail0", 8, ""))
    assert plugin.claimed == (GPU,)
    assert admission.node_offer(H100, RAILS[:1], True, {}).claimed == ()  # no dra: nothing claimed


def test_a_multi_node_nvlink_node_offers_one_channel_and_none_without_compute_domains() -> None:
    assert admission.node_offer(TRAY, [], True, {}, Dra()).resources[2:] == ((GPU, 4, ""), (CHANNEL, 1, ""))
    assert admission.node_offer(TRAY, [], True, {}, Dra(compute_domains=False)).claimed == (GPU,)
    assert admission.node_offer(H100, [], True, {}, Dra()).claimed == (GPU,)  # NVLink stays within the node


def test_workers_claim_their_gpus_a_nic_of_each_attached_rail_and_a_channel() -> None:
    offer = admission.node_offer(H100, RAILS, True, {}, Dra(), nics_claimed=True)
    demand = admission.worker_demand({}, offer, 4, 3, RAILS[:4])
    assert demand == {GPU: Decimal(12), NIC: Decimal(12)}  # no per-rail resource: the claim holds the NICs
    tray = admission.node_offer(TRAY, [], True, {}, Dra())
    assert admission.worker_demand({}, tray, 2, 4, []) == {GPU: Decimal(8), CHANNEL: Decimal(4)}
    assert claimed.worker_claims(0, 0, False) == {}


def test_two_workers_of_a_tray_never_get_a_channel_each_from_a_kueue_queue() -> None:
    """Four workers of 2 GPUs on a queue of two trays: 8 GPUs fit its 8, but each worker claims a channel and the two
    trays have 2."""
    tray = admission.node_offer(TRAY, [], True, {}, Dra())
    reach = {"tray": {name: count * 2 for name, count, _ in tray.resources}}
    workers = admission.worker_demand({}, tray, 2, 4, [])
    assert admission.kueue_shortfall(reach, "tray", workers, {}, None) == \
        admission.Shortfall(CHANNEL, Decimal(4), 2)
    assert admission.kueue_shortfall(reach, "tray", admission.worker_demand({}, tray, 4, 2, []), {}, None) is None


def test_kueue_maps_each_class_a_claim_names_to_the_name_its_quotas_count() -> None:
    mappings = claimed.device_class_mappings(Dra(gpu_class="h100.example.com", nic_class="rdma.example.com"),
                                             [CHANNEL, NIC, GPU, "cpu"])
    assert [(m.name, m.device_classes) for m in mappings] == [
        (GPU, ("h100.example.com",)), (NIC, ("rdma.example.com",)),
        (CHANNEL, ("compute-domain-default-channel.nvidia.com",))]
    assert claimed.cluster_mappings(None, [(GPU,)]) == ()


H100_DRA = (PROFILES / "clusters" / "h100-dra.yaml").read_text(encoding="utf-8")
LLM = (PROFILES / "jobs" / "llm-pretrain.yaml").read_text(encoding="utf-8")
# Without its acceptance jobs: a queue of one node could never admit their two (validate says so at `acceptance`).
FOUR_RAILS = H100_DRA[:H100_DRA.index("acceptance:")].replace(
    "".join(f"  - {{name: rail{i}, nic: nic{i}}}\n" for i in range(4, 8)), "").replace("nodes: {h100: 4}",
                                                                                        "nodes: {h100: 1}")


def test_a_queue_holds_as_many_workers_as_the_nics_its_nodes_carry(profiles_copy) -> None:
    """h100-dra wired to four rails, its queue one node: a worker of 4 GPUs claims the NICs of all four rails, and
    DRANET hands a NIC to one pod, so the node's 8 GPUs hold two such workers but its 4 NICs one. The chart's maximum
    is 1, and a job of 2 is never admitted (as the NIC quota says, not the GPUs')."""
    assert "rail4" not in FOUR_RAILS and "{h100: 1}" in FOUR_RAILS
    one = LLM.replace("workers: 2", "workers: 1").replace("gpusPerWorker: 8", "gpusPerWorker: 4")
    result = compile_profiles([profiles_copy({"clusters/h100-dra.yaml": FOUR_RAILS, "jobs/llm-pretrain.yaml": one})])
    assert result.ok, [d.format() for d in result.diagnostics]
    (job,) = [job for job in result.fleet.jobs if job.name == "llm-pretrain"]
    assert job.devices is not None
    assert (job.devices.gpus, job.devices.nics, job.max_workers) == (4, 4, 1)
    assert job.queue_limit == "queue 'llm' can ever admit 1 (its quota of pool 'h100' and what it may borrow)"
    two = one.replace("workers: 1", "workers: 2")
    refused = compile_profiles([profiles_copy({"clusters/h100-dra.yaml": FOUR_RAILS, "jobs/llm-pretrain.yaml": two})])
    (never,) = refused.diagnostics
    assert never.code == NEVER_FITS
    assert never.message.startswith(f"the job's 2 workers ask for 8 {NIC} (RDMA NICs claimed through DRA), more than "
                                    "queue 'llm' can ever hold on pool 'h100' (4: 1 of 4 nodes)")
