"""Command defaults end to end: a repository made by `mpigen init` runs validate, render, check, plan and diff with no
paths from inside it (its `.mpigen.yaml`), a config named by --config or MPIGEN_CONFIG, and a wrong config reported
at its line with nothing written."""

from __future__ import annotations

from conftest import run_mpigen, snapshot


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
    assert run_mpigen("init", tmp_path / "fleet", "--gitops", "none").returncode == 0
    config = tmp_path / "fleet" / ".mpigen.yaml"
    config.write_text("profiles: [profiles]\ncharts: out\nplan: {output: json}\n", encoding="utf-8")
    rendered = run_mpigen("--config", config, "render", cwd=tmp_path)
    assert rendered.returncode == 0, rendered.stderr
    assert rendered.stdout.startswith(f"2 chart(s) in {tmp_path / 'fleet' / 'out'}: ")
    planned = run_mpigen("plan", cwd=tmp_path, env={"MPIGEN_CONFIG": str(config)})
    assert planned.returncode == 0 and planned.stdout.startswith("{"), planned.stderr  # the config's format
    text = run_mpigen("plan", "--output", "text", cwd=tmp_path, env={"MPIGEN_CONFIG": str(config)})
    assert text.stdout.startswith("cluster my-cluster")  # the command line wins


def test_a_wrong_config_is_reported_at_its_line_and_nothing_is_written(tmp_path):
    assert run_mpigen("init", tmp_path / "fleet").returncode == 0
    fleet = tmp_path / "fleet"
    (fleet / ".mpigen.yaml").write_text("profiles: profiles\nchart: out\n", encoding="utf-8")
    before = snapshot(tmp_path)
    done = run_mpigen("render", cwd=fleet)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == (".mpigen.yaml:2:1: error: unknown key 'chart' of the config; did you mean 'charts'?\n"
                           "1 error(s) in the config file; nothing was written\n")
    assert snapshot(tmp_path) == before


def test_with_neither_profiles_nor_config_each_command_says_what_to_give(tmp_path):
    for command in ("validate", "render", "plan", "diff"):
        done = run_mpigen(command, cwd=tmp_path)
        assert done.returncode == 2 and "Traceback" not in done.stderr
        assert f"no profiles given: there is no `profiles` folder here, and no .mpigen.yaml here or above to name " \
               f"one; give the profiles folder (e.g. `mpigen {command} fleet/profiles`)" in done.stderr
    explained = run_mpigen("explain", "hello", cwd=tmp_path)
    assert explained.returncode == 2 and "(e.g. `mpigen explain JOB -p fleet/profiles`)" in explained.stderr
    checked = run_mpigen("check", cwd=tmp_path)
    assert checked.returncode == 2
    assert "no charts given, and charts (the charts folder render writes) does not exist: give the charts or " \
           "manifests to check, or run `mpigen render` first" in checked.stderr


def test_checks_helm_and_report_format_from_the_config(tmp_path):
    assert run_mpigen("init", tmp_path / "fleet", "--gitops", "none").returncode == 0
    fleet = tmp_path / "fleet"
    assert run_mpigen("render", cwd=fleet).returncode == 0
    (fleet / ".mpigen.yaml").write_text("profiles: profiles\nhelm: tools/helm\ncheck: {output: json}\n",
                                        encoding="utf-8")
    refused = run_mpigen("check", cwd=fleet, env={"MPIGEN_HELM": ""})
    assert refused.returncode == 2
    assert "Error: .mpigen.yaml `helm:` tools/helm: no such program" in refused.stderr
    checked = run_mpigen("check", "--no-helm", cwd=fleet, env={"MPIGEN_HELM": ""})
    assert checked.returncode == 0 and checked.stdout.startswith("{"), checked.stderr  # the config's format
