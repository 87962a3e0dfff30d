"""`.pre-commit-hooks.yaml`: each hook runs its entry with its arguments, as pre-commit runs it (no file names),
in a repository laid out as this one: it passes on the committed profiles and charts, and fails on a stale
chart. (`pre-commit try-repo <mpigen> --all-files` was run by hand against this file: both hooks pass.)"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CHARTS, PROFILES, REPO
from ruamel.yaml import YAML

HOOKS = YAML(typ="safe", pure=True).load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))


def _run(hook: dict, cwd: Path) -> subprocess.CompletedProcess[str]:
    command, *entry_args = shlex.split(hook["entry"])
    assert command == "mpigen"
    return subprocess.run([sys.executable, "-m", "mpigen", *entry_args, *hook.get("args", [])], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def test_the_hooks_are_mpigens_two_checks_run_once_per_commit():
    assert [hook["id"] for hook in HOOKS] == ["mpigen-validate", "mpigen-render-check"]
    for hook in HOOKS:
        assert hook["language"] == "python" and hook["pass_filenames"] is False  # mpigen reads the whole fleet
        assert set(hook) <= {"id", "name", "description", "entry", "args", "language", "pass_filenames", "files",
                             "always_run"}


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    shutil.copytree(PROFILES, tmp_path / "profiles")
    shutil.copytree(CHARTS, tmp_path / "charts", ignore=shutil.ignore_patterns(".mpigen-cache"))
    return tmp_path


@pytest.mark.parametrize("index", range(len(HOOKS)))
def test_each_hook_passes_on_the_committed_fleet(repository, index):
    result = _run(HOOKS[index], repository)
    assert result.returncode == 0, result.stdout + result.stderr


def test_render_check_fails_on_a_stale_chart_and_validate_on_a_broken_profile(repository):
    validate, render_check = HOOKS
    values = repository / "charts/dgx-lab/jobs/pi/values.yaml"
    values.write_text(values.read_text(encoding="utf-8") + "# edited by hand\n", encoding="utf-8")
    stale = _run(render_check, repository)
    assert stale.returncode == 1 and "stale: charts/dgx-lab/jobs/pi/values.yaml" in stale.stdout
    (repository / "profiles/jobs/broken.yaml").write_text("kind: Job\nname: pi\nname: again\n", encoding="utf-8")
    broken = _run(validate, repository)
    assert broken.returncode == 1 and "profiles/jobs/broken.yaml:3:1: error:" in broken.stderr
