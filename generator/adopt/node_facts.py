"""`--node-facts NODE=FILE`: what `ibdev2netdev`, `nvidia-smi topo -m` and `lspci -nn` printed on one node, for the
facts no Kubernetes object holds (which mlx5_N is which interface, the GPUs and NUMA node beside each NIC, the
VFs' PCI device id). The pool of that node gets them.

The texts are parsed by mpigen.inventory.tools (identify, parse_ibdev2netdev, parse_nvidia_smi_topo,
parse_lspci_nn, ToolTextError); a test may give another module of the same interface.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import ModuleType

from mpigen.adopt.result import AdoptionError
from mpigen.inventory import tools as inventory_tools
from mpigen.inventory.tools import TOOL_IBDEV2NETDEV, TOOL_LSPCI, TOOL_NVIDIA_SMI_TOPO, HcaPort, PciDevice, TopoMatrix

NEAR = ("PIX", "PXB")
"""The `nvidia-smi topo -m` links at which a GPU counts as beside a NIC (at most PCIe switches between them)."""


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
        """Indexes of the GPUs at PIX or PXB from the HCA (`GPU3` is 3), nearest link first where they differ."""
        if self.topo is None:
            return ()
        found = []
        for gpu in self.topo.gpus:
            link = self.topo.link.get((gpu, hca))
            digits = "".join(c for c in gpu if c.isdigit())
            if link in NEAR and digits:
                found.append((NEAR.index(link), int(digits)))
        best = min((rank for rank, _ in found), default=None)
        return tuple(sorted(index for rank, index in found if rank == best))

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


def read_node_facts(given: Mapping[str, list[tuple[str, str]]],
                    tools: ModuleType = inventory_tools) -> dict[str, NodeFacts]:
    """Each node's facts from its (source, text) pairs; AdoptionError for a text no parser knows or one it refuses."""
    out: dict[str, NodeFacts] = {}
    for node, texts in sorted(given.items()):
        facts = NodeFacts(node)
        for source, text in texts:
            kind = tools.identify(text)
            try:
                if kind == TOOL_IBDEV2NETDEV:
                    facts = NodeFacts(node, tuple(tools.parse_ibdev2netdev(text, source)), source, facts.topo,
                                      facts.topo_source, facts.pci, facts.pci_source)
                elif kind == TOOL_NVIDIA_SMI_TOPO:
                    facts = NodeFacts(node, facts.ports, facts.ports_source, tools.parse_nvidia_smi_topo(text, source),
                                      source, facts.pci, facts.pci_source)
                elif kind == TOOL_LSPCI:
                    facts = NodeFacts(node, facts.ports, facts.ports_source, facts.topo, facts.topo_source,
                                      tuple(tools.parse_lspci_nn(text, source)), source)
                else:
                    raise AdoptionError(f"{source}: not the output of ibdev2netdev, nvidia-smi topo -m or lspci -nn; "
                                        "give each command's output as it printed it")
            except tools.ToolTextError as exc:
                raise AdoptionError(str(exc)) from None
        out[node] = facts
    return out
