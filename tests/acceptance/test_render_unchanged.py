"""`mpigen render --stamp` when nothing changed: the output folder's stamp (generator/write/stamp.py) proves it, so
the render repeats its messages and compiles nothing; any change to the profiles or to the charts makes it compile.
Without --stamp the output folder holds the charts and nothing else."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import PROFILES, run_mpigen, snapshot


def _render_importing(*args: str | Path, cwd: Path | None = None) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """`mpigen render ...` and the modules it imported (`python -X importtime` lists each on stderr)."""
    result = subprocess.run([sys.executable, "-X", "importtime", "-m", "mpigen", "render", *map(str, args)],
                            capture_output=True, text=True, cwd=cwd, timeout=120)
    imported = {line.split("|")[-1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")}
    result.stderr = "".join(line + "\n" for line in result.stderr.splitlines() if not line.startswith("import time:"))
    return result, imported


def test_without_stamp_the_output_is_the_charts_alone_and_every_render_compiles(tmp_path):
    out = tmp_path / "charts"
    assert run_mpigen("render", PROFILES, "-o", out).returncode == 0
    assert not (out / ".mpigen-cache").exists()
    again, imported = _render_importing(PROFILES, "-o", out)
    assert again.returncode == 0 and "mpigen.commands.pipeline" in imported
    check, imported = _render_importing(PROFILES, "-o", out, "--check")
    assert check.returncode == 0 and "mpigen.commands.pipeline" in imported
    assert not (out / ".mpigen-cache").exists()


def test_an_unchanged_render_compiles_nothing_and_says_the_same(tmp_path):
    out = tmp_path / "charts"
    first = run_mpigen("render", PROFILES, "-o", out, "--stamp")
    assert first.returncode == 0, first.stderr
    assert (out / ".mpigen-cache" / "seal").is_file()
    before = snapshot(out)
    again, imported = _render_importing(PROFILES, "-o", out, "--stamp")
    assert again.returncode == 0, again.stderr
    charts = first.stdout.split(" chart(s)")[0]
    files = first.stdout.split(": ")[1].split(" file(s) written")[0]
    assert again.stdout == f"{charts} chart(s) in {out}: 0 file(s) written, {files} unchanged, 0 removed\n"
    assert "mpigen.commands.pipeline" not in imported and "jinja2" not in imported  # the stamp held: nothing compiled
    assert {k: v for k, v in snapshot(out).items() if not k.startswith(".mpigen-cache")} == \
        {k: v for k, v in before.items() if not k.startswith(".mpigen-cache")}
    check, imported = _render_importing(PROFILES, "-o", out, "--check")
    assert (check.returncode, check.stdout) == (0, f"{out} is up to date with the profiles\n")
    assert "mpigen.commands.pipeline" not in imported


def test_the_warnings_of_a_render_are_repeated_when_it_is_skipped(tmp_path):
    """Charts written outside the folder the GitOps objects name give a warning; the stamped render gives it too."""
    (tmp_path / ".git").mkdir()  # a work tree, so the delivery path is judged
    profiles = shutil.copytree(PROFILES, tmp_path / "profiles")
    first = run_mpigen("render", "profiles", "-o", "elsewhere", "--stamp", cwd=tmp_path)
    assert first.returncode == 0 and "warning:" in first.stderr, first.stderr
    again, imported = _render_importing("profiles", "-o", "elsewhere", "--stamp", cwd=tmp_path)
    assert "mpigen.commands.pipeline" not in imported
    assert (again.returncode, again.stderr) == (0, first.stderr)
    assert profiles.is_dir()


def test_a_changed_profile_compiles_again(tmp_path):
    profiles = shutil.copytree(PROFILES, tmp_path / "profiles")
    out = tmp_path / "charts"
    assert run_mpigen("render", profiles, "-o", out, "--stamp").returncode == 0
    job = next(iter(sorted((profiles / "jobs").glob("*.yaml"))))
    job.write_text(job.read_text(encoding="utf-8").replace("image: ", "image: r2-", 1), encoding="utf-8")
    again, imported = _render_importing(profiles, "-o", out, "--stamp")
    assert again.returncode == 0 and "mpigen.commands.pipeline" in imported
    assert " 0 file(s) written" not in again.stdout
    job.write_text("kind: Job\nname: [\n", encoding="utf-8")  # and a broken one is reported, not skipped
    broken = run_mpigen("render", profiles, "-o", out, "--stamp")
    assert broken.returncode == 1 and f"{job}:" in broken.stderr


def test_a_hand_edited_chart_is_restored_even_with_its_times_put_back(tmp_path):
    out = tmp_path / "charts"
    assert run_mpigen("render", PROFILES, "-o", out, "--stamp").returncode == 0
    expected = {k: v for k, v in snapshot(out).items() if not k.startswith(".mpigen-cache")}
    values = out / "dgx-lab/jobs/pi/values.yaml"
    stat = values.stat()
    text = values.read_text(encoding="utf-8")
    values.write_text(text.replace("workers: 2", "workers: 9"), encoding="utf-8")  # the same size
    os.utime(values, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    check = run_mpigen("render", PROFILES, "-o", out, "--check")
    assert check.returncode == 1 and f"stale: {values}" in check.stdout
    fixed = run_mpigen("render", PROFILES, "-o", out, "--stamp")
    assert fixed.returncode == 0 and "1 file(s) written" in fixed.stdout
    assert {k: v for k, v in snapshot(out).items() if not k.startswith(".mpigen-cache")} == expected
