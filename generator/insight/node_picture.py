"""One node of `mpigen plan --html/--svg` drawn: its GPUs and NICs grouped as the hardware profile says (a NIC with
the GPUs beside it on one PCIe switch, inside the NUMA node the NIC hangs off), the ranks on the GPUs they drive,
and the workers of a node with no GPUs named line by line."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from mpigen.insight import bounds
from mpigen.insight.plan import JobPlan
from mpigen.insight.ranks import RankBinding
from mpigen.model import Hardware, Nic
from mpigen.support.diagnostics import one_line

GPU_W, GPU_H, NIC_W, GAP, PAD = 26, 22, 46, 4, 8
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


@dataclass(frozen=True)
class _Numa:
    label: str
    groups: tuple[_Group, ...]


def node_layout(hardware: Hardware) -> tuple[_Numa, ...]:
    """The hardware's NICs and GPUs by NUMA node and PCIe switch, as its profile states them."""
    by_numa: dict[int | None, list[_Group]] = {}
    named: set[int] = set()
    for nic in hardware.nics:  # a GPU two NICs name is drawn beside the first (explain's NIC of its ranks)
        by_numa.setdefault(nic.numa_node, []).append(_Group(nic, tuple(g for g in nic.gpus if g not in named)))
        named.update(nic.gpus)
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
    width = max(NIC_W + GAP + widest * (GPU_W + GAP) + 2 * PAD, 150)
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
        if group.nic is not None:
            out.append(_nic_svg(group.nic, PAD, gy, rail_of_nic.get(group.nic.name), gpu_use, group.gpus,
                                colours, cluster))
        for j, gpu in enumerate(group.gpus):
            out.append(_gpu_svg(gpu, PAD + NIC_W + GAP + j * (GPU_W + GAP), gy, gpu_use.get(gpu), chosen.get(gpu),
                                colours, cluster))
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


def _nic_svg(nic: Nic, x: int, y: int, rail: str | None, gpu_use: dict[int, tuple[JobPlan, RankBinding]],
             gpus: tuple[int, ...], colours: dict[tuple[str, str], str], cluster: str) -> str:
    users = sorted({gpu_use[g][0].name for g in gpus if g in gpu_use and gpu_use[g][1].nic == nic.name})
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
        title = (f"{plan.name} rank {binding.rank}: worker {binding.worker}, local rank {binding.local_rank}, on one "
                 "of the node's GPUs the device plugin chooses (drawn here on the first free one)")
        dash = ' stroke-dasharray="3,2"'
    return (f'<g data-gpu="{gpu}" data-job="{escaped(plan.name)}" data-rank="{binding.rank}" '
            f'data-worker="{binding.worker}" data-nic="{escaped(binding.nic or "")}">'
            f'<title>{escaped(title)}</title><rect x="{x}" y="{y}" width="{GPU_W}" height="{GPU_H}" rx="3" '
            f'fill="{colour}" stroke="#222"{dash}/>'
            f'<text x="{x + GPU_W // 2}" y="{y + 14}" text-anchor="middle" fill="#fff" font-size="9" '
            f'font-weight="bold">{binding.rank}</text></g>')
