"""Built-in hardware profiles and `extends` (generator/load/catalogue.py), and the facts a cluster or job needs of them.

The built-ins' expected values are copied by hand from docs/facts.md section 4 ("Hardware"); each block cites the
table row. Lines and columns of diagnostics are counted by hand from the profile text each test writes (columns
from 1, like editors), or from the built-in files, whose counted lines are checked at import.
"""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path
from textwrap import dedent
from typing import Any

import pytest
from conftest import PROFILES
from jsonschema import Draft202012Validator

from mpigen.commands.pipeline import CompileResult, check_profiles, compile_profiles
from mpigen.load import ProfileFile, catalogue, load_bytes, to_plain
from mpigen.load.catalogue import MergedDocument, builtin_names, expand_hardware, load_builtin, merge
from mpigen.support.schema_files import load_schema

pytestmark = pytest.mark.usefixtures("parse_every_time")  # tests of loading parse each file (conftest.ParseMemo)

BUILTINS = ("cpu-node", "dgx-1", "dgx-1-32gb", "dgx-2", "dgx-a100", "dgx-h100", "gb200-nvl72")
DGX = ("dgx-1", "dgx-2", "dgx-a100", "dgx-h100", "gb200-nvl72")
HARDWARE_DIR = Path(catalogue.__file__).parent.parent / "hardware"


def _text(name: str) -> str:
    return (HARDWARE_DIR / f"{name}.yaml").read_text(encoding="utf-8")


# Lines of the built-in files the tests below point into.
assert _text("dgx-1").splitlines()[26] == "  count: 8"
assert _text("dgx-1").splitlines()[34].startswith('    deviceId: "1013"')
assert _text("dgx-1-32gb").splitlines()[12].startswith("  memoryGiB: 32")
assert _text("dgx-a100").splitlines()[31] == '    deviceId: "101b"'


def _document(text: str, path: str) -> ProfileFile:
    document, problems = load_bytes(text.encode(), path, path)
    assert document is not None, problems
    return document


def _cluster_naming(hardware: str) -> ProfileFile:
    return _document(dedent(f"""\
        apiVersion: mpigen/v1alpha1
        kind: Cluster
        name: c
        kubernetesVersion: "1.31"
        namespaces: [ml]
        nodePools:
          - {{name: p, hardware: {hardware}, nodes: 1}}
        """), "clusters/c.yaml")


def _builtin(name: str) -> ProfileFile:
    """A built-in as a cluster naming it sees it: loaded, its `extends` applied."""
    expansion = expand_hardware([_cluster_naming(name)])
    assert expansion.diagnostics == [] and expansion.unresolved == []
    hardware = [d for d in expansion.documents if d.kind == "Hardware"]
    assert len(hardware) == 1
    return hardware[0]


def _facts(document: ProfileFile) -> dict[str, Any]:
    """The profile as data, without its free-text description."""
    data = to_plain(document.data)
    assert isinstance(data.pop("description"), str)
    return data


def _schema_errors(data: dict[str, Any]) -> list[str]:
    return [e.message for e in Draft202012Validator(load_schema("Hardware")).iter_errors(data)]


# --- the built-ins on their own ---------------------------------------------------------------------------------------


def test_the_catalogue_lists_exactly_the_seven_built_ins():
    assert builtin_names() == BUILTINS


@pytest.mark.parametrize("name", BUILTINS)
def test_every_built_in_loads_and_is_schema_valid_on_its_own(name):
    document, problems = load_builtin(name)
    assert problems == [] and document is not None
    assert document.path == f"<builtin>/{name}.yaml"
    assert document.data["name"] == name and document.kind == "Hardware"
    assert _text(name).splitlines()[0] == "# yaml-language-server: $schema=../../schemas/hardware.schema.json"
    assert (HARDWARE_DIR / "../../schemas/hardware.schema.json").resolve().is_file()
    assert _schema_errors(to_plain(document.data)) == []  # as an editor sees the file
    merged = _builtin(name)
    assert "extends" not in merged.data
    assert _schema_errors(to_plain(merged.data)) == []  # as mpigen checks it


@pytest.mark.parametrize("name", DGX)
def test_dgx_built_ins_cite_their_source_and_say_how_to_read_what_is_unknown(name):
    text = _text(name)
    assert "Source: NVIDIA's DGX" in text  # the system's own data sheet, user guide or white paper
    for tool in ("nvidia-smi topo -m", "ibdev2netdev", "lspci -nn", "lscpu"):
        assert tool in text, (name, tool)


def _nic(name: str, **facts: Any) -> dict[str, Any]:
    return {"name": name, **facts}


def test_dgx_1_facts():
    # Row "DGX-1 (V100)": 8x V100 SXM2 16 or 32 GB, NVLink hybrid cube-mesh | 4x ConnectX-4 EDR InfiniBand 100 Gb/s
    # (PCI 15b3:1013, VF 15b3:1014), plus 2x 10 GbE | 2x Xeon E5-2698 v4 (20 cores each), 512 GB, 2 NUMA nodes.
    # Note under the table: every two GPUs share a PCIe switch with one IB card (GPU-NIC distance PIX); IB0/IB1
    # hang off CPU 0, IB2/IB3 off CPU 1; GPUs are requested as nvidia.com/gpu.
    # Not published, so absent: hca (mlx5_N numbering), pfName, port, gpus per NIC, threadsPerCore, labels.
    ib = {"vendorId": "15b3", "deviceId": "1013", "vfDeviceId": "1014", "linkType": "InfiniBand", "speedGbps": 100}
    assert _facts(_builtin("dgx-1")) == {
        "apiVersion": "mpigen/v1alpha1", "kind": "Hardware", "name": "dgx-1",
        "gpu": {"count": 8, "memoryGiB": 16, "resource": "nvidia.com/gpu", "nicDistance": "PIX"},
        "nics": [_nic("ib0", **ib, numaNode=0), _nic("ib1", **ib, numaNode=0),
                 _nic("ib2", **ib, numaNode=1), _nic("ib3", **ib, numaNode=1)],
        "cpu": {"model": "Intel Xeon E5-2698 v4", "sockets": 2, "coresPerSocket": 20},
        "memoryGiB": 512,
    }
    description = _builtin("dgx-1").data["description"]
    for fact in ("V100 SXM2 16 GB", "NVLink hybrid cube-mesh", "EDR InfiniBand 100 Gb/s", "2x 10 GbE", "2 NUMA nodes",
                 "share a PCIe switch"):
        assert fact in description, fact


def test_dgx_1_carries_the_reviewed_profiles_facts_and_only_leaves_out_what_that_file_assumes():
    """profiles/hardware/dgx-1.yaml plus exactly the unpublished facts it assumes is the built-in, extended."""
    assumed = _document(dedent("""\
        apiVersion: mpigen/v1alpha1
        kind: Hardware
        name: dgx-1
        extends: dgx-1
        gpu: {model: Tesla-V100-SXM2-16GB}
        nics:
          - {name: ib0, hca: mlx5_0, port: 1, pfName: ib0, gpus: [0, 1]}
          - {name: ib1, hca: mlx5_1, port: 1, pfName: ib1, gpus: [2, 3]}
          - {name: ib2, hca: mlx5_2, port: 1, pfName: ib2, gpus: [4, 5]}
          - {name: ib3, hca: mlx5_3, port: 1, pfName: ib3, gpus: [6, 7]}
        cpu: {threadsPerCore: 2}
        nodeLabels: {nvidia.com/gpu.product: Tesla-V100-SXM2-16GB}
        """), "hardware/assumed.yaml")
    reviewed = _facts(_document((PROFILES / "hardware" / "dgx-1.yaml").read_text(encoding="utf-8"), "hw/dgx-1.yaml"))
    reviewed["gpu"]["resource"] = "nvidia.com/gpu"  # its default; the built-in writes out docs/facts.md's "requested as"
    assert _facts(merge(_builtin("dgx-1"), assumed)) == reviewed


def test_dgx_1_32gb_is_dgx_1_with_32_gb_gpus():
    # Row "DGX-1 (V100)": "8x V100 SXM2 16 or 32 GB".
    variant, base = _facts(_builtin("dgx-1-32gb")), _facts(_builtin("dgx-1"))
    assert variant["gpu"] == {"count": 8, "memoryGiB": 32, "resource": "nvidia.com/gpu", "nicDistance": "PIX"}
    assert variant["name"] == "dgx-1-32gb"
    assert {**variant, "gpu": base["gpu"], "name": "dgx-1"} == base
    assert "extends: dgx-1\n" in _text("dgx-1-32gb") and "nics:" not in _text("dgx-1-32gb")


def test_dgx_1_32gb_points_each_value_at_the_file_that_wrote_it():
    variant = _builtin("dgx-1-32gb")
    assert str(variant.location("gpu", "memoryGiB")) == "<builtin>/dgx-1-32gb.yaml:13:14"
    assert str(variant.location("gpu", "count")) == "<builtin>/dgx-1.yaml:27:10"
    assert str(variant.location("nics", 0, "deviceId")) == "<builtin>/dgx-1.yaml:35:15"


def test_dgx_2_facts():
    # Row "DGX-2": 16x V100 32 GB | 8x EDR IB or 100 GbE | 2x Xeon Platinum 8168, 1.5 TB.
    # The link type is either, the NIC model and PCI ids are not given: each NIC has only its speed.
    assert _facts(_builtin("dgx-2")) == {
        "apiVersion": "mpigen/v1alpha1", "kind": "Hardware", "name": "dgx-2",
        "gpu": {"count": 16, "memoryGiB": 32, "resource": "nvidia.com/gpu"},
        "nics": [_nic(f"nic{i}", speedGbps=100) for i in range(8)],
        "cpu": {"model": "Intel Xeon Platinum 8168", "sockets": 2},
        "memoryGiB": 1536,
    }


def test_dgx_a100_facts():
    # Row "DGX A100": 8x A100 | 8x ConnectX-6 HDR 200 Gb/s (15b3:101b) | 2x EPYC 7742, 1 TB.
    # HDR is an InfiniBand rate. Not given: GPU memory, VF id, cores per socket.
    hdr = {"vendorId": "15b3", "deviceId": "101b", "linkType": "InfiniBand", "speedGbps": 200}
    assert _facts(_builtin("dgx-a100")) == {
        "apiVersion": "mpigen/v1alpha1", "kind": "Hardware", "name": "dgx-a100",
        "gpu": {"count": 8, "resource": "nvidia.com/gpu"},
        "nics": [_nic(f"ib{i}", **hdr) for i in range(8)],
        "cpu": {"model": "AMD EPYC 7742", "sockets": 2},
        "memoryGiB": 1024,
    }


def test_dgx_h100_facts():
    # Row "DGX H100": 8x H100 80 GB | 8x ConnectX-7 400 Gb/s (one per GPU) | 2x Xeon 8480C, 2 TB.
    # Not given: link type, PCI ids, which GPU is beside which NIC, cores per socket.
    assert _facts(_builtin("dgx-h100")) == {
        "apiVersion": "mpigen/v1alpha1", "kind": "Hardware", "name": "dgx-h100",
        "gpu": {"count": 8, "memoryGiB": 80, "resource": "nvidia.com/gpu"},
        "nics": [_nic(f"nic{i}", speedGbps=400) for i in range(8)],
        "cpu": {"model": "Intel Xeon 8480C", "sockets": 2},
        "memoryGiB": 2048,
    }
    assert "one per GPU" in _builtin("dgx-h100").data["description"]


def test_gb200_nvl72_facts():
    # Row "GB200 NVL72 (compute tray)": 4x Blackwell 186 GB, one 72-GPU NVLink domain (18 trays x 4) | 4x ConnectX-7
    # 400 Gb/s single port, InfiniBand compute fabric; 2x BlueField-3 for storage and management, not rails |
    # 2x Grace (72 Arm Neoverse V2 cores each), up to 480 GB LPDDR5X each.
    # Not given: which GPU is beside which NIC, the GPU-NIC PCIe distance, HCA and interface names, PCI ids.
    facts = _facts(_builtin("gb200-nvl72"))
    assert facts == {
        "apiVersion": "mpigen/v1alpha1", "kind": "Hardware", "name": "gb200-nvl72",
        "gpu": {"count": 4, "memoryGiB": 186, "resource": "nvidia.com/gpu", "nvlinkDomainGpus": 72},
        "nics": [_nic(f"nic{i}", linkType="InfiniBand", speedGbps=400) for i in range(4)],
        "cpu": {"model": "NVIDIA Grace", "sockets": 2, "coresPerSocket": 72},
        "memoryGiB": 960,
    }
    assert facts["gpu"]["nvlinkDomainGpus"] // facts["gpu"]["count"] == 18  # trays a rack: a whole number of nodes
    description = _builtin("gb200-nvl72").data["description"]
    for fact in ("72-GPU NVLink domain of 18 trays", "ConnectX-7 400 Gb/s InfiniBand", "BlueField-3"):
        assert fact in description, fact
    assert "gpus" not in str(facts["nics"]) and "nicDistance" not in facts["gpu"]  # unpublished: read on a node


def test_cpu_node_facts_are_the_example_fleets():
    # profiles/hardware/cpu-node.yaml: Intel Xeon Gold 6338, 2 sockets x 32 cores x 2 threads, 256 GiB, no GPUs.
    facts = _facts(_builtin("cpu-node"))
    assert facts == {"apiVersion": "mpigen/v1alpha1", "kind": "Hardware", "name": "cpu-node",
                     "cpu": {"model": "Intel Xeon Gold 6338", "sockets": 2, "coresPerSocket": 32, "threadsPerCore": 2},
                     "memoryGiB": 256}


# --- merging ----------------------------------------------------------------------------------------------------------

BASE = dedent("""\
    apiVersion: mpigen/v1alpha1
    kind: Hardware
    name: base
    description: the base
    gpu:
      count: 8
      memoryGiB: 16
    nics:
      - name: a
        hca: mlx5_0
        gpus: [0, 1]
      - name: b
        hca: mlx5_1
        speedGbps: 100
    cpu:
      model: Some CPU
      sockets: 2
      coresPerSocket: 20
    memoryGiB: 512
    nodeLabels:
      site: one
    """)

CHILD = dedent("""\
    apiVersion: mpigen/v1alpha1
    kind: Hardware
    name: child
    extends: base
    gpu:
      memoryGiB: 32
    nics:
      - name: b
        pfName: ib1
      - name: c
        hca: mlx5_2
      - name: a
        gpus: [2]
    cpu:
      coresPerSocket: 24
    memoryGiB: 1024
    """)


@pytest.fixture
def merged() -> MergedDocument:
    return merge(_document(BASE, "hw/base.yaml"), _document(CHILD, "hw/child.yaml"))


def test_merge_mappings_by_key_nics_by_name_other_lists_and_scalars_replace(merged):
    assert to_plain(merged.data) == {
        "apiVersion": "mpigen/v1alpha1", "kind": "Hardware", "name": "child", "description": "the base",
        "gpu": {"count": 8, "memoryGiB": 32},
        "nics": [{"name": "a", "hca": "mlx5_0", "gpus": [2]},
                 {"name": "b", "hca": "mlx5_1", "speedGbps": 100, "pfName": "ib1"},
                 {"name": "c", "hca": "mlx5_2"}],
        "cpu": {"model": "Some CPU", "sockets": 2, "coresPerSocket": 24},
        "memoryGiB": 1024,
        "nodeLabels": {"site": "one"},
    }


def test_merge_points_overridden_values_at_the_child_and_inherited_ones_at_the_base(merged):
    where = {
        ("memoryGiB",): "hw/child.yaml:16:12",
        ("cpu", "coresPerSocket"): "hw/child.yaml:15:19",
        ("cpu", "model"): "hw/base.yaml:16:10",
        ("gpu", "count"): "hw/base.yaml:6:10",
        ("nics", 0, "hca"): "hw/base.yaml:10:10",
        ("nics", 0, "gpus", 0): "hw/child.yaml:13:12",
        ("nics", 1, "speedGbps"): "hw/base.yaml:14:16",
        ("nics", 1, "pfName"): "hw/child.yaml:9:13",
        ("nics", 2): "hw/child.yaml:10:5",
        ("name",): "hw/child.yaml:3:7",
        (): "hw/child.yaml:1:1",
    }
    for keys, expected in where.items():
        assert str(merged.location(*keys)) == expected, keys
    assert str(merged.location("nodeLabels", "site", at_key=True)) == "hw/base.yaml:21:3"


def test_merge_never_inherits_identity_and_drops_extends():
    base = _document(BASE.replace("name: base\n", "name: base\nextends: elsewhere\n"), "hw/base.yaml")
    child = _document("kind: Hardware\nextends: base\nmemoryGiB: 1\n", "hw/child.yaml")
    data = to_plain(merge(base, child).data)
    assert "apiVersion" not in data and "name" not in data and "extends" not in data
    assert data["kind"] == "Hardware" and data["description"] == "the base"


def test_merge_appends_a_nic_without_a_name_and_replaces_a_mapping_given_as_a_scalar():
    child = _document("name: x\nextends: base\ngpu: 4\nnics:\n  - hca: mlx5_9\n", "hw/child.yaml")
    data = to_plain(merge(_document(BASE, "hw/base.yaml"), child).data)
    assert data["gpu"] == 4
    assert [n.get("name") for n in data["nics"]] == ["a", "b", None]


def test_merge_of_a_merged_base_points_at_the_file_that_wrote_each_value(merged):
    grandchild = _document("name: small\nextends: child\ngpu:\n  count: 4\n", "hw/small.yaml")
    twice = merge(merged, grandchild)
    assert str(twice.location("gpu", "count")) == "hw/small.yaml:4:10"
    assert str(twice.location("gpu", "memoryGiB")) == "hw/child.yaml:6:14"
    assert str(twice.location("cpu", "model")) == "hw/base.yaml:16:10"
    assert to_plain(twice.data)["nics"][1] == {"name": "b", "hca": "mlx5_1", "speedGbps": 100, "pfName": "ib1"}


def test_merged_values_point_into_built_in_files():
    child = _document("name: mine\nextends: dgx-a100\nmemoryGiB: 2048\n", "hw/mine.yaml")
    mine = merge(_builtin("dgx-a100"), child)
    assert str(mine.location("nics", 0, "deviceId")) == "<builtin>/dgx-a100.yaml:32:15"
    assert str(mine.location("memoryGiB")) == "hw/mine.yaml:3:12"


# --- the pipeline: errors -----------------------------------------------------------------------------------------------


def _errors(result: CompileResult, root: Path) -> list[str]:
    """Every diagnostic as the CLI prints it, with the copy's folder left out."""
    return [d.format().replace(f"{root}/", "") for d in result.diagnostics]


def _hardware(name: str, body: str) -> str:
    return f"apiVersion: mpigen/v1alpha1\nkind: Hardware\nname: {name}\n{body}"


def test_extends_cycle_is_one_error_at_the_extends_key(profiles_copy):
    # Lines: 1 apiVersion, 2 kind, 3 name, 4 extends. c leads into the cycle and says nothing more.
    root = profiles_copy({"hardware/a.yaml": _hardware("a", "extends: b\n"),
                          "hardware/b.yaml": _hardware("b", "extends: a\n"),
                          "hardware/c.yaml": _hardware("c", "extends: b\n")})
    assert _errors(check_profiles([root]), root) == [
        "hardware/a.yaml:4:1: error: `extends` goes round in a circle: a -> b -> a; remove `extends` from one of them"]


def test_a_profile_extending_its_own_name_is_a_cycle_even_if_a_built_in_has_that_name(profiles_copy):
    dgx = (PROFILES / "hardware" / "dgx-1.yaml").read_text(encoding="utf-8")
    root = profiles_copy({"hardware/dgx-1.yaml": dgx.replace("name: dgx-1\n", "name: dgx-1\nextends: dgx-1\n")})
    assert _errors(check_profiles([root]), root) == [
        "hardware/dgx-1.yaml:10:1: error: `extends` goes round in a circle: dgx-1 -> dgx-1; remove `extends` from one "
        "of them; a profile of yours named 'dgx-1' replaces the built-in of that name for all your profiles, so to "
        "build on the built-in give yours another name"]


def test_unknown_base_with_did_you_mean(profiles_copy):
    root = profiles_copy({"hardware/mine.yaml": _hardware("mine", "extends: dgx-a10\n")})
    assert _errors(check_profiles([root]), root) == [
        "hardware/mine.yaml:4:10: error: no hardware profile or built-in is named 'dgx-a10'; did you mean 'dgx-a100'?"]


def test_a_cluster_naming_a_profile_whose_base_is_unknown_gets_no_second_error(profiles_copy):
    dgx_lab = (PROFILES / "clusters" / "dgx-lab.yaml").read_text(encoding="utf-8")
    root = profiles_copy({"hardware/mine.yaml": _hardware("mine", "extends: nothing-like-it\n"),
                          "clusters/dgx-lab.yaml": dgx_lab.replace("hardware: dgx-1\n", "hardware: mine\n")})
    errors = _errors(check_profiles([root]), root)
    assert len(errors) == 1 and errors[0].startswith("hardware/mine.yaml:4:10: error: no hardware profile or built-in")


def test_schema_errors_in_an_override_point_into_the_override(profiles_copy):
    text = _hardware("lab", dedent("""\
        extends: dgx-a100
        memoryGiB: lots
        nics:
          - name: ib0
            vfDeviceId: 1014
        """))
    root = profiles_copy({"hardware/lab.yaml": text})
    assert _errors(check_profiles([root]), root) == [
        "hardware/lab.yaml:5:12: error: `memoryGiB` must be a whole number, not 'lots'; Node memory in GiB.",
        'hardware/lab.yaml:8:17: error: `nics[0].vfDeviceId` must be a string, not 1014; quote it: "1014"',
    ]


SITE_BASE = _hardware("site-base", dedent("""\
    gpu:
      count: 8
    nics:
      - name: ib0
        hca: mlx5_0
        gpus: [6, 7]
        speedGbps: fast
    cpu:
      sockets: 2
      coresPerSocket: 16
    memoryGiB: 256
    """))
assert SITE_BASE.splitlines()[8] == "    gpus: [6, 7]" and SITE_BASE.splitlines()[9] == "    speedGbps: fast"


def test_an_error_in_an_inherited_value_is_reported_once_in_the_file_that_wrote_it(profiles_copy):
    root = profiles_copy({"hardware/site-base.yaml": SITE_BASE,
                          "hardware/site-a.yaml": _hardware("site-a", "extends: site-base\n"),
                          "hardware/site-b.yaml": _hardware("site-b", "extends: site-a\nmemoryGiB: 512\n")})
    assert _errors(check_profiles([root]), root) == [
        "hardware/site-base.yaml:10:16: error: `nics[0].speedGbps` must be a whole number, not 'fast'; "
        "Link speed in Gb/s."]


def test_a_value_that_only_the_merged_profile_gets_wrong_points_at_the_base(profiles_copy):
    # site-base is fine on its own; with 4 GPUs, its NIC's GPUs 6 and 7 do not exist.
    root = profiles_copy({"hardware/site-base.yaml": SITE_BASE.replace("    speedGbps: fast\n", ""),
                          "hardware/site-small.yaml": _hardware("site-small", "extends: site-base\ngpu:\n  count: 4\n")})
    assert _errors(check_profiles([root]), root) == [
        "hardware/site-base.yaml:9:12: error: GPU index 6 does not exist: this hardware has 4 GPU(s); use indexes 0 to 3",
        "hardware/site-base.yaml:9:15: error: GPU index 7 does not exist: this hardware has 4 GPU(s); use indexes 0 to 3",
    ]


def test_a_profile_without_extends_still_needs_cpu_and_memory(profiles_copy):
    root = profiles_copy({"hardware/bare.yaml": _hardware("bare", "gpu: {memoryGiB: 16}\n")})
    assert _errors(check_profiles([root]), root) == [
        "hardware/bare.yaml:1:1: error: missing required key 'cpu' in the profile; add `cpu:` (The node's CPUs.)",
        "hardware/bare.yaml:1:1: error: missing required key 'memoryGiB' in the profile; add `memoryGiB:` "
        "(Node memory in GiB.)",
        "hardware/bare.yaml:4:6: error: missing required key 'count' in `gpu`; add `count:` (GPUs per node.)",
    ]


# --- clusters and jobs on built-ins ------------------------------------------------------------------------------------

# Lines: 1 apiVersion ... 6 nodePools, 7 `- name: a100`, 8 hardware, 9 nodes, 10 rails, 11 `- name: rail0`,
# 12 `nic: ib0` (value at column 10), 13 ipam, 14 range, 15 `- name: rail1`, 16 `nic: ib1`, 17 ipam, 18 range.
A100_LAB = dedent("""\
    apiVersion: mpigen/v1alpha1
    kind: Cluster
    name: a100-lab
    kubernetesVersion: "1.31"
    namespaces: [ml]
    nodePools:
      - name: a100
        hardware: {hardware}
        nodes: 2
    rails:
      - name: rail0
        nic: ib0
        ipam:
          range: 192.168.200.0/24
      - name: rail1
        nic: ib1
        ipam:
          range: 192.168.201.0/24
    """)
assert A100_LAB.splitlines()[11] == "    nic: ib0" and A100_LAB.splitlines()[15] == "    nic: ib1"

# What a user read on their nodes (`ibdev2netdev`, `lspci -nn`) and added to the built-in.
LAB_A100 = _hardware("lab-a100", dedent("""\
    extends: dgx-a100
    nics:
      - {name: ib0, hca: mlx5_0, pfName: ibp12s0, vfDeviceId: "101c"}
      - {name: ib1, hca: mlx5_1, pfName: ibp18s0, vfDeviceId: "101c"}
    """))

# Lines: 1 apiVersion, 2 kind, 3 name, 4 cluster, 5 pool, 6 image, 7 workers, 8 program; a line added is line 9.
TRAIN = dedent("""\
    apiVersion: mpigen/v1alpha1
    kind: Job
    name: train
    cluster: {cluster}
    pool: {pool}
    image: nvcr.io/nvidia/pytorch:24.03-py3
    workers: 2
    program: [python, train.py]
    """)


def _objects(result: CompileResult, kind: str) -> list[dict[str, Any]]:
    return [m.obj for c in result.charts for m in c.manifests if m.obj["kind"] == kind]


def test_a_cluster_naming_a_built_in_compiles(profiles_copy):
    cluster = dedent("""\
        apiVersion: mpigen/v1alpha1
        kind: Cluster
        name: h100-lab
        kubernetesVersion: "1.31"
        namespaces: [ml]
        network: {provider: tcp}
        nodePools:
          - {name: h100, hardware: dgx-h100, nodes: 2}
        """)
    root = profiles_copy({"clusters/h100-lab.yaml": cluster,
                          "jobs/train.yaml": TRAIN.format(cluster="h100-lab", pool="h100")})
    result = compile_profiles([root])
    assert result.ok, _errors(result, root)
    h100 = next(h for h in result.fleet.hardware if h.name == "dgx-h100")
    assert h100.gpu.count == 8 and h100.memory_gib == 2048 and len(h100.nics) == 8
    assert h100.nics[0].link_type is None and h100.nics[0].hca is None  # unknown, and not needed without rails
    mpijob = next(o for o in _objects(result, "MPIJob") if o["metadata"]["namespace"] == "ml")
    worker = mpijob["spec"]["mpiReplicaSpecs"]["Worker"]
    assert worker["replicas"] == 2
    assert worker["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == 8


def test_a_cluster_on_a_profile_extending_a_built_in_gets_both_facts(profiles_copy):
    root = profiles_copy({"hardware/lab-a100.yaml": LAB_A100,
                          "clusters/a100-lab.yaml": A100_LAB.format(hardware="lab-a100"),
                          "jobs/train.yaml": TRAIN.format(cluster="a100-lab", pool="a100")})
    result = compile_profiles([root])
    assert result.ok, _errors(result, root)
    config = next(o for o in _objects(result, "ConfigMap") if o["metadata"]["name"] == "sriovdp-config"
                  and "a100-lab" in o["metadata"]["labels"]["helm.sh/chart"])
    resources = {r["resourceName"]: r["selectors"] for r in json.loads(config["data"]["config.json"])["resourceList"]}
    # vendor and link type inherited from the built-in; VF id and PF name from lab-a100.
    assert resources["rdma_rail0"]["vendors"] == ["15b3"] and resources["rdma_rail0"]["linkTypes"] == ["infiniband"]
    assert resources["rdma_rail0"]["devices"] == ["101c"] and resources["rdma_rail0"]["pfNames"] == ["ibp12s0"]
    assert resources["rdma_rail1"]["pfNames"] == ["ibp18s0"]
    mpijob = next(o for o in _objects(result, "MPIJob") if o["metadata"]["namespace"] == "ml")
    env = {e["name"]: e.get("value") for e in mpijob["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]
           ["containers"][0]["env"]}
    assert env["NCCL_IB_HCA"] == "mlx5"


def test_a_rail_on_a_built_in_nic_with_unknown_facts_says_which_and_where_to_set_them(profiles_copy):
    root = profiles_copy({"clusters/a100-lab.yaml": A100_LAB.format(hardware="dgx-a100")})
    unknown = ("whose hca, pfName and vfDeviceId are not known; set them in a hardware profile that extends dgx-a100 "
               "(read them on a node: hca and pfName with ibdev2netdev, vfDeviceId with lspci -nn)")
    assert _errors(check_profiles([root]), root) == [
        f"clusters/a100-lab.yaml:12:10: error: rail 'rail0' runs over NIC 'ib0' of hardware 'dgx-a100', {unknown}",
        f"clusters/a100-lab.yaml:16:10: error: rail 'rail1' runs over NIC 'ib1' of hardware 'dgx-a100', {unknown}",
    ]


def test_a_fact_still_unknown_after_extends_is_asked_for_in_the_extending_file(profiles_copy):
    lab = LAB_A100.replace(', vfDeviceId: "101c"}', "}", 1)
    root = profiles_copy({"hardware/lab-a100.yaml": lab, "clusters/a100-lab.yaml": A100_LAB.format(hardware="lab-a100")})
    assert _errors(check_profiles([root]), root) == [
        "clusters/a100-lab.yaml:12:10: error: rail 'rail0' runs over NIC 'ib0' of hardware 'lab-a100', whose vfDeviceId "
        "is not known; set it on NIC 'ib0' in hardware/lab-a100.yaml (read it on a node with lspci -nn)"]


def test_an_unknown_link_type_is_asked_for_not_guessed(profiles_copy):
    # DGX-2: "EDR IB or 100 GbE". Under the operator, the PF's device id is read rather than the VF's.
    cluster = A100_LAB.format(hardware="dgx-2").replace("nic: ib0", "nic: nic0").replace("nic: ib1", "nic: nic1")
    cluster = cluster.replace('namespaces: [ml]\n', 'namespaces: [ml]\nnetwork: {provider: sriov-network-operator}\n')
    # Its own node labels, for its SriovNetworkPoolConfig's selector.
    cluster = cluster.replace("    nodes: 2\n", "    nodes: 2\n    nodeLabels: {example.com/pool: a100}\n")
    root = profiles_copy({"clusters/a100-lab.yaml": cluster})
    errors = _errors(check_profiles([root]), root)
    assert len(errors) == 2
    assert errors[0] == (
        "clusters/a100-lab.yaml:14:10: error: rail 'rail0' runs over NIC 'nic0' of hardware 'dgx-2', whose hca, pfName, "
        "vendorId, deviceId and linkType are not known; set them in a hardware profile that extends dgx-2 (read them "
        "on a node: hca and pfName with ibdev2netdev, vendorId and deviceId with lspci -nn, linkType with ibv_devinfo)")


@pytest.mark.parametrize("provider", ["rdma-shared", "host-network"])
@pytest.mark.parametrize("host_interface", [True, False], ids=["hostInterface", "no hostInterface"])
def test_a_host_interface_does_not_replace_the_pf_name_rdma_shared_selects_by(profiles_copy, provider, host_interface):
    """rdma-shared-dev-plugin selects the NIC by its pfName (`ifNames`) whatever interface the rail names, so the one
    error asks for pfName, with or without a `hostInterface`: never for a `hostInterface`, which would not do."""
    lab = LAB_A100.replace(", pfName: ibp12s0", "", 1)
    cluster = A100_LAB.format(hardware="lab-a100").replace(
        "namespaces: [ml]\n", f"namespaces: [ml]\nnetwork: {{provider: {provider}}}\n")
    if host_interface:
        cluster = cluster.replace("    nic: ib0\n", "    nic: ib0\n    hostInterface: ib0\n")
    root = profiles_copy({"hardware/lab-a100.yaml": lab, "clusters/a100-lab.yaml": cluster})
    assert [e for e in _errors(check_profiles([root]), root) if ": error: " in e] == [
        "clusters/a100-lab.yaml:13:10: error: rail 'rail0' runs over NIC 'ib0' of hardware 'lab-a100', whose pfName "
        "is not known; set it on NIC 'ib0' in hardware/lab-a100.yaml (read it on a node with ibdev2netdev)"]


def test_a_job_asking_for_cpus_on_a_node_of_unknown_cores_is_refused(profiles_copy):
    job = TRAIN.format(cluster="a100-lab", pool="a100") + 'resources: {cpu: "16"}\n'
    root = profiles_copy({"hardware/lab-a100.yaml": LAB_A100,
                          "clusters/a100-lab.yaml": A100_LAB.format(hardware="lab-a100"), "jobs/train.yaml": job})
    assert _errors(check_profiles([root]), root) == [
        "jobs/train.yaml:9:18: error: a worker asks for 16 CPUs, but hardware 'lab-a100' does not say how many cores a "
        "node has (its cpu.coresPerSocket is not known); set it in hardware/lab-a100.yaml (read it on a node with "
        "lscpu); or leave `resources.cpu` out"]
    fixed = LAB_A100 + "cpu: {coresPerSocket: 64}\n"
    root = profiles_copy({"hardware/lab-a100.yaml": fixed,
                          "clusters/a100-lab.yaml": A100_LAB.format(hardware="lab-a100"), "jobs/train.yaml": job})
    assert check_profiles([root]).ok


# --- shadowing and when built-ins are read ---------------------------------------------------------------------------


def test_the_example_fleets_own_dgx_1_shadows_the_built_in(example):
    dgx = next(h for h in example.fleet.hardware if h.name == "dgx-1")
    assert [n.hca for n in dgx.nics] == ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"]  # profiles/hardware/dgx-1.yaml
    assert [h.name for h in example.fleet.hardware] == ["cpu-node", "dgx-1", "dgx-1-roce", "dgx-h100-ib", "gb200-ib"]


def test_a_user_profile_shadows_a_built_in_for_clusters_and_extends(profiles_copy):
    mine = _hardware("dgx-a100", "cpu: {sockets: 1, coresPerSocket: 4}\nmemoryGiB: 8\n")
    child = _hardware("child", "extends: dgx-a100\nmemoryGiB: 16\n")
    cluster = A100_LAB.format(hardware="dgx-a100").split("rails:")[0]
    root = profiles_copy({"hardware/mine.yaml": mine, "hardware/child.yaml": child,
                          "clusters/a100-lab.yaml": cluster})
    result = check_profiles([root])
    assert result.ok, _errors(result, root)
    hardware = {h.name: h for h in result.fleet.hardware}
    assert hardware["dgx-a100"].memory_gib == 8 and hardware["dgx-a100"].gpu is None
    assert hardware["child"].cpu.cores_per_socket == 4 and hardware["child"].nics == ()


def test_a_built_ins_own_extends_means_the_built_in_even_when_shadowed(profiles_copy):
    cluster = A100_LAB.format(hardware="dgx-1-32gb").split("rails:")[0]
    root = profiles_copy({"clusters/a100-lab.yaml": cluster})  # the example fleet has its own dgx-1
    result = check_profiles([root])
    assert result.ok, _errors(result, root)
    variant = next(h for h in result.fleet.hardware if h.name == "dgx-1-32gb")
    assert variant.gpu.memory_gib == 32 and [n.hca for n in variant.nics] == [None] * 4


def test_built_ins_are_read_only_when_named(tmp_path, monkeypatch, profiles_copy):
    """A broken built-in costs nothing until a cluster names it, and then it is reported like a profile."""
    folder = tmp_path / "builtins"
    shutil.copytree(HARDWARE_DIR, folder)
    (folder / "broken.yaml").write_text("kind: Hardware\nname: broken\n\tcpu: 1\n", encoding="utf-8")
    monkeypatch.setattr(catalogue, "BUILTIN_DIR", folder)
    assert "broken" in builtin_names()
    assert check_profiles([PROFILES]).ok
    root = profiles_copy({"clusters/a100-lab.yaml": A100_LAB.format(hardware="broken").split("rails:")[0]})
    assert _errors(check_profiles([root]), root) == [
        "<builtin>/broken.yaml:3:1: error: a tab character is not allowed here: YAML indents with spaces; "
        "replace the tab with spaces"]


def test_expansion_leaves_profiles_without_extends_alone():
    documents = [_document(BASE, "hw/base.yaml"), _cluster_naming("base")]
    expansion = expand_hardware(documents)
    assert expansion.documents == documents and expansion.diagnostics == [] and expansion.unresolved == []


def test_the_wheel_ships_the_built_ins(built_wheel):
    with zipfile.ZipFile(built_wheel) as wheel:
        shipped = {n: wheel.read(n) for n in wheel.namelist() if n.startswith("mpigen/hardware/")}
    assert shipped == {f"mpigen/hardware/{name}.yaml": (HARDWARE_DIR / f"{name}.yaml").read_bytes()
                       for name in BUILTINS}
