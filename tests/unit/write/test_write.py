"""generator/write.py: chart files land on disk atomically, an unchanged render touches nothing, and only
files listed in `.mpigen-owned` are ever deleted."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mpigen.write import OWNERSHIP_FILE, WriteRefused, write_tree
from mpigen.write import folder as write_folder

FILES = {
    "dgx-lab/infra/Chart.yaml": b"apiVersion: v2\nname: dgx-lab-infra\n",
    "dgx-lab/jobs/pi/Chart.yaml": b"apiVersion: v2\nname: pi\n",
    "dgx-lab/jobs/pi/templates/mpijob.yaml": b"kind: MPIJob\n",
}


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _mtimes(root: Path) -> dict[str, int]:
    return {p.relative_to(root).as_posix(): p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}


def _backdate(root: Path) -> None:
    """Make every file a minute old, so a rewrite within the same clock tick still shows."""
    for p in root.rglob("*"):
        if p.is_file():
            stat = p.stat()
            os.utime(p, ns=(stat.st_atime_ns - 60 * 10**9, stat.st_mtime_ns - 60 * 10**9))


def test_writes_files_and_ownership_list(tmp_path):
    out = tmp_path / "charts"
    report = write_tree(out, FILES)
    assert sorted(report.written) == sorted(FILES)
    assert report.unchanged == [] and report.pruned == []
    tree = _tree(out)
    assert {k: v for k, v in tree.items() if k != OWNERSHIP_FILE} == FILES
    owned = json.loads(tree[OWNERSHIP_FILE])
    assert sorted(owned["files"]) == sorted(FILES)


def test_written_files_are_world_readable_and_no_temp_files_remain(tmp_path):
    out = tmp_path / "charts"
    write_tree(out, FILES)
    for path in FILES:
        assert (out / path).stat().st_mode & 0o777 == 0o644
    assert not [p for p in out.rglob("*") if p.name.endswith(".tmp")]


def test_into_an_empty_existing_folder(tmp_path):
    out = tmp_path / "charts"
    out.mkdir()
    assert sorted(write_tree(out, FILES).written) == sorted(FILES)


def test_second_identical_write_changes_nothing(tmp_path):
    out = tmp_path / "charts"
    write_tree(out, FILES)
    _backdate(out)
    before_bytes, before_times = _tree(out), _mtimes(out)
    report = write_tree(out, FILES)
    assert report.written == [] and report.pruned == []
    assert sorted(report.unchanged) == sorted(FILES)
    assert _tree(out) == before_bytes
    after = _mtimes(out)
    assert {p: after[p] for p in FILES} == {p: before_times[p] for p in FILES}


def test_second_identical_write_leaves_the_ownership_file_alone(tmp_path):
    out = tmp_path / "charts"
    write_tree(out, FILES)
    _backdate(out)
    before = (out / OWNERSHIP_FILE).stat().st_mtime_ns
    write_tree(out, FILES)
    assert (out / OWNERSHIP_FILE).stat().st_mtime_ns == before, f"{OWNERSHIP_FILE} was rewritten"


def test_a_changed_file_is_rewritten_and_only_it(tmp_path):
    out = tmp_path / "charts"
    write_tree(out, FILES)
    changed = {**FILES, "dgx-lab/jobs/pi/Chart.yaml": b"apiVersion: v2\nname: pi\nversion: 0.2.0\n"}
    report = write_tree(out, changed)
    assert report.written == ["dgx-lab/jobs/pi/Chart.yaml"]
    assert sorted(report.unchanged) == sorted(set(FILES) - {"dgx-lab/jobs/pi/Chart.yaml"})
    assert (out / "dgx-lab/jobs/pi/Chart.yaml").read_bytes().endswith(b"version: 0.2.0\n")


def test_a_hand_edited_file_is_restored(tmp_path):
    out = tmp_path / "charts"
    write_tree(out, FILES)
    (out / "dgx-lab/jobs/pi/templates/mpijob.yaml").write_bytes(b"edited by hand\n")
    report = write_tree(out, FILES)
    assert report.written == ["dgx-lab/jobs/pi/templates/mpijob.yaml"]
    assert (out / "dgx-lab/jobs/pi/templates/mpijob.yaml").read_bytes() == b"kind: MPIJob\n"


def test_prunes_only_owned_files(tmp_path):
    out = tmp_path / "charts"
    write_tree(out, FILES)
    (out / "dgx-lab/jobs/pi/README.md").write_bytes(b"mine\n")
    (out / "notes.txt").write_bytes(b"also mine\n")
    remaining = {k: v for k, v in FILES.items() if not k.startswith("dgx-lab/jobs/pi/")}
    report = write_tree(out, remaining)
    assert sorted(report.pruned) == ["dgx-lab/jobs/pi/Chart.yaml", "dgx-lab/jobs/pi/templates/mpijob.yaml"]
    assert (out / "dgx-lab/jobs/pi/README.md").read_bytes() == b"mine\n"
    assert (out / "notes.txt").read_bytes() == b"also mine\n"
    assert not (out / "dgx-lab/jobs/pi/Chart.yaml").exists()
    assert not (out / "dgx-lab/jobs/pi/templates").exists(), "an emptied folder of pruned files stays behind"
    assert json.loads((out / OWNERSHIP_FILE).read_text())["files"] == sorted(remaining)


def test_pruning_removes_emptied_folders(tmp_path):
    out = tmp_path / "charts"
    write_tree(out, FILES)
    remaining = {"dgx-lab/infra/Chart.yaml": FILES["dgx-lab/infra/Chart.yaml"]}
    write_tree(out, remaining)
    assert not (out / "dgx-lab" / "jobs").exists()
    assert _tree(out).keys() == {"dgx-lab/infra/Chart.yaml", OWNERSHIP_FILE}


def test_refuses_a_non_empty_folder_without_ownership_file(tmp_path):
    out = tmp_path / "charts"
    out.mkdir()
    (out / "precious.yaml").write_bytes(b"keep\n")
    with pytest.raises(WriteRefused, match=r"\.mpigen-owned"):
        write_tree(out, FILES)
    assert _tree(out) == {"precious.yaml": b"keep\n"}, "nothing may be written or deleted"


def test_refuses_a_damaged_ownership_file(tmp_path):
    out = tmp_path / "charts"
    write_tree(out, FILES)
    (out / OWNERSHIP_FILE).write_text("{not json", encoding="utf-8")
    with pytest.raises(WriteRefused):
        write_tree(out, {})
    assert all((out / p).is_file() for p in FILES)


@pytest.mark.parametrize("path", ["../escape.yaml", "a/../../escape.yaml", "a/../b.yaml", "/tmp/abs.yaml", "..", ""])
def test_refuses_paths_leaving_the_folder(tmp_path, path):
    out = tmp_path / "charts"
    with pytest.raises(WriteRefused):
        write_tree(out, {**FILES, path: b"x\n"})
    assert not (tmp_path / "escape.yaml").exists()
    assert not out.exists() or _tree(out) == {}, "a refused render writes nothing"


def test_a_tampered_ownership_list_cannot_delete_outside(tmp_path):
    victim = tmp_path / "victim.yaml"
    victim.write_bytes(b"keep\n")
    out = tmp_path / "charts"
    write_tree(out, FILES)
    for listed in ("../victim.yaml", str(victim)):
        (out / OWNERSHIP_FILE).write_text(json.dumps({"generator": "mpigen", "files": [listed]}), encoding="utf-8")
        with pytest.raises(WriteRefused):
            write_tree(out, FILES)
        assert victim.read_bytes() == b"keep\n"


def test_a_symlink_in_place_of_a_target_is_refused(tmp_path):
    elsewhere = tmp_path / "elsewhere.yaml"
    elsewhere.write_bytes(b"outside\n")
    out = tmp_path / "charts"
    write_tree(out, FILES)
    target = out / "dgx-lab/jobs/pi/Chart.yaml"
    target.unlink()
    target.symlink_to(elsewhere)
    with pytest.raises(WriteRefused):
        write_tree(out, FILES)
    assert elsewhere.read_bytes() == b"outside\n"
    assert target.is_symlink()


def test_a_symlink_with_identical_content_is_still_refused(tmp_path):
    elsewhere = tmp_path / "elsewhere.yaml"
    out = tmp_path / "charts"
    write_tree(out, FILES)
    target = out / "dgx-lab/jobs/pi/Chart.yaml"
    elsewhere.write_bytes(target.read_bytes())
    target.unlink()
    target.symlink_to(elsewhere)
    with pytest.raises(WriteRefused):
        write_tree(out, FILES)


def test_a_folder_in_place_of_a_target_is_refused(tmp_path):
    out = tmp_path / "charts"
    write_tree(out, FILES)
    target = out / "dgx-lab/jobs/pi/Chart.yaml"
    target.unlink()
    target.mkdir()
    (target / "inside").write_bytes(b"x")
    with pytest.raises(WriteRefused):
        write_tree(out, FILES)
    assert (target / "inside").read_bytes() == b"x"


def test_a_symlinked_folder_cannot_carry_writes_outside(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    out = tmp_path / "charts"
    write_tree(out, FILES)
    (out / "dgx-lab" / "jobs" / "pi").rename(tmp_path / "moved")
    (out / "dgx-lab" / "jobs" / "pi").symlink_to(outside, target_is_directory=True)
    with pytest.raises(WriteRefused):
        write_tree(out, FILES)
    assert list(outside.iterdir()) == [], "files were written through a link to outside the output folder"


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts descriptors through /proc")
def test_many_folders_are_written_and_pruned_with_no_descriptor_left_open(tmp_path):
    """The folders walked to stay open between files (one chain per root): none may outlive the render, and a
    pruned folder must not be reused through a descriptor kept from before."""
    out = tmp_path / "charts"
    many = {f"c{c}/jobs/j{j}/templates/t{t}.yaml": f"{c}-{j}-{t}\n".encode()
            for c in range(3) for j in range(40) for t in range(3)}
    before = _open_descriptors()
    write_tree(out, many)
    assert _tree(out) == {**many, OWNERSHIP_FILE: _tree(out)[OWNERSHIP_FILE]}
    fewer = {path: data for path, data in many.items() if "/j1" not in path}  # prunes j1 and j10-j19
    report = write_tree(out, {**fewer, "c0/jobs/j1/templates/new.yaml": b"again\n"})
    assert report.written == ["c0/jobs/j1/templates/new.yaml"] and len(report.pruned) == 3 * 11 * 3
    assert not (out / "c1/jobs/j1").exists() and (out / "c0/jobs/j1/templates/new.yaml").read_bytes() == b"again\n"
    assert _open_descriptors() == before


@pytest.mark.skipif(write_folder._syncfs is None, reason="one barrier needs syncfs(2); elsewhere each file syncs")
def test_a_render_makes_its_files_durable_with_one_barrier_not_one_fsync_each(tmp_path, monkeypatch):
    calls = {"fsync": 0, "syncfs": 0}
    real_fsync, real_syncfs = os.fsync, write_folder._syncfs

    def counted_fsync(fd: int) -> None:
        calls["fsync"] += 1
        real_fsync(fd)

    def counted_syncfs(fd: int) -> int:
        calls["syncfs"] += 1
        return real_syncfs(fd)

    monkeypatch.setattr(os, "fsync", counted_fsync)
    monkeypatch.setattr(write_folder, "_syncfs", counted_syncfs)
    write_tree(tmp_path / "charts", {f"c/{i}.yaml": b"x\n" for i in range(50)})
    # Before the commit (the staged files and plan), after the moves; and the commit's rename itself.
    assert calls == {"fsync": 1, "syncfs": 2}
