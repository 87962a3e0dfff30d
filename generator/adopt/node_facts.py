"""`--node-facts NODE=FILE`: what `ibdev2netdev`, `nvidia-smi topo -m` and `lspci -nn` printed on one node, for the
facts no Kubernetes object holds (which mlx5_N is which interface, the GPUs and NUMA node beside each NIC, the
VFs' PCI device id). The pool of that node gets them.

The texts are parsed by mpigen.inventory.tools (identify, parse_ibdev2netdev, parse_nvidia_smi_topo,
parse_lspci_nn, ToolTextError); which GPUs are beside a NIC is its `nearest_nics`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from mpigen.adopt.result import AdoptionError
from mpigen.inventory.tools import (
    TOOL_IBDEV2NETDEV,
    TOOL_LSPCI,
    TOOL_NVIDIA_SMI_TOPO,
    HcaPort,
    PciDevice,
    ToolTextError,
    TopoMatrix,
    identify,
    nearest_nics,
    parse_ibdev2netdev,
    parse_lspci_nn,
    parse_nvidia_smi_topo,
)


@dataclass(frozen=True)
class NodeFacts:
    """What the tools printed on one node, as parsed, and the files they came from."""

    node: str
    ports: tuple[HcaPort, ...] = ()
    """The ports `ibdev2netdev` lists."""
    ports_source: str = ""
    topo: TopoMatrix | None = None
    """The matrix `nvidia-smi topo -m` prints."""
    topo_source: str = ""
    pci: tuple[PciDevice, ...] = ()
    """The devices `lspci -nn` lists."""
    pci_source: str = ""

    def port_of(self, netdev: str) -> HcaPort | None:
        return next((port for port in self.ports if port.netdev == netdev), None)

    def gpus_near(self, hca: str) -> tuple[int, ...]:
        """Indexes of the GPUs at the HCA's closest PCIe distance (`GPU3` is 3): inventory.tools.nearest_nics."""
        if self.topo is None:
            return ()
        near = nearest_nics(self.topo).get(hca, ())
        return tuple(sorted(int(digits) for gpu in near if (digits := "".join(c for c in gpu if c.isdigit()))))

    def numa_of(self, hca: str) -> int | None:
        return self.topo.nic_numa.get(hca) if self.topo is not None else None

    def device_of(self, pci_address: str | None) -> PciDevice | None:
        """The lspci line of a PCI address (`0000:0c:00.0` as `0c:00.0` too)."""
        if not pci_address:
            return None
        short = pci_address.split(":", 1)[1] if pci_address.count(":") == 2 else pci_address
        return next((d for d in self.pci if d.address in (pci_address, short)), None)

    def vf_device_ids(self, vendor: str | None) -> tuple[str, ...]:
        return tuple(sorted({d.device_id for d in self.pci if d.virtual_function and d.vendor_id == vendor}))


def read_node_facts(given: Mapping[str, list[tuple[str, str]]]) -> dict[str, NodeFacts]:
    """Each node's facts from its (source, text) pairs; AdoptionError for a text no parser knows or one it refuses."""
    out: dict[str, NodeFacts] = {}
    for node, texts in sorted(given.items()):
        facts = NodeFacts(node)
        for source, text in texts:
            kind = identify(text)
            try:
                if kind == TOOL_IBDEV2NETDEV:
                    facts = replace(facts, ports=tuple(parse_ibdev2netdev(text, source)), ports_source=source)
                elif kind == TOOL_NVIDIA_SMI_TOPO:
                    facts = replace(facts, topo=parse_nvidia_smi_topo(text, source), topo_source=source)
                elif kind == TOOL_LSPCI:
                    facts = replace(facts, pci=tuple(parse_lspci_nn(text, source)), pci_source=source)
                else:
                    raise AdoptionError(f"{source}: not the output of ibdev2netdev, nvidia-smi topo -m or lspci -nn; "
                                        "give each command's output as it printed it")
            except ToolTextError as exc:
                raise AdoptionError(str(exc)) from None
        out[node] = facts
    return out
