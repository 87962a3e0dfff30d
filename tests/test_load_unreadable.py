"""A profiles folder that cannot be read is an error, never an empty folder: skipping it would prune the
charts of every profile in it, and Argo CD's prune would then delete running jobs."""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import PROFILES, run_mpigen
from test_write_errors import _without_root_privileges, run_limited
from test_write_hostile import snapshot


def test_an_unreadable_jobs_folder_stops_the_render_and_prunes_nothing(tmp_path: Path) -> None:
    profiles = tmp_path / "profiles"
    shutil.copytree(PROFILES, profiles)
    out = tmp_path / "charts"
    assert run_mpigen("render", profiles, "-o", out).returncode == 0
    before = snapshot(out)
    jobs = profiles / "jobs"
    jobs.chmod(0o000)
    try:
        result = run_limited(["render", profiles, "-o", out], _without_root_privileges)
    finally:
        jobs.chmod(0o755)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert f"{jobs}:1:1: error: cannot read the folder: Permission denied" in result.stderr
    assert "nothing was written" in result.stderr
    assert snapshot(out) == before


def test_an_unreadable_profiles_root_is_refused(tmp_path: Path) -> None:
    """The command line refuses it before anything runs (a usage error, exit 2)."""
    profiles = tmp_path / "profiles"
    shutil.copytree(PROFILES, profiles)
    profiles.chmod(0o000)
    try:
        result = run_limited(["validate", profiles], _without_root_privileges)
    finally:
        profiles.chmod(0o755)
    assert result.returncode == 2, result.stderr
    assert f"Path '{profiles}' is not readable" in result.stderr
    assert "Traceback" not in result.stderr
