"""`ibdev2netdev` (MLNX_OFED / DOCA): which network interface each HCA port is, and whether its link is up.

Two forms, one line per port: `mlx5_0 port 1 ==> ib0 (Up)`, and with `-v` the PCI address, part and firmware in
front: `0000:02:00.0 mlx5_0 (MT4115 - MT1523X04353) CX456A - ConnectX-4 QSFP fw 12.23.1020 port 1 (ACTIVE) ==>
enp2s0f0 (Up)`. The state after the interface is the netdev's (`Up`/`Down`); any other word is kept as unknown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mpigen.inventory.tooltext import ToolTextError, record_lines, refuse_repeats

TOOL_IBDEV2NETDEV = "ibdev2netdev"
ARROW = " ==> "
PCI_ADDRESS = re.compile(r"(?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]")
LINK_STATES = {"(Up)": True, "(Down)": False}
EXAMPLE = "`mlx5_0 port 1 ==> ib0 (Up)`"


@dataclass(frozen=True)
class HcaPort:
    """One HCA port and its network interface; `up` is None where the tool printed no Up/Down."""

    hca: str
    port: int
    netdev: str
    up: bool | None
    line: int


def is_ibdev2netdev_line(line: str) -> bool:
    left, arrow, right = line.partition(ARROW)
    return bool(arrow) and " port " in f" {left} " and bool(right.split())


def parse_port_line(line: str, source: str, number: int) -> HcaPort:
    left, arrow, right = line.strip().partition(ARROW)
    words = left.split()
    targets = right.split()
    if not arrow or not targets or len(targets) > 2:
        raise ToolTextError(source, number, f"'{line.strip()}' is not an `ibdev2netdev` line ({EXAMPLE}); paste "
                                            f"the tool's output as it printed it")
    starts_with_address = bool(words) and PCI_ADDRESS.fullmatch(words[0]) is not None
    hca_at = 1 if starts_with_address else 0
    port_at = len(words) - 1 - words[::-1].index("port") if "port" in words else -1
    if port_at <= hca_at or port_at + 1 >= len(words) or not words[port_at + 1].isdigit():
        raise ToolTextError(source, number, f"no `<hca> port <n>` before '==>' in '{line.strip()}'; an "
                                            f"`ibdev2netdev` line reads {EXAMPLE}")
    up = LINK_STATES.get(targets[1]) if len(targets) == 2 else None
    return HcaPort(hca=words[hca_at], port=int(words[port_at + 1]), netdev=targets[0], up=up, line=number)


def parse_ibdev2netdev(text: str, source: str) -> tuple[HcaPort, ...]:
    """Every port line, in order. Lines above the first line with `==>` (a shell prompt) are skipped; after it every
    line that is not blank must be a port line."""
    ports = record_lines(text, source, lambda line: ARROW in line,
                         lambda line, number: parse_port_line(line, source, number),
                         f"no `ibdev2netdev` line ({EXAMPLE}) in this text; paste the output of `ibdev2netdev` "
                         f"(or `ibdev2netdev -v`)")
    refuse_repeats(ports, lambda port: f"{port.hca} port {port.port}", source)
    return tuple(ports)
