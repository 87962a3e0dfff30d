"""generator/write.py when the system refuses: a full disk, a read-only folder. The real `mpigen render`, with the
real failure from the kernel (no mock of the writer): one `error:` line, exit 1, the charts as they were, and no
staging folder left behind."""

from __future__ import annotations

import re
import resource
import shutil
import signal
import subprocess
from pathlib import Path

from conftest import PROFILES, run_limited, run_mpigen, snapshot, without_root_privileges

from mpigen.write import STAGING_DIR


def retagged_profiles(root: Path, suffix: str) -> Path:
    """A copy of the example profiles whose every job image gets `suffix`: every job chart changes."""
    shutil.copytree(PROFILES, root)
    for job in (root / "jobs").glob("*.yaml"):
        text = job.read_text(encoding="utf-8")
        job.write_text(re.sub(r"(?m)^image: (\S+)$", rf"image: \1{suffix}", text), encoding="utf-8")
    return root



def assert_one_error_line(result: subprocess.CompletedProcess[str], *, says: str) -> None:
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and says in lines[0], result.stderr


def test_a_full_disk_is_one_error_line_and_leaves_the_charts_and_no_staging(tmp_path):
    """RLIMIT_FSIZE with SIGXFSZ ignored: the kernel answers the render's own write() with EFBIG, the way a full
    disk answers ENOSPC, part way through staging (the small files are staged, the largest is not)."""
    out = tmp_path / "charts"
    assert run_mpigen("render", PROFILES, "-o", out).returncode == 0
    new = retagged_profiles(tmp_path / "profiles", "-r2")
    expected = tmp_path / "expected"
    assert run_mpigen("render", new, "-o", expected).returncode == 0
    # Of the files the retag changes (the ownership list, the largest file of all, stays as it was).
    sizes = sorted(p.stat().st_size for p in expected.rglob("*") if p.is_file() and p.name != ".mpigen-owned")
    limit = sizes[-1] - 1  # the largest chart file cannot be written; smaller ones, staged before it, can

    def small_disk() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    before = snapshot(out)
    result = run_limited(["render", new, "-o", out], small_disk)
    assert_one_error_line(result, says="File too large")
    assert "nothing was changed" in result.stderr
    assert snapshot(out) == before
    assert not (out / STAGING_DIR).exists()






def test_a_read_only_output_folder_is_one_error_line(tmp_path):
    out = tmp_path / "charts"
    assert run_mpigen("render", PROFILES, "-o", out).returncode == 0
    new = retagged_profiles(tmp_path / "profiles", "-r2")
    out.chmod(0o555)
    try:
        before = snapshot(out)
        result = run_limited(["render", new, "-o", out], without_root_privileges)
        assert_one_error_line(result, says="Permission denied")
        assert "nothing was changed" in result.stderr
        assert snapshot(out) == before
    finally:
        out.chmod(0o755)


def test_a_new_output_folder_that_cannot_be_written_is_not_left_behind(tmp_path):
    """The render made the folder, then failed: the empty folder goes again."""
    out = tmp_path / "charts"

    def tiny_disk() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (16, 16))

    result = run_limited(["render", PROFILES, "-o", out], tiny_disk)
    assert_one_error_line(result, says="File too large")
    assert not out.exists()


def test_an_unreadable_ownership_list_stops_the_render_and_prunes_nothing(tmp_path):
    """Read errors of render's own are errors, never an empty list that would prune (or skip pruning) silently."""
    out = tmp_path / "charts"
    assert run_mpigen("render", PROFILES, "-o", out).returncode == 0
    new = retagged_profiles(tmp_path / "profiles", "-r2")
    (new / "jobs" / "pi.yaml").unlink()  # its chart would be pruned
    (out / ".mpigen-owned").chmod(0o000)
    try:
        before = snapshot(out)
        result = run_limited(["render", new, "-o", out], without_root_privileges)
        assert_one_error_line(result, says="Permission denied")
        assert snapshot(out) == before
    finally:
        (out / ".mpigen-owned").chmod(0o644)
