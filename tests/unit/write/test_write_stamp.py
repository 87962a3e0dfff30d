"""generator/write/stamp.py: a stamp is believed only where it holds, file by file, and only where this machine
wrote it; a change of any kind (content, a file more, a link, a copy of the folder) makes the render compile."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from generator.write import CACHE_DIR, StampRequest, WriteRefused, check_relative, fresh_stamp, write_tree
from generator.write import stamp as stamp_module

FILES = {
    "lab/infra/Chart.yaml": b"apiVersion: v2\nname: lab-infra\n",
    "lab/jobs/pi/Chart.yaml": b"apiVersion: v2\nname: pi\n",
    "lab/jobs/pi/templates/mpijob.yaml": b"kind: MPIJob\n",
}
KEY = "k" * 64
REQUEST = StampRequest(KEY, charts=2, notes=("warning: something to repeat",))


@pytest.fixture
def stamped(tmp_path: Path) -> Path:
    out = tmp_path / "charts"
    write_tree(out, FILES, REQUEST)
    return out


def test_a_stamped_folder_is_fresh_for_its_key_only(stamped):
    found = fresh_stamp(stamped, KEY)
    assert found is not None and (found.charts, found.files, found.notes) == (2, 3, REQUEST.notes)
    assert fresh_stamp(stamped, "x" * 64) is None


def test_no_stamp_without_a_request_and_the_cache_ignores_itself(tmp_path, stamped):
    plain = tmp_path / "plain"
    write_tree(plain, FILES)
    assert not (plain / CACHE_DIR).exists() and fresh_stamp(plain, KEY) is None
    ignore = (stamped / CACHE_DIR / ".gitignore").read_text(encoding="utf-8")
    assert "*" in ignore.splitlines()  # git never sees the cache, so it is never committed by accident


def test_an_edit_of_the_same_size_right_after_stamping_is_seen(stamped):
    """Within the clock tick of the stamp, ctime and mtime may not move: such entries are checked by content."""
    target = stamped / "lab/jobs/pi/templates/mpijob.yaml"
    target.write_bytes(b"kind: MPIJox\n")
    assert fresh_stamp(stamped, KEY) is None


def test_an_edit_with_its_mtime_put_back_is_seen(stamped):
    target = stamped / "lab/infra/Chart.yaml"
    before = target.stat()
    target.write_bytes(b"apiVersion: v2\nname: lab-infrX\n")
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert fresh_stamp(stamped, KEY) is None


@pytest.mark.parametrize("change", ["extra file", "extra folder", "removed file", "link for a file"])
def test_any_change_to_what_the_folder_holds_is_seen(stamped, change):
    if change == "extra file":
        (stamped / "lab/jobs/pi/templates/extra.yaml").write_text("kind: Secret\n", encoding="utf-8")
    elif change == "extra folder":
        (stamped / "lab/jobs/other").mkdir()
    elif change == "removed file":
        (stamped / "lab/jobs/pi/Chart.yaml").unlink()
    else:
        target = stamped / "lab/infra/Chart.yaml"
        target.rename(stamped / "elsewhere.yaml")
        target.symlink_to(stamped / "elsewhere.yaml")
    assert fresh_stamp(stamped, KEY) is None


def test_a_stamp_from_another_machine_or_a_checkout_is_not_believed(tmp_path, stamped):
    """A pull request can commit a stamp (with `git add -f`) that matches hand-edited charts on the author's
    machine; a checkout gives each file a new inode and ctime, so its seal no longer holds."""
    forged = tmp_path / "forged"
    write_tree(forged, FILES, REQUEST)
    (forged / "lab/infra/Chart.yaml").write_bytes(b"apiVersion: v2\nname: evil\n")
    stamp_module.record_stamp(_locked(forged), REQUEST, {**FILES, "lab/infra/Chart.yaml": b"apiVersion: v2\nname: evil\n",
                                                         ".mpigen-owned": (forged / ".mpigen-owned").read_bytes()})
    assert fresh_stamp(forged, KEY) is not None  # believed where it was written...
    checkout = tmp_path / "checkout"
    shutil.copytree(forged, checkout)  # copy2 keeps the mtimes; inodes and ctimes are new
    assert fresh_stamp(checkout, KEY) is None  # ...and nowhere else


def test_a_stamp_file_rewritten_by_hand_is_not_believed(stamped):
    stamp_file = stamped / CACHE_DIR / "stamp"
    document = json.loads(stamp_file.read_text(encoding="utf-8"))
    stamp_file.unlink()
    stamp_file.write_text(json.dumps(document), encoding="utf-8")
    assert fresh_stamp(stamped, KEY) is None


def test_a_cache_folder_that_is_a_link_is_neither_believed_nor_written_through(tmp_path):
    out, outside = tmp_path / "charts", tmp_path / "outside"
    outside.mkdir()
    (outside / "seal").write_text("{}", encoding="utf-8")
    write_tree(out, FILES)
    (out / CACHE_DIR).symlink_to(outside, target_is_directory=True)
    assert fresh_stamp(out, KEY) is None
    with pytest.raises(WriteRefused, match="symbolic link"):  # mpigen's own name, taken by a link: said, not used
        write_tree(out, FILES, REQUEST)
    assert [p.name for p in outside.iterdir()] == ["seal"]


def test_a_render_that_fails_part_way_leaves_no_seal(stamped, monkeypatch):
    import generator.write as write

    def broken_apply(folder, plan):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(write, "_apply", broken_apply)
    with pytest.raises(write.WriteFailed):
        write_tree(stamped, {**FILES, "lab/infra/Chart.yaml": b"changed\n"}, REQUEST)
    assert not (stamped / CACHE_DIR / "seal").exists() and fresh_stamp(stamped, KEY) is None


def test_a_stamped_entry_checked_by_content_is_stamped_anew_on_refresh(stamped, monkeypatch):
    monkeypatch.setattr(stamp_module, "_racy", lambda ctime_ns, clock_ns: True)  # every entry is checked by content
    before = (stamped / CACHE_DIR / "seal").read_bytes()
    assert fresh_stamp(stamped, KEY, refresh=False) is not None
    assert (stamped / CACHE_DIR / "seal").read_bytes() == before  # `render --check` writes nothing
    assert fresh_stamp(stamped, KEY, refresh=True) is not None
    assert (stamped / CACHE_DIR / "seal").read_bytes() != before
    assert fresh_stamp(stamped, KEY) is not None


def test_no_chart_file_may_be_written_into_the_cache():
    with pytest.raises(WriteRefused, match="cache"):
        check_relative(f"{CACHE_DIR}/stamp")


def _locked(out: Path):
    """The folder as the writer holds it, for stamping by hand (a forger's own mpigen would do the same)."""
    from generator.write.folder import _Folder
    from generator.write.lock import open_output

    return _Folder(out, open_output(out))


def test_an_entry_is_racy_within_a_few_ticks_of_the_clock_or_a_second_where_times_are_whole_seconds():
    clock = 1_700_000_000_123_456_789
    assert stamp_module._racy(clock, clock) and stamp_module._racy(clock - 5_000_000, clock)
    assert not stamp_module._racy(clock - 50_000_000, clock)
    whole = 1_700_000_001_000_000_000
    assert stamp_module._racy(whole - 1_000_000_000, whole)  # the same second, as such a file system sees it
    assert not stamp_module._racy(whole - 2_000_000_000, whole)
