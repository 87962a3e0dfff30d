"""A node's own tools as text (generator/inventory/tools.py): `nvidia-smi topo -m`, `ibdev2netdev` and `lspci -nn`,
over real outputs copied from upstream documentation (tests/upstream/inventory) and hand-written variants
(tests/fixtures/inventory, whose README says what each follows), and what people's pastes add to them."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import REPO, UPSTREAM

from mpigen.inventory.tools import (
    HcaPort,
    PciDevice,
    ToolTextError,
    identify,
    nearest_nics,
    parse_ibdev2netdev,
    parse_lspci_nn,
    parse_nvidia_smi_topo,
    read_tool_text,
)

FIXTURES = REPO / "tests" / "fixtures" / "inventory"
GPUS = tuple(f"GPU{index}" for index in range(8))


def block(path: Path, start: str, end: str) -> str:
    """The part of a copied document from the line holding `start` to the line before the one holding `end`."""
    text = path.read_text(encoding="utf-8")
    first = text.index(start)
    first = text.rindex("\n", 0, first) + 1
    return text[first:text.index(end, first)]


def dgx1_topo() -> str:
    """DGX-1 (8 V100, 4 EDR HCAs), as rapidsai/ucx-py's docs print it: indented, below the prompt that ran it."""
    return block(UPSTREAM / "inventory" / "ucx-py_ucx-debug.rst", "user@mlnx:~$  nvidia-smi topo -m", "\nNVLink\n")


def b200_topo() -> str:
    """An 8-GPU B200 node (GKE A4) with NIC0..7 columns, their NIC Legend and a GPU NUMA ID column (google/dranet)."""
    path = UPSTREAM / "inventory" / "dranet_gke-rdma.md"
    text = path.read_text(encoding="utf-8")
    start = text.index("We can determine the host topology using `nvidia-smi topo -m`")
    first = text.index("        GPU0", start)
    return text[first:text.index("```", first)]


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


# nvidia-smi topo -m


def test_a_dgx1_names_its_hcas_in_the_columns_and_each_hca_serves_a_gpu_pair():
    matrix = parse_nvidia_smi_topo(dgx1_topo(), "dgx1.txt")
    assert matrix.gpus == GPUS
    assert matrix.nics == ("mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3")
    assert [matrix.link[(gpu, "mlx5_0")] for gpu in GPUS] == ["PIX", "PIX", "PHB", "PHB", "SYS", "SYS", "SYS", "SYS"]
    assert [matrix.link[("GPU6", nic)] for nic in matrix.nics] == ["SYS", "SYS", "PHB", "PIX"]
    assert len(matrix.link) == 32
    assert matrix.gpu_numa == dict.fromkeys(GPUS)  # this driver prints no NUMA Affinity column
    assert nearest_nics(matrix) == {"mlx5_0": ("GPU0", "GPU1"), "mlx5_1": ("GPU2", "GPU3"),
                                    "mlx5_2": ("GPU4", "GPU5"), "mlx5_3": ("GPU6", "GPU7")}


def test_a_b200_node_resolves_the_nic_legend_and_reads_numa_affinity():
    matrix = parse_nvidia_smi_topo(b200_topo(), "b200.txt")
    assert matrix.nics == tuple(f"mlx5_{index}" for index in range(8))
    assert [matrix.link[("GPU0", nic)] for nic in matrix.nics] == ["PIX", "PIX", "NODE", "NODE", "SYS", "SYS", "SYS",
                                                                   "SYS"]
    assert matrix.gpu_numa == {gpu: 0 if index < 4 else 1 for index, gpu in enumerate(GPUS)}
    assert matrix.nic_numa == {f"mlx5_{index}": 0 if index < 4 else 1 for index in range(8)}
    assert nearest_nics(matrix) == {"mlx5_0": ("GPU0", "GPU1"), "mlx5_1": ("GPU0", "GPU1"),
                                    "mlx5_2": ("GPU2", "GPU3"), "mlx5_3": ("GPU2", "GPU3"),
                                    "mlx5_4": ("GPU4", "GPU5"), "mlx5_5": ("GPU4", "GPU5"),
                                    "mlx5_6": ("GPU6", "GPU7"), "mlx5_7": ("GPU6", "GPU7")}


def test_a_dgx_a100_pairs_gpus_with_nic_pairs_and_its_storage_nics_serve_no_gpu():
    matrix = parse_nvidia_smi_topo(fixture("dgx-a100_nvidia-smi-topo.txt"), "a100.txt")
    assert matrix.nics == tuple(f"mlx5_{index}" for index in range(10))
    assert matrix.gpu_numa == {"GPU0": 3, "GPU1": 3, "GPU2": 1, "GPU3": 1, "GPU4": 7, "GPU5": 7, "GPU6": 5, "GPU7": 5}
    near = nearest_nics(matrix)
    assert near == {**{f"mlx5_{index}": (f"GPU{index // 2 * 2}", f"GPU{index // 2 * 2 + 1}") for index in range(8)},
                    "mlx5_8": (), "mlx5_9": ()}
    assert matrix.nic_numa["mlx5_0"] == 3 and matrix.nic_numa["mlx5_8"] is None


def test_a_dgx_h100_gives_one_gpu_per_compute_hca_and_none_to_the_storage_hcas():
    matrix = parse_nvidia_smi_topo(fixture("dgx-h100_nvidia-smi-topo.txt"), "h100.txt")
    assert len(matrix.nics) == 12 and len(matrix.link) == 96
    compute = ("mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11")
    assert nearest_nics(matrix) == {**{hca: (gpu,) for hca, gpu in zip(compute, GPUS, strict=True)},
                                    "mlx5_1": (), "mlx5_2": (), "mlx5_7": (), "mlx5_8": ()}
    assert matrix.nic_numa == {**{hca: 0 if index < 4 else 1 for index, hca in enumerate(compute)},
                               "mlx5_1": 0, "mlx5_2": 0, "mlx5_7": 1, "mlx5_8": 1}


def test_a_node_without_nics_has_an_empty_nic_list():
    matrix = parse_nvidia_smi_topo(fixture("gpu-only_nvidia-smi-topo.txt"), "gpus.txt")
    assert matrix.gpus == ("GPU0", "GPU1", "GPU2", "GPU3")
    assert matrix.nics == () and matrix.link == {} and nearest_nics(matrix) == {}
    assert matrix.gpu_numa == dict.fromkeys(matrix.gpus, 0)


def pasted(text: str) -> str:
    """What a terminal, a ticket and an editor add: a prompt above, colour codes on the header, CRLF line ends,
    trailing blanks, and tabs where there were spaces."""
    lines = text.splitlines()
    header = next(index for index, line in enumerate(lines) if line.split()[:1] == ["GPU0"])
    lines[header] = f"\x1b[4m{lines[header]}\x1b[0m"
    return "me@dgx:~$ nvidia-smi topo -m\r\n" + "".join(f"{line.replace('    ', chr(9))}  \r\n" for line in lines)


@pytest.mark.parametrize("read", [dgx1_topo, b200_topo, lambda: fixture("dgx-h100_nvidia-smi-topo.txt")])
def test_what_a_paste_adds_changes_nothing(read):
    text = read()
    assert parse_nvidia_smi_topo(pasted(text), "x") == parse_nvidia_smi_topo(text, "x")


def test_an_unknown_cell_is_kept_and_is_near_to_nothing():
    text = b200_topo().replace("GPU0     X      NV18    NV18    NV18    NV18    NV18    NV18    NV18    PIX     PIX",
                               "GPU0     X      NV18    NV18    NV18    NV18    NV18    NV18    NV18    ???     PIX", 1)
    matrix = parse_nvidia_smi_topo(text, "x")
    assert matrix.link[("GPU0", "mlx5_0")] == "???"
    assert nearest_nics(matrix)["mlx5_0"] == ("GPU1",)


def topo_error(text: str) -> str:
    with pytest.raises(ToolTextError) as caught:
        parse_nvidia_smi_topo(text, "node.txt")
    message = str(caught.value)
    assert "\n" not in message and "; " in message
    return message


def test_a_text_that_is_not_topo_output_is_refused_at_its_first_line():
    assert topo_error("\n\nmlx5_0 port 1 ==> ib0 (Up)\n").startswith("node.txt:3: no `nvidia-smi topo -m` header line")
    assert topo_error("").startswith("node.txt:1: no `nvidia-smi topo -m` header line")


def test_a_broken_matrix_is_refused_at_the_line_that_breaks_it():
    lines = dgx1_topo().splitlines()
    row = next(number for number, line in enumerate(lines, 1) if line.split()[:1] == ["GPU3"])
    cut = "\n".join([*lines[:row - 1], " ".join(lines[row - 1].split()[:6]), *lines[row:]])
    assert topo_error(cut).startswith(f"node.txt:{row}: row 'GPU3' has 5 cells, the header (line 2) 12 columns")
    renamed = "\n".join([*lines[:row - 1], lines[row - 1].replace("GPU3", "GPU9"), *lines[row:]])
    assert topo_error(renamed).startswith(f"node.txt:{row}: row 'GPU9' is not a column of the header (line 2)")


def test_nic_columns_without_their_legend_are_refused_at_the_header():
    text = b200_topo()
    assert topo_error(text[:text.index("NIC Legend:")]).startswith(
        "node.txt:1: column 'NIC0' has no entry in the `NIC Legend:` block")


# ibdev2netdev


def test_ibdev2netdev_reads_each_port_and_its_state():
    text = block(UPSTREAM / "inventory" / "sriov-network-device-plugin_vf-setup.md", "# ibdev2netdev\n",
                 "\n# echo 4")
    assert identify(text) == "ibdev2netdev"
    assert parse_ibdev2netdev(text, "x") == (HcaPort("mlx5_0", 1, "enp2s0f0", True, 2),
                                             HcaPort("mlx5_1", 1, "enp2s0f1", True, 3))


def test_ibdev2netdev_verbose_reads_the_hca_after_the_pci_address_and_down_ports():
    text = block(UPSTREAM / "inventory" / "sriov-network-device-plugin_vf-setup.md", "# ibdev2netdev -v",
                 "\n\n# lspci")
    ports = parse_ibdev2netdev(text, "x")
    assert [(port.hca, port.port, port.netdev, port.up) for port in ports] == [
        ("mlx5_0", 1, "enp2s0f0", True), ("mlx5_1", 1, "enp2s0f1", True), ("mlx5_2", 1, "enp2s0f2", False),
        ("mlx5_3", 1, "enp2s0f3", False), ("mlx5_4", 1, "enp2s0f4", False), ("mlx5_5", 1, "enp2s0f5", False)]
    assert ports[0].line == 2


def test_a_dgx1_ibdev2netdev_has_four_ipoib_ports_up():
    text = block(UPSTREAM / "inventory" / "ucx-py_ucx-debug.rst", "user@mlnx:~$ ibdev2netdev", "\n\n``ucx_info")
    ports = parse_ibdev2netdev(pasted_lines(text), "x")
    assert [(port.hca, port.netdev, port.up) for port in ports] == [(f"mlx5_{index}", f"ib{index}", True)
                                                                    for index in range(4)]


def pasted_lines(text: str) -> str:
    return "".join(f"\x1b[32m{line}\x1b[0m\t \r\n" for line in text.splitlines())


def test_a_quoted_line_cannot_drive_the_terminal():
    with pytest.raises(ToolTextError) as caught:
        parse_ibdev2netdev("mlx5_0 port 1 ==> ib0 (Up)\n\x1b]0;owned\x07 \u202e\n", "x")
    assert str(caught.value).startswith("x:2: '0;owned\\x07 \\u202e' is not an `ibdev2netdev` line")


def test_a_state_other_than_up_or_down_is_unknown():
    assert parse_ibdev2netdev("mlx5_bond_0 port 1 ==> bond0 (Unknown)\nmlx5_2 port 1 ==> ib2\n", "x") == (
        HcaPort("mlx5_bond_0", 1, "bond0", None, 1), HcaPort("mlx5_2", 1, "ib2", None, 2))


@pytest.mark.parametrize(("text", "expected"), [
    ("hello\n", "x:1: no `ibdev2netdev` line"),
    ("mlx5_0 port 1 ==> ib0 (Up)\nmlx5_1 ==> ib1 (Up)\n", "x:2: no `<hca> port <n>` before '==>'"),
    ("mlx5_0 port 1 ==> ib0 (Up)\n$ exit\n", "x:2: '$ exit' is not an `ibdev2netdev` line"),
    ("mlx5_0 port 1 ==> ib0 (Up)\nmlx5_0 port 1 ==> ib1 (Up)\n", "x:2: mlx5_0 port 1 is listed twice (first on line 1)"),
])
def test_ibdev2netdev_errors_name_the_line(text, expected):
    with pytest.raises(ToolTextError, match="^" + expected.replace("(", r"\(").replace(")", r"\)").replace("$", r"\$")):
        parse_ibdev2netdev(text, "x")


def test_the_bare_prompt_pasted_after_the_output_ends_it():
    """A terminal prints its prompt again below the output; a paste takes it along (as topo's parser reads it)."""
    port = "mlx5_0 port 1 ==> ib0 (Up)\n"
    for prompt in ("$", "user@dgx-01:~$ ", "[root@dgx-01 ~]#", "(base) user@dgx-01:~$"):
        assert parse_ibdev2netdev(f"{prompt} ibdev2netdev\r\n{port}{prompt}\r\n\n", "x") \
            == (HcaPort("mlx5_0", 1, "ib0", True, 2),)
    device = "0c:00.0 Infiniband controller [0207]: Mellanox [15b3:101b]\n"
    assert parse_lspci_nn(f"{device}user@dgx-01:~$\n", "x") == parse_lspci_nn(device, "x")
    with pytest.raises(ToolTextError, match=r"^x:2: 'user@dgx-01:~\$ exit' is not an `lspci -nn` line"):
        parse_lspci_nn(f"{device}user@dgx-01:~$ exit\n", "x")


# lspci -nn


def test_lspci_reads_gpus_pfs_and_vfs():
    devices = parse_lspci_nn(fixture("dgx-a100_lspci-nn.txt"), "lspci.txt")
    assert identify(fixture("dgx-a100_lspci-nn.txt")) == "lspci"
    assert devices[0] == PciDevice("0000:07:00.0", "0302", "3D controller", "10de", "20b0",
                                   "NVIDIA Corporation GA100 [A100 SXM4 40GB]", False, 2)
    assert devices[2] == PciDevice("0000:0c:00.0", "0207", "Infiniband controller", "15b3", "101b",
                                   "Mellanox Technologies MT28908 Family [ConnectX-6]", False, 4)
    assert [device.address for device in devices if device.virtual_function] == ["0000:0c:00.1", "0000:0c:00.2"]
    assert {device.device_id for device in devices if device.virtual_function} == {"101c"}
    assert [device.class_id for device in devices].count("0200") == 2


def test_lspci_without_the_domain_gets_the_first_one():
    text = fixture("dgx-a100_lspci-nn.txt").replace("\n0000:", "\n")
    assert parse_lspci_nn(text, "x") == parse_lspci_nn(fixture("dgx-a100_lspci-nn.txt"), "x")


@pytest.mark.parametrize(("text", "expected"), [
    ("02:00.0 Infiniband controller: Mellanox Technologies MT27700 Family [ConnectX-4]\n",
     "x:1: no class id `[xxxx]:` after the address 02:00.0; the text looks like `lspci` without `-nn`"),
    ("0c:00.0 Infiniband controller [0207]: Mellanox Technologies MT28908 Family [ConnectX-6]\n",
     "x:1: no `[vendor:device]` ids at the end of the line of 0c:00.0"),
    ("0c:00.0 Infiniband controller [0207]: Mellanox [15b3:101b]\nnot lspci\n",
     "x:2: 'not lspci' is not an `lspci -nn` line"),
    ("0c:00.0 A [0207]: B [15b3:101b]\n0000:0c:00.0 A [0207]: B [15b3:101b]\n",
     "x:2: device 0000:0c:00.0 is listed twice (first on line 1)"),
    ("\n$ lspci -nn\n", "x:2: no `lspci -nn` line in this text"),
])
def test_lspci_errors_name_the_line(text, expected):
    with pytest.raises(ToolTextError) as caught:
        parse_lspci_nn(text, "x")
    assert str(caught.value).startswith(expected)


def test_a_whole_file_of_devices_is_read_line_by_line():
    """40,960 device lines (some 5 MB): every one read, the last one numbered right."""
    text = "".join(f"{bus:02x}:{slot:02x}.{function} Infiniband controller [0207]: Mellanox Technologies MT28908 Family "
                   f"[ConnectX-6 Virtual Function] [15b3:101c]\n"
                   for bus in range(160) for slot in range(32) for function in range(8))
    devices = parse_lspci_nn(text, "x")
    assert len(devices) == 40_960 and all(device.virtual_function for device in devices)
    assert devices[-1].address == "0000:9f:1f.7" and devices[-1].line == 40_960


# telling them apart, reading files


def test_identify_tells_the_three_apart_and_nothing_else():
    assert identify(dgx1_topo()) == "nvidia-smi-topo"
    assert identify(b200_topo()) == "nvidia-smi-topo"
    assert identify("$ ibdev2netdev\r\nmlx5_0 port 1 ==> ib0 (Up)\r\n") == "ibdev2netdev"
    assert identify("apiVersion: v1\nkind: Node\n") is None
    assert identify("") is None


def test_a_tool_file_is_read_within_bounds(tmp_path):
    saved = tmp_path / "topo.txt"
    saved.write_bytes(b"\xef\xbb\xbf" + fixture("gpu-only_nvidia-smi-topo.txt").encode())
    assert parse_nvidia_smi_topo(read_tool_text(saved), "topo.txt").gpus == ("GPU0", "GPU1", "GPU2", "GPU3")
    (tmp_path / "big.txt").write_text("x" * 11)
    with pytest.raises(ToolTextError) as caught:
        read_tool_text(tmp_path / "big.txt", limit=10)
    assert str(caught.value).startswith(f"{tmp_path / 'big.txt'}:1: file is 11 bytes, more than the 10")
