"""generator/write/stamp.py: a stamp is believed only where it holds, file by file, and only where this machine
wrote it; a change of any kind (content, a file more, a link, a copy of the folder) makes the render compile."""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from pathlib import Path

import pytest

import mpigen.write.transaction as transaction_module
from mpigen.write import (
    CACHE_DIR,
    COMMITTED_PLAN,
    STAGING_DIR,
    StampRequest,
    WriteFailed,
    WriteRefused,
    check_relative,
    compare_tree,
    fresh_stamp,
    output_lock,
    write_tree,
)
from mpigen.write import stamp as stamp_module

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
    evil = {**FILES, "lab/infra/Chart.yaml": b"apiVersion: v2\nname: evil\n",
            ".mpigen-owned": (forged / ".mpigen-owned").read_bytes()}
    with _locked(forged) as folder:
        clock = stamp_module.read_clock(folder)
        (forged / "lab/infra/Chart.yaml").write_bytes(evil["lab/infra/Chart.yaml"])
        stamp_module.record_stamp(folder, REQUEST, evil, clock)
    assert fresh_stamp(forged, KEY) is not None  # believed where it was written...
    checkout = tmp_path / "checkout"
    shutil.copytree(forged, checkout)  # copy2 keeps the mtimes; inodes and ctimes are new
    assert fresh_stamp(checkout, KEY) is None  # ...and nowhere else


def test_the_seal_alone_refuses_a_stamp_file_that_is_not_the_one_written(stamped):
    """The same bytes through a new file (as a checkout writes it): the entries would all hold, the seal does not."""
    stamp_file = stamped / CACHE_DIR / "stamp"
    copy = stamp_file.with_name("stamp.new")
    copy.write_bytes(stamp_file.read_bytes())
    copy.replace(stamp_file)  # a new inode, while the old one still existed
    assert fresh_stamp(stamped, KEY) is None


def test_a_change_between_the_render_and_its_stamp_is_caught(tmp_path, monkeypatch):
    """The clock is read before the render compares or writes anything: a file changed afterwards, even long
    before the stamp is written, is read back when stamped, and what it holds is not what the render meant."""
    out = tmp_path / "charts"
    real_record = stamp_module.record_stamp

    def late_record(folder, request, files, clock_ns):
        (out / "lab/infra/Chart.yaml").write_bytes(b"apiVersion: v2\nname: lab-infrX\n")
        time.sleep(0.1)  # far past any tick
        real_record(folder, request, files, clock_ns)

    monkeypatch.setattr(transaction_module, "record_stamp", late_record)
    write_tree(out, FILES, REQUEST)
    assert not (out / CACHE_DIR / "seal").exists() and fresh_stamp(out, KEY) is None
    monkeypatch.undo()
    write_tree(out, FILES, REQUEST)  # the next render puts the file right, and stamps
    assert fresh_stamp(out, KEY) is not None


def test_a_racy_entry_is_judged_by_its_content_not_its_stat(stamped, monkeypatch):
    """With stats that cannot tell (the same inode, size and times), only the content check sees an edit."""
    monkeypatch.setattr(stamp_module, "_file_stat_of", lambda found: [found.st_ino, found.st_size, 0, 0])
    write_tree(stamped, FILES, REQUEST)  # stamped again with the blind stats
    (stamped / "lab/jobs/pi/Chart.yaml").write_bytes(b"apiVersion: v2\nname: px\n")  # same size, same inode
    monkeypatch.setattr(stamp_module, "_racy", lambda ctime_ns, clock_ns: False)
    assert fresh_stamp(stamped, KEY) is not None  # what a stat-only stamp would wrongly believe
    monkeypatch.setattr(stamp_module, "_racy", lambda ctime_ns, clock_ns: True)
    assert fresh_stamp(stamped, KEY) is None


@pytest.mark.parametrize("where", ["lab/jobs/pi/templates/notes.yaml", f"{CACHE_DIR}/evil.yaml"])
def test_no_stamp_vouches_for_a_folder_holding_files_beside_the_charts(tmp_path, where):
    """`render --check` lists a file mpigen does not own as extra (also in its cache folder, which `kubectl apply
    -R` would walk): a stamp taken with it there would hide it."""
    out = tmp_path / "charts"
    write_tree(out, FILES, REQUEST)
    (out / where).write_text("kind: Secret\n", encoding="utf-8")
    time.sleep(0.05)
    write_tree(out, FILES, REQUEST)  # the render leaves the file alone, and stamps nothing
    assert fresh_stamp(out, KEY) is None
    assert compare_tree(out, FILES).extra == [where]


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
    def broken_apply(folder, plan):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(transaction_module, "_apply", broken_apply)
    with pytest.raises(WriteFailed):
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


@contextlib.contextmanager
def _locked(out: Path):
    """The folder as the writer holds it, for stamping by hand (a forger's own mpigen would do the same)."""
    with output_lock(out) as folder:
        yield folder


def test_a_committed_plan_waiting_in_the_staging_folder_is_pending_and_no_stamp_vouches(stamped):
    """The next render replays it, so the folder is not up to date: compare_tree says pending, the stamp is not
    believed. A staging folder with no committed plan is a render that never committed (the next one throws it
    away without changing a chart): not pending."""
    staging = stamped / STAGING_DIR
    staging.mkdir()
    (staging / COMMITTED_PLAN).write_text('{"move": [], "delete": []}', encoding="utf-8")
    assert fresh_stamp(stamped, KEY) is None
    diff = compare_tree(stamped, FILES)
    assert diff.pending == [f"{STAGING_DIR}/{COMMITTED_PLAN}"] and not diff.clean
    assert diff.missing == diff.stale == diff.extra == []
    (staging / COMMITTED_PLAN).unlink()
    (staging / COMMITTED_PLAN).symlink_to("/dev/null")  # whatever stands there: the next render refuses it
    assert compare_tree(stamped, FILES).pending == [f"{STAGING_DIR}/{COMMITTED_PLAN}"]
    (staging / COMMITTED_PLAN).unlink()
    assert compare_tree(stamped, FILES).clean
