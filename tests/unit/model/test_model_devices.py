"""generator/model/devices.py: which GPUs each NIC is claimed with, from what the hardware profile states, checked
against a table worked by hand from each catalogue entry's own lines (generator/hardware/*.yaml) and the example
fleet's hardware.

What alignment means (Kubernetes, "Standard Device Attributes for Dynamic Resource Allocation"): devices with the
same `resource.kubernetes.io/pcieRoot` sit under one PCIe root complex; nvidia-smi's PIX (one switch), PXB (several
switches) and PHB (the CPU's host bridge) stay under one root, NODE and SYS cross roots.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from conftest import PROFILES
from ruamel.yaml import YAML

from mpigen.load import to_plain
from mpigen.load.catalogue import builtin_names, expand_hardware, load_builtin
from mpigen.model import Dra
from mpigen.model.devices import (
    Alignment,
    ClaimedRail,
    DevicePair,
    NicSide,
    SplitProblem,
    nic_groups,
    pair_devices,
    worker_devices,
)
from mpigen.resolve.hardware import resolved_hardware
from mpigen.vocabulary import dra

# Hardware: (GPUs, {NIC: (GPUs claimed with it, alignment)}), by hand from each file's lines.
EXPECTED = {
    # gpu.nicDistance PIX: "every two GPUs share a PCIe switch that also holds one IB card"; 8 GPUs over 4 NICs.
    "dgx-1": (8, {f"ib{i}": (2, Alignment.PCIE_ROOT) for i in range(4)}),
    "dgx-1-32gb": (8, {f"ib{i}": (2, Alignment.PCIE_ROOT) for i in range(4)}),
    # No distance, NUMA node or GPUs per NIC published: counted evenly, not aligned.
    "dgx-2": (16, {f"nic{i}": (2, Alignment.NONE) for i in range(8)}),
    "dgx-a100": (8, {f"ib{i}": (1, Alignment.NONE) for i in range(8)}),
    "dgx-h100": (8, {f"nic{i}": (1, Alignment.NONE) for i in range(8)}),
    "gb200-nvl72": (4, {f"nic{i}": (1, Alignment.NONE) for i in range(4)}),  # one NIC per GPU, place unpublished
    "cpu-node": (0, {}),
}


def _catalogue(name: str):
    document, problems = load_builtin(name)
    assert document is not None and not problems
    (merged,) = expand_hardware([document]).documents  # `extends` followed, as the pipeline does
    return resolved_hardware(to_plain(merged.data))


@pytest.mark.parametrize("name", sorted(set(builtin_names()) & set(EXPECTED)))
def test_each_catalogue_nic_is_claimed_with_the_gpus_its_profile_puts_beside_it(name: str):
    hardware = _catalogue(name)
    gpus, nics = EXPECTED[name]
    assert (hardware.gpu.count if hardware.gpu else 0) == gpus
    rails = [ClaimedRail(f"rail-{nic.name}", nic.name, f"if-{nic.name}") for nic in hardware.nics]
    found = worker_devices(Dra(), hardware, rails, gpus, nics_claimed=True)
    assert not isinstance(found, SplitProblem)
    assert {pair.nic: (pair.gpus, pair.alignment) for pair in found.pairs} == nics
    assert found.gpus == gpus and found.nics == len(nics)
    # Only GB200 NVL72's GPUs reach other nodes over NVLink (gpu.nvlinkDomainGpus 72 > 4): its workers claim the
    # ComputeDomain's IMEX channel, unless the cluster runs no ComputeDomains.
    assert found.channel == (name == "gb200-nvl72")
    assert not worker_devices(Dra(compute_domains=False), hardware, rails, gpus, nics_claimed=True).channel  # type: ignore[union-attr]


def test_every_catalogue_entry_is_in_the_table():
    """A new catalogue entry needs its row worked by hand here."""
    assert set(builtin_names()) == set(EXPECTED)


def test_the_example_dgx1_pairs_each_ib_card_with_the_two_gpus_its_profile_lists():
    """profiles/hardware/dgx-1.yaml: ib0 gpus [0, 1], ib1 [2, 3], ib2 [4, 5], ib3 [6, 7]."""
    hardware = resolved_hardware(YAML(typ="safe").load(PROFILES / "hardware" / "dgx-1.yaml"))
    rails = [ClaimedRail(f"rail{i}", f"ib{i}", f"ib{i}") for i in range(4)]
    found = worker_devices(Dra(), hardware, rails, 8, nics_claimed=True)
    assert not isinstance(found, SplitProblem)
    assert [(p.rail, p.nic, p.gpus, p.alignment) for p in found.pairs] == [
        (f"rail{i}", f"ib{i}", 2, Alignment.PCIE_ROOT) for i in range(4)]
    assert found.pairs[1].fact == "nics[ib1].gpus [2, 3]: those GPUs share the NIC's PCIe switch"


SIDES = [NicSide("ib0", (0, 1), 0), NicSide("ib1", (2, 3), 0), NicSide("ib2", (), 1), NicSide("ib3", (), None)]


def test_a_nic_is_aligned_by_the_most_precise_fact_its_hardware_states(monkeypatch):
    groups = nic_groups(8, None, SIDES)
    # NVIDIA's GPU DRA driver and DRANET publish no resource.kubernetes.io/numaNode (deviceinfo.go; DRANET's is
    # dra.net/numaNode): a NUMA-only NIC is counted, not aligned, and said to be unaligned.
    assert [(g.gpus, g.alignment, g.said) for g in groups.values()] == [
        (2, Alignment.PCIE_ROOT, True), (2, Alignment.PCIE_ROOT, True), (2, Alignment.NONE, False),
        (2, Alignment.NONE, False)]
    assert "the drivers publish no resource.kubernetes.io/numaNode" in groups["ib2"].fact
    assert nic_groups(8, "PXB", SIDES)["ib2"].alignment is Alignment.PCIE_ROOT  # within one root
    across = nic_groups(8, "NODE", SIDES)["ib3"]  # across host bridges: no PCIe root to share, as the profile says
    assert (across.alignment, across.said) == (Alignment.NONE, True)
    # Once both drivers publish the standard NUMA node (KEP-6072), a NUMA-only NIC is aligned by it.
    for driver in (dra.GPU_DRIVER, dra.NIC_DRIVER):
        published = dra.DRIVERS[driver]
        monkeypatch.setitem(dra.DRIVERS, driver, replace(published, attributes=published.attributes | {dra.NUMA_NODE}))
    assert nic_groups(8, None, SIDES)["ib2"].alignment is Alignment.NUMA_NODE
    assert Alignment.PCIE_ROOT.attribute == "resource.kubernetes.io/pcieRoot"
    assert Alignment.NUMA_NODE.attribute == "resource.kubernetes.io/numaNode"
    assert Alignment.NONE.attribute is None
    assert nic_groups(6, None, SIDES[2:])["ib3"].gpus == 3  # 6 GPUs over 2 NICs
    assert nic_groups(7, None, SIDES[2:])["ib3"].gpus is None  # no even split: unknown


def _rails(*nics: str) -> list[ClaimedRail]:
    return [ClaimedRail(f"rail{n[-1]}", n, n) for n in nics]


def test_a_worker_spreads_its_gpus_evenly_over_its_rails_within_what_each_nic_has():
    groups = nic_groups(8, None, SIDES)
    assert [p.gpus for p in pair_devices(4, _rails("ib0", "ib1"), groups, True)] == [2, 2]  # type: ignore[union-attr]
    assert [p.gpus for p in pair_devices(2, _rails("ib0", "ib1"), groups, True)] == [1, 1]  # type: ignore[union-attr]
    assert [p.gpus for p in pair_devices(0, _rails("ib0"), groups, True)] == [0]  # type: ignore[union-attr]
    uneven = pair_devices(3, _rails("ib0", "ib1"), groups, True)
    assert isinstance(uneven, SplitProblem) and "do not divide evenly" in uneven.message
    too_many = pair_devices(8, _rails("ib0", "ib1"), groups, True)
    assert isinstance(too_many, SplitProblem)
    assert too_many.message == ("the workers ask for 8 GPUs each over 2 rails, 4 beside each rail's NIC, but rail "
                                "'rail0' runs over NIC 'ib0', which has 2 beside it (nics[ib0].gpus [0, 1]: those GPUs "
                                "share the NIC's PCIe switch)")
    assert "at most 4 GPUs a worker" in too_many.fix


def test_without_claimed_nics_the_gpus_are_claimed_alone():
    groups = nic_groups(8, None, SIDES)
    (alone,) = pair_devices(8, _rails("ib0", "ib1"), groups, nics_claimed=False)  # type: ignore[misc]
    assert alone == DevicePair(8, None, None, None, Alignment.NONE,
                               "no rail's NIC is claimed through DRA: the GPUs are claimed alone")
    assert alone.gpu_request == "gpus"
    assert pair_devices(0, [], groups, nics_claimed=True) == ()
