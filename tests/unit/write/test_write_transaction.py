"""generator/write.py as a transaction: killed renders, recovery, and the lock between renders."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import pytest

from mpigen.write import STAGING_DIR, WriteRefused, output_lock, write_tree

OLD = {f"c/jobs/j{i}/values.yaml": f"workers: {i}\n".encode() for i in range(6)}
NEW = {**{f"c/jobs/j{i}/values.yaml": f"workers: {i + 10}\n".encode() for i in range(1, 6)},
       "c/jobs/j9/values.yaml": b"workers: 9\n"}  # j0 goes away, j1..j5 change, j9 is new


def digest(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def run_killed(out: Path) -> int:
    """Render NEW into `out` in a child process that SIGKILLs itself while writing its second staged file."""
    script = textwrap.dedent(f"""
        import os, signal
        from pathlib import Path
        import mpigen.write.transaction as w
        calls = []
        original = w._Folder.create
        def dying(*args, **kwargs):
            calls.append(1)
            if len(calls) == 2:
                os.kill(os.getpid(), signal.SIGKILL)
            return original(*args, **kwargs)
        w._Folder.create = dying
        w.write_tree(Path({str(out)!r}), {NEW!r})
    """)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60).returncode


def test_a_render_killed_while_staging_leaves_the_folder_as_it_was(tmp_path):
    out = tmp_path / "charts"
    write_tree(out, OLD)
    before = digest(out)
    assert run_killed(out) == -9  # killed while writing its second file into staging
    assert (out / STAGING_DIR).is_dir()
    assert {k: v for k, v in digest(out).items() if not k.startswith(STAGING_DIR)} == before
    report = write_tree(out, NEW)  # the next render throws the uncommitted staging away and does its own work
    assert sorted(report.written) == sorted(NEW) and report.pruned == ["c/jobs/j0/values.yaml"]
    assert not (out / STAGING_DIR).exists()
    assert {k: (out / k).read_bytes() for k in NEW} == NEW and not (out / "c/jobs/j0").exists()


def test_a_signal_handled_as_the_staging_folder_is_made_leaves_no_staging(tmp_path, monkeypatch):
    """Python runs a signal's handler as soon as the call it arrived in returns, mkdir's included: the
    exception then comes from the very line that made the staging folder, which must still be removed."""
    out = tmp_path / "charts"
    write_tree(out, OLD)
    before = digest(out)
    real_mkdir = os.mkdir

    def interrupted_mkdir(path, *args, **kwargs):
        real_mkdir(path, *args, **kwargs)
        if path == STAGING_DIR:
            raise KeyboardInterrupt

    monkeypatch.setattr(os, "mkdir", interrupted_mkdir)
    with pytest.raises(KeyboardInterrupt):
        write_tree(out, NEW)
    assert not (out / STAGING_DIR).exists()
    assert digest(out) == before


def test_a_render_killed_after_committing_is_completed_by_the_next(tmp_path):
    out = tmp_path / "charts"
    write_tree(out, OLD)
    script = textwrap.dedent(f"""
        import json, os, signal
        from pathlib import Path
        import mpigen.write.transaction as w
        def dying_apply(folder, plan):  # move the first file into place, then die: past the commit point
            out_dir = folder.shown
            staging = out_dir / w.STAGING_DIR
            first = json.loads((staging / w.COMMITTED_PLAN).read_text())["move"][0]
            os.replace(staging / first, out_dir / first)
            os.kill(os.getpid(), signal.SIGKILL)
        w._apply = dying_apply
        w.write_tree(Path({str(out)!r}), {NEW!r})
    """)
    assert subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60).returncode == -9
    assert (out / STAGING_DIR / "plan.committed.json").is_file()
    # Mixed state: the first move of the plan (the ownership list, which sorts first) is done, the rest is not.
    assert "c/jobs/j9/values.yaml" in (out / ".mpigen-owned").read_text(encoding="utf-8")
    assert {p: (out / p).read_bytes() for p in OLD} == OLD
    report = write_tree(out, NEW)  # recovers the committed render first; then nothing is left to do
    assert report.written == [] and report.pruned == []
    assert not (out / STAGING_DIR).exists()
    assert {p: (out / p).read_bytes() for p in NEW} == NEW
    assert not (out / "c/jobs/j0/values.yaml").exists()


def test_two_renders_into_one_folder_take_turns(tmp_path):
    out = tmp_path / "charts"
    out.mkdir()
    order: list[str] = []
    with output_lock(out):
        waiting = threading.Thread(target=lambda: (write_tree(out, OLD), order.append("second render done")))
        waiting.start()
        time.sleep(0.3)
        order.append("first render done")
        assert not (out / "c").exists(), "the second render wrote while the first held the lock"
    waiting.join(timeout=30)
    assert order == ["first render done", "second render done"]
    assert digest(out).keys() >= set(OLD)


def test_the_lock_leaves_no_file_inside_or_outside_the_output_folder(tmp_path, monkeypatch):
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmpdir))
    monkeypatch.setattr(tempfile, "tempdir", None)  # gettempdir() reads TMPDIR again
    out = tmp_path / "charts"
    write_tree(out, OLD)
    assert sorted(p.name for p in out.iterdir()) == [".mpigen-owned", "c"]
    assert list(tmpdir.iterdir()) == []


def test_the_lock_is_the_same_for_every_spelling_of_the_folder(tmp_path, monkeypatch):
    """A relative path and an absolute one meet the same lock (it is on the folder, not on a name)."""
    out = tmp_path / "charts"
    out.mkdir()
    monkeypatch.chdir(tmp_path)
    with output_lock(out), pytest.raises(WriteRefused, match="another mpigen render"):
        output_lock(Path("charts"), timeout=0.2).__enter__()


def test_a_first_render_killed_while_staging_does_not_lock_the_folder_out(tmp_path):
    out = tmp_path / "charts"
    assert run_killed(out) == -9
    assert [p.name for p in out.iterdir()] == [STAGING_DIR]
    write_tree(out, NEW)
    assert {p: (out / p).read_bytes() for p in NEW} == NEW and not (out / STAGING_DIR).exists()


# --- the real command line, killed from outside at many moments -----------------------------------------------------

KILL_DELAYS = [0.0, 0.3, 0.6, 0.8, 1.0, 1.2, 1.5, 2.0]  # from before startup to (usually) after the render


def test_mpigen_render_killed_at_any_moment_leaves_the_old_charts_or_a_committed_plan(tmp_path):
    """SIGKILL `mpigen render` after each delay: the folder holds the old charts (besides staging), or the new
    ones, or, past the commit point, a committed plan that the next render completes. Never anything else."""
    import os
    import shutil
    import signal

    from conftest import PROFILES, run_mpigen

    new_profiles = tmp_path / "profiles"
    shutil.copytree(PROFILES, new_profiles)
    for job in (new_profiles / "jobs").glob("*.yaml"):  # a new image tag: every job chart changes
        text = job.read_text(encoding="utf-8")
        job.write_text(re.sub(r"(?m)^image: (\S+)$", r"image: \1-r2", text), encoding="utf-8")
    old = tmp_path / "old"
    assert run_mpigen("render", PROFILES, "-o", old).returncode == 0
    expected_new = tmp_path / "new"
    assert run_mpigen("render", new_profiles, "-o", expected_new).returncode == 0
    old_state, new_state = digest(old), digest(expected_new)
    assert old_state != new_state
    outcomes = []
    for delay in KILL_DELAYS:
        out = tmp_path / f"out-{delay}"
        shutil.copytree(old, out)
        process = subprocess.Popen([sys.executable, "-m", "mpigen", "render", str(new_profiles), "-o", str(out)],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(delay)
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=60)
        state = {k: v for k, v in digest(out).items() if not k.startswith(STAGING_DIR)}
        committed = (out / STAGING_DIR / "plan.committed.json").is_file()
        if state == old_state:
            outcomes.append("old")
        elif state == new_state:
            outcomes.append("new")
        else:
            assert committed, f"killed after {delay} s: neither the old charts nor a committed plan"
            outcomes.append("committed")
        assert run_mpigen("render", new_profiles, "-o", out).returncode == 0
        final = digest(out)
        assert final == new_state, (delay, [k for k in set(final) | set(new_state) if final.get(k) != new_state.get(k)])
    assert outcomes[0] == "old", outcomes  # killed before it could start: nothing may have changed


# --- the lock belongs to the output folder ----------------------------------------------------------------------------

LOCK_ROUNDS = 8


def test_concurrent_renders_with_different_tmpdirs_never_interleave(tmp_path):
    """Two real `mpigen render` processes into one folder, each with its own TMPDIR and its own profiles: afterwards
    the folder is exactly one of the two compiled outputs, every round, and nothing is left in either TMPDIR."""
    import shutil

    from conftest import PROFILES, run_mpigen

    sets, expected = [], []
    for name in ("a", "b"):
        profiles = tmp_path / f"profiles-{name}"
        shutil.copytree(PROFILES, profiles)
        for job in (profiles / "jobs").glob("*.yaml"):
            text = job.read_text(encoding="utf-8")
            job.write_text(re.sub(r"(?m)^image: (\S+)$", rf"image: \1-{name}", text), encoding="utf-8")
        compiled = tmp_path / f"expected-{name}"
        assert run_mpigen("render", profiles, "-o", compiled).returncode == 0
        sets.append(profiles)
        expected.append(digest(compiled))
    assert expected[0] != expected[1]
    out = tmp_path / "charts"
    assert run_mpigen("render", PROFILES, "-o", out).returncode == 0
    outcomes = []
    for round_ in range(LOCK_ROUNDS):
        order = sets if round_ % 2 == 0 else sets[::-1]
        processes = []
        for index, profiles in enumerate(order):
            tmpdir = tmp_path / f"tmp-{round_}-{index}"
            tmpdir.mkdir()
            env = {**os.environ, "TMPDIR": str(tmpdir)}
            processes.append((tmpdir, subprocess.Popen([sys.executable, "-m", "mpigen", "render", str(profiles),
                                                        "-o", str(out)], env=env, stdout=subprocess.DEVNULL,
                                                       stderr=subprocess.PIPE, text=True)))
        for _, process in processes:
            _, stderr = process.communicate(timeout=120)
            assert process.returncode == 0, stderr
        state = digest(out)
        assert state in expected, f"round {round_}: the charts match neither profile set"
        outcomes.append(expected.index(state))
        for tmpdir, _ in processes:
            assert list(tmpdir.iterdir()) == [], "the lock left a file in TMPDIR"
    assert sorted(p.name for p in out.iterdir()) == [".mpigen-owned", "cpu-lab", "dgx-lab", "dgx-pod", "gb200-rack",
                                                     "h100-dra", "kai-lab", "kueue-lab", "netapp-lab", "roce-lab",
                                                     "volcano-lab"]
