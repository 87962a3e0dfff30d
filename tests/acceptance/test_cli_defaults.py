"""Command defaults end to end: a repository made by `mpigen init` runs validate, render, check, plan and diff with no
paths from inside it (its `.mpigen.yaml`), a config named by --config or MPIGEN_CONFIG, and a wrong config reported
at its line with nothing written. The repository made by init, and configs that must not be read or that name a
program, go through the real command in a process of its own; the other settings run the same command lines in-process
(conftest.invoke_mpigen)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, invoke_mpigen, run_mpigen, snapshot

CONFIG_MAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: default\ndata:\n  a: b\n"
NO_HELM_ENV = {key: value for key, value in os.environ.items() if key != "MPIGEN_HELM"}


def _mpigen_without_helm_env(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mpigen", *map(str, args)], capture_output=True, text=True,
                          timeout=120, cwd=cwd, env=NO_HELM_ENV)


def _tattletale(path: Path) -> Path:
    """A program that leaves the file `ran` beside itself when it runs, and is no Helm."""
    path.write_text('#!/bin/sh\necho ran > "$(dirname "$0")/ran"\nexit 1\n', encoding="utf-8")
    path.chmod(0o755)
    return path.parent / "ran"


def test_a_repository_made_by_init_needs_no_paths(tmp_path):
    made = run_mpigen("init", "fleet", "--hardware", "dgx-a100", "--gitops", "argocd", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    fleet = tmp_path / "fleet"
    (fleet / ".git").mkdir()  # the repository's root, as `git init` makes it: the config is looked for up to here
    validated = run_mpigen("validate", cwd=fleet)
    assert (validated.returncode, validated.stdout) == (0, "3 profile(s) valid: 1 hardware, 1 cluster(s), 1 job(s)\n")
    rendered = run_mpigen("render", cwd=fleet / "profiles" / "jobs")  # from a folder below, too
    assert rendered.returncode == 0, rendered.stderr
    assert rendered.stdout == "2 chart(s) in ../../charts: 18 file(s) written, 0 unchanged, 0 removed\n"
    assert rendered.stderr == ""  # the charts are where the cluster's gitops.path says: no delivery warning
    assert (fleet / "charts/my-cluster/jobs/hello/Chart.yaml").is_file()
    up_to_date = run_mpigen("render", "--check", cwd=fleet)
    assert (up_to_date.returncode, up_to_date.stdout) == (0, "charts is up to date with the profiles\n")
    values = fleet / "charts/my-cluster/jobs/hello/values.yaml"
    values.write_text(values.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    stale = run_mpigen("render", "--check", cwd=fleet)
    assert stale.returncode == 1 and stale.stdout == "stale: charts/my-cluster/jobs/hello/values.yaml\n"
    assert stale.stderr == "charts is not what the profiles compile to: run `mpigen render` and commit it\n"
    assert run_mpigen("render", "-q", cwd=fleet).stdout == ""
    checked = run_mpigen("check", "--no-helm", cwd=fleet)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "0 error(s), 0 warning(s) in " in checked.stdout and "of 2 chart(s) and " in checked.stdout
    planned = run_mpigen("plan", cwd=fleet)
    assert planned.returncode == 0 and planned.stdout.startswith("cluster my-cluster (profiles/clusters/my-cluster.yaml)")
    compared = run_mpigen("diff", cwd=fleet)
    assert (compared.returncode, compared.stdout, compared.stderr) == (
        0, "", "no object differs between charts and the profiles\n")


def test_a_config_named_by_option_or_environment(tmp_path):
    assert invoke_mpigen("init", tmp_path / "fleet", "--gitops", "none").returncode == 0
    config = tmp_path / "fleet" / ".mpigen.yaml"
    config.write_text("profiles: [profiles]\ncharts: out\nplan: {output: json}\n", encoding="utf-8")
    rendered = invoke_mpigen("--config", config, "render", cwd=tmp_path)
    assert rendered.returncode == 0, rendered.stderr
    assert rendered.stdout.startswith(f"2 chart(s) in {tmp_path / 'fleet' / 'out'}: ")
    planned = invoke_mpigen("plan", cwd=tmp_path, env={"MPIGEN_CONFIG": str(config)})
    assert planned.returncode == 0 and planned.stdout.startswith("{"), planned.stderr  # the config's format
    text = invoke_mpigen("plan", "--output", "text", cwd=tmp_path, env={"MPIGEN_CONFIG": str(config)})
    assert text.stdout.startswith("cluster my-cluster")  # the command line wins


def test_a_wrong_config_is_reported_at_its_line_and_nothing_is_written(tmp_path):
    assert invoke_mpigen("init", tmp_path / "fleet").returncode == 0
    fleet = tmp_path / "fleet"
    (fleet / ".mpigen.yaml").write_text("profiles: profiles\nchart: out\n", encoding="utf-8")
    before = snapshot(tmp_path)
    done = invoke_mpigen("render", cwd=fleet)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == (".mpigen.yaml:2:1: error: unknown key 'chart' of the config; did you mean 'charts'?\n"
                           "1 error(s) in the config file; nothing was written\n")
    assert snapshot(tmp_path) == before


def test_with_neither_profiles_nor_config_each_command_says_what_to_give(tmp_path):
    for command in ("validate", "render", "plan", "diff"):
        done = invoke_mpigen(command, cwd=tmp_path)
        assert done.returncode == 2 and "Traceback" not in done.stderr
        assert f"no profiles given: there is no `profiles` folder here, and no .mpigen.yaml here or above to name " \
               f"one; give the profiles folder (e.g. `mpigen {command} fleet/profiles`)" in done.stderr
    explained = invoke_mpigen("explain", "hello", cwd=tmp_path)
    assert explained.returncode == 2 and "(e.g. `mpigen explain JOB -p fleet/profiles`)" in explained.stderr
    checked = invoke_mpigen("check", cwd=tmp_path)
    assert checked.returncode == 2
    assert "no charts given, and charts (the charts folder render writes) does not exist: give the charts or " \
           "manifests to check, or run `mpigen render` first" in checked.stderr


def test_checks_helm_and_report_format_from_the_config(tmp_path):
    assert invoke_mpigen("init", tmp_path / "fleet", "--gitops", "none").returncode == 0
    fleet = tmp_path / "fleet"
    assert invoke_mpigen("render", cwd=fleet).returncode == 0
    (fleet / ".mpigen.yaml").write_text("profiles: profiles\nhelm: tools/helm\ncheck: {output: json}\n",
                                        encoding="utf-8")
    refused = invoke_mpigen("check", cwd=fleet, env={"MPIGEN_HELM": ""})
    assert refused.returncode == 1 and refused.stdout == ""  # a config error, at the config's `helm:` line
    assert refused.stderr == (f".mpigen.yaml:2:7: error: `helm` {fleet / 'tools/helm'}: no such program; give the "
                              "path of Helm 3 or 4 (relative to this file's folder) or the name of one on PATH; "
                              "--helm and MPIGEN_HELM win over it\n1 error(s) in the config file; nothing was written\n")
    checked = invoke_mpigen("check", "--no-helm", cwd=fleet, env={"MPIGEN_HELM": ""})
    assert checked.returncode == 0 and checked.stdout.startswith("{"), checked.stderr  # the config's format


def test_a_config_planted_above_a_folder_outside_git_is_never_read(tmp_path):
    """/tmp/.mpigen.yaml naming a program made `mpigen check` in any non-git folder under /tmp run it, even with
    every path given. Outside a git work tree only the current folder's config is read, and one there that someone
    else could have put there is not read either, with a warning that says why."""
    ran = _tattletale(tmp_path / "their-script")
    (tmp_path / ".mpigen.yaml").write_text("helm: ./their-script\n", encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    (work / "settings.yaml").write_text(CONFIG_MAP, encoding="utf-8")
    checked = _mpigen_without_helm_env("check", "settings.yaml", cwd=work)
    assert not ran.exists(), checked.stderr
    assert checked.returncode == 0 and ".mpigen.yaml" not in checked.stderr, checked.stdout + checked.stderr
    if not hasattr(os, "geteuid"):
        return
    shared = tmp_path / "shared"  # a folder anyone may write into, without /tmp's sticky bit
    shared.mkdir()
    (shared / "settings.yaml").write_text(CONFIG_MAP, encoding="utf-8")
    (shared / ".mpigen.yaml").write_text("helm: ../their-script\n", encoding="utf-8")
    shared.chmod(0o777)
    try:
        checked = _mpigen_without_helm_env("check", "settings.yaml", cwd=shared)
    finally:
        shared.chmod(0o755)
    assert not ran.exists(), checked.stderr
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stderr.startswith(f"warning: {shared / '.mpigen.yaml'} is not read: its folder is writable by "
                                     "every user, who could replace it; it sets nothing here (name a config of your "
                                     "own with --config or MPIGEN_CONFIG)\n"), checked.stderr


def test_a_helm_the_config_names_by_a_relative_path_is_that_file(tmp_path):
    """`helm: ./helm` read from the current folder's config ran the `helm` on PATH (the path lost its `./`)."""
    ran = _tattletale(tmp_path / "helm")
    (tmp_path / ".mpigen.yaml").write_text("profiles: .\nhelm: ./helm\n", encoding="utf-8")
    (tmp_path / "settings.yaml").write_text(CONFIG_MAP, encoding="utf-8")
    refused = _mpigen_without_helm_env("check", "settings.yaml", cwd=tmp_path)
    assert ran.exists(), refused.stderr  # the config's own program was asked its version
    assert refused.returncode == 1 and refused.stderr.startswith(
        f".mpigen.yaml:2:7: error: `helm` {tmp_path / 'helm'}: does not answer `version` like Helm; "), refused.stderr


def test_render_manifests_names_runs_as_explain_does():
    """`render --manifests` without -o read no charts folder, so its run names differed from explain's."""
    explained = invoke_mpigen("explain", "cpu-pi", cwd=REPO)
    name = next(line.split()[-1] for line in explained.stdout.splitlines() if line.strip().startswith("MPIJob name"))
    printed = invoke_mpigen("render", "--manifests", "--job", "cpu-pi", cwd=REPO)
    assert printed.returncode == 0, printed.stderr
    assert f"name: {name}\n" in printed.stdout


def test_a_setting_of_the_config_can_be_turned_off_on_the_command_line(tmp_path):
    (tmp_path / ".git").mkdir()
    assert invoke_mpigen("init", tmp_path, "--gitops", "none").returncode == 0
    (tmp_path / "settings.yaml").write_text(CONFIG_MAP.replace("ConfigMap", "Widget").replace("v1", "example.com/v1"),
                                            encoding="utf-8")
    (tmp_path / ".mpigen.yaml").write_text("profiles: profiles\ncharts: out\nrender: {stamp: true}\n"
                                           "check: {strict: true}\nvalidate: {output: json, strict: true}\n",
                                           encoding="utf-8")
    assert invoke_mpigen("render", "--no-stamp", cwd=tmp_path).returncode == 0
    assert (tmp_path / "out").is_dir() and not (tmp_path / "out" / ".mpigen-cache").exists()
    assert invoke_mpigen("check", "--no-helm", "settings.yaml", cwd=tmp_path).returncode == 1  # no schema: an error
    lenient = invoke_mpigen("check", "--no-helm", "--no-strict", "settings.yaml", cwd=tmp_path)
    assert lenient.returncode == 0, lenient.stdout
    validated = invoke_mpigen("validate", cwd=tmp_path)  # the config's `validate: {output: json}`
    assert validated.returncode == 0 and validated.stdout.startswith("{"), validated.stderr
    text = invoke_mpigen("validate", "--output", "text", "--no-strict", cwd=tmp_path)
    assert text.stdout == "3 profile(s) valid: 1 hardware, 1 cluster(s), 1 job(s)\n", text.stderr


def test_a_named_config_that_does_not_exist_is_always_an_error(tmp_path):
    for args in (("validate", REPO / "profiles"), ("render", "--manifests", REPO / "profiles", "-o", tmp_path)):
        done = invoke_mpigen("--config", tmp_path / "nonexist.yaml", *args, cwd=tmp_path)
        assert done.returncode == 1 and done.stdout == "", done.stdout
        assert done.stderr == (f"{tmp_path / 'nonexist.yaml'}:1:1: error: the config file does not exist; give the "
                               "path of a .mpigen.yaml (--config or MPIGEN_CONFIG), or leave both out\n"
                               "1 error(s) in the config file; nothing was written\n")


@pytest.mark.skipif(sys.platform == "win32", reason="a removed current folder is a POSIX shell's")
def test_a_current_folder_that_was_removed_is_an_error_not_a_traceback(tmp_path):
    script = f"mkdir x && cd x && rmdir ../x && exec {sys.executable} -m mpigen validate"
    done = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (1, ""), done.stderr
    assert done.stderr.startswith("error: the current folder cannot be read (") and "Traceback" not in done.stderr
    assert done.stderr.endswith("it was removed or moved since the shell entered it; cd into a folder that exists\n")


def test_clusters_whose_gitops_paths_differ_leave_no_default_charts_folder(tmp_path):
    """One cluster's other `gitops.path` made the whole fleet render into `charts/`, a folder no GitOps tool reads."""
    (tmp_path / ".git").mkdir()
    assert invoke_mpigen("init", tmp_path, "--gitops", "flux").returncode == 0
    cluster = tmp_path / "profiles/clusters/my-cluster.yaml"
    text = cluster.read_text(encoding="utf-8")
    (tmp_path / ".mpigen.yaml").write_text("profiles: profiles\n", encoding="utf-8")
    cluster.with_name("other.yaml").write_text(text.replace("name: my-cluster", "name: other")
                                               + "  path: deploy/other\n", encoding="utf-8")
    before = snapshot(tmp_path)
    for command in ("render", "check"):
        done = invoke_mpigen(command, cwd=tmp_path)
        assert done.returncode == 2 and snapshot(tmp_path) == before and "Traceback" not in done.stderr
        assert "no charts folder given, and the clusters' gitops.path differ: my-cluster (charts), other " \
               "(deploy/other); give the charts folder with -o (--charts for plan and explain), or set `charts:` in " \
               ".mpigen.yaml" in " ".join(done.stderr.split()), done.stderr


def test_render_manifests_takes_no_check():
    done = invoke_mpigen("render", "--manifests", "--check", cwd=REPO)
    assert done.returncode == 2 and done.stdout == ""
    assert "--manifests prints the manifests and --check compares OUTPUT with the profiles: give one of them" \
        in " ".join(done.stderr.split())


def test_config_profiles_that_do_not_exist_end_explain_and_check_at_their_line(tmp_path):
    """explain of a job's file and check with no path read the config's profiles themselves: a traceback, before."""
    (tmp_path / ".mpigen.yaml").write_text("profiles: nope\n", encoding="utf-8")
    (tmp_path / "pi.yaml").write_text((REPO / "profiles/jobs/pi.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    for args in (("explain", "pi.yaml"), ("check",)):
        done = invoke_mpigen(*args, cwd=tmp_path)
        assert (done.returncode, done.stdout) == (1, ""), done.stderr
        assert done.stderr == (".mpigen.yaml:1:11: error: `profiles` names nope, which does not exist; write the "
                               "profiles folder relative to this file's folder\n"
                               "1 error(s) in the config file; nothing was written\n")
