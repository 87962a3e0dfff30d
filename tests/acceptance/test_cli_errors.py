"""The command line on bad input: exit code 1, `path:line:col:` on stderr, no traceback, nothing written. Each kind
of error through the real command in a process of its own; the further cases of the same kind in-process
(conftest.invoke_mpigen)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from conftest import FLEET_FILES, PROFILES, invoke_mpigen, run_mpigen

PI = (PROFILES / "jobs" / "pi.yaml").read_text(encoding="utf-8")
CPU_NODE = (PROFILES / "hardware" / "cpu-node.yaml").read_text(encoding="utf-8")
DGX_LAB = (PROFILES / "clusters" / "dgx-lab.yaml").read_text(encoding="utf-8")
# Lines the tests point into: pi.yaml 7 `pool: cpu`, 10 `workers: 2`; dgx-lab.yaml 6; cpu-node.yaml 12.
assert PI.splitlines()[6] == "pool: cpu" and PI.splitlines()[9] == "workers: 2"
assert DGX_LAB.splitlines()[5] == 'kubernetesVersion: "1.31"'
assert CPU_NODE.splitlines()[11] == "memoryGiB: 256"

TRAIN_WITH_WARNING = """\
apiVersion: mpigen/v1alpha1
kind: Job
name: train
cluster: dgx-lab
pool: dgx
image: nvcr.io/nvidia/pytorch:24.03-py3
workers: 2
launcherCommand: [mpirun, python, train.py]
mpirunArgs: [-x, NCCL_DEBUG]
"""


def tree_hashes(folder: Path) -> dict[str, str]:
    """Every file under `folder` (hidden ones too) with a hash of its bytes."""
    return {path.relative_to(folder).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*")) if path.is_file()}


def assert_clean_failure(result, *, lines: list[str], summary: str) -> None:
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.splitlines() == [*lines, summary], result.stderr


@pytest.fixture
def rendered(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """The example fleet rendered into a fresh folder, and the hashes of what it holds."""
    out = tmp_path / "charts"
    result = invoke_mpigen("render", PROFILES, "-o", out)
    assert result.returncode == 0, result.stderr
    hashes = tree_hashes(out)
    assert ".mpigen-owned" in hashes and any(name.endswith("Chart.yaml") for name in hashes), hashes
    return out, hashes


def test_validate_of_the_example_fleet_exits_0():
    result = run_mpigen("validate", PROFILES)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert result.stdout == "30 profile(s) valid: 5 hardware, 10 cluster(s), 15 job(s)\n"


BAD_EDITS = {
    "schema": ({"jobs/pi.yaml": PI.replace("workers: 2", 'workers: "2"')},
               ["jobs/pi.yaml:10:10: error: `workers` must be a whole number, not '2'; "
                "Worker pods. Give this or `totalGpus`."]),
    "reference": ({"jobs/pi.yaml": PI.replace("pool: cpu", "pool: cpus")},
                  ["jobs/pi.yaml:7:7: error: cluster 'dgx-lab' has no node pool 'cpus'; did you mean 'cpu'?"]),
    "yaml": ({"jobs/pi.yaml": PI.replace("workers: 2", "workers: 2: x")},
             # Line 10: `workers: ` is 9 columns, `2` column 10, the second `:` column 11.
             ["jobs/pi.yaml:10:11: error: not valid YAML: mapping values are not allowed here; "
              "check the indentation and quoting on this line"]),
}


@pytest.mark.parametrize("case", BAD_EDITS, ids=list(BAD_EDITS))
def test_render_of_bad_profiles_exits_1_and_leaves_the_output_untouched(profiles_copy, rendered, case):
    out, before = rendered
    edits, expected = BAD_EDITS[case]
    root = profiles_copy(edits)
    run = run_mpigen if case == "schema" else invoke_mpigen  # one case through the real command, the rest in-process
    result = run("render", root, "-o", out)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 2, result.stderr
    assert lines[0] == f"{root}/{expected[0]}", result.stderr
    assert lines[1] == "1 error(s), 0 warning(s) in 30 profile file(s); nothing was written"
    assert result.stdout == ""
    assert tree_hashes(out) == before


def test_render_of_bad_profiles_does_not_create_the_output_folder(profiles_copy, tmp_path):
    root = profiles_copy({"jobs/pi.yaml": PI.replace("workers: 2", "workers: 0")})
    out = tmp_path / "new-charts"
    result = run_mpigen("render", root, "-o", out)
    assert_clean_failure(result, lines=[f"{root}/jobs/pi.yaml:10:10: error: `workers` is 0; it must be >= 1; "
                                        "Worker pods. Give this or `totalGpus`."],
                         summary="1 error(s), 0 warning(s) in 30 profile file(s); nothing was written")
    assert not out.exists()


def test_manifests_of_bad_profiles_print_nothing(profiles_copy):
    root = profiles_copy({"jobs/pi.yaml": PI.replace("pool: cpu", "pool: cpus")})
    result = run_mpigen("render", root, "--manifests")
    assert result.returncode == 1
    assert result.stdout == ""
    assert f"{root}/jobs/pi.yaml:7:7: error: " in result.stderr
    assert "Traceback" not in result.stderr


def test_every_error_of_every_file_in_one_run(profiles_copy):
    root = profiles_copy({
        "hardware/cpu-node.yaml": CPU_NODE.replace("memoryGiB: 256", "memoryGiB: -1"),
        "clusters/dgx-lab.yaml": DGX_LAB.replace('kubernetesVersion: "1.31"', "kubernetesVersion: 1.31"),
        "jobs/pi.yaml": PI.replace("workers: 2", 'workers: "2"'),
    })
    result = run_mpigen("validate", root)
    # In file order (clusters, hardware, jobs), which is not line order (6, 12, 10).
    assert_clean_failure(result, lines=[
        f'{root}/clusters/dgx-lab.yaml:6:20: error: `kubernetesVersion` must be a string, not 1.31; quote it: "1.31"',
        f"{root}/hardware/cpu-node.yaml:12:12: error: `memoryGiB` is -1; it must be >= 1; Node memory in GiB.",
        f"{root}/jobs/pi.yaml:10:10: error: `workers` must be a whole number, not '2'; "
        "Worker pods. Give this or `totalGpus`.",
    ], summary="3 error(s), 0 warning(s) in 30 profile file(s); nothing was written")


def test_load_and_validation_errors_together(profiles_copy):
    root = profiles_copy({"hardware/zz.yaml": "kind: Hardware\nname: x\n\tcpu: 1\n",
                          "jobs/pi.yaml": PI.replace("pool: cpu", "pool: cpus")})
    result = run_mpigen("validate", root)
    assert_clean_failure(result, lines=[
        f"{root}/hardware/zz.yaml:3:1: error: a tab character is not allowed here: YAML indents with spaces; "
        "replace the tab with spaces",
        f"{root}/jobs/pi.yaml:7:7: error: cluster 'dgx-lab' has no node pool 'cpus'; did you mean 'cpu'?",
    ], summary="2 error(s), 0 warning(s) in 31 profile file(s); nothing was written")


def test_warnings_alone_exit_0(profiles_copy, tmp_path):
    root = profiles_copy({"jobs/train.yaml": TRAIN_WITH_WARNING})
    warning = (f"{root}/jobs/train.yaml:9:13: warning: `mpirunArgs` has no effect with `launcherCommand`; "
               "put the arguments into launcherCommand")
    result = run_mpigen("validate", root)
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [warning]
    assert result.stdout == "31 profile(s) valid: 5 hardware, 10 cluster(s), 16 job(s)\n"
    out = tmp_path / "charts"
    result = run_mpigen("render", root, "-o", out)
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [warning]
    assert (out / "dgx-lab" / "jobs" / "train" / "Chart.yaml").is_file()


def test_a_pod_security_level_the_jobs_raise_is_a_warning_where_it_is_written(profiles_copy, tmp_path):
    """`podSecurity: {hpc: restricted}` and a job in hpc mounting a host folder: the namespace is labelled
    privileged, and render says so at the entry, naming the job and the level, instead of raising it silently."""
    root = profiles_copy({"clusters/dgx-lab.yaml": DGX_LAB + "podSecurity:\n  hpc: restricted\n",
                          "jobs/pi.yaml": PI + "volumes:\n  - {name: data, hostPath: /data, mountPath: /data}\n"})
    out = tmp_path / "charts"
    result = run_mpigen("render", root, "-o", out)
    assert result.returncode == 0, result.stderr
    line = len(DGX_LAB.splitlines()) + 2
    assert result.stderr.splitlines() == [
        f"{root}/clusters/dgx-lab.yaml:{line}:8: warning: `podSecurity` asks for restricted in namespace 'hpc', but "
        "job pi needs privileged (hostPath volume data (/data)): the infra chart labels the namespace privileged; "
        "write `hpc: privileged` to say so, or change the job"]
    namespaces = (out / "dgx-lab" / "infra" / "templates" / "namespaces.yaml").read_text(encoding="utf-8")
    hpc = namespaces[namespaces.index("name: hpc"):]
    assert 'pod-security.kubernetes.io/enforce: "privileged"' in hpc.split("---")[0], namespaces


def test_warnings_are_counted_beside_errors(profiles_copy):
    root = profiles_copy({"jobs/train.yaml": TRAIN_WITH_WARNING, "jobs/pi.yaml": PI.replace("pool: cpu", "pool: cpus")})
    result = run_mpigen("validate", root)
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1] == "1 error(s), 1 warning(s) in 31 profile file(s); nothing was written"


def test_render_without_output_writes_the_default_charts_folder(tmp_path):
    """No -o and no repository config: the example clusters' gitops.path (`charts`) agree, and the charts go there,
    from the folder the command runs in (no git work tree here)."""
    result = run_mpigen("render", PROFILES, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    # 22 charts and 46 acceptance charts (conftest.ACCEPTANCE_CHARTS); FLEET_FILES counts the files.
    assert result.stdout == f"71 chart(s) in charts: {FLEET_FILES} file(s) written, 0 unchanged, 0 removed\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["charts"]
    assert (tmp_path / "charts/dgx-lab/jobs/resnet50-dgx/Chart.yaml").is_file()


def test_render_of_bad_profiles_without_output_writes_nothing(profiles_copy, tmp_path):
    root = profiles_copy({"jobs/pi.yaml": "not: [valid\n"})
    result = run_mpigen("render", root, cwd=root.parent)
    assert result.returncode == 1
    assert "pi.yaml" in result.stderr and "nothing was written" in result.stderr
    assert not (root.parent / "charts").exists()


def test_validate_without_paths_and_no_profiles_folder_says_what_to_give(tmp_path):
    result = run_mpigen("validate", cwd=tmp_path)
    assert result.returncode == 2
    assert "Usage: " in result.stderr and "Traceback" not in result.stderr
    assert ("Error: no profiles given: there is no `profiles` folder here, and no .mpigen.yaml here or above to name "
            "one; give the profiles folder (e.g. `mpigen validate fleet/profiles`), or name it in .mpigen.yaml "
            "(`profiles: fleet/profiles`; `mpigen init` writes one)") in result.stderr


def test_missing_profiles_folder(tmp_path):
    missing = tmp_path / "nope"
    result = run_mpigen("validate", missing)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.splitlines()[0] == (f"{missing}:1:1: error: no such file or folder; "
                                             "give the profiles folder, e.g. `mpigen validate profiles`")


def test_alias_bomb_is_refused_without_a_traceback(profiles_copy):
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for previous, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{previous}"] * 9) + "]")
    root = profiles_copy({"jobs/bomb.yaml": "\n".join(lines) + "\n"})
    result = run_mpigen("validate", root)
    assert_clean_failure(result, lines=[f"{root}/jobs/bomb.yaml:6:4: error: YAML aliases expand to more than 100000 "
                                        "nodes; write the values out instead of nesting anchors and aliases"],
                         summary="1 error(s), 0 warning(s) in 31 profile file(s); nothing was written")


def test_kind_that_is_a_list_is_an_error_not_a_crash(profiles_copy):
    root = profiles_copy({"jobs/pi.yaml": PI.replace("kind: Job", "kind: [Job]")})
    result = run_mpigen("validate", root)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 1
    assert result.stderr.startswith(f"{root}/jobs/pi.yaml:4:7: error: `kind` must be a plain string")


OVERLAPS = {  # output folder, relative to the profiles copy's parent -> what the message says
    "inside": ("profiles/charts", "is inside the profiles path"),
    "equal": ("profiles", "is the profiles path"),
    "holding": (".", "holds the profiles path"),
}


@pytest.mark.parametrize("command", [["render"], ["render", "--check"], ["diff"]], ids=["render", "check", "diff"])
@pytest.mark.parametrize("case", OVERLAPS, ids=list(OVERLAPS))
def test_an_output_folder_overlapping_the_profiles_is_refused_before_anything_is_written(profiles_copy, case, command):
    """`-o profiles/charts` would work once; then every render reads its own charts back as profiles."""
    root = profiles_copy()
    folder, says = OVERLAPS[case]
    output = (root.parent / folder).resolve()
    before = tree_hashes(root.parent)
    run = run_mpigen if (case, command) == ("inside", ["render"]) else invoke_mpigen  # one through the real command
    result = run(*command, root, "-o", output)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert f"Error: the output folder {output} {says} {root}: the charts would be read back as profiles; " \
           "write them beside the profiles, e.g. -o charts" in result.stderr, result.stderr
    assert tree_hashes(root.parent) == before
    assert not (root / "charts").exists()


def test_an_output_folder_beside_the_profiles_is_fine(profiles_copy):
    root = profiles_copy()
    result = run_mpigen("render", root, "-o", root.parent / "profiles-charts")
    assert result.returncode == 0, result.stderr
