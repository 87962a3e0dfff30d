"""`nvidia-smi topo -m`: which GPU sits beside which NIC, as the driver sees the PCIe tree.

The matrix has one column per GPU and NIC, then `CPU Affinity`, and on newer drivers `NUMA Affinity` and
`GPU NUMA ID`. Older drivers name a NIC column by its HCA (`mlx5_0`); newer ones print `NIC0`..`NICn` and a
`NIC Legend:` block after the `Legend:` text (`  NIC0: mlx5_0`). A cell says how a GPU reaches a device: `X`
(itself), `NV#` (# bonded NVLinks), or the PCIe path, nearest first: PIX (at most one bridge), PXB (several bridges,
no host bridge), PHB (through the host bridge), NODE (between host bridges of one NUMA node), SYS (across NUMA
nodes). A cell it does not know is kept as printed and never counts as near.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from mpigen.inventory.tooltext import ToolTextError, tool_lines

TOOL_NVIDIA_SMI_TOPO = "nvidia-smi-topo"
NEAR_LINKS = ("PIX", "PXB", "PHB")
"""Links under one PCIe root: a NIC is a GPU's rail only through these. NODE and SYS cross the CPU's interconnect, so
a NIC that reaches every GPU only that way (a storage or management NIC) is near none of them."""
SAME_NUMA_LINKS = ("PIX", "PXB", "PHB", "NODE")
AFFINITY_HEADERS = (("CPU", "Affinity"), ("NUMA", "Affinity"), ("GPU", "NUMA", "ID"))
HEADER_HINT = "paste the whole output of `nvidia-smi topo -m`, from its header line (GPU0 GPU1 ... CPU Affinity)"


@dataclass(frozen=True)
class TopoMatrix:
    """The GPU-to-NIC part of the matrix. `nics` are HCA names (the NIC Legend resolved); `link[(gpu, nic)]` is the
    cell as printed; `gpu_numa` is each GPU's NUMA Affinity (None where the driver prints N/A or no such column);
    `nic_numa` is the NUMA node of the GPUs a NIC reaches without crossing NUMA nodes (None if none or several)."""

    gpus: tuple[str, ...]
    nics: tuple[str, ...]
    link: Mapping[tuple[str, str], str] = field(default_factory=dict)
    gpu_numa: Mapping[str, int | None] = field(default_factory=dict)
    nic_numa: Mapping[str, int | None] = field(default_factory=dict)


def is_gpu_name(token: str) -> bool:
    return token.startswith("GPU") and token[3:].isdigit()


def is_nic_alias(token: str) -> bool:
    return token.startswith("NIC") and token[3:].isdigit()


def is_header(tokens: list[str]) -> bool:
    return bool(tokens) and tokens[0] == "GPU0"


def header_columns(tokens: list[str], source: str, number: int) -> tuple[tuple[str, ...], int]:
    """The device columns, and how many affinity values a GPU row carries after its cells."""
    devices: list[str] = []
    index = 0
    while index < len(tokens) and tokens[index] != "CPU":
        devices.append(tokens[index])
        index += 1
    affinities = 0
    for words in AFFINITY_HEADERS:
        if tuple(tokens[index:index + len(words)]) == words:
            affinities += 1
            index += len(words)
    if index != len(tokens):
        raise ToolTextError(source, number, f"header column '{tokens[index]}' is not one `nvidia-smi topo -m` prints "
                                            f"(GPU<n>, NIC<n> or an HCA, then CPU Affinity, NUMA Affinity, GPU NUMA ID); "
                                            f"{HEADER_HINT}")
    if len(set(devices)) != len(devices):
        raise ToolTextError(source, number, f"a column is named twice in the header; {HEADER_HINT}")
    return tuple(devices), affinities


def parse_numa(value: str) -> int | None:
    return int(value) if value.isdigit() else None


def parse_nvidia_smi_topo(text: str, source: str) -> TopoMatrix:
    """The matrix of one node's `nvidia-smi topo -m`. Lines above the header (a shell prompt) are skipped; the
    matrix ends at the first blank line or `Legend:`; after it only the NIC Legend is read."""
    lines = tool_lines(text)
    devices: tuple[str, ...] = ()
    affinities = 0
    header_line = 0
    first_text = 0
    for number, line in lines:
        tokens = line.split()
        if tokens and not first_text:
            first_text = number
        if is_header(tokens):
            devices, affinities = header_columns(tokens, source, number)
            header_line = number
            break
    if not header_line:
        raise ToolTextError(source, first_text or 1, f"no `nvidia-smi topo -m` header line (GPU0 ... CPU Affinity) "
                                                     f"in this text; {HEADER_HINT}")
    columns = {name: index for index, name in enumerate(devices)}
    rows: dict[str, tuple[list[str], int]] = {}
    legend: dict[str, str] = {}
    in_legend = False
    for number, line in lines:
        tokens = line.split()
        if not tokens or tokens[0] == "Legend:":
            break
        name = tokens[0]
        if name not in columns:
            raise ToolTextError(source, number, f"row '{name}' is not a column of the header (line {header_line}); "
                                                f"{HEADER_HINT}")
        if name in rows:
            raise ToolTextError(source, number, f"row '{name}' appears twice (first on line {rows[name][1]}); "
                                                f"{HEADER_HINT}")
        cells = tokens[1:]
        wanted = len(devices) + (affinities if is_gpu_name(name) else 0)
        if len(cells) < len(devices) or len(cells) > wanted:
            raise ToolTextError(source, number, f"row '{name}' has {len(cells)} cells, the header (line {header_line}) "
                                                f"{len(devices)} columns; {HEADER_HINT} without wrapped or cut lines")
        if cells[columns[name]] != "X":
            raise ToolTextError(source, number, f"row '{name}' does not have X in its own column '{name}'; "
                                                f"{HEADER_HINT}")
        rows[name] = (cells, number)
    for _, line in lines:
        stripped = line.strip()
        if stripped == "NIC Legend:":
            in_legend = True
        elif in_legend and stripped:
            alias, colon, hca = stripped.partition(":")
            if not colon or not is_nic_alias(alias) or len(hca.split()) != 1:
                break
            legend[alias] = hca.strip()
    gpus = tuple(name for name in devices if is_gpu_name(name))
    nic_columns = tuple(name for name in devices if not is_gpu_name(name))
    for alias in nic_columns:
        if is_nic_alias(alias) and alias not in legend:
            raise ToolTextError(source, header_line, f"column '{alias}' has no entry in the `NIC Legend:` block; "
                                                     f"{HEADER_HINT} down to the end of its NIC Legend")
    nics = tuple(legend.get(alias, alias) for alias in nic_columns)
    if len(set(nics)) != len(nics):
        raise ToolTextError(source, header_line, f"two NIC columns name the same HCA ({', '.join(nics)}); {HEADER_HINT}")
    link: dict[tuple[str, str], str] = {}
    gpu_numa: dict[str, int | None] = {}
    for gpu in gpus:
        if gpu not in rows:
            raise ToolTextError(source, header_line, f"column '{gpu}' has no row under the header; {HEADER_HINT}")
        cells, _ = rows[gpu]
        for alias, nic in zip(nic_columns, nics, strict=True):
            link[(gpu, nic)] = cells[columns[alias]]
        extra = cells[len(devices):]
        gpu_numa[gpu] = parse_numa(extra[1]) if affinities >= 2 and len(extra) >= 2 else None
    nic_numa: dict[str, int | None] = {}
    for nic in nics:
        nodes = {gpu_numa[gpu] for gpu in gpus if link[(gpu, nic)] in SAME_NUMA_LINKS}
        nic_numa[nic] = nodes.pop() if len(nodes) == 1 else None
    return TopoMatrix(gpus=gpus, nics=nics, link=link, gpu_numa=gpu_numa, nic_numa=nic_numa)


def nearest_nics(matrix: TopoMatrix) -> Mapping[str, tuple[str, ...]]:
    """Per NIC, the GPUs at its closest PCIe distance (PIX before PXB before PHB), which is a hardware profile's
    `nics[].gpus`; a NIC no GPU reaches under one PCIe root has none."""
    nearest: dict[str, tuple[str, ...]] = {}
    for nic in matrix.nics:
        ranked = [(NEAR_LINKS.index(cell), gpu) for gpu in matrix.gpus
                  if (cell := matrix.link.get((gpu, nic), "")) in NEAR_LINKS]
        best = min((rank for rank, _ in ranked), default=None)
        nearest[nic] = tuple(gpu for rank, gpu in ranked if rank == best)
    return nearest
