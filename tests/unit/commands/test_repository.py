"""generator/commands/repository.py: `.mpigen.yaml` found upward to the git root, read with its paths relative to
its own folder, judged with file:line:col messages, and the default profiles and charts folder."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import PROFILES, current_folder

from mpigen.commands.repository import (
    ConfigError,
    NoDefault,
    RepositoryConfig,
    default_charts,
    default_profiles,
    find_config,
    read_config,
)


def test_the_config_is_found_in_a_folder_above(tmp_path):
    (tmp_path / ".mpigen.yaml").write_text("profiles: fleet\n", encoding="utf-8")
    below = tmp_path / "fleet" / "jobs"
    below.mkdir(parents=True)
    with current_folder(below):
        found = find_config()
        assert found == Path("../../.mpigen.yaml")
        assert read_config(found).profiles == (Path("../../fleet"),)  # relative to the config's folder


def test_the_search_stops_at_the_git_root(tmp_path):
    (tmp_path / ".mpigen.yaml").write_text("profiles: fleet\n", encoding="utf-8")
    repository = tmp_path / "repository"
    (repository / ".git").mkdir(parents=True)
    (repository / "sub").mkdir()
    assert find_config(repository / "sub") is None
    (repository / ".mpigen.yaml").write_text("", encoding="utf-8")
    with current_folder(repository / "sub"):
        assert find_config() == Path("../.mpigen.yaml")


def test_every_setting_is_read(tmp_path):
    config = tmp_path / ".mpigen.yaml"
    config.write_text("profiles: [a, b/c]\ncharts: out/charts\nhelm: tools/helm\n"
                      "check: {strict: true, output: sarif}\nplan: {output: json}\nrender: {stamp: true}\n",
                      encoding="utf-8")
    read = read_config(config)
    assert read.profiles == (tmp_path / "a", tmp_path / "b/c") and read.charts == tmp_path / "out/charts"
    assert read.helm == str(tmp_path / "tools/helm")
    assert (read.setting("check", "strict"), read.setting("check", "output"), read.setting("plan", "output"),
            read.setting("render", "stamp"), read.setting("plan", "strict")) == (True, "sarif", "json", True, None)
    config.write_text("helm: helm3\n", encoding="utf-8")
    assert read_config(config).helm == "helm3"  # a command's name, looked up on PATH


def test_an_empty_config_sets_nothing(tmp_path):
    config = tmp_path / ".mpigen.yaml"
    config.write_text("# the root of the fleet's repository\n", encoding="utf-8")
    assert read_config(config) == RepositoryConfig(file=config)


@pytest.mark.parametrize(("text", "expected"), [
    ("profile: profiles\n", ".mpigen.yaml:1:1: unknown key 'profile' of the config; did you mean 'profiles'?"),
    ("charts: 3\n", ".mpigen.yaml:1:9: `charts` must be a string, not 3; quote it: \"3\""),
    ("check:\n  output: xml\n", ".mpigen.yaml:2:11: `check.output` is 'xml', which is not allowed; expected one of "
                                "'json', 'junit', 'sarif', 'text'"),
    ("profiles: []\n", ".mpigen.yaml:1:11: `profiles` needs at least 1 item(s)"),
    ("profiles: [a\n", ".mpigen.yaml:1:11: not valid YAML: this `[` is never closed; close it with `]`"),
])
def test_a_wrong_config_is_reported_where_it_is(tmp_path, text, expected):
    (tmp_path / ".mpigen.yaml").write_text(text, encoding="utf-8")
    with current_folder(tmp_path), pytest.raises(ConfigError) as raised:
        read_config(Path(".mpigen.yaml"))
    shown = raised.value.diagnostics[0].format()
    assert shown.startswith(expected.replace(": ", ": error: ", 1)), shown


def test_a_named_config_that_is_not_there(tmp_path):
    with pytest.raises(ConfigError, match="the config file does not exist"):
        read_config(tmp_path / "nope.yaml")


def test_the_default_profiles(tmp_path):
    with current_folder(tmp_path):
        with pytest.raises(NoDefault, match=r"no profiles given: there is no `profiles` folder here"):
            default_profiles(RepositoryConfig(), "render")
        (tmp_path / "profiles").mkdir()
        assert default_profiles(RepositoryConfig(), "render") == (Path("profiles"),)
    config = RepositoryConfig(file=tmp_path / "up" / ".mpigen.yaml")
    with pytest.raises(NoDefault, match=r"\.mpigen\.yaml names none \(`profiles:`\)"):
        default_profiles(config, "render")


def test_the_default_charts_folder_follows_the_clusters_gitops_path(tmp_path):
    assert default_charts(RepositoryConfig(charts=tmp_path / "mine"), (PROFILES,)) == tmp_path / "mine"
    with current_folder(tmp_path):
        assert default_charts(RepositoryConfig(), (PROFILES,)) == Path("charts")  # the example clusters agree
        profiles = tmp_path / "profiles" / "clusters"
        profiles.mkdir(parents=True)
        for name, path in (("a", "deploy/charts"), ("b", None)):
            gitops = f"gitops: {{tool: flux, repoURL: https://x.example/r.git, path: {path}}}\n" if path else ""
            (profiles / f"{name}.yaml").write_text(f"kind: Cluster\nname: {name}\n{gitops}", encoding="utf-8")
        (tmp_path / ".git").mkdir()
        (tmp_path / "sub").mkdir()
        with current_folder(tmp_path / "sub"):  # from the git root, whatever folder the command runs in
            assert default_charts(RepositoryConfig(), (Path("../profiles"),)) == Path("../deploy/charts")
        (profiles / "b.yaml").write_text("kind: Cluster\nname: b\ngitops: {tool: argocd}\n", encoding="utf-8")
        assert default_charts(RepositoryConfig(), (Path("profiles"),)) == Path("charts")  # they disagree


def test_a_profiles_path_the_config_names_that_does_not_exist_is_reported_at_its_line(tmp_path):
    (tmp_path / "profiles").mkdir()
    (tmp_path / ".mpigen.yaml").write_text("charts: out\nprofiles:\n  - profiles\n  - nope\n", encoding="utf-8")
    with current_folder(tmp_path):
        config = read_config(Path(".mpigen.yaml"))
        with pytest.raises(ConfigError) as raised:
            default_profiles(config, "validate")
    assert [d.format() for d in raised.value.diagnostics] == [
        ".mpigen.yaml:4:5: error: `profiles` names nope, which does not exist; write the profiles folder relative to "
        "this file's folder"]
