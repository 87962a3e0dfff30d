"""`mpigen plan --html/--svg`: the fleet drawn, per cluster. Each node pool is rows of nodes; each node shows its GPUs
and NICs grouped as the hardware profile says (a NIC with the GPUs beside it on one PCIe switch, inside the NUMA node
the NIC hangs off); each rail is a line across the nodes through its NIC; each job's workers sit on the nodes the
plan's packing gives them, its ranks on the GPUs they drive, in the job's colour.

The page is bounded whatever the fleet's size (`bounds`): at most 64 nodes a pool, at most `bounds.BOXES_DRAWN`
boxes in all; what is left out is one dashed box that says how much and what runs there, and a line at the top.

A string out, deterministic to the byte (no time, no random, fixed order), self-contained: inline SVG and CSS, no
script, nothing fetched. Every profile string is escaped (`_e`: control characters too, so that HTML and SVG are
well-formed whatever a name holds). GPUs and NICs carry `data-*` attributes (job, rank, NIC)
so that a test, or a reader's browser tools, can tell what each box stands for.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from generator.insight import bounds
from generator.insight.bounds import names_text, numbers_text
from generator.insight.plan import NEVER, STARTS, WAITS, ClusterPlan, FleetPlan, JobPlan, PoolPlan
from generator.insight.ranks import RankBinding, rank_bindings
from generator.manifests.run_name import mpijob_name
from generator.model import Cluster, Fleet, Hardware, Job, Nic, NodePool
from generator.support.diagnostics import one_line

JOB_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf",
               "#bcbd22", "#393b79", "#ad494a", "#637939")
"""Twelve colours that tell jobs apart (`job_colours`)."""
NODES_PER_ROW = 8
GPU_W, GPU_H, NIC_W, GAP, PAD = 26, 22, 46, 4, 8
HEADER = 18
FONT = "font-family:DejaVu Sans,Arial,sans-serif"


def _e(text: object) -> str:
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


def _geometry(layout: tuple[_Numa, ...], cpu_rows: int) -> _Geometry:
    widest = max((len(group.gpus) for numa in layout for group in numa.groups), default=0)
    rows = _rows(layout)
    nic_y = {numa.groups[i].nic.name: y + GPU_H // 2 for numa, i, y in rows
             if i >= 0 and numa.groups[i].nic is not None}
    width = max(NIC_W + GAP + widest * (GPU_W + GAP) + 2 * PAD, 150)
    bottom = rows[-1][2] + (GPU_H + GAP if rows[-1][1] >= 0 else NUMA_LABEL) if rows else HEADER + 14
    return _Geometry(width, bottom + cpu_rows * 14 + PAD, nic_y)


def drawn_nodes(fleet: Fleet) -> dict[tuple[str, str], int]:
    """How many nodes of each pool, by (cluster, pool), the page draws: at most `bounds.NODES_DRAWN`, and pools in
    order while `bounds.BOXES_DRAWN` lasts; the pool that would pass it is drawn in part (or not at all where not one
    node fits), the pools after it not at all."""
    left, drawn = bounds.BOXES_DRAWN, {}
    for cluster in fleet.clusters:
        for pool in cluster.pools:
            wanted = min(pool.nodes, bounds.NODES_DRAWN)
            cost = _boxes_per_node(cluster, pool)
            count = min(wanted, left // cost)
            drawn[(cluster.name, pool.name)] = count
            left = left - count * cost if count == wanted else 0
    return drawn


def _boxes_per_node(cluster: Cluster, pool: NodePool) -> int:
    """What one node of `pool` costs of the page's boxes: itself, its GPUs and NICs, and (an upper bound, drawn once a
    row) its pool's rails."""
    hardware = pool.hardware
    return 1 + (hardware.gpu.count if hardware.gpu else 0) + len(hardware.nics) + len(cluster.rails_of(pool))


def fleet_svg(fleet: Fleet, plan: FleetPlan) -> str:
    """One SVG with every cluster, one under another."""
    colours, drawn = job_colours(plan), drawn_nodes(fleet)
    parts, y, width = [], 0, 0
    for cluster in fleet.clusters:
        body, w, h = _cluster_svg(cluster, _plan_of(plan, cluster), fleet, colours, drawn)
        parts.append(f'<g transform="translate(0,{y})">{body}</g>')
        y, width = y + h + 24, max(width, w)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{y}" viewBox="0 0 {width} {y}" '
            f'style="{FONT};font-size:11px;background:#fff">'
            f'<rect width="{width}" height="{y}" fill="#fff"/>{"".join(parts)}</svg>\n')


def fleet_html(fleet: Fleet, plan: FleetPlan) -> str:
    """A page: per cluster its heading and its picture."""
    colours, drawn = job_colours(plan), drawn_nodes(fleet)
    sections = []
    for cluster in fleet.clusters:
        cluster_plan = _plan_of(plan, cluster)
        body, w, h = _cluster_svg(cluster, cluster_plan, fleet, colours, drawn)
        sections.append(f'<section id="cluster-{_e(cluster.name)}" data-cluster="{_e(cluster.name)}">'
                        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}">'
                        f'{body}</svg></section>')
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>mpigen plan</title>"
            "<style>body{margin:16px;background:#fff;color:#222;" + FONT + ";font-size:13px}"
            "section{margin:0 0 28px 0}svg{font-size:11px;display:block}</style></head><body>"
            "<h1 style=\"font-size:18px\">Fleet plan: pools, nodes, rails, and where each job's ranks run</h1>"
            "<p>Each box is a node: its NICs (grey, with the rail they carry) beside the GPUs on their PCIe switch, "
            "grouped by NUMA node. Rails are lines through their NIC across the nodes. A job's colour marks the GPUs "
            "its ranks drive (rank number inside; hover for its NIC). Placement is one the plan's first-fit packing "
            "gives; the scheduler picks the actual nodes.</p>" + _left_out_note(fleet, drawn)
            + "".join(sections) + "</body></html>\n")


def _left_out_note(fleet: Fleet, drawn: dict[tuple[str, str], int]) -> str:
    """Where pools are drawn in part or not at all, a line at the top of the page saying so (nothing where every node
    is drawn)."""
    pools = [(cluster.name, pool) for cluster in fleet.clusters for pool in cluster.pools]
    left = sum(pool.nodes - drawn[(cluster, pool.name)] for cluster, pool in pools)
    if not left:
        return ""
    not_drawn = sum(not drawn[(cluster, pool.name)] for cluster, pool in pools)
    cut = any(drawn[(cluster, pool.name)] < min(pool.nodes, bounds.NODES_DRAWN) for cluster, pool in pools)
    budget = (f" The page draws at most {bounds.BOXES_DRAWN} boxes (a node counts one, and so does each of its "
              f"GPUs, NICs and rails): the pool that would pass them is drawn in part, and the pools after it ({not_drawn} "
              "of them) are one dashed box a cluster.") if cut else ""
    pools_attribute = f' data-omitted-pools="{not_drawn}"' if not_drawn else ""
    return (f'<p data-omitted-nodes="{left}"{pools_attribute}><strong>Not every node is drawn:</strong> a pool of more '
            f"than {bounds.NODES_DRAWN} nodes shows its first {bounds.NODES_DRAWN}, and a dashed box below them says "
            f"how many more it has and which jobs' workers run there ({left} nodes not drawn in all).{budget}</p>")


def job_colours(plan: FleetPlan) -> dict[tuple[str, str], str]:
    """(cluster, job) -> its colour, taken in turn across the fleet: in each cluster the jobs that start come first
    (in admission order), so a cluster's drawn jobs repeat a colour only beyond twelve of them."""
    colours, turn = {}, 0
    for cluster in plan.clusters:
        jobs = [job for pool in cluster.pools for job in pool.jobs]
        for job in [job for job in jobs if job.state == STARTS] + [job for job in jobs if job.state != STARTS]:
            colours[(cluster.name, job.name)] = JOB_COLOURS[turn % len(JOB_COLOURS)]
            turn += 1
    return colours


def _plan_of(plan: FleetPlan, cluster: Cluster) -> ClusterPlan:
    return next(c for c in plan.clusters if c.name == cluster.name)


def _cluster_svg(cluster: Cluster, plan: ClusterPlan, fleet: Fleet, colours: dict[tuple[str, str], str],
                 drawn: dict[tuple[str, str], int]) -> tuple[str, int, int]:
    jobs = {job.name: job for job in fleet.jobs_of(cluster)}
    out = [f'<text x="0" y="16" font-size="15" font-weight="bold">cluster {_e(cluster.name)}</text>',
           f'<text x="0" y="32" fill="#555">scheduler {_e(plan.scheduler)}, network {_e(plan.provider)}, '
           f'{len(cluster.pools)} pool(s), {len(cluster.rails)} rail(s)</text>']
    y, width = 44, 400
    not_drawn = []
    for pool, pool_plan in zip(cluster.pools, plan.pools, strict=True):
        if not drawn[(cluster.name, pool.name)]:
            not_drawn.append(pool_plan)
            continue
        body, w, h = _pool_svg(cluster, pool_plan, pool.hardware, jobs, colours, drawn[(cluster.name, pool.name)])
        out.append(f'<g transform="translate(0,{y})" data-pool="{_e(pool.name)}">{body}</g>')
        y, width = y + h + 12, max(width, w)
    if not_drawn:
        box, h = _pools_left_out_svg(not_drawn, y, NODES_PER_ROW * 120)
        out.append(box)
        y = y + h + 12
    legend, h, legend_width = _legend(cluster, plan, colours)
    out.append(f'<g transform="translate(0,{y})">{legend}</g>')
    return "".join(out), max(width, legend_width), y + h


def _pool_svg(cluster: Cluster, pool: PoolPlan, hardware: Hardware, jobs: dict[str, Job],
              colours: dict[tuple[str, str], str], drawn: int) -> tuple[str, int, int]:
    """The pool's first `drawn` nodes (`drawn_nodes`), eight a row, and where it has more, one box saying how many and
    what runs on them: the page grows with what it draws, not with the pool."""
    layout = node_layout(hardware)
    running = [plan for plan in pool.jobs if plan.state == STARTS]
    per_node_workers: dict[int, list[tuple[JobPlan, int]]] = {}
    drawn_workers: dict[str, list[int]] = {}  # job -> its workers on drawn nodes
    beyond: dict[str, int] = {}  # job -> its workers on nodes not drawn
    busy: set[int] = set()  # nodes not drawn that run a worker
    for plan in running:
        for worker, node in enumerate(plan.worker_nodes):
            if node < drawn:
                per_node_workers.setdefault(node, []).append((plan, worker))
                drawn_workers.setdefault(plan.name, []).append(worker)
            else:
                beyond[plan.name] = beyond.get(plan.name, 0) + 1
                busy.add(node)
    cpu_rows = min(max((len(workers) for workers in per_node_workers.values()), default=0), bounds.WORKERS_DRAWN) \
        if not hardware.gpu else 0
    geometry = _geometry(layout, cpu_rows)
    rails = list(cluster.rails_of(cluster.pool(pool.name)))
    bindings = {plan.name: _bindings_by_worker(jobs[plan.name], drawn_workers.get(plan.name, [])) for plan in running}
    out = [f'<text x="0" y="12" font-weight="bold">pool {_e(pool.name)}: {pool.nodes} x {_e(hardware.name)}'
           f'</text>']
    top = 20
    rows = (drawn + NODES_PER_ROW - 1) // NODES_PER_ROW
    step_x, step_y = geometry.width + 18, geometry.height + 14
    for row in range(rows):
        count = min(NODES_PER_ROW, drawn - row * NODES_PER_ROW)
        row_y = top + row * step_y
        right = count * step_x - 18
        for rail in rails:  # behind the nodes: seen between them
            y = row_y + geometry.nic_y.get(rail.nic_name, 0)
            out.append(f'<line x1="0" y1="{y}" x2="{right + 40}" y2="{y}" stroke="#9aa5b1" stroke-width="3" '
                       f'data-rail="{_e(rail.name)}"/>'
                       f'<text x="{right + 44}" y="{y + 4}" fill="#52606d">{_e(rail.name)}</text>')
        for i in range(count):
            node = row * NODES_PER_ROW + i
            out.append(_node_svg(node, i * step_x, row_y, geometry, layout, rails, hardware,
                                 per_node_workers.get(node, []), bindings, colours, cluster.name))
    width = min(drawn, NODES_PER_ROW) * step_x + 80
    height = top + rows * step_y
    if pool.nodes > drawn:
        box, box_height = _left_out_svg(pool, drawn, running, beyond, len(busy), height,
                                        NODES_PER_ROW * step_x - 18)
        out.append(box)
        height += box_height + 14
    return "".join(out), width, height


def _left_out_svg(pool: PoolPlan, drawn: int, running: list[JobPlan], beyond: dict[str, int], busy: int, y: int,
                  width: int) -> tuple[str, int]:
    """The box standing for the nodes past the first `drawn`: how many, which, and the workers on them."""
    left = pool.nodes - drawn
    lines = [f"... and {left} more nodes like these (nodes {drawn} to {pool.nodes - 1}), not drawn"]
    on_them = [plan for plan in running if plan.name in beyond]
    for plan in on_them[:bounds.NAMES_SHOWN]:
        lines.append(f"{plan.name}: {beyond[plan.name]} of its {plan.worker_count} workers on them")
    if len(on_them) > bounds.NAMES_SHOWN:
        lines.append(f"and the workers of {len(on_them) - bounds.NAMES_SHOWN} more jobs")
    lines.append(f"{busy} of them run workers, {left - busy} run none" if busy else "none of them runs a worker")
    return _dashed_box(lines, y, width, f' data-omitted-nodes="{left}"')


def _dashed_box(lines: list[str], y: int, width: int, attributes: str) -> tuple[str, int]:
    """A dashed box standing for what is not drawn, its first line bold, and its height."""
    height = 12 + 14 * len(lines)
    bold = ' font-weight="bold"'
    text = "".join(f'<text x="{PAD}" y="{16 + 14 * i}"{bold if i == 0 else ""}>{_e(line)}</text>'
                   for i, line in enumerate(lines))
    return (f'<g transform="translate(0,{y})"{attributes}>'
            f'<rect width="{width}" height="{height}" rx="6" fill="#f8fafc" stroke="#52606d" stroke-dasharray="6,4"/>'
            f'{text}</g>'), height


def _pools_left_out_svg(pools: list[PoolPlan], y: int, width: int) -> tuple[str, int]:
    """One box standing for a cluster's pools past the page's budget of boxes: how many, their nodes, and the jobs
    that run there."""
    nodes = sum(pool.nodes for pool in pools)
    lines = [f"... and {len(pools)} more pool(s), {nodes} nodes, not drawn: the page draws at most "
             f"{bounds.BOXES_DRAWN} boxes",
             f"pools {names_text([pool.name for pool in pools])}"]
    running = [(pool, plan) for pool in pools for plan in pool.jobs if plan.state == STARTS]
    for pool, plan in running[:bounds.NAMES_SHOWN]:
        lines.append(f"{plan.name}: its {plan.worker_count} workers on pool {pool.name}")
    if len(running) > bounds.NAMES_SHOWN:
        lines.append(f"and the workers of {len(running) - bounds.NAMES_SHOWN} more jobs")
    busy = sum(len(set().union(*(plan.worker_nodes for plan in pool.jobs if plan.state == STARTS))) for pool in pools)
    lines.append(f"{busy} of these nodes run workers, {nodes - busy} run none" if busy
                 else "none of these nodes runs a worker")
    return _dashed_box(lines, y, width, f' data-omitted-nodes="{nodes}" data-omitted-pools="{len(pools)}"')


def _bindings_by_worker(job: Job, workers: list[int]) -> dict[int, list[RankBinding]]:
    """The ranks drawn on GPUs of each of `workers` (those on drawn nodes, in order): a worker's first ranks, one a
    GPU it has (a CPU worker's ranks are named by number, not drawn one by one)."""
    locals_drawn = min(job.slots_per_worker, job.gpus_per_worker)
    ranks = (worker * job.slots_per_worker + local for worker in workers for local in range(locals_drawn))
    by_worker: dict[int, list[RankBinding]] = {}
    for binding in rank_bindings(job, mpijob_name(job), ranks):
        by_worker.setdefault(binding.worker, []).append(binding)
    return by_worker


def _node_svg(node: int, x: int, y: int, geometry: _Geometry, layout: tuple[_Numa, ...], rails: list,
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
            out.append(f'<text x="{PAD}" y="{gy + 9}" fill="#7b8794" font-size="9">{_e(numa.label)}</text>')
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
                   f'font-weight="bold" data-job="{_e(plan.name)}" data-worker="{worker}">'
                   f'{_e(plan.name)} w{worker}: ranks {first}-{first + plan.slots_per_worker - 1}</text>')
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
    return (f'<g data-nic="{_e(nic.name)}" data-rail="{_e(rail or "")}" data-jobs="{_e(" ".join(users))}">'
            f'<title>{_e(title)}</title>'
            f'<rect x="{x}" y="{y}" width="{NIC_W}" height="{GPU_H}" rx="3" fill="#d9e2ec" stroke="{stroke}" '
            f'stroke-width="{3 if users else 1}"/>'
            f'<text x="{x + NIC_W // 2}" y="{y + 10}" text-anchor="middle" font-size="9">{_e(nic.name)}</text>'
            f'<text x="{x + NIC_W // 2}" y="{y + 19}" text-anchor="middle" font-size="8" fill="#52606d">'
            f'{_e(rail or "-")}</text></g>')


def _gpu_svg(gpu: int, x: int, y: int, use: tuple[JobPlan, RankBinding] | None,
             chosen: tuple[JobPlan, RankBinding] | None, colours: dict[tuple[str, str], str], cluster: str) -> str:
    if use is None and chosen is None:
        return (f'<g data-gpu="{gpu}"><title>GPU {gpu}: free</title><rect x="{x}" y="{y}" width="{GPU_W}" '
                f'height="{GPU_H}" rx="3" fill="#fff" stroke="#9aa5b1"/>'
                f'<text x="{x + GPU_W // 2}" y="{y + 14}" text-anchor="middle" fill="#9aa5b1" font-size="9">'
                f'{gpu}</text></g>')
    plan, binding = use or chosen
    colour = colours[(cluster, plan.name)]
    if use is not None:
        title = (f"{plan.name} rank {binding.rank}: worker {binding.worker}, local rank {binding.local_rank}, "
                 f"GPU {binding.gpu_text}, NIC {binding.nic_text}, rail {binding.rail or '-'}")
        dash = ""
    else:
        title = (f"{plan.name} rank {binding.rank}: worker {binding.worker}, local rank {binding.local_rank}, on one "
                 "of the node's GPUs the device plugin chooses (drawn here on the first free one)")
        dash = ' stroke-dasharray="3,2"'
    return (f'<g data-gpu="{gpu}" data-job="{_e(plan.name)}" data-rank="{binding.rank}" '
            f'data-worker="{binding.worker}" data-nic="{_e(binding.nic or "")}">'
            f'<title>{_e(title)}</title><rect x="{x}" y="{y}" width="{GPU_W}" height="{GPU_H}" rx="3" '
            f'fill="{colour}" stroke="#222"{dash}/>'
            f'<text x="{x + GPU_W // 2}" y="{y + 14}" text-anchor="middle" fill="#fff" font-size="9" '
            f'font-weight="bold">{binding.rank}</text></g>')


def _legend(cluster: Cluster, plan: ClusterPlan, colours: dict[tuple[str, str], str]) -> tuple[str, int, int]:
    """The jobs with their colour and state, and the plan's notes: SVG, its height, and about how wide its text
    runs (6.5 pixels a character at 11 pixels)."""
    out, y, longest = [], 12, 0
    for pool in plan.pools:
        for job in pool.jobs:
            colour = colours.get((cluster.name, job.name), "#9aa5b1")
            if job.state == STARTS:
                state = f"starts on nodes {numbers_text(job.worker_nodes)}"
            elif job.state == WAITS:
                held = f", held by {names_text(job.waits_for, job.waits_for_omitted)}" if job.waits_for else ""
                state = f"waits for {job.reason}{held} (not drawn)"
            else:
                state = f"can never run: {job.location}"
            size = f"{job.worker_count} worker(s) x {job.gpus_per_worker} GPU(s)" if job.gpus_per_worker \
                else f"{job.worker_count} worker(s)" if job.state != NEVER else ""
            text = f"{job.name} (pool {pool.name}{', ' + size if size else ''}, {job.ranks} ranks): {state}"
            out.append(f'<g data-legend-job="{_e(job.name)}" data-state="{_e(job.state)}">'
                       f'<rect x="0" y="{y - 9}" width="12" height="12" fill="{colour}"/>'
                       f'<text x="18" y="{y + 1}">{_e(text)}</text></g>')
            y, longest = y + 16, max(longest, len(text) + 3)
    for note in plan.notes:
        shown = note if len(note) <= 220 else f"{note[:217]}..."
        out.append(f'<text x="0" y="{y + 1}" fill="#52606d">{_e(shown)}</text>')
        y, longest = y + 16, max(longest, len(shown))
    return "".join(out), y, int(longest * 6.5)
