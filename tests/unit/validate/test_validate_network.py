"""generator/validate/network.py: the rails' VLAN tags and the InfiniBand GUID setting, on broken copies of the
example fleet, with the message and the `path:line:col` each points at.

Line numbers are those of the example files (`cat -n profiles/clusters/roce-lab.yaml`), pinned by the asserts
below so that an edit of them fails here first.
"""

from __future__ import annotations

import pytest
from conftest import PROFILES, expect

from mpigen.support.diagnostics import Severity

ROCE_LAB = (PROFILES / "clusters" / "roce-lab.yaml").read_text(encoding="utf-8")
NETAPP_LAB = (PROFILES / "clusters" / "netapp-lab.yaml").read_text(encoding="utf-8")
DGX_LAB = (PROFILES / "clusters" / "dgx-lab.yaml").read_text(encoding="utf-8")
ROCE, NETAPP, LAB = "clusters/roce-lab.yaml", "clusters/netapp-lab.yaml", "clusters/dgx-lab.yaml"

assert ROCE_LAB.splitlines()[15] == "  provider: sriov-network-operator"
assert ROCE_LAB.splitlines()[18] == "    hardware: dgx-1-roce"
assert ROCE_LAB.splitlines()[21:25] == ["  - name: rail0", "    nic: ib0", "    vlan: 3091", "    vlanQoS: 3"]
assert NETAPP_LAB.splitlines()[22:24] == ["    nic: ib0", "    hostInterface: enp5s0.3091"]
assert DGX_LAB.splitlines()[10] == "  provider: sriov-device-plugin"
assert DGX_LAB.splitlines()[19:21] == ["  - name: rail0", "    nic: ib0"]


def test_the_example_roce_cluster_tags_its_rails_cleanly(diagnose):
    expect(diagnose({}))


def test_vlan_qos_without_a_vlan_is_refused(diagnose):
    """sriov-cni and the SriovNetwork take `vlanQoS` as the 802.1p priority of the VF's VLAN-tagged frames
    (sriov-network-operator's bindata/manifests/cni-config/sriov/sriov-cni-config.yaml writes it only beside `vlan`):
    without a VLAN there is no tag to carry it."""
    outcome = diagnose({ROCE: ROCE_LAB.replace("    vlan: 3091\n", "", 1)})
    expect(outcome, (ROCE, 24, 5, "rail 'rail0': `vlanQoS` is the priority of VLAN-tagged frames, and the rail has "
                     "no `vlan`", "add `vlan: <id>` (1-4094) to the rail, or remove `vlanQoS`"))


def test_a_vlan_on_an_infiniband_rail_is_refused(diagnose):
    """InfiniBand has partitions (pkeys), not VLANs: the operator's SriovIBNetwork has no `vlan` at all
    (tests/upstream/network/sriov-network-operator/config__crd__bases__sriovnetwork.openshift.io_sriovibnetworks.yaml),
    and dgx-1's ports are InfiniBand."""
    outcome = diagnose({ROCE: ROCE_LAB.replace("hardware: dgx-1-roce", "hardware: dgx-1")})
    expect(outcome, *((ROCE, 24 + 6 * i, 5, f"rail 'rail{i}' runs over InfiniBand NIC 'ib{i}', which has no VLANs",
                       "remove `vlan` (and `vlanQoS`)") for i in range(4)))


def test_a_vlan_under_host_networking_says_to_name_the_vlan_interface(diagnose):
    """On the nodes' own network the rail is the node's interface: mpigen cannot tag a VF there, the node's VLAN
    interface does it (the NetApp seed's enp5s0.3091)."""
    outcome = diagnose({NETAPP: NETAPP_LAB.replace("    hostInterface: enp5s0.3091\n", "    vlan: 3091\n")})
    expect(outcome, (NETAPP, 24, 5, "rail 'rail0': `vlan` is not supported under provider 'host-network': only the "
                     "SR-IOV providers (sriov-device-plugin, sriov-network-operator) set a VLAN, on each VF",
                     "name the node's VLAN interface in `hostInterface` instead (e.g. enp5s0.3091), the "
                     "interface on the node that tags the rail's frames"))


def test_a_vlan_under_rdma_shared_is_refused(diagnose):
    """rdma-shared attaches a macvlan over the node's interface: no VF to tag. Its master may be the node's VLAN
    interface (`hostInterface`), which the hint says."""
    outcome = diagnose({ROCE: ROCE_LAB.replace("provider: sriov-network-operator", "provider: rdma-shared")})
    expect(outcome, *((ROCE, 24 + 6 * i, 5, f"rail 'rail{i}': `vlan` is not supported under provider 'rdma-shared'",
                       f"name the node's VLAN interface in `hostInterface` instead (e.g. {pf}.{3091 + i})")
                      for i, pf in enumerate(("enp5s0", "enp12s0", "enp132s0", "enp139s0"))))


@pytest.mark.parametrize(("rail", "line", "column", "shown"), [
    ("    vlan: 0\n", 24, 11, "`rails[0].vlan` is 0; it must be >= 1"),
    ("    vlan: 4095\n", 24, 11, "`rails[0].vlan` is 4095; it must be <= 4094"),
    ("    vlan: 3091\n    vlanQoS: 8\n", 25, 14, "`rails[0].vlanQoS` is 8; it must be <= 7")])
def test_vlan_and_priority_ranges(diagnose, rail, line, column, shown):
    """802.1Q ids 1-4094 (0 is untagged, 4095 reserved) and 802.1p priorities 0-7, as the SriovNetwork CRD bounds
    them (tests/upstream/network/sriov-network-operator/
    config__crd__bases__sriovnetwork.openshift.io_sriovnetworks.yaml)."""
    outcome = diagnose({ROCE: ROCE_LAB.replace("    vlan: 3091\n    vlanQoS: 3\n", rail)})
    expect(outcome, (ROCE, line, column, shown))


def test_infiniband_guids_on_a_cluster_without_infiniband_rails_is_a_warning(diagnose):
    outcome = diagnose({ROCE: ROCE_LAB.replace("  provider: sriov-network-operator\n",
                                              "  provider: sriov-network-operator\n  infinibandGuids: ib-kubernetes\n")})
    expect(outcome, (ROCE, 17, 3, "`network.infinibandGuids` has no effect: no rail of the cluster runs over "
                     "InfiniBand", "remove it"), severity=Severity.WARNING)


def test_infiniband_guids_under_a_provider_without_vfs_is_a_warning(diagnose):
    outcome = diagnose({NETAPP: NETAPP_LAB.replace("  sshPort: 22122\n",
                                                  "  sshPort: 22122\n  infinibandGuids: ib-kubernetes\n")})
    expect(outcome, (NETAPP, 17, 3, "`network.infinibandGuids` has no effect under provider 'host-network'",
                     "only sriov-device-plugin and sriov-network-operator read it"), severity=Severity.WARNING)


def test_infiniband_guids_from_ib_kubernetes_on_infiniband_rails_pass(diagnose):
    outcome = diagnose({LAB: DGX_LAB.replace("  provider: sriov-device-plugin\n",
                                            "  provider: sriov-device-plugin\n  infinibandGuids: ib-kubernetes\n")})
    expect(outcome)


def test_sriov_pool_configs_need_node_labels_that_select_one_pool(diagnose):
    """A SriovNetworkPoolConfig selects its nodes by `nodeSelector` alone (tests/upstream/network/
    sriov-network-operator/config__crd__bases__sriovnetwork.openshift.io_sriovnetworkpoolconfigs.yaml): an empty one
    matches every node, which the operator would drain and reboot into RDMA exclusive mode; and "if a node is
    selected by more than one pool, then it will not be drained" (the operator's README), so never configured. So
    each pool with rails needs labels of its own, not all of which another pool's nodes carry."""
    two_pools = ROCE_LAB.replace("    nodes: 2\n", "    nodes: 2\n  - name: dgx-b\n    hardware: dgx-1-roce\n"
                                 "    nodes: 2\n    nodeLabels: {example.com/rack: b}\n", 1)
    expect(diagnose({ROCE: two_pools}), (ROCE, 21, 5, "the nodes of pool 'dgx-b' carry every node label of pool "
                                         "'dgx' too, so both pools' SriovNetworkPoolConfigs would select them",
                                         "give pool 'dgx' a node label that the nodes of 'dgx-b' do not carry"))
    apart = two_pools.replace("    hardware: dgx-1-roce\n    nodes: 2\n  - name: dgx-b",
                              "    hardware: dgx-1-roce\n    nodes: 2\n    nodeLabels: {example.com/rack: a}\n"
                              "  - name: dgx-b", 1)
    expect(diagnose({ROCE: apart}))
    dgx_1 = (PROFILES / "hardware" / "dgx-1.yaml").read_text(encoding="utf-8")
    unlabelled = dgx_1.replace("nodeLabels:\n  nvidia.com/gpu.product: Tesla-V100-SXM2-16GB\n", "")
    assert unlabelled != dgx_1
    outcome = diagnose({"hardware/dgx-1.yaml": unlabelled})
    assert [d.format() for d in outcome.diagnostics if d.location.path.endswith(ROCE)] == [
        f"{outcome.at(ROCE, 18, 5)}: error: pool 'dgx' carries rails but has no node labels: its SriovNetworkPoolConfig "
        "(RDMA exclusive mode) would select every node of the cluster, which the operator would drain and reboot; give "
        "pool "
        "'dgx' `nodeLabels` that only its nodes carry"], outcome.shown()


@pytest.mark.parametrize("name", ["eth0", "lo"])
def test_a_rail_named_like_the_pods_own_interface_is_refused_where_it_names_one(diagnose, name):
    """Multus names the rail's interface in the pod after the rail (as DRANET does: the corpus' case): `eth0` and `lo`
    the pod has already. On the nodes' own network the rail's name names no interface, so it stays free."""
    outcome = diagnose({LAB: DGX_LAB.replace("  - name: rail0\n", f"  - name: {name}\n", 1)})
    expect(outcome, (LAB, 20, 11, f"rail '{name}' would name its interface in the pod after itself, and the pod has "
                     "that interface already (the cluster network's, or loopback): the attachment would clash, and "
                     "NCCL_SOCKET_IFNAME would pick the cluster network", "give the rail another name (e.g. rail0)"))
    assert diagnose({NETAPP: NETAPP_LAB.replace("  - name: rail0\n", f"  - name: {name}\n", 1)}).diagnostics == []
