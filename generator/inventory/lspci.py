"""`lspci -nn`: the PCI devices of a node, with the numeric class and vendor:device ids that name a part exactly.

One line per function: `0000:0c:00.0 Infiniband controller [0207]: Mellanox Technologies MT28908 Family
[ConnectX-6] [15b3:101b]`, the domain absent unless `-D` was given or the machine has several, and often a
` (rev xx)` or ` (prog-if xx [...])` after the ids. An SR-IOV virtual function says so in its name ("ConnectX-6
Virtual Function"). Addresses are kept with their domain (`0000:` where it was left out), in lower case, as
Kubernetes objects (SriovNetworkNodeState, device plugin selectors) spell them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mpigen.inventory.tooltext import ToolTextError, record_lines, refuse_repeats

TOOL_LSPCI = "lspci"
ADDRESS = re.compile(r"(?:([0-9a-fA-F]{4,8}):)?([0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])")
HEX4 = re.compile(r"[0-9a-fA-F]{4}")
IDS = re.compile(r"([0-9a-fA-F]{4}):([0-9a-fA-F]{4})")
VIRTUAL_FUNCTION = "Virtual Function"
EXAMPLE = "`0000:0c:00.0 Infiniband controller [0207]: Mellanox Technologies ... [15b3:101b]`"
HINT = f"paste the output of `lspci -nn` (each line like {EXAMPLE})"


@dataclass(frozen=True)
class PciDevice:
    """One PCI function as `lspci -nn` names it."""

    address: str
    class_id: str
    class_name: str
    vendor_id: str
    device_id: str
    description: str
    virtual_function: bool
    line: int


def strip_suffixes(text: str) -> str:
    """The description without the ` (rev xx)` and ` (prog-if ...)` lspci adds after the ids."""
    for marker in (" (rev ", " (prog-if "):
        at = text.find(marker)
        if at >= 0 and text.endswith(")"):
            text = text[:at].rstrip()
    return text


def parse_device_line(line: str, number: int, source: str) -> PciDevice | None:
    """The device on this line, or None if the line does not start like an `lspci -nn` line."""
    address, _, rest = line.strip().partition(" ")
    found = ADDRESS.fullmatch(address)
    if found is None:
        return None
    class_part, colon, described = rest.partition("]: ")
    class_name, bracket, class_id = class_part.rpartition(" [")
    if not colon or not bracket or HEX4.fullmatch(class_id) is None:
        raise ToolTextError(source, number, f"no class id `[xxxx]:` after the address {address}; the text looks like "
                                            f"`lspci` without `-nn`: {HINT}")
    described = strip_suffixes(described.strip())
    name, bracket, ids = described.rpartition(" [")
    pair = IDS.fullmatch(ids[:-1]) if ids.endswith("]") else None
    if not bracket or pair is None:
        raise ToolTextError(source, number, f"no `[vendor:device]` ids at the end of the line of {address}; {HINT}")
    domain = (found.group(1) or "0000").lower()
    return PciDevice(address=f"{domain}:{found.group(2).lower()}", class_id=class_id.lower(),
                     class_name=class_name.strip(), vendor_id=pair.group(1).lower(), device_id=pair.group(2).lower(),
                     description=name.strip(), virtual_function=VIRTUAL_FUNCTION in name, line=number)


def starts_with_address(line: str) -> bool:
    return ADDRESS.fullmatch(line.strip().partition(" ")[0]) is not None


def device_line(line: str, number: int, source: str) -> PciDevice:
    device = parse_device_line(line, number, source)
    if device is None:
        raise ToolTextError(source, number, f"'{line.strip()[:80]}' is not an `lspci -nn` line; {HINT}, nothing "
                                            f"else after it")
    return device


def is_lspci_line(line: str) -> bool:
    address, _, rest = line.strip().partition(" ")
    return ADDRESS.fullmatch(address) is not None and "]: " in rest


def parse_lspci_nn(text: str, source: str) -> tuple[PciDevice, ...]:
    """Every device, in order. Lines above the first line that starts with a PCI address (a shell prompt) are
    skipped; after it every line that is not blank must be a device line."""
    devices = record_lines(text, source, starts_with_address, lambda line, number: device_line(line, number, source),
                           f"no `lspci -nn` line in this text; {HINT}")
    refuse_repeats(devices, lambda device: f"device {device.address}", source)
    return tuple(devices)
