"""YAML merge keys (`<<: *base`) through the whole pipeline: a profile set that shares blocks through anchors
and merges compiles to the same charts as the same profiles written out, byte for byte; errors in merged values
point where they were written."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import PROFILES, run_mpigen

from mpigen.commands.pipeline import compile_profiles
from mpigen.load import load_bytes, load_paths
from mpigen.load.catalogue import expand_hardware
from mpigen.validate import validate

pytestmark = pytest.mark.usefixtures("parse_every_time")  # tests of loading parse each file (conftest.ParseMemo)

# (file, text as in profiles/, the same with merge keys). Every place a merged mapping can stand: a job's env
# (merged keys keep the place of `<<`, so the variables' order is unchanged), resources, a volume (list item),
# the job's top level, a cluster's node pools and rails' ipam, a hardware's NICs (then `extends`ed by another
# hardware profile, so catalogue.merge sees merged maps too).
MERGES: list[tuple[str, str, str]] = [
    ("jobs/pi.yaml",
     'resources:\n  cpu: "1"\n  memory: 1Gi\nlauncher:\n  resources:\n    cpu: "1"\n    memory: 1Gi\n',
     'resources: &small\n  cpu: "1"\n  memory: 1Gi\nlauncher:\n  resources:\n    <<: *small\n'),
    ("jobs/pi.yaml",
     "cluster: dgx-lab\npool: cpu\nnamespace: hpc\nimage: mpioperator/mpi-pi:openmpi\nworkers: 2\n",
     "<<: {cluster: dgx-lab, pool: cpu, workers: 2}\nnamespace: hpc\nimage: mpioperator/mpi-pi:openmpi\n"),
    ("jobs/netapp-resnet50.yaml",
     '  NCCL_DEBUG: INFO\n  NCCL_NET_GDR_READ: "1"\n  NCCL_IB_SL: "3"\n',
     '  NCCL_DEBUG: INFO\n  <<: &gdr {NCCL_NET_GDR_READ: "1", NCCL_IB_SL: "3"}\n'),
    ("jobs/netapp-resnet50.yaml",
     "  - name: testdata-iface1\n    claim: pb-fg-all-iface1\n    mountPath: /mnt/mount_0\n"
     "  - name: testdata-iface2\n    claim: pb-fg-all-iface2\n    mountPath: /mnt/mount_1\n",
     "  - name: testdata-iface1\n    <<: &mount0 {claim: pb-fg-all-iface1, mountPath: /mnt/mount_0}\n"
     "  - <<: [{name: testdata-iface2}, {claim: pb-fg-all-iface2}]\n    mountPath: /mnt/mount_1\n"),
    ("jobs/resnet50-dgx.yaml",
     "env:\n  NCCL_DEBUG: INFO\n",
     "env:\n  <<: {NCCL_DEBUG: INFO}\n"),
    ("clusters/dgx-lab.yaml",
     "  - name: dgx\n    hardware: dgx-1\n    nodes: 4\n  - name: cpu\n    hardware: cpu-node\n    nodes: 8\n",
     "  - <<: &pool {name: dgx, hardware: dgx-1}\n    nodes: 4\n  - <<: *pool\n    name: cpu\n"
     "    hardware: cpu-node\n    nodes: 8\n"),
    ("clusters/dgx-lab.yaml",
     "    ipam:\n      range: 192.168.101.0/24\n",
     "    ipam:\n      <<: {range: 192.168.101.0/24}\n"),
    ("hardware/dgx-1.yaml",
     "  - name: ib0\n    hca: mlx5_0\n    port: 1\n    pfName: ib0\n    vendorId: \"15b3\"\n    deviceId: \"1013\"\n"
     "    vfDeviceId: \"1014\"\n    linkType: InfiniBand\n    speedGbps: 100\n    numaNode: 0\n    gpus: [0, 1]\n"
     "  - name: ib1\n    hca: mlx5_1\n    port: 1\n    pfName: ib1\n    vendorId: \"15b3\"\n    deviceId: \"1013\"\n"
     "    vfDeviceId: \"1014\"\n    linkType: InfiniBand\n    speedGbps: 100\n    numaNode: 0\n    gpus: [2, 3]\n",
     "  - &ib0\n    name: ib0\n    hca: mlx5_0\n    port: 1\n    pfName: ib0\n    vendorId: \"15b3\"\n"
     "    deviceId: \"1013\"\n    vfDeviceId: \"1014\"\n    linkType: InfiniBand\n    speedGbps: 100\n    numaNode: 0\n"
     "    gpus: [0, 1]\n"
     "  - <<: *ib0\n    name: ib1\n    hca: mlx5_1\n    pfName: ib1\n    gpus: [2, 3]\n"),
]



def merged_profiles(root: Path) -> Path:
    shutil.copytree(PROFILES, root)
    for name, written_out, merged in MERGES:
        path = root / name
        text = path.read_text(encoding="utf-8")
        assert text.count(written_out) == 1, (name, written_out)
        path.write_text(text.replace(written_out, merged), encoding="utf-8")
    return root


def files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_merged_profiles_compile_to_the_charts_of_the_written_out_ones(tmp_path: Path) -> None:
    merged = merged_profiles(tmp_path / "merged" / "profiles")
    for source, out in ((PROFILES, tmp_path / "written-charts"), (merged, tmp_path / "merged-charts")):
        result = run_mpigen("render", source, "-o", out)
        assert result.returncode == 0, result.stderr
    written, compiled = files(tmp_path / "written-charts"), files(tmp_path / "merged-charts")
    assert sorted(written) == sorted(compiled)
    # Byte for byte, comments too: a chart's comment names a value's profile and key, not the line, which moved.
    assert [name for name in written if written[name] != compiled[name]] == []
    # The line stays where nothing is committed (diagnostics, `mpigen explain`): line 6 of the merged pi.yaml is the
    # `<<` mapping that sets `workers`; its `image` moved up to line 8.
    pi = next(job for job in compile_profiles([merged]).fleet.jobs if job.name == "pi")
    assert (pi.origin("image"), pi.origin("workers")) == (f"{pi.source}:8: image", f"{pi.source}:6: workers")
    assert pi.chart_origin("workers") == f"{pi.source}: workers"


def test_a_value_brought_in_by_a_merge_is_reported_where_it_was_written(tmp_path: Path) -> None:
    """Schema errors, unknown keys and secrets in merged mappings point into the anchor's mapping, whose text
    the user can find; the mapping that merged it has no line for them."""
    root = merged_profiles(tmp_path / "profiles")
    pi = root / "jobs" / "pi.yaml"
    text = pi.read_text(encoding="utf-8")
    text = text.replace('resources: &small\n  cpu: "1"\n', 'resources: &small\n  cpu: 1.50\n  gpus: 2\n')
    text = text.replace("namespace: hpc\n", "namespace: hpc\nenv:\n  <<: {A_TOKEN: hunter2}\n")
    pi.write_text(text, encoding="utf-8")
    lines = text.splitlines()
    cpu, gpus, token = (next(i for i, line in enumerate(lines, 1) if needle in line)
                        for needle in ("cpu: 1.50", "gpus: 2", "A_TOKEN"))
    loaded = load_paths([root])
    expanded = expand_hardware(loaded.documents, loaded.unreadable)
    found = [d.format() for d in validate(expanded.documents, [*loaded.unreadable, *expanded.unresolved])]
    # Written once under `resources`, merged into `launcher.resources`: each use is reported, at the one text.
    assert sum(f.startswith(f"{pi}:{cpu}:8: error: `resources.cpu` must be a string") for f in found) == 1, found
    assert sum(f.startswith(f"{pi}:{cpu}:8: error: `launcher.resources.cpu` must be a string") for f in found) == 1
    assert any(f.startswith(f"{pi}:{gpus}:3: error: unknown key 'gpus' in `resources`") for f in found), found
    assert any(f.startswith(f"{pi}:{token}:") and "A_TOKEN" in f and "secret" in f for f in found), found


def test_merge_keys_anywhere_in_a_profile_are_read():
    raw = (b"a: &base {x: 1, y: 2}\nb:\n  w: 0\n  <<: [*base, {z: 3, x: 9}]\n  y: 5\n"
           b"c: [<<, =]\nd: {\"<<\": 1}\n")
    document, diagnostics = load_bytes(raw, "f.yaml", "p/f.yaml")
    assert diagnostics == [] and document is not None
    # The mapping's own keys win; merged ones stand where `<<` was written, earlier mappings of the list first.
    assert list(document.data["b"].items()) == [("w", 0), ("x", 1), ("z", 3), ("y", 5)]
    assert str(document.location("b", "x")) == "f.yaml:1:14"  # in the anchor's mapping, not 1:1 nor line 4
    assert str(document.location("b", "z", at_key=True)) == "f.yaml:4:16"
    assert str(document.location("b", "y")) == "f.yaml:5:6"  # the override, not the base's 2
    assert document.data["c"] == ["<<", "="]  # a plain `<<` or `=` that is no key is its text
    assert document.data["d"] == {"<<": 1}  # a quoted "<<" is a plain key
