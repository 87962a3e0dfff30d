"""generator/write/target.py, the rule of every file a user points mpigen at (`plan --html FILE`, `init DIR`): a
regular file or a new name, never through a link, never inside the inputs; written whole, the temporary file never
left behind; a folder of new files all or none. Every refusal leaves the whole tree as it was."""

from __future__ import annotations

import errno
import os
import socket
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import current_folder, snapshot

import mpigen.write.target as target_module
from mpigen.write import WriteError, WriteFailed, WriteRefused
from mpigen.write.target import AlreadyExists, create_files, input_relation, kind_of, write_file

PAGE = b"<svg>the fleet</svg>\n"


@pytest.fixture
def world(tmp_path: Path) -> Path:
    """tmp/work with a profiles folder, a picture from before, a folder; tmp/outside with a file to protect."""
    work = tmp_path / "work"
    (work / "profiles" / "jobs").mkdir(parents=True)
    (work / "profiles" / "jobs" / "pi.yaml").write_text("kind: Job\n", encoding="utf-8")
    (work / "site").mkdir()
    (work / "old.svg").write_bytes(b"old picture\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "victim.txt").write_bytes(b"keep me\n")
    return work


def refused(tmp_path: Path, call: Callable[[], object], says: str, kind: type[WriteError] = WriteRefused) -> str:
    """`call` raises `kind` saying `says`, and nothing in tmp changed (files by content, links by target)."""
    return str(refusal(tmp_path, call, says, kind))


def refusal(tmp_path: Path, call: Callable[[], object], says: str, kind: type[WriteError] = WriteRefused) -> WriteError:
    before = snapshot(tmp_path)
    with pytest.raises(kind) as caught:
        call()
    assert says in str(caught.value), str(caught.value)
    assert snapshot(tmp_path) == before, "a refused write changed the tree"
    return caught.value


def test_a_new_name_and_a_plain_file_are_written_whole_and_readable(world):
    write_file(world / "new.svg", PAGE, inputs=[world / "profiles"])
    write_file(world / "old.svg", PAGE, inputs=[world / "profiles"])
    for name in ("new.svg", "old.svg"):
        assert (world / name).read_bytes() == PAGE
        assert stat.S_IMODE((world / name).stat().st_mode) == 0o644
    assert sorted(p.name for p in world.iterdir()) == ["new.svg", "old.svg", "profiles", "site"]  # no temp file


def test_a_relative_path_and_dotdot_are_walked_from_the_current_folder(world):
    with current_folder(world / "site"):
        write_file(Path("../new.svg"), PAGE)
        write_file(Path("here.svg"), PAGE)
    assert (world / "new.svg").read_bytes() == PAGE and (world / "site" / "here.svg").read_bytes() == PAGE


def special(kind: str, path: Path, tmp_path: Path) -> None:
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        with socket.socket(socket.AF_UNIX) as server, current_folder(path.parent):
            server.bind(path.name)
    elif kind == "folder":
        path.mkdir()
    elif kind == "device":
        try:
            os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # what /dev/null is, made here, not /dev's own
        except PermissionError:
            pytest.skip("making a device node needs root (CAP_MKNOD)")
    elif kind == "link to a file outside":
        path.symlink_to(tmp_path / "outside" / "victim.txt")
    elif kind == "link to a folder":
        path.symlink_to(tmp_path / "outside", target_is_directory=True)
    elif kind == "dangling link":
        path.symlink_to(tmp_path / "outside" / "nothing.txt")
    elif kind == "link to /dev/null":
        path.symlink_to("/dev/null")
    elif kind == "link to /proc/self/fd/1":
        path.symlink_to("/proc/self/fd/1")


SPECIALS = ("fifo", "socket", "folder", "device", "link to a file outside", "link to a folder", "dangling link",
            "link to /dev/null", "link to /proc/self/fd/1")


@pytest.mark.parametrize("kind", SPECIALS)
def test_anything_but_a_plain_file_or_a_new_name_is_refused_untouched(world, tmp_path, kind):
    special(kind, world / "plan.html", tmp_path)
    what = {"fifo": "a FIFO", "socket": "a socket", "folder": "a folder", "device": "a character device"}
    message = refused(tmp_path, lambda: write_file(world / "plan.html", PAGE),
                      f"it is {what.get(kind, 'a symbolic link')}")
    assert message.startswith(f"refusing to write {world / 'plan.html'}: ")
    assert (tmp_path / "outside" / "victim.txt").read_bytes() == b"keep me\n"
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


@pytest.mark.parametrize("kind", ["link to a folder", "link to /dev/null"])
def test_a_link_anywhere_on_the_way_is_refused_not_followed(world, tmp_path, kind):
    """`site -> ../outside` committed in a checkout, or `/proc/self/fd/1`: the file never goes where a link leads."""
    special(kind, world / "out", tmp_path)
    refused(tmp_path, lambda: write_file(world / "out" / "plan.html", PAGE),
            f"refusing to write through {world / 'out'}: it is a symbolic link")
    (world / "deep").mkdir()
    (world / "deep" / "up").symlink_to(world, target_is_directory=True)
    refused(tmp_path, lambda: write_file(world / "deep" / "up" / "site" / "plan.html", PAGE), "symbolic link")
    with current_folder(world):
        refused(tmp_path, lambda: write_file(Path("deep/up/plan.html"), PAGE), "through deep/up: it is a symbolic link")


def test_the_system_links_to_standard_output_are_refused():
    """The red team's `--html /dev/stdout`: refused before anything is made anywhere (the walk stops at the link)."""
    with pytest.raises(WriteRefused, match="it is a symbolic link"):
        write_file(Path("/dev/stdout"), PAGE)
    with pytest.raises(WriteRefused, match="through /proc/self: it is a symbolic link"):
        write_file(Path("/proc/self/fd/1"), PAGE)


def test_a_file_or_a_missing_folder_on_the_way_is_an_error(world, tmp_path):
    refused(tmp_path, lambda: write_file(world / "old.svg" / "plan.html", PAGE), "it is a file, not a folder")
    message = refused(tmp_path, lambda: write_file(world / "missing" / "plan.html", PAGE), "cannot write ",
                      kind=WriteFailed)
    assert message.endswith("nothing was written")


@pytest.mark.parametrize("name", ["/", ".", "..", "site/.", "site/.."])
def test_a_name_that_is_a_folder_is_refused(world, tmp_path, name):
    with current_folder(world):
        refused(tmp_path, lambda: write_file(Path(name), PAGE), "folder")


def test_never_over_or_inside_an_input(world, tmp_path):
    profiles = world / "profiles"
    pi = profiles / "jobs" / "pi.yaml"
    refused(tmp_path, lambda: write_file(pi, PAGE, inputs=[profiles]), f"inside the input {profiles}")
    refused(tmp_path, lambda: write_file(profiles / "plan.html", PAGE, inputs=[profiles]), "inside the input")
    refused(tmp_path, lambda: write_file(pi, PAGE, inputs=[pi]), f"it is the input {pi}")
    os.link(pi, world / "same-pi.yaml")  # a hard link is the same profile
    refused(tmp_path, lambda: write_file(world / "same-pi.yaml", PAGE, inputs=[pi]), "it is the input")
    (world / "alias").symlink_to(profiles, target_is_directory=True)  # inputs given through a link: the same folder
    refused(tmp_path, lambda: write_file(profiles / "x.svg", PAGE, inputs=[world / "alias"]), "inside the input")
    with current_folder(profiles / "jobs"):
        refused(tmp_path, lambda: write_file(Path("../../profiles/jobs/x.svg"), PAGE, inputs=[Path("..")]),
                "inside the input ..")
    write_file(world / "plan.svg", PAGE, inputs=[profiles, world / "gone"])  # beside them, and a missing input
    assert (world / "plan.svg").read_bytes() == PAGE


def test_input_relation_names_the_input_and_how():
    root = Path("/srv/fleet")
    assert input_relation(root / "profiles" / "jobs" / "pi.yaml", [root / "profiles"]) == (root / "profiles",
                                                                                          "is inside")
    assert input_relation(root / "profiles", [root / "profiles"]) == (root / "profiles", "is")
    assert input_relation(root, [root / "profiles"]) == (root / "profiles", "holds")
    assert input_relation(root / "plan.html", [root / "profiles"]) is None


def test_the_temporary_file_goes_whatever_fails(world, tmp_path, monkeypatch):
    before = snapshot(tmp_path)

    def full(fd: int, data: bytes) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(target_module, "write_all", full)
    with pytest.raises(WriteFailed, match=r"No space left on device.*nothing was written"):
        write_file(world / "old.svg", PAGE)
    monkeypatch.undo()

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(target_module.os, "rename", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_file(world / "new.svg", PAGE)
    monkeypatch.undo()
    assert snapshot(tmp_path) == before


def test_a_fifo_swapped_in_while_the_page_is_written_is_not_replaced(world, tmp_path, monkeypatch):
    """The check and the rename both work on the folder's descriptor, and the name is checked again just before
    the rename: what appeared meanwhile stays, and so does nothing of the write."""
    real = target_module.write_all

    def swap(fd: int, data: bytes) -> None:
        real(fd, data)
        (world / "old.svg").unlink()
        os.mkfifo(world / "old.svg")

    monkeypatch.setattr(target_module, "write_all", swap)
    with pytest.raises(WriteRefused, match="it is a FIFO"):
        write_file(world / "old.svg", PAGE)
    assert stat.S_ISFIFO(os.lstat(world / "old.svg").st_mode)
    assert sorted(p.name for p in world.iterdir()) == ["old.svg", "profiles", "site"]


def test_a_file_replaced_by_another_meanwhile_is_not_overwritten(world, monkeypatch):
    real = target_module.write_all

    def swap(fd: int, data: bytes) -> None:
        real(fd, data)
        (world / "elsewhere.svg").write_bytes(b"someone else's\n")
        os.replace(world / "elsewhere.svg", world / "old.svg")

    monkeypatch.setattr(target_module, "write_all", swap)
    with pytest.raises(WriteRefused, match="it changed while the file was written"):
        write_file(world / "old.svg", PAGE)
    assert (world / "old.svg").read_bytes() == b"someone else's\n"


def test_odd_names_are_written_as_given(world):
    for name in ("-", "-x.svg", "a b.svg", "new\nline.svg", "\x1b]0;title\x07.svg", os.fsdecode(b"\xff\xfe.svg"),
                 "é" * 100):
        write_file(world / name, PAGE)
        assert (world / name).read_bytes() == PAGE
    with pytest.raises(WriteFailed, match="File name too long"):
        write_file(world / ("a" * 300), PAGE)
    with pytest.raises(WriteRefused, match="null"):
        write_file(Path(str(world / "nul") + "\x00.svg"), PAGE)


def test_kind_of_names_each_kind():
    assert [kind_of(mode) for mode in (stat.S_IFLNK, stat.S_IFDIR, stat.S_IFREG, stat.S_IFCHR, stat.S_IFBLK,
                                        stat.S_IFIFO, stat.S_IFSOCK)] == [
        "a symbolic link", "a folder", "a file", "a character device", "a block device", "a FIFO", "a socket"]


FLEET = {"clusters/my-cluster.yaml": b"kind: Cluster\n", "hardware/my-dgx-1.yaml": b"kind: Hardware\n",
         "jobs/hello.yaml": b"kind: Job\n"}


def test_a_new_folder_of_files_is_created_whole(tmp_path):
    written = create_files(tmp_path / "fleet", FLEET)
    assert written == [tmp_path / "fleet" / relative for relative in FLEET]
    assert {p.relative_to(tmp_path / "fleet").as_posix(): p.read_bytes() for p in written} == FLEET
    extra = create_files(tmp_path / "fleet", {"jobs/more.yaml": b"x\n"})  # beside what is there: fine
    assert extra == [tmp_path / "fleet" / "jobs" / "more.yaml"]


def test_a_file_that_exists_refuses_them_all(tmp_path):
    (tmp_path / "fleet" / "jobs").mkdir(parents=True)
    (tmp_path / "fleet" / "jobs" / "hello.yaml").symlink_to(tmp_path / "nowhere")
    caught = refusal(tmp_path, lambda: create_files(tmp_path / "fleet", FLEET), "hello.yaml exists already",
                     AlreadyExists)
    assert isinstance(caught, AlreadyExists) and caught.paths == (tmp_path / "fleet" / "jobs" / "hello.yaml",)


@pytest.mark.parametrize("where", ["fleet/jobs", "fleet"])
def test_a_folder_that_is_a_link_refuses_them_all(tmp_path, where):
    """The red team's `DIR/jobs` pointing outside DIR, and DIR itself a link."""
    (tmp_path / "outside").mkdir()
    (tmp_path / "fleet").mkdir()
    if where == "fleet":
        (tmp_path / "fleet").rmdir()
    (tmp_path / where).symlink_to(tmp_path / "outside", target_is_directory=True)
    root = tmp_path / "fleet"
    refused(tmp_path, lambda: create_files(root / "sub" if where == "fleet" else root, FLEET),
            f"through {tmp_path / where}: it is a symbolic link")
    if where == "fleet":
        refused(tmp_path, lambda: create_files(root, FLEET), "it is a symbolic link")
    assert list((tmp_path / "outside").iterdir()) == []


@pytest.mark.parametrize("kind", ["fifo", "device", "link to /dev/null"])
def test_a_root_that_is_no_folder_refuses(tmp_path, kind):
    special(kind, tmp_path / "fleet", tmp_path)
    refused(tmp_path, lambda: create_files(tmp_path / "fleet", FLEET), "refusing to write into")


def test_the_folders_above_a_new_folder_of_files_are_made_and_go_again_after_a_failure(tmp_path, monkeypatch):
    """As `mkdir -p`: the missing folders above the root are made, never through a link; when a file then cannot be
    written, they are removed again, deepest first, and what the user had stays."""
    (tmp_path / "kept").mkdir()
    before = snapshot(tmp_path)
    real = target_module.write_all

    def full(fd: int, data: bytes) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(target_module, "write_all", full)
    with pytest.raises(WriteFailed, match="No space left on device"):
        create_files(tmp_path / "kept" / "a" / "b" / "fleet", FLEET)
    assert snapshot(tmp_path) == before
    monkeypatch.setattr(target_module, "write_all", real)
    create_files(tmp_path / "kept" / "a" / "b" / "fleet", FLEET)
    assert (tmp_path / "kept/a/b/fleet/jobs/hello.yaml").read_bytes() == FLEET["jobs/hello.yaml"]


def test_a_failure_half_way_removes_everything_made_and_keeps_what_was_there(tmp_path, monkeypatch):
    """The third file cannot be written: the first two, and the folders made for them, go again; the folder the
    user had (and what it held) stays. A second run then works."""
    root = tmp_path / "fleet"
    (root / "jobs").mkdir(parents=True)
    (root / "README").write_bytes(b"mine\n")
    before = snapshot(tmp_path)
    real = target_module.write_all

    def full_on_the_job(fd: int, data: bytes) -> None:
        if data == FLEET["jobs/hello.yaml"]:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(fd, data)

    monkeypatch.setattr(target_module, "write_all", full_on_the_job)
    with pytest.raises(WriteFailed, match="No space left on device"):
        create_files(root, FLEET)
    assert snapshot(tmp_path) == before
    monkeypatch.undo()
    fresh = tmp_path / "new-fleet"
    monkeypatch.setattr(target_module, "write_all", full_on_the_job)
    with pytest.raises(WriteFailed):
        create_files(fresh, FLEET)
    assert not fresh.exists(), "a folder init made stays after a failure"
    monkeypatch.undo()
    create_files(root, FLEET)
    assert (root / "jobs" / "hello.yaml").read_bytes() == FLEET["jobs/hello.yaml"]
