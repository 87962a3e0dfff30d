"""The picture's own rules (generator/insight/picture.py): hardware drawn as its profile groups it, each GPU once,
profile text escaped, the same bytes every time. What a browser makes of it: tests/acceptance/test_plan_picture.py."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from conftest import PROFILES

from mpigen.commands.pipeline import check_profiles
from mpigen.insight.picture import fleet_html, fleet_svg, node_layout
from mpigen.insight.plan import plan_fleet


def _draw(root: Path) -> tuple[str, str]:
    result = check_profiles([root], set_aside_unfit=True)
    assert result.ok, [d.format() for d in result.diagnostics]
    plan = plan_fleet(result.fleet, result.documents, result.unfit)
    return fleet_html(result.fleet, plan), fleet_svg(result.fleet, plan)


def test_a_dgx_1_is_drawn_as_its_profile_groups_it(example):
    # profiles/hardware/dgx-1.yaml: ib0 (GPUs 0, 1) and ib1 (2, 3) on NUMA node 0; ib2 (4, 5) and ib3 (6, 7) on 1.
    hardware = next(h for h in example.fleet.hardware if h.name == "dgx-1")
    layout = node_layout(hardware)
    assert [(numa.label, [(g.nic.name, g.gpus) for g in numa.groups]) for numa in layout] == [
        ("NUMA 0", [("ib0", (0, 1)), ("ib1", (2, 3))]), ("NUMA 1", [("ib2", (4, 5)), ("ib3", (6, 7))])]


def test_a_gpu_two_nics_name_is_drawn_once_beside_the_first(profiles_copy):
    text = (PROFILES / "hardware/dgx-1.yaml").read_text(encoding="utf-8")
    assert text.count("gpus: [2, 3]") == 1
    root = profiles_copy({"hardware/dgx-1.yaml": text.replace("gpus: [2, 3]", "gpus: [0, 1]")})
    hardware = next(h for h in check_profiles([root]).fleet.hardware if h.name == "dgx-1")
    groups = [(g.nic.name if g.nic else None, g.gpus) for numa in node_layout(hardware) for g in numa.groups]
    assert groups == [("ib0", (0, 1)), ("ib1", ()), ("ib2", (4, 5)), ("ib3", (6, 7)), (None, (2, 3))]
    drawn = [gpu for _, gpus in groups for gpu in gpus]
    assert sorted(drawn) == list(range(8)), "every GPU exactly once"
    html, _ = _draw(root)
    # resnet50-dgx's ranks 0-3 on node 0: GPUs 0 and 1 through ib0 (the first NIC naming them); 2 and 3 through
    # none the profile names.
    assert 'data-gpu="0" data-job="resnet50-dgx" data-rank="0" data-worker="0" data-nic="ib0"' in html
    assert 'data-gpu="2" data-job="resnet50-dgx" data-rank="2" data-worker="0" data-nic=""' in html
    assert html.count('data-job="resnet50-dgx" data-rank="0"') == 1


def test_text_is_escaped_and_the_bytes_are_the_same_every_time():
    # Profile names are DNS labels, but a plan's texts (reasons, notes) quote whatever validation said: whatever
    # a text holds, the page shows it as text. language-bert waits, so its name and reason reach the legend only.
    result = check_profiles([PROFILES], set_aside_unfit=True)
    plan = plan_fleet(result.fleet, result.documents, result.unfit)
    hostile = '<img src=x onerror="alert(1)">&amp;</svg><script>'
    clusters = tuple(replace(c, pools=tuple(replace(p, jobs=tuple(
        replace(j, name=hostile, reason=hostile) if j.name == "language-bert" else j for j in p.jobs))
        for p in c.pools)) for c in plan.clusters)
    hostile_plan = replace(plan, clusters=clusters)
    html, svg = fleet_html(result.fleet, hostile_plan), fleet_svg(result.fleet, hostile_plan)
    for page in (html, svg):
        assert "<img" not in page and "<script" not in page and page.count("</svg>") == page.count("<svg ")
        assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&amp;amp;&lt;/svg&gt;&lt;script&gt;" in page
    assert (html, svg) == (fleet_html(result.fleet, hostile_plan), fleet_svg(result.fleet, hostile_plan))
    assert html.startswith("<!DOCTYPE html>") and svg.startswith('<svg xmlns="http://www.w3.org/2000/svg"')


def test_a_pool_past_64_nodes_is_drawn_in_part_and_the_page_says_what_it_left_out(profiles_copy):
    # cpu-lab with 70 nodes: wide's 70 one-node workers (no CPU asked: a node's cores each) on nodes 0-69, and on
    # node 0 also cpu-pi's 2 and many's 20 one-CPU workers.
    cluster = (PROFILES / "clusters/cpu-lab.yaml").read_text(encoding="utf-8")
    pi = (PROFILES / "jobs/cpu-pi.yaml").read_text(encoding="utf-8")
    assert "    nodes: 4\n" in cluster and "workers: 2\n" in pi and 'resources:\n  cpu: "1"\n  memory: 1Gi\n' in pi
    html, svg = _draw(profiles_copy({
        "clusters/cpu-lab.yaml": cluster.replace("    nodes: 4\n", "    nodes: 70\n"),
        "jobs/wide.yaml": pi.replace("name: cpu-pi", "name: wide").replace("workers: 2", "workers: 70")
        .replace('resources:\n  cpu: "1"\n  memory: 1Gi\n', ""),
        "jobs/many.yaml": pi.replace("name: cpu-pi", "name: many").replace("workers: 2", "workers: 20")}))
    assert '<p data-omitted-nodes="6"><strong>Not every node is drawn:</strong>' in html
    assert "data-omitted-nodes=" not in _draw(PROFILES)[0], "where every node is drawn, nothing is said"
    for page in (html, svg):
        start = page.index(">cluster cpu-lab</text>")  # the example's first cluster, of one pool
        lab = page[start:page.index(">cluster ", start + 1)]
        assert sorted(int(n) for n in re.findall(r'data-node="([0-9]+)"', lab)) == list(range(64))
        assert 'data-omitted-nodes="6">' in lab
        for line in ("... and 6 more nodes like these (nodes 64 to 69), not drawn",
                     "wide: 6 of its 70 workers on them", "6 of them run workers, 0 run none"):
            assert f">{line}</text>" in lab
        # Node 0 runs 23 workers: seven are named, the eighth line counts the rest.
        node = lab[lab.index('data-node="0"'):lab.index("</g>", lab.index('data-node="0"'))]
        assert node.count("data-worker=") == 7 and ">... and 16 more workers</text>" in node
        assert "wide (pool cpu, 70 worker(s), 70 ranks): starts on nodes 0-69</text>" in lab


def test_under_dra_each_nic_is_drawn_with_the_gpus_a_claim_takes_with_it(example):
    # profiles/hardware/dgx-h100-ib.yaml: 8 NICs, 8 GPUs at distance PIX, no NIC naming its GPU: a claim takes each
    # NIC with one GPU under its PCIe root, drawn in order; without DRA the GPUs stay apart from the NICs.
    hardware = next(h for h in example.fleet.hardware if h.name == "dgx-h100-ib")
    paired = [(g.nic.name if g.nic else None, g.gpus, g.in_order, g.pairing.alignment.value if g.pairing else None)
              for numa in node_layout(hardware, paired=True) for g in numa.groups]
    assert paired == [(f"nic{i}", (i,), True, "pcieRoot") for i in range(8)]
    assert [(g.nic.name if g.nic else None, g.gpus) for numa in node_layout(hardware) for g in numa.groups] == \
        [(f"nic{i}", ()) for i in range(8)] + [(None, tuple(range(8)))]
    plan = plan_fleet(example.fleet, example.documents, example.unfit)
    html, svg = fleet_html(example.fleet, plan), fleet_svg(example.fleet, plan)
    for page in (html, svg):
        # llm-pretrain's 2 workers on nodes 0 and 1 of pool h100; gb200-rack's trays pair no GPU with a NIC: each GPU
        # reaches the NICs across PCIe host bridges (gb200-ib.yaml: nicDistance NODE), so the claim only counts.
        assert 'data-pair="nic0" data-alignment="pcieRoot" data-pair-gpus="1" data-claims="llm-pretrain/1">' in page
        assert page.count("data-pair=") == 8 * 4, "each NIC of h100-dra's nodes, no other"
        assert re.search(r'<g data-nic="nic0" data-rail="rail0" data-jobs="llm-pretrain">', page)
    assert "Where workers claim their GPUs and NICs through Dynamic Resource Allocation" in html
