"""A node's own tools, as text: `nvidia-smi topo -m`, `ibdev2netdev` and `lspci -nn` say which GPU sits beside which
NIC, which interface each HCA port is, and which parts the node holds. Import reads them beside the exported
objects; this module tells them apart and re-exports their parsers (one module each)."""

from __future__ import annotations

from mpigen.inventory.ibdev import TOOL_IBDEV2NETDEV, HcaPort, is_ibdev2netdev_line, parse_ibdev2netdev
from mpigen.inventory.lspci import TOOL_LSPCI, PciDevice, is_lspci_line, parse_lspci_nn
from mpigen.inventory.tooltext import MAX_TOOL_TEXT_BYTES, ToolTextError, read_tool_text, tool_lines
from mpigen.inventory.topo import TOOL_NVIDIA_SMI_TOPO, TopoMatrix, is_header, nearest_nics, parse_nvidia_smi_topo

__all__ = ["MAX_TOOL_TEXT_BYTES", "TOOL_IBDEV2NETDEV", "TOOL_LSPCI", "TOOL_NVIDIA_SMI_TOPO", "HcaPort", "PciDevice",
           "ToolTextError", "TopoMatrix", "identify", "nearest_nics", "parse_ibdev2netdev", "parse_lspci_nn",
           "parse_nvidia_smi_topo", "read_tool_text"]


def identify(text: str) -> str | None:
    """Which tool printed this text, by its first line only that tool prints (a header `GPU0 ...`, a port line
    `... port 1 ==> ...`, a device line `0c:00.0 ... [0207]: ...`); None if no line is any of them."""
    for _, line in tool_lines(text):
        if is_header(line.split()):
            return TOOL_NVIDIA_SMI_TOPO
        if is_ibdev2netdev_line(line):
            return TOOL_IBDEV2NETDEV
        if is_lspci_line(line):
            return TOOL_LSPCI
    return None
