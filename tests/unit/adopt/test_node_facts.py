"""adopt/node_facts.py: the tools' output on one node (`--node-facts`) gives its pool the facts no object holds.
The parsers (mpigen.inventory.tools) are stood in for by a module of the same interface."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import SimpleNamespace

import pytest
from conftest import REPO
from ruamel.yaml import YAML

from mpigen.adopt import AdoptionError
from mpigen.adopt.cluster import adopt_cluster, read_export
from mpigen.adopt.node_facts import read_node_facts

CLUSTERS = REPO / "tests" / "fixtures" / "clusters"


@dataclass(frozen=True)
class HcaPort:
    hca: str
    port: int
    netdev: str
    up: bool | None
    line: int


@dataclass(frozen=True)
class TopoMatrix:
    gpus: tuple[str, ...]
    nics: tuple[str, ...]
    link: Mapping[tuple[str, str], str] = field(default_factory=dict)
    gpu_numa: Mapping[str, int | None] = field(default_factory=dict)
    nic_numa: Mapping[str, int | None] = field(default_factory=dict)


class ToolTextError(Exception):
    pass


def _tools() -> SimpleNamespace:
    def identify(text: str) -> str | None:
        return {"ib": "ibdev2netdev", "topo": "nvidia-smi-topo"}.get(text.split()[0])

    def parse_ibdev2netdev(text: str, source: str) -> tuple[HcaPort, ...]:
        if "bad" in text:
            raise ToolTextError(f"{source}:1: not a line of ibdev2netdev; give its output as printed")
        return tuple(HcaPort(f"mlx5_{i}", 1, f"ib{i}", True, i + 1) for i in range(4))

    def parse_nvidia_smi_topo(text: str, source: str) -> TopoMatrix:
        gpus = tuple(f"GPU{i}" for i in range(8))
        nics = tuple(f"mlx5_{i}" for i in range(4))
        link = {(g, n): "PIX" if int(g[3:]) // 2 == int(n[5:]) else "SYS" for g in gpus for n in nics}
        return TopoMatrix(gpus, nics, link, {}, {n: int(n[5:]) // 2 for n in nics})

    return SimpleNamespace(identify=identify, parse_ibdev2netdev=parse_ibdev2netdev,
                           parse_nvidia_smi_topo=parse_nvidia_smi_topo, parse_lspci_nn=lambda t, s: (),
                           ToolTextError=ToolTextError)


def test_ibdev2netdev_and_topo_give_the_hca_gpus_and_numa_node_of_each_nic() -> None:
    facts = read_node_facts({"dgx1-02": [("ib.txt", "ib ..."), ("topo.txt", "topo ...")]}, _tools())
    adoption, _ = adopt_cluster(read_export([CLUSTERS / "dgx-1.yaml", CLUSTERS / "operators.yaml"]), "lab", (), facts)
    text = next(p.text for p in adoption.profiles if p.kind == "Hardware")
    nics = YAML(typ="safe").load(text)["nics"]
    assert [(n["hca"], n["port"], n["gpus"], n["numaNode"]) for n in nics] == [
        ("mlx5_0", 1, [0, 1], 0), ("mlx5_1", 1, [2, 3], 0), ("mlx5_2", 1, [4, 5], 1), ("mlx5_3", 1, [6, 7], 1)]
    assert 'hca: "mlx5_2"  # ib.txt:3 (ibdev2netdev on dgx1-02)' in text and "hca: \"mlx5_0\"  # guess:" not in text


def test_unknown_text_refused_parser_errors_and_nodes_not_exported_are_one_line() -> None:
    with pytest.raises(AdoptionError, match=r"^x.txt: not the output of ibdev2netdev"):
        read_node_facts({"n": [("x.txt", "hello")]}, _tools())
    with pytest.raises(AdoptionError, match=r"^ib.txt:1: not a line of ibdev2netdev"):
        read_node_facts({"n": [("ib.txt", "ib bad")]}, _tools())
    facts = read_node_facts({"elsewhere": [("ib.txt", "ib ...")]}, _tools())
    with pytest.raises(AdoptionError, match="--node-facts names elsewhere, which is no imported Node"):
        adopt_cluster(read_export([CLUSTERS / "dgx-1.yaml"]), "lab", (), facts)


def test_by_default_the_texts_are_read_by_the_inventory_parsers() -> None:
    """No stand-in: `ibdev2netdev` and `nvidia-smi topo -m` as printed give typed ports and a topology matrix."""
    topo = (REPO / "tests" / "fixtures" / "inventory" / "dgx-a100_nvidia-smi-topo.txt").read_text(encoding="utf-8")
    facts = read_node_facts({"n": [("ib.txt", "mlx5_0 port 1 ==> ibp12s0 (Up)\n"), ("topo.txt", topo)]})["n"]
    port = facts.port_of("ibp12s0")
    assert port is not None and (port.hca, port.port, port.line) == ("mlx5_0", 1, 1)
    assert facts.topo is not None and facts.numa_of("mlx5_0") is not None and facts.gpus_near("mlx5_0")
