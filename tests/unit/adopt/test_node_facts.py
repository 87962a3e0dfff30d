"""adopt/node_facts.py: the tools' output on one node (`--node-facts`) gives its pool the facts no object holds.
Read by the real parsers (mpigen.inventory.tools), from the text the tools print on a DGX-1."""

from __future__ import annotations

import pytest
from conftest import REPO
from ruamel.yaml import YAML

from mpigen.adopt import AdoptionError
from mpigen.adopt.cluster import adopt_cluster, read_export
from mpigen.adopt.node_facts import read_node_facts

CLUSTERS = REPO / "tests" / "fixtures" / "clusters"


GPUS = [f"GPU{i}" for i in range(8)]
HCAS = [f"mlx5_{i}" for i in range(4)]


def _distance(gpu: int, hca: int) -> str:
    """A DGX-1 as its hardware profile says: two GPUs per HCA's PCIe switch, GPUs 0-3 and HCAs 0-1 on NUMA node 0."""
    return "PIX" if gpu // 2 == hca else ("NODE" if gpu // 4 == hca // 2 else "SYS")


TOPO = "\n".join(
    ["\t" + "\t".join(GPUS + HCAS) + "\tCPU Affinity\tNUMA Affinity"]
    + [f"GPU{g}\t" + "\t".join([" X " if g == o else "NV1" for o in range(8)] + [_distance(g, h) for h in range(4)])
       + f"\t{'0-19' if g < 4 else '20-39'}\t{g // 4}" for g in range(8)]
    + [f"mlx5_{h}\t" + "\t".join([_distance(g, h) for g in range(8)]
                                   + [" X " if h == o else ("NODE" if h // 2 == o // 2 else "SYS") for o in range(4)])
       + "\t\t" for h in range(4)]) + "\n"
"""`nvidia-smi topo -m` on a DGX-1, as it prints it (mlx5_N columns: no NIC legend)."""
IBDEV = "".join(f"mlx5_{i} port 1 ==> ib{i} (Up)\n" for i in range(4))


def test_ibdev2netdev_and_topo_give_the_hca_gpus_and_numa_node_of_each_nic() -> None:
    facts = read_node_facts({"dgx1-02": [("ib.txt", IBDEV), ("topo.txt", TOPO)]})
    adoption, _ = adopt_cluster(read_export([CLUSTERS / "dgx-1.yaml", CLUSTERS / "operators.yaml"]), "lab", (), facts)
    text = next(p.text for p in adoption.profiles if p.kind == "Hardware")
    nics = YAML(typ="safe").load(text)["nics"]
    assert [(n["hca"], n["port"], n["gpus"], n["numaNode"]) for n in nics] == [
        ("mlx5_0", 1, [0, 1], 0), ("mlx5_1", 1, [2, 3], 0), ("mlx5_2", 1, [4, 5], 1), ("mlx5_3", 1, [6, 7], 1)]
    assert 'hca: "mlx5_2"  # ib.txt:3 (ibdev2netdev on dgx1-02)' in text and "hca: \"mlx5_0\"  # guess:" not in text


def test_unknown_text_refused_parser_errors_and_nodes_not_exported_are_one_line() -> None:
    with pytest.raises(AdoptionError, match=r"^x.txt: not the output of ibdev2netdev"):
        read_node_facts({"n": [("x.txt", "hello")]})
    with pytest.raises(AdoptionError, match=r"^ib.txt:2: "):
        read_node_facts({"n": [("ib.txt", IBDEV.replace("mlx5_1 port 1", "mlx5_1 port one"))]})
    facts = read_node_facts({"elsewhere": [("ib.txt", IBDEV)]})
    with pytest.raises(AdoptionError, match="--node-facts names elsewhere, which is no imported Node"):
        adopt_cluster(read_export([CLUSTERS / "dgx-1.yaml"]), "lab", (), facts)


def test_by_default_the_texts_are_read_by_the_inventory_parsers() -> None:
    """No stand-in: `ibdev2netdev` and `nvidia-smi topo -m` as printed give typed ports and a topology matrix."""
    topo = (REPO / "tests" / "fixtures" / "inventory" / "dgx-a100_nvidia-smi-topo.txt").read_text(encoding="utf-8")
    facts = read_node_facts({"n": [("ib.txt", "mlx5_0 port 1 ==> ibp12s0 (Up)\n"), ("topo.txt", topo)]})["n"]
    port = facts.port_of("ibp12s0")
    assert port is not None and (port.hca, port.port, port.line) == ("mlx5_0", 1, 1)
    assert facts.topo is not None and facts.numa_of("mlx5_0") is not None and facts.gpus_near("mlx5_0")
