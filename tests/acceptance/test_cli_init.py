"""`mpigen init` end to end: the starting fleet validates, renders, and passes `mpigen check --strict` with real
Helm; a second init into the same folder changes nothing. That, and init refused by the file system, through the real
command in a process of its own; the other places init is run from in-process (conftest.invoke_mpigen)."""

from __future__ import annotations

import json

from conftest import REPO, invoke_mpigen, require_helm, run_limited, run_mpigen, snapshot, without_root_privileges
from jsonschema import Draft202012Validator
from ruamel.yaml import YAML


def test_init_then_validate_render_and_check(tmp_path):
    helm = require_helm(4)
    fleet = tmp_path / "fleet"
    profiles = fleet / "profiles"
    made = run_mpigen("init", fleet, "--hardware", "dgx-h100", "--gitops", "flux")
    assert made.returncode == 0, made.stderr
    assert sorted(line.split()[-1] for line in made.stdout.splitlines() if line.startswith("wrote ")) == [
        str(fleet / ".mpigen.yaml"),
        *(str(fleet / ".mpigen/schemas" / name) for name in ("cluster.schema.json", "config.schema.json",
                                                             "hardware.schema.json", "job.schema.json")),
        str(profiles / "clusters/my-cluster.yaml"), str(profiles / "hardware/my-dgx-h100.yaml"),
        str(profiles / "jobs/hello.yaml")]
    assert run_mpigen("validate", profiles).returncode == 0
    assert run_mpigen("render", profiles, "-o", tmp_path / "charts").returncode == 0
    checked = run_mpigen("check", "--helm", helm, "--strict", tmp_path / "charts")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "0 error(s), 0 warning(s)" in checked.stdout
    before = snapshot(fleet)
    again = run_mpigen("init", fleet, "--hardware", "dgx-1")
    assert again.returncode == 2 and "Traceback" not in again.stderr
    assert f"Error: 7 of its files exist already ({fleet / '.mpigen.yaml'}, " in again.stderr, again.stderr
    assert snapshot(fleet) == before


def test_init_of_the_current_folder_says_no_cd(tmp_path):
    made = invoke_mpigen("init", ".", "--gitops", "none", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert made.stdout.splitlines()[-1] == ("next: replace the guesses its comments mark, then run `mpigen validate`, "
                                            "`mpigen render` (into charts/) and `mpigen check`")
    other = invoke_mpigen("init", "fleet", "--gitops", "none", cwd=tmp_path)
    assert "then `cd fleet` and run `mpigen validate`" in other.stdout.splitlines()[-1]


def test_init_never_writes_through_a_link(tmp_path):
    """The second red team's case: `DIR/jobs` pointing outside DIR received the job. Now nothing is written at all
    (the profiles are in DIR/profiles/ since init writes a repository)."""
    (tmp_path / "outside").mkdir()
    (tmp_path / "fleet" / "profiles").mkdir(parents=True)
    (tmp_path / "fleet" / "profiles" / "jobs").symlink_to(tmp_path / "outside", target_is_directory=True)
    before = snapshot(tmp_path)
    done = run_mpigen("init", tmp_path / "fleet")
    assert done.returncode == 1 and done.stdout == "", done.stdout
    assert done.stderr == (f"error: refusing to write through {tmp_path / 'fleet' / 'profiles' / 'jobs'}: it is a "
                           "symbolic link "
                           f"(to {tmp_path / 'outside'}), and mpigen never writes through a link; give the path "
                           "without it (`realpath -m PATH` prints it)\n")
    assert snapshot(tmp_path) == before


def test_init_that_fails_half_way_leaves_nothing_and_can_run_again(tmp_path):
    """The second red team's case: a later file that cannot be written left half a fleet, and the rerun refused
    (`exists already`). Now the files and folders init made go again; the folder the user had stays as it was."""
    fleet = tmp_path / "fleet"
    jobs = fleet / "profiles" / "jobs"
    jobs.mkdir(parents=True)
    jobs.chmod(0o555)  # the last file init writes (profiles/jobs/hello.yaml) cannot be created
    before = snapshot(tmp_path)
    try:
        failed = run_limited(["init", fleet], without_root_privileges)
    finally:
        jobs.chmod(0o755)
    assert failed.returncode == 1 and "Traceback" not in failed.stderr, failed.stderr
    assert failed.stderr == (f"error: cannot write into {fleet}: Permission denied ({jobs / 'hello.yaml'}); "
                             "nothing was written\n") and failed.stdout == ""
    assert snapshot(tmp_path) == before
    again = invoke_mpigen("init", fleet)
    assert again.returncode == 0, again.stderr
    assert sorted(p.relative_to(fleet).as_posix() for p in fleet.rglob("*.yaml")) == [
        ".mpigen.yaml", "profiles/clusters/my-cluster.yaml", "profiles/hardware/my-dgx-1.yaml",
        "profiles/jobs/hello.yaml"]


def test_init_makes_the_folders_above_its_own_and_removes_them_after_a_failure(tmp_path):
    """`init fleets/lab` with no `fleets/` makes both, as before the rule came in; when it fails, the folders it made
    above its own go too, and the folder the user had stays as it was."""
    made = invoke_mpigen("init", "fleets/lab", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert (tmp_path / "fleets/lab/profiles/jobs/hello.yaml").is_file()
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked").chmod(0o555)  # fleets below it can be walked to, but not made
    before = snapshot(tmp_path)
    try:
        failed = run_limited(["init", tmp_path / "locked/a/b/lab"], without_root_privileges)
    finally:
        (tmp_path / "locked").chmod(0o755)
    assert failed.returncode == 1 and "Permission denied" in failed.stderr and "Traceback" not in failed.stderr
    assert snapshot(tmp_path) == before


def test_init_points_each_profile_at_a_schema_it_wrote_that_validates_it(tmp_path):
    """An editor reads the first line; the schema is there offline, whichever way mpigen was installed, and it is the
    one mpigen validates with."""
    fleet = tmp_path / "fleet"
    assert invoke_mpigen("init", fleet, "--hardware", "dgx-a100").returncode == 0
    written = sorted(fleet.rglob("*.yaml"))
    assert [p.relative_to(fleet).as_posix() for p in written] == [
        ".mpigen.yaml", "profiles/clusters/my-cluster.yaml", "profiles/hardware/my-dgx-a100.yaml",
        "profiles/jobs/hello.yaml"]
    for path in written:
        first, _, _ = path.read_text(encoding="utf-8").partition("\n")
        prefix = "# yaml-language-server: $schema="
        assert first.startswith(prefix), path
        schema_path = path.parent / first.removeprefix(prefix)
        assert not first.removeprefix(prefix).startswith("/") and schema_path.resolve().is_file(), first
        schema = json.loads(schema_path.read_text(encoding="utf-8"))
        profile = YAML(typ="safe", pure=True).load(path.read_text(encoding="utf-8"))
        kind = "config" if path.name == ".mpigen.yaml" else profile["kind"].lower()
        assert schema == json.loads((REPO / "schemas" / f"{kind}.schema.json").read_text())
        assert list(Draft202012Validator(schema).iter_errors(profile)) == [], path
