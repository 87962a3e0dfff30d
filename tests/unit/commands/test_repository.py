"""generator/commands/repository.py: `.mpigen.yaml` found upward to the git root (outside a git work tree in the
current folder only, and only one the user owns), read with its paths relative to its own folder, judged with
file:line:col messages worded for the config, and the default profiles and charts folder."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from conftest import PROFILES, current_folder

from mpigen.commands.repository import (
    MAX_CONFIG_BYTES,
    ConfigError,
    FoundConfig,
    NoCurrentFolder,
    NoDefault,
    RepositoryConfig,
    config_refusal,
    default_charts,
    default_profiles,
    find_config,
    read_config,
)

needs_owners = pytest.mark.skipif(not hasattr(os, "geteuid"), reason="no file owners on this system")


def test_the_config_is_found_in_a_folder_above_up_to_the_git_root(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".mpigen.yaml").write_text("profiles: fleet\n", encoding="utf-8")
    below = tmp_path / "fleet" / "jobs"
    below.mkdir(parents=True)
    with current_folder(below):
        found = find_config()
        assert found == FoundConfig(Path("../../.mpigen.yaml"))
        assert found.file is not None
        assert read_config(found.file).profiles == (Path("../../fleet"),)  # relative to the config's folder


def test_outside_a_git_work_tree_only_the_current_folder_is_read(tmp_path):
    """A config above a folder that is in no git work tree (e.g. /tmp/.mpigen.yaml, which anyone can plant) is
    never read: it could name the Helm `check` runs."""
    (tmp_path / ".mpigen.yaml").write_text("helm: ./their-script\n", encoding="utf-8")
    (tmp_path / "work").mkdir()
    assert find_config(tmp_path / "work") == FoundConfig(None)
    with current_folder(tmp_path):
        assert find_config() == FoundConfig(Path(".mpigen.yaml"))


def test_the_search_stops_at_the_git_root(tmp_path):
    (tmp_path / ".mpigen.yaml").write_text("profiles: fleet\n", encoding="utf-8")
    repository = tmp_path / "repository"
    (repository / ".git").mkdir(parents=True)
    (repository / "sub").mkdir()
    assert find_config(repository / "sub") == FoundConfig(None)
    (repository / ".mpigen.yaml").write_text("", encoding="utf-8")
    with current_folder(repository / "sub"):
        assert find_config() == FoundConfig(Path("../.mpigen.yaml"))


@needs_owners
def test_a_config_someone_else_could_have_put_there_is_not_read(tmp_path):
    config = tmp_path / ".mpigen.yaml"
    config.write_text("helm: ./x\n", encoding="utf-8")
    tmp_path.chmod(0o700)
    assert config_refusal(config) is None
    tmp_path.chmod(0o777)  # anyone may replace it
    assert config_refusal(config) == "its folder is writable by every user, who could replace it"
    found = find_config(tmp_path)
    assert found.file is None and found.refused is not None
    assert found.refused.startswith(f"{config} is not read: its folder is writable by every user")
    tmp_path.chmod(0o777 | stat.S_ISVTX)  # /tmp's mode: no one but the owner may replace the file
    assert config_refusal(config) is None
    tmp_path.chmod(0o700)
    config.chmod(0o666)  # the user's own file in the user's own folder, but anyone may change what it says
    assert config_refusal(config) == "it is writable by every user, who could change it"
    config.chmod(0o644)
    if os.geteuid() == 0:
        os.chown(config, 4242, -1)
        assert config_refusal(config) == "it is owned by another user (uid 4242)"


def test_a_current_folder_that_was_removed_is_said_plainly(tmp_path):
    gone = tmp_path / "x"
    gone.mkdir()
    with current_folder(gone):
        gone.rmdir()
        with pytest.raises(NoCurrentFolder, match="the current folder cannot be read"):
            find_config()


def test_every_setting_is_read(tmp_path):
    config = tmp_path / ".mpigen.yaml"
    config.write_text("profiles: [a, b/c]\ncharts: out/charts\nhelm: tools/helm\n"
                      "check: {strict: true, output: sarif}\nplan: {output: json}\nrender: {stamp: true}\n",
                      encoding="utf-8")
    read = read_config(config)
    assert read.profiles == (tmp_path / "a", tmp_path / "b/c") and read.charts == tmp_path / "out/charts"
    assert read.helm == str(tmp_path / "tools/helm")
    assert read.helm_at is not None and (read.helm_at.line, read.helm_at.column) == (3, 7)
    assert (read.setting("check", "strict"), read.setting("check", "output"), read.setting("plan", "output"),
            read.setting("render", "stamp"), read.setting("plan", "strict")) == (True, "sarif", "json", True, None)
    config.write_text("helm: helm3\n", encoding="utf-8")
    assert read_config(config).helm == "helm3"  # a command's name, looked up on PATH
    config.write_text("helm: ./helm\nvalidate: {strict: true, output: sarif}\n", encoding="utf-8")
    with current_folder(tmp_path):  # a path from the current folder's config: absolute, never a name on PATH
        read = read_config(Path(".mpigen.yaml"))
    assert read.helm == str(tmp_path / "helm")
    assert (read.setting("validate", "strict"), read.setting("validate", "output")) == (True, "sarif")


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
    ("[1, 2]\n", ".mpigen.yaml:1:1: the config must be a mapping of keys to values; a .mpigen.yaml is one mapping of "
                 "its settings (`profiles:`, `charts:`, `helm:`, `check:` ...): https://"),
    ("a: 1\n---\nb: 2\n", ".mpigen.yaml:3:1: file holds 2 YAML documents; a .mpigen.yaml is one mapping"),
    ("check: 3\n", ".mpigen.yaml:1:8: `check` must be a mapping, not 3; defaults of `mpigen check`"),
    ("render: {stamp: 1}\n", ".mpigen.yaml:1:17: `render.stamp` must be true or false, not 1; keep a stamp of each "
                            "render in the charts folder, so that an unchanged render stops at once (`--stamp`)"),
])
def test_a_wrong_config_is_reported_where_it_is(tmp_path, text, expected):
    (tmp_path / ".mpigen.yaml").write_text(text, encoding="utf-8")
    with current_folder(tmp_path), pytest.raises(ConfigError) as raised:
        read_config(Path(".mpigen.yaml"))
    shown = raised.value.diagnostics[0].format()
    assert shown.startswith(expected.replace(": ", ": error: ", 1)), shown


def test_a_config_too_big_to_be_one_is_refused_as_a_config(tmp_path):
    config = tmp_path / ".mpigen.yaml"
    config.write_text("profiles: " + "a" * 2_000_000 + "\n", encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        read_config(config)
    shown = raised.value.diagnostics[0].format()
    assert f"more than the {MAX_CONFIG_BYTES} a config may have; a .mpigen.yaml is one mapping" in shown, shown
    assert "profile" not in shown.replace("`profiles:`", "")


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
        with pytest.raises(NoDefault) as raised:  # they disagree: no folder is guessed
            default_charts(RepositoryConfig(), (Path("profiles"),))
        assert str(raised.value) == (
            "no charts folder given, and the clusters' gitops.path differ: a (deploy/charts), b (charts); give the "
            "charts folder with -o (--charts for plan and explain), or set `charts:` in .mpigen.yaml")


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
