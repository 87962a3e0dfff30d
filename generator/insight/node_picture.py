"""One node of `mpigen plan --html/--svg` drawn: its GPUs and NICs grouped as the hardware profile says (a NIC with
the GPUs beside it on one PCIe switch, inside the NUMA node the NIC hangs off), the ranks on the GPUs they drive,
and the workers of a node with no GPUs named line by line."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from html import escape

from mpigen.insight import bounds
from mpigen.insight.plan import JobPlan
from mpigen.insight.ranks import RankBinding
from mpigen.model import Hardware, Nic
from mpigen.model.devices import Alignment, DevicePair, NicGroup, hardware_groups
from mpigen.support.diagnostics import one_line

GPU_W, GPU_H, NIC_W, GAP, PAD = 26, 22, 46, 4, 8
PAIR_LABEL_W = 44
"""Room right of a claimed pair's GPUs for what they share (`pcieRoot`, `numaNode`)."""
HEADER = 18


def escaped(text: object) -> str:
    """`text` as HTML and SVG text or attribute: control characters written as escapes (`one_line`: XML 1.0 cannot
    hold most of them, and a file name may), then markup escaped."""
    return escape(one_line(str(text)), quote=True)


@dataclass(frozen=True)
class _Group:
    """A NIC and the GPUs beside it (one PCIe switch), or GPUs no NIC names (nic None)."""

    nic: Nic | None
    gpus: tuple[int, ...]
    pairing: NicGroup | None = None
    """Under DRA: what a worker's claim pairs the NIC with (model/devices.py); None: no claim pairs them."""
    in_order: bool = False
    """The profile gives how many GPUs sit beside the NIC, not which: `gpus` are drawn in order."""


@dataclass(frozen=True)
class _Numa:
    label: str
    groups: tuple[_Group, ...]


def node_layout(hardware: Hardware, paired: bool = False) -> tuple[_Numa, ...]:
    """The hardware's NICs and GPUs by NUMA node and PCIe switch, as its profile states them. `paired`: workers claim
    each NIC together with the GPUs beside it (DRA): a NIC whose profile gives how many GPUs share its PCIe root or NUMA
    node but not which (`gpu.nicDistance`, `numaNode`) is drawn with that many of the GPUs no NIC names, in order."""
    groups = hardware_groups(hardware) if paired else {}
    by_numa: dict[int | None, list[_Group]] = {}
    listed = {gpu for nic in hardware.nics for gpu in nic.gpus}
    unnamed = iter(gpu for gpu in range(hardware.gpu.count if hardware.gpu else 0) if gpu not in listed)
    named: set[int] = set()
    for nic in hardware.nics:  # a GPU two NICs name is drawn beside the first (explain's NIC of its ranks)
        pairing = groups.get(nic.name)
        if nic.gpus or pairing is None or not pairing.gpus or pairing.alignment is Alignment.NONE:
            group = _Group(nic, tuple(g for g in nic.gpus if g not in named), pairing)
        else:
            group = _Group(nic, tuple(itertools.islice(unnamed, pairing.gpus)), pairing, in_order=True)
        by_numa.setdefault(nic.numa_node, []).append(group)
        named.update(group.gpus)
    rest = tuple(gpu for gpu in range(hardware.gpu.count if hardware.gpu else 0) if gpu not in named)
    if rest:
        by_numa.setdefault(None, []).append(_Group(None, rest))
    order = sorted(numa for numa in by_numa if numa is not None) + ([None] if None in by_numa else [])
    return tuple(_Numa(f"NUMA {numa}" if numa is not None else "NUMA not stated", tuple(by_numa[numa]))
                 for numa in order)


@dataclass(frozen=True)
class _Geometry:
    width: int
    height: int
    nic_y: dict[str, int]
    """Each NIC's centre, from the node's top."""


NUMA_LABEL = 12


def _rows(layout: tuple[_Numa, ...]) -> list[tuple[_Numa, int, int]]:
    """Each NUMA node's label line and groups one under another, so that every NIC has a height of its own and
    each rail its own line: (NUMA node, index of its group or -1 for the label, y from the node's top)."""
    rows, y = [], HEADER + 2
    for numa in layout:
        rows.append((numa, -1, y))
        y += NUMA_LABEL
        for i in range(len(numa.groups)):
            rows.append((numa, i, y))
            y += GPU_H + GAP
    return rows


def node_geometry(layout: tuple[_Numa, ...], cpu_rows: int) -> _Geometry:
    widest = max((len(group.gpus) for numa in layout for group in numa.groups), default=0)
    rows = _rows(layout)
    nic_y = {nic.name: y + GPU_H // 2 for numa, i, y in rows
             if i >= 0 and (nic := numa.groups[i].nic) is not None}
    paired = any(_labelled(group) for numa in layout for group in numa.groups)
    width = max(NIC_W + GAP + widest * (GPU_W + GAP) + 2 * PAD + (PAIR_LABEL_W if paired else 0), 150)
    bottom = rows[-1][2] + (GPU_H + GAP if rows[-1][1] >= 0 else NUMA_LABEL) if rows else HEADER + 14
    return _Geometry(width, bottom + cpu_rows * 14 + PAD, nic_y)


def node_svg(node: int, x: int, y: int, geometry: _Geometry, layout: tuple[_Numa, ...], rails: list,
             hardware: Hardware, workers: list[tuple[JobPlan, int]], bindings: dict[str, dict[int, list[RankBinding]]],
             colours: dict[tuple[str, str], str], cluster: str) -> str:
    rail_of_nic = {rail.nic_name: rail.name for rail in rails}
    gpu_use: dict[int, tuple[JobPlan, RankBinding]] = {}
    unplaced: list[tuple[JobPlan, RankBinding]] = []  # ranks on GPUs the device plugin chooses
    for plan, worker in workers:
        for binding in bindings[plan.name].get(worker, []):
            if binding.gpu is not None:
                gpu_use[binding.gpu] = (plan, binding)
            elif plan.gpus_per_worker:
                unplaced.append((plan, binding))
    free = [gpu for gpu in range(hardware.gpu.count if hardware.gpu else 0) if gpu not in gpu_use]
    chosen = {}
    for gpu, use in zip(free, [u for u in unplaced if u[1].local_rank < u[0].gpus_per_worker], strict=False):
        chosen[gpu] = use
    out = [f'<g transform="translate({x},{y})" data-node="{node}">',
           f'<rect width="{geometry.width}" height="{geometry.height}" rx="6" fill="#f8fafc" stroke="#52606d"/>',
           f'<text x="{PAD}" y="13" font-weight="bold">node {node}</text>']
    for numa, i, gy in _rows(layout):
        if i < 0:
            out.append(f'<text x="{PAD}" y="{gy + 9}" fill="#7b8794" font-size="9">{escaped(numa.label)}</text>')
            continue
        group = numa.groups[i]
        rail = rail_of_nic.get(group.nic.name) if group.nic is not None else None
        claims = [(plan, worker, pair) for plan, worker in workers if plan.devices is not None
                  for pair in plan.devices.pairs if group.nic is not None and pair.nic == group.nic.name]
        if group.nic is not None:
            out.append(_nic_svg(group.nic, PAD, gy, rail, gpu_use, group.gpus, colours, cluster,
                                tuple(plan.name for plan, _, _ in claims)))
        for j, gpu in enumerate(group.gpus):
            out.append(_gpu_svg(gpu, PAD + NIC_W + GAP + j * (GPU_W + GAP), gy, gpu_use.get(gpu), chosen.get(gpu),
                                colours, cluster))
        if rail is not None and _labelled(group):
            out.append(_pair_svg(group, PAD + NIC_W + GAP + len(group.gpus) * (GPU_W + GAP), gy, claims))
    named = [] if hardware.gpu else workers
    more = len(named) - (bounds.WORKERS_DRAWN - 1) if len(named) > bounds.WORKERS_DRAWN else 0  # a line says so
    named = named[:len(named) - more]
    lines = len(named) + (1 if more else 0)
    for k, (plan, worker) in enumerate(named):
        colour = colours[(cluster, plan.name)]
        first = worker * plan.slots_per_worker
        out.append(f'<text x="{PAD}" y="{geometry.height - PAD - (lines - 1 - k) * 14}" fill="{colour}" '
                   f'font-weight="bold" data-job="{escaped(plan.name)}" data-worker="{worker}">'
                   f'{escaped(plan.name)} w{worker}: ranks {first}-{first + plan.slots_per_worker - 1}</text>')
    if more:
        out.append(f'<text x="{PAD}" y="{geometry.height - PAD}" fill="#52606d" data-omitted-workers="{more}">'
                   f'... and {more} more workers</text>')
    if not layout:
        cores = f" x {hardware.cpu.cores_per_socket} cores" if hardware.cpu.cores_per_socket else " socket(s)"
        out.append(f'<text x="{PAD}" y="{HEADER + 10}" fill="#7b8794">{hardware.cpu.sockets}{cores}, no GPUs'
                   '</text>')
    out.append("</g>")
    return "".join(out)


def _labelled(group: _Group) -> bool:
    """A claim pairs the group's NIC with its GPUs under a constraint: the picture says what they share."""
    return group.pairing is not None and group.pairing.alignment is not Alignment.NONE and bool(group.gpus)


def _pair_svg(group: _Group, x: int, y: int, claims: list[tuple[JobPlan, int, DevicePair]]) -> str:
    """What a claim's NIC and GPUs share, right of the GPUs, and (hover) the hardware fact and who claims them."""
    pairing, nic = group.pairing, group.nic
    if pairing is None or nic is None:
        return ""
    alignment = pairing.alignment.value
    title = (f"NIC {nic.name} and the {len(group.gpus)} GPU(s) beside it: a worker's claim takes them together "
             f"(matchAttribute {pairing.alignment.attribute}), from {pairing.fact}"
             + ("; which GPUs is the driver's choice, drawn here in order" if group.in_order else "")
             + "".join(f"; {plan.name} worker {worker} claims {pair.nic_request} with {pair.gpu_request} "
                       f"({pair.gpus} GPU(s))" for plan, worker, pair in claims))
    return (f'<g data-pair="{escaped(nic.name)}" data-alignment="{escaped(alignment)}" data-pair-gpus="{len(group.gpus)}"'
            f' data-claims="{escaped(" ".join(f"{plan.name}/{worker}" for plan, worker, _ in claims))}">'
            f'<title>{escaped(title)}</title>'
            f'<text x="{x + 1}" y="{y + 14}" font-size="8" fill="#52606d">{escaped(alignment)}</text></g>')


def _nic_svg(nic: Nic, x: int, y: int, rail: str | None, gpu_use: dict[int, tuple[JobPlan, RankBinding]],
             gpus: tuple[int, ...], colours: dict[tuple[str, str], str], cluster: str,
             claimed: tuple[str, ...] = ()) -> str:
    users = sorted({gpu_use[g][0].name for g in gpus if g in gpu_use and gpu_use[g][1].nic == nic.name}
                   | set(claimed))
    stroke = colours[(cluster, users[0])] if users else "#52606d"
    title = f"NIC {nic.name}" + (f" ({nic.hca})" if nic.hca else "") + (f", rail {rail}" if rail else ", no rail") \
        + (f"; used by {', '.join(users)}" if users else "")
    return (f'<g data-nic="{escaped(nic.name)}" data-rail="{escaped(rail or "")}" data-jobs="{escaped(" ".join(users))}">'
            f'<title>{escaped(title)}</title>'
            f'<rect x="{x}" y="{y}" width="{NIC_W}" height="{GPU_H}" rx="3" fill="#d9e2ec" stroke="{stroke}" '
            f'stroke-width="{3 if users else 1}"/>'
            f'<text x="{x + NIC_W // 2}" y="{y + 10}" text-anchor="middle" font-size="9">{escaped(nic.name)}</text>'
            f'<text x="{x + NIC_W // 2}" y="{y + 19}" text-anchor="middle" font-size="8" fill="#52606d">'
            f'{escaped(rail or "-")}</text></g>')


def _gpu_svg(gpu: int, x: int, y: int, use: tuple[JobPlan, RankBinding] | None,
             chosen: tuple[JobPlan, RankBinding] | None, colours: dict[tuple[str, str], str], cluster: str) -> str:
    shown = use or chosen
    if shown is None:
        return (f'<g data-gpu="{gpu}"><title>GPU {gpu}: free</title><rect x="{x}" y="{y}" width="{GPU_W}" '
                f'height="{GPU_H}" rx="3" fill="#fff" stroke="#9aa5b1"/>'
                f'<text x="{x + GPU_W // 2}" y="{y + 14}" text-anchor="middle" fill="#9aa5b1" font-size="9">'
                f'{gpu}</text></g>')
    plan, binding = shown
    colour = colours[(cluster, plan.name)]
    if use is not None:
        title = (f"{plan.name} rank {binding.rank}: worker {binding.worker}, local rank {binding.local_rank}, "
                 f"GPU {binding.gpu_text}, NIC {binding.nic_text}, rail {binding.rail or '-'}")
        dash = ""
    else:
        chooser = "its DRA claim's allocation" if plan.devices is not None else "the device plugin"
        title = (f"{plan.name} rank {binding.rank}: worker {binding.worker}, local rank {binding.local_rank}, on one "
                 f"of the node's GPUs {chooser} chooses (drawn here on the first free one)")
        dash = ' stroke-dasharray="3,2"'
    return (f'<g data-gpu="{gpu}" data-job="{escaped(plan.name)}" data-rank="{binding.rank}" '
            f'data-worker="{binding.worker}" data-nic="{escaped(binding.nic or "")}">'
            f'<title>{escaped(title)}</title><rect x="{x}" y="{y}" width="{GPU_W}" height="{GPU_H}" rx="3" '
            f'fill="{colour}" stroke="#222"{dash}/>'
            f'<text x="{x + GPU_W // 2}" y="{y + 14}" text-anchor="middle" fill="#fff" font-size="9" '
            f'font-weight="bold">{binding.rank}</text></g>')
