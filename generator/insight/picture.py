"""`mpigen plan --html/--svg`: the fleet drawn, per cluster. Each node pool is rows of nodes; each node shows its GPUs
and NICs grouped as the hardware profile says (a NIC with the GPUs beside it on one PCIe switch, inside the NUMA node
the NIC hangs off); each rail is a line across the nodes through its NIC; each job's workers sit on the nodes the
plan's packing gives them, its ranks on the GPUs they drive, in the job's colour.

The page is bounded whatever the fleet's size (`bounds`): at most 64 nodes a pool, at most `bounds.BOXES_DRAWN`
boxes in all; what is left out is one dashed box that says how much and what runs there, and a line at the top.

A string out, deterministic to the byte (no time, no random, fixed order), self-contained: inline SVG and CSS, no
script, nothing fetched. Every profile string is escaped (`escaped`: control characters too, so that HTML and SVG are
well-formed whatever a name holds). GPUs and NICs carry `data-*` attributes (job, rank, NIC)
so that a test, or a reader's browser tools, can tell what each box stands for.
"""

from __future__ import annotations

from mpigen.insight import bounds
from mpigen.insight.bounds import names_text, numbers_text
from mpigen.insight.node_picture import PAD, escaped, node_geometry, node_layout, node_svg
from mpigen.insight.plan import NEVER, STARTS, WAITS, ClusterPlan, FleetPlan, JobPlan, PoolPlan
from mpigen.insight.ranks import RankBinding, rank_bindings
from mpigen.manifests.run_name import mpijob_name
from mpigen.model import Cluster, Fleet, Hardware, Job, NodePool
from mpigen.providers import PROVIDERS

JOB_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf",
               "#bcbd22", "#393b79", "#ad494a", "#637939", "#8c6d31", "#7b4173", "#3182bd", "#e6550d")
"""Sixteen colours that tell jobs apart (`job_colours`); past them, colours repeat."""
NODES_PER_ROW = 8
FONT = "font-family:DejaVu Sans,Arial,sans-serif"


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
        sections.append(f'<section id="cluster-{escaped(cluster.name)}" data-cluster="{escaped(cluster.name)}">'
                        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}">'
                        f'{body}</svg></section>')
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>mpigen plan</title>"
            "<style>body{margin:16px;background:#fff;color:#222;" + FONT + ";font-size:13px}"
            "section{margin:0 0 28px 0}svg{font-size:11px;display:block}</style></head><body>"
            "<h1 style=\"font-size:18px\">Fleet plan: pools, nodes, rails, and where each job's ranks run</h1>"
            "<p>Each box is a node: its NICs (grey, with the rail they carry) beside the GPUs on their PCIe switch, "
            "grouped by NUMA node. Rails are lines through their NIC across the nodes. A job's colour marks the GPUs "
            "its ranks drive (rank number inside; hover for its NIC). Placement is one the plan's first-fit packing "
            "gives; the scheduler picks the actual nodes." + _claims_note(fleet) + "</p>" + _left_out_note(fleet, drawn)
            + "".join(sections) + "</body></html>\n")


def claims_nics(cluster: Cluster) -> bool:
    """The cluster's workers claim their NICs with the GPUs beside them through DRA (the dranet provider)."""
    return cluster.dra is not None and PROVIDERS[cluster.network.provider].dra_devices


def _claims_note(fleet: Fleet) -> str:
    """Where a cluster claims NICs through DRA, what its pairs look like (nothing for a fleet with none)."""
    if not any(claims_nics(cluster) for cluster in fleet.clusters):
        return ""
    return (" Where workers claim their GPUs and NICs through Dynamic Resource Allocation, each NIC is drawn with the "
            "GPUs a claim takes with it, labelled by what they must share (pcieRoot: one PCIe root; numaNode: one NUMA "
            "node); where the hardware profile says how many GPUs, not which, they are drawn in order.")


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
    (in admission order), so a cluster's drawn jobs repeat a colour only beyond sixteen of them."""
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
    out = [f'<text x="0" y="16" font-size="15" font-weight="bold">cluster {escaped(cluster.name)}</text>',
           f'<text x="0" y="32" fill="#555">scheduler {escaped(plan.scheduler)}, network {escaped(plan.provider)}, '
           f'{len(cluster.pools)} pool(s), {len(cluster.rails)} rail(s)</text>']
    y, width = 44, 400
    not_drawn = []
    for pool, pool_plan in zip(cluster.pools, plan.pools, strict=True):
        if not drawn[(cluster.name, pool.name)]:
            not_drawn.append(pool_plan)
            continue
        body, w, h = _pool_svg(cluster, pool_plan, pool.hardware, jobs, colours, drawn[(cluster.name, pool.name)])
        out.append(f'<g transform="translate(0,{y})" data-pool="{escaped(pool.name)}">{body}</g>')
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
    layout = node_layout(hardware, paired=claims_nics(cluster))
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
    geometry = node_geometry(layout, cpu_rows)
    rails = list(cluster.rails_of(cluster.pool(pool.name)))
    bindings = {plan.name: _bindings_by_worker(jobs[plan.name], drawn_workers.get(plan.name, [])) for plan in running}
    out = [f'<text x="0" y="12" font-weight="bold">pool {escaped(pool.name)}: {pool.nodes} x {escaped(hardware.name)}'
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
                       f'data-rail="{escaped(rail.name)}"/>'
                       f'<text x="{right + 44}" y="{y + 4}" fill="#52606d">{escaped(rail.name)}</text>')
        for i in range(count):
            node = row * NODES_PER_ROW + i
            out.append(node_svg(node, i * step_x, row_y, geometry, layout, rails, hardware,
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
    text = "".join(f'<text x="{PAD}" y="{16 + 14 * i}"{bold if i == 0 else ""}>{escaped(line)}</text>'
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
            out.append(f'<g data-legend-job="{escaped(job.name)}" data-state="{escaped(job.state)}">'
                       f'<rect x="0" y="{y - 9}" width="12" height="12" fill="{colour}"/>'
                       f'<text x="18" y="{y + 1}">{escaped(text)}</text></g>')
            y, longest = y + 16, max(longest, len(text) + 3)
    for note in plan.notes:
        shown = note if len(note) <= 220 else f"{note[:217]}..."
        out.append(f'<text x="0" y="{y + 1}" fill="#52606d">{escaped(shown)}</text>')
        y, longest = y + 16, max(longest, len(shown))
    return "".join(out), y, int(longest * 6.5)
