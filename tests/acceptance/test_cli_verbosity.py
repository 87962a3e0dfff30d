"""`-q/--quiet` (errors only) and `-v/--verbose` (each stage, its time and count, on stderr), before or after the
command: what a command prints as its product on stdout is the same at every level. A verbose render and the usage
error go through the real command in a process of its own, the other commands and levels in-process
(conftest.invoke_mpigen)."""

from __future__ import annotations

import re

import pytest
from conftest import CHARTS, FLEET_FILES, PROFILES, TRAIN_JOB, invoke_mpigen, run_mpigen

STAGE = re.compile(r"^mpigen: ([a-z]+): ([0-9]+) [a-z() ]+ in [0-9]+\.[0-9]{2} s$")


def _stages(stderr: str) -> list[tuple[str, int]]:
    # A render also notes the committed runs that keep the spec an earlier release compiled (charts/ holds some).
    lines = [line for line in stderr.splitlines() if not line.startswith("note: ") or " keep the spec " not in line]
    assert all(STAGE.match(line) for line in lines), stderr
    return [(match[1], int(match[2])) for line in lines if (match := STAGE.match(line))]


@pytest.mark.parametrize("where", ["before", "after"])
def test_verbose_render_says_each_stage_on_stderr_only(tmp_path, where):
    args = ("render", PROFILES, "-o", tmp_path / "charts")
    done = run_mpigen(*(("-v", *args) if where == "before" else (*args, "--verbose")))
    assert done.returncode == 0
    written = f"{FLEET_FILES} file(s) written"
    assert done.stdout == "71 chart(s) in " + str(tmp_path / "charts") + f": {written}, 0 unchanged, 0 removed\n"
    # resolve counts the 15 real jobs; package their 25 charts and the 46 acceptance charts (conftest.ACCEPTANCE_CHARTS).
    assert _stages(done.stderr) == [("load", 30), ("validate", 30), ("resolve", 15), ("package", 71),
                                    ("write", FLEET_FILES)]


def test_verbose_manifests_and_check_keep_stdout_as_it_was():
    plain = invoke_mpigen("render", PROFILES, "--manifests")
    told = invoke_mpigen("-v", "render", PROFILES, "--manifests")
    assert told.stdout == plain.stdout and [s for s, _ in _stages(told.stderr)] == ["load", "validate", "resolve",
                                                                                 "package"]
    checked = invoke_mpigen("check", "-v", "--no-helm", CHARTS, "--cluster", "cpu-lab")
    assert checked.returncode == 0
    assert [stage for stage, _ in _stages("\n".join(line for line in checked.stderr.splitlines()
                                                      if line.startswith("mpigen: ")))] == [
        "discover", "render", "schemas", "rules"]


def test_quiet_says_only_errors(profiles_copy):
    assert (invoke_mpigen("-q", "validate", PROFILES).stdout, invoke_mpigen("validate", PROFILES, "-q").stderr) == ("", "")
    warned = profiles_copy({"jobs/train.yaml": TRAIN_JOB.replace("program: [python, train.py]\n", "") + "workers: 2\n"
                                            "launcherCommand: [mpirun, python, train.py]\nmpirunArgs: [-x, NCCL_DEBUG]\n"})
    loud = invoke_mpigen("validate", warned)
    assert loud.returncode == 0 and ": warning: " in loud.stderr
    quiet = invoke_mpigen("validate", "--quiet", warned)
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", "")
    broken = profiles_copy({"jobs/train.yaml": TRAIN_JOB + "workers: -1\n"})
    failed = invoke_mpigen("-q", "validate", broken)
    assert failed.returncode == 1 and "train.yaml:8:10: error: " in failed.stderr


def test_quiet_and_verbose_together_is_a_usage_error():
    done = run_mpigen("-q", "validate", "-v", PROFILES)
    assert done.returncode == 2 and "--quiet and --verbose ask for opposite things: give one of them" in done.stderr
