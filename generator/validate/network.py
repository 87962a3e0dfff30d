"""What a cluster's network provider needs of its rails, settings it would ignore, and the rails' address ranges."""

from __future__ import annotations

import ipaddress
from typing import Any

from mpigen.load import ProfileFile
from mpigen.model import LinkType, admission, derive, names
from mpigen.providers import PROVIDERS, Provider, provider_of
from mpigen.support.diagnostics import Diagnostic, Severity, raises
from mpigen.support.profile_rules import NETWORK
from mpigen.vocabulary.multus import POD_OWN_INTERFACES

Carriers = list[tuple[dict[str, Any], dict[str, Any]]]
"""Each node pool with its hardware profile; empty where a pool's hardware is unknown."""

# Network settings that only some providers read, and who reads them.
PROVIDER_ONLY = {key: tuple(p.name.value for p in PROVIDERS.values() if key in p.settings)
                 for provider in PROVIDERS.values() for key in provider.settings}


def host_network(cluster: dict[str, Any]) -> bool:
    """The cluster's pods use the nodes' network: one worker of a job a node (sshd's port)."""
    provider = provider_of(cluster.get("network", {}))
    return provider is not None and provider.host_network


def one_worker_per_node(cluster: dict[str, Any], job: dict[str, Any], hardware: dict[str, Any]) -> str | None:
    """Why no two workers of the job may share a node, where its network says so: host networking (sshd's port), or
    a claim that selects the job's rails' NICs by their interface (DRA), which a second worker finds taken."""
    provider = provider_of(cluster.get("network", {}))
    if provider is None:
        return None
    if provider.host_network:
        return derive.ONE_PER_NODE_HOST_NETWORK
    if provider.dra_devices and "dra" in cluster and job.get("rails", derive.pool_rails(cluster, hardware)):
        return derive.ONE_PER_NODE_CLAIMED_NICS
    return None


@raises(NETWORK)
def check_provider(document: ProfileFile, data: dict[str, Any], carriers: Carriers) -> list[Diagnostic]:
    """What the cluster's network provider needs of its rails, and settings it would ignore."""
    network = data.get("network", {})
    provider = provider_of(network)
    if provider is None:
        return []
    rails = data.get("rails", [])
    found = _check_ignored_settings(document, network, provider)
    if not provider.rdma:
        return found + _check_no_rails(document, rails, provider)
    for i, rail in enumerate(rails):
        found += _check_rail_ipam_need(document, i, rail, provider)
        if (provider.multus or provider.dra_devices) and names.rail_interface(rail["name"]) in POD_OWN_INTERFACES:
            found.append(Diagnostic(document.location("rails", i, "name"),
                                    f"rail '{rail['name']}' would name its interface in the pod after itself, and the "
                                    "pod has that interface already (the cluster network's, or loopback): the "
                                    "attachment would clash, and NCCL_SOCKET_IFNAME would pick the cluster network",
                                    "give the rail another name (e.g. rail0)"))
        if provider.host_interface and "hostInterface" not in rail:
            found += _check_host_interface(document, i, rail, provider, carriers)
        found += _check_rail_vlan(document, i, rail, provider, carriers)
    found += _check_infiniband_guids(document, network, provider, rails, carriers)
    return found + (_check_pool_selectors(document, data, carriers) if provider.selects_pools and rails else [])


def _check_pool_selectors(document: ProfileFile, data: dict[str, Any], carriers: Carriers) -> list[Diagnostic]:
    """The SR-IOV operator's SriovNetworkPoolConfig (one per pool with rails, rdmaMode exclusive) selects nodes
    by the pool's labels: with none, its empty selector matches every node of the cluster, and the operator would
    drain and reboot them all into exclusive mode; and "every node can only be part of one pool, if a node is
    selected by more than one pool, then it will not be drained" (the operator's README), so a pool whose labels
    another pool's nodes also carry is refused. (Where Kueue covers the pool, its flavor check already refuses no
    labels and the same labels twice: said once, there.)"""
    kueue = (data.get("scheduling", {}).get("scheduler") == admission.KUEUE
             and {pool for queue in admission.queues(data) for pool, _ in queue.nodes})
    selectors = []
    for i, (pool, hardware) in enumerate(carriers):
        if derive.pool_rails(data, hardware):
            selectors.append((i, pool["name"], derive.pool_node_labels(pool, hardware)))
    found = []
    for i, name, labels in selectors:
        if not labels and not (kueue and name in kueue):
            found.append(Diagnostic(document.location("nodePools", i), f"pool '{name}' carries rails but has no node "
                                    "labels: its SriovNetworkPoolConfig (RDMA exclusive mode) would select every node "
                                    "of the cluster, which the operator would drain and reboot", f"give pool '{name}' "
                                    "`nodeLabels` that only its nodes carry"))
            continue
        wider = next((other for j, other, theirs in selectors if j != i and theirs and theirs.items() <= labels.items()
                      and (theirs != labels or (j < i and not (kueue and {name, other} <= kueue)))), None)
        if wider is not None:
            found.append(Diagnostic(document.location("nodePools", i), f"the nodes of pool '{name}' carry every node "
                                    f"label of pool '{wider}' too, so both pools' SriovNetworkPoolConfigs would select "
                                    "them, and the operator never drains a node two pool configs select, so "
                                    "never configures it",
                                    f"give pool '{wider}' a node label that the nodes of '{name}' do not carry"))
    return found


def _check_ignored_settings(document: ProfileFile, network: dict[str, Any], provider: Provider) -> list[Diagnostic]:
    return [Diagnostic(document.location("network", key, at_key=True),
                       f"`network.{key}` has no effect under provider '{provider.name.value}'",
                       f"remove it (only {' and '.join(readers)} read it)", Severity.WARNING)
            for key, readers in PROVIDER_ONLY.items() if key in network and key not in provider.settings]


def _check_no_rails(document: ProfileFile, rails: list[dict[str, Any]], provider: Provider) -> list[Diagnostic]:
    if not rails:
        return []
    rdma = ", ".join(p.name.value for p in PROVIDERS.values() if p.rdma)
    return [Diagnostic(document.location("rails", at_key=True),
                       f"provider '{provider.name.value}' attaches no RDMA rails: MPI and NCCL use the cluster network",
                       f"remove `rails`, or choose an RDMA provider ({rdma})")]


def _link_types(rail: dict[str, Any], carriers: Carriers) -> set[str]:
    """The link types the pools' hardware states for the rail's NIC (one, unless check_rail_carriers refuses it)."""
    return {nic["linkType"] for _, hardware in carriers for nic in hardware.get("nics", [])
            if nic["name"] == rail["nic"] and "linkType" in nic}


def _check_rail_vlan(document: ProfileFile, i: int, rail: dict[str, Any], provider: Provider,
                     carriers: Carriers) -> list[Diagnostic]:
    """A VLAN tags Ethernet frames: SR-IOV sets it on each VF it hands out (sriov-cni's `vlan` and `vlanQoS`, the
    SriovNetwork's); InfiniBand has partitions (pkeys) instead; providers that attach the node's interface, or none,
    cannot tag anything."""
    if "vlan" not in rail:
        if "vlanQoS" in rail:
            return [Diagnostic(document.location("rails", i, "vlanQoS", at_key=True),
                               f"rail '{rail['name']}': `vlanQoS` is the priority of VLAN-tagged frames, and the rail "
                               "has no `vlan`", "add `vlan: <id>` (1-4094) to the rail, or remove `vlanQoS`")]
        return []
    where = document.location("rails", i, "vlan", at_key=True)
    if LinkType.INFINIBAND.value in _link_types(rail, carriers):
        return [Diagnostic(where, f"rail '{rail['name']}' runs over InfiniBand NIC '{rail['nic']}', which has no "
                           "VLANs (InfiniBand separates traffic by partition keys)",
                           "remove `vlan` (and `vlanQoS`); partitions are the subnet manager's to configure")]
    if provider.vlan:
        return []
    hint = (f"name the node's VLAN interface in `hostInterface` instead (e.g. {_vlan_interface(rail, carriers)}), the "
            "interface on the node that tags the rail's frames" if provider.host_interface else "remove it")
    return [Diagnostic(where, f"rail '{rail['name']}': `vlan` is not supported under provider '{provider.name.value}': "
                       "only the SR-IOV providers (" + ", ".join(p.name.value for p in PROVIDERS.values() if p.vlan)
                       + ") set a VLAN, on each VF", hint)]


def _vlan_interface(rail: dict[str, Any], carriers: Carriers) -> str:
    """The usual name of the rail's VLAN interface on a node (`<pf>.<vlan>`), for a hint."""
    pf = next((nic["pfName"] for _, hardware in carriers for nic in hardware.get("nics", [])
               if nic["name"] == rail["nic"] and nic.get("pfName")), "<interface>")
    return f"{pf}.{rail['vlan']}"


def _check_infiniband_guids(document: ProfileFile, network: dict[str, Any], provider: Provider,
                            rails: list[dict[str, Any]], carriers: Carriers) -> list[Diagnostic]:
    """`infinibandGuids` says how InfiniBand VFs get their GUIDs: where every rail's link is known and none is
    InfiniBand, it changes nothing. (Under a provider that does not read it, _check_ignored_settings says so.)"""
    if "infinibandGuids" not in network or "infinibandGuids" not in provider.settings:
        return []
    link_types = [_link_types(rail, carriers) for rail in rails]
    if not all(link_types) or any(LinkType.INFINIBAND.value in types for types in link_types):
        return []
    return [Diagnostic(document.location("network", "infinibandGuids", at_key=True),
                       "`network.infinibandGuids` has no effect: no rail of the cluster runs over InfiniBand",
                       "remove it", Severity.WARNING)]


def _check_rail_ipam_need(document: ProfileFile, i: int, rail: dict[str, Any], provider: Provider) -> list[Diagnostic]:
    """Pods attach a rail through Multus with an address of its range; on the nodes' network they use the node's."""
    if not provider.multus:
        if "ipam" in rail:
            return [Diagnostic(document.location("rails", i, "ipam", at_key=True),
                               f"rail '{rail['name']}': `ipam` has no effect under {provider.name.value} (pods use "
                               "the nodes' own addresses)", "remove it", Severity.WARNING)]
    elif "ipam" not in rail:
        return [Diagnostic(document.location("rails", i),
                           f"rail '{rail['name']}' has no `ipam`: provider '{provider.name.value}' attaches it to "
                           "pods through Multus, and each attachment needs an address",
                           "add `ipam: {range: <IPv4 CIDR of the rail>}`")]
    return []


def _check_host_interface(document: ProfileFile, i: int, rail: dict[str, Any], provider: Provider,
                          carriers: Carriers) -> list[Diagnostic]:
    """Providers whose rails are the node's interface of their NIC: each pool must name it, and where one
    NetworkAttachmentDefinition names it for every node, every pool the same. A provider that reads the NIC's pfName
    itself (rdma-shared-dev-plugin's `ifNames` selector) needs it even beside a `hostInterface`: facts.py asks for
    it there, so the rail's `hostInterface` is offered only where it is all the provider needs (dranet)."""
    found: list[Diagnostic] = []
    for pool, hardware in carriers if "pfName" not in provider.nic_facts else ():
        nic = next((n for n in hardware.get("nics", []) if n["name"] == rail["nic"]), None)
        if nic is not None and not nic.get("pfName"):
            found.append(Diagnostic(document.location("rails", i),
                                    f"rail '{rail['name']}': provider '{provider.name.value}' needs the node's interface "
                                    f"of NIC '{rail['nic']}', and hardware '{hardware['name']}' (pool "
                                    f"'{pool['name']}') does not name its pfName",
                                    "set `hostInterface` on the rail, or pfName on the NIC"))
            break
    names_seen: dict[str, str] = {}
    for pool, hardware in carriers:
        nic = next((n for n in hardware.get("nics", []) if n["name"] == rail["nic"]), None)
        if nic is not None and nic.get("pfName"):
            names_seen.setdefault(nic["pfName"], pool["name"])
    if provider.one_interface_per_rail and len(names_seen) > 1:
        # One NAD per rail and namespace names one `master` interface for every node.
        shown = ", ".join(f"{name} on pool '{pool}'" for name, pool in names_seen.items())
        found.append(Diagnostic(document.location("rails", i),
                                f"rail '{rail['name']}': provider '{provider.name.value}' attaches it through one "
                                f"NetworkAttachmentDefinition over one node interface, but NIC '{rail['nic']}' "
                                f"is {shown}",
                                "set `hostInterface` on the rail to a name every pool's nodes have (e.g. a "
                                "udev-renamed interface), or give each pool its own rail"))
    return found


@raises(NETWORK)
def check_rail_carriers(document: ProfileFile, i: int, rail: dict[str, Any], carriers: Carriers) -> list[Diagnostic]:
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


@raises(NETWORK)
def check_ipam(document: ProfileFile, rails: list[dict[str, Any]], carriers: Carriers) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    networks: list[tuple[int, ipaddress.IPv4Network]] = []
    for i, rail in enumerate(rails):
        if "ipam" not in rail:
            continue  # check_provider says whether the provider needs it
        text = rail["ipam"]["range"]
        try:
            network = ipaddress.IPv4Network(text, strict=False)
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
                sub = ipaddress.IPv4Network(excluded, strict=False)
            except ValueError:
                found.append(Diagnostic(where, f"'{excluded}' is not an IPv4 CIDR", "write it like 192.168.100.0/28"))
                continue
            if not sub.subnet_of(network):
                found.append(Diagnostic(where, f"excluded {sub} is not inside the rail's range {network}",
                                        "exclude only addresses of this rail's range"))
        found += _check_ipam_size(document, i, rail, network, carriers)
    return found


def _check_ipam_size(document: ProfileFile, i: int, rail: dict[str, Any], network: ipaddress.IPv4Network,
                     carriers: Carriers) -> list[Diagnostic]:
    """Every node that carries the rail must be able to run at least one pod on it."""
    nodes = sum(int(pool["nodes"]) for pool, hardware in carriers if rail["nic"] in derive.nic_names(hardware))
    excluded: set[ipaddress.IPv4Network] = set()
    for text in rail["ipam"].get("exclude", []):
        try:
            sub = ipaddress.IPv4Network(text, strict=False)
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
