"""A profiles path that cannot be read is an error, never an empty folder: skipping it would prune the
charts of every profile in it, and Argo CD's prune would then delete running jobs.

Each case runs the real `mpigen render` over charts rendered from the same profiles beforehand: exit 1, the
path in the error, and the charts byte for byte as they were. Modes (chmod 000) stop only users without
CAP_DAC_*; those cases give the capabilities up in the child. The others fail for root as for anyone: a
link to nothing or round in a circle, a FIFO, a path longer than the kernel takes (ENAMETOOLONG).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from conftest import PROFILES, invoke_mpigen, run_limited, run_mpigen, snapshot, without_root_privileges

from mpigen.load import discover, load_file, load_paths

pytestmark = pytest.mark.usefixtures("parse_every_time")  # tests of loading parse each file (conftest.ParseMemo)


def rendered(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A copy of the example profiles, its charts (rendered in-process: the case's own render is the real one), and
    the charts' snapshot."""
    profiles = tmp_path / "profiles"
    shutil.copytree(PROFILES, profiles)
    out = tmp_path / "charts"
    result = invoke_mpigen("render", profiles, "-o", out)
    assert result.returncode == 0, result.stderr
    return profiles, out, snapshot(out)


def assert_refused(result, out: Path, before: dict[str, str], line: str) -> None:
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    assert line in result.stderr.splitlines(), result.stderr
    assert result.stderr.splitlines()[-1].endswith("nothing was written"), result.stderr
    assert snapshot(out) == before


def test_an_unreadable_jobs_folder_stops_the_render_and_prunes_nothing(tmp_path: Path) -> None:
    profiles, out, before = rendered(tmp_path)
    jobs = profiles / "jobs"
    jobs.chmod(0o000)
    try:
        result = run_limited(["render", profiles, "-o", out], without_root_privileges)
    finally:
        jobs.chmod(0o755)
    assert_refused(result, out, before, f"{jobs}:1:1: error: cannot read the folder: Permission denied; make it "
                                        "readable (or remove it from the profiles); nothing was compiled without it")


def test_an_unreadable_profile_file_stops_the_render(tmp_path: Path) -> None:
    profiles, out, before = rendered(tmp_path)
    pi = profiles / "jobs" / "pi.yaml"
    pi.chmod(0o000)
    try:
        result = run_limited(["render", profiles, "-o", out], without_root_privileges)
    finally:
        pi.chmod(0o644)
    assert_refused(result, out, before, f"{pi}:1:1: error: cannot read the file: Permission denied")


def test_an_unreadable_profiles_root_is_refused(tmp_path: Path) -> None:
    """The command line refuses it before anything runs (a usage error, exit 2)."""
    profiles = tmp_path / "profiles"
    shutil.copytree(PROFILES, profiles)
    profiles.chmod(0o000)
    try:
        result = run_limited(["validate", profiles], without_root_privileges)
    finally:
        profiles.chmod(0o755)
    assert result.returncode == 2, result.stderr
    assert f"Path '{profiles}' is not readable" in result.stderr
    assert "Traceback" not in result.stderr


def _dangling(jobs: Path) -> str:
    jobs.symlink_to(jobs.parent / "gone")
    return f"is a link to '{jobs.parent / 'gone'}', which does not exist; point the link at a profile, or remove it"


def _circle(jobs: Path) -> str:
    jobs.symlink_to("jobs")
    return ("is a link that leads round in a circle (to itself, or through links that point at each other); point "
            "the link at a profile, or remove it")


def _fifo(jobs: Path) -> str:
    os.mkfifo(jobs)
    return "is a FIFO, socket or device, not a file or folder; remove it: the profiles folder holds YAML files and " \
           "folders of them"


@pytest.mark.parametrize("replace", [_dangling, _circle, _fifo], ids=["dangling-link", "link-loop", "fifo"])
def test_a_jobs_folder_replaced_by_what_is_no_folder_stops_the_render(tmp_path: Path, replace) -> None:
    """What the entry was meant to be cannot be known (it is named like no profile, but may have been the folder
    of all of them): an error for root as for anyone, where it used to be skipped as a file that is no profile."""
    profiles, out, before = rendered(tmp_path)
    jobs = profiles / "jobs"
    shutil.rmtree(jobs)
    says = replace(jobs)
    result = run_mpigen("render", profiles, "-o", out)
    assert_refused(result, out, before, f"{jobs}:1:1: error: {says}")


def test_a_folder_beyond_the_longest_path_is_an_error_for_root_too(tmp_path: Path) -> None:
    """Listing a folder whose path is longer than PATH_MAX (4096) fails with ENAMETOOLONG whoever asks; a profile
    in it used to vanish without a word."""
    profiles = tmp_path / "profiles"
    shutil.copytree(PROFILES, profiles)
    segment = "d" * 250
    fd = os.open(profiles / "jobs", os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(18):  # 18 x 251 characters: past 4096 whatever tmp_path is
            os.mkdir(segment, dir_fd=fd)
            deeper = os.open(segment, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = deeper
        os.mkdir("more", dir_fd=fd)
        with open(os.open("job.yaml", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "wb") as handle:
            handle.write((PROFILES / "jobs" / "pi.yaml").read_bytes().replace(b"name: pi", b"name: deep"))
    finally:
        os.close(fd)
    found, problems = discover([profiles])
    assert len(problems) == 1, problems
    assert problems[0].format().endswith(": error: cannot read the folder: File name too long; make it readable (or "
                                         "remove it from the profiles); nothing was compiled without it")
    assert problems[0].location.path.startswith(str(profiles / "jobs" / segment))
    assert all("deep" not in str(file) for file, _ in found)
    shutil.rmtree(profiles / "jobs" / segment, ignore_errors=True)  # pytest cannot remove it from tmp_path


def test_a_profile_gone_between_listing_and_reading_is_an_error(tmp_path: Path) -> None:
    profiles = tmp_path / "profiles"
    shutil.copytree(PROFILES, profiles)
    gone = profiles / "jobs" / "pi.yaml"
    files, problems = discover([profiles])
    assert problems == [] and gone in [file for file, _ in files]
    gone.unlink()
    document, diagnostics = load_file(gone, str(gone), "profiles/jobs/pi.yaml")
    assert document is None
    assert [d.format() for d in diagnostics] == [f"{gone}:1:1: error: cannot read the file: No such file or directory"]
    assert load_paths([profiles / "nothing"]).diagnostics[0].format().startswith(f"{profiles / 'nothing'}:1:1: error: "
                                                                                 "no such file or folder")
