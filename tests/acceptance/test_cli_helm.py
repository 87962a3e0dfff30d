"""The Helm `check` and `diff` render with, end to end: named by `--helm` or the MPIGEN_HELM environment variable,
its version said in a note, and one of a major mpigen does not support (Helm 2), or no Helm at all, refused as a
usage error that says where it came from."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CHARTS, PROFILES, helm_path

CONFIG_MAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: default\ndata:\n  a: b\n"


def mpigen(*args: str | Path, helm_env: str | Path | None = None, cwd: Path | None = None):
    env = {key: value for key, value in os.environ.items() if key != "MPIGEN_HELM"}
    if helm_env is not None:
        env["MPIGEN_HELM"] = str(helm_env)
    return subprocess.run([sys.executable, "-m", "mpigen", *map(str, args)], capture_output=True, text=True,
                          timeout=120, env=env, cwd=cwd)


@pytest.fixture
def helm2(tmp_path: Path) -> Path:
    """A program that answers `version` as Helm 2 would: it tests the refusal, not Helm."""
    program = tmp_path / "bin" / "helm"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\nprintf '%s' v2.17.0\n", encoding="utf-8")
    program.chmod(0o755)
    return program


@pytest.fixture
def manifests(tmp_path: Path) -> Path:
    folder = tmp_path / "manifests"
    folder.mkdir()
    (folder / "settings.yaml").write_text(CONFIG_MAP, encoding="utf-8")
    return folder


@pytest.mark.parametrize("major", [3, 4])
def test_check_takes_its_helm_from_mpigen_helm_and_says_its_version(major: int, manifests: Path) -> None:
    helm = helm_path(major)
    if helm is None:
        pytest.skip(f"no Helm {major}: set MPIGEN_HELM{major} (make helm installs it)")
    done = mpigen("check", manifests, helm_env=helm)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"rendering and linting with helm v{major}." in done.stderr and f"({helm})" in done.stderr


def test_check_refuses_helm_2_by_option_or_environment(helm2: Path, manifests: Path) -> None:
    by_option = mpigen("check", "--helm", helm2, manifests)
    by_env = mpigen("check", manifests, helm_env=helm2)
    for done, given_as in ((by_option, "--helm"), (by_env, "MPIGEN_HELM")):
        assert done.returncode == 2 and done.stdout == "", done.stdout
        assert done.stderr.endswith(f"Error: {given_as} {helm2} is Helm v2.17.0; mpigen renders with Helm 3 or 4, as "
                                    "Argo CD and Flux do: give one with --helm PATH or the MPIGEN_HELM environment "
                                    "variable\n"), done.stderr


def test_diff_verifies_its_helm_too(helm2: Path, tmp_path: Path) -> None:
    shutil.copytree(PROFILES, tmp_path / "profiles")
    shutil.copytree(CHARTS, tmp_path / "charts")
    refused = mpigen("diff", "profiles", "--helm", helm2, cwd=tmp_path)
    assert refused.returncode == 2 and f"Error: --helm {helm2} is Helm v2.17.0; mpigen renders with Helm 3 or 4" \
        in refused.stderr, refused.stderr
    missing = mpigen("diff", "profiles", cwd=tmp_path, helm_env="/no/such/helm")
    assert missing.returncode == 2 and "Error: MPIGEN_HELM /no/such/helm: no such program" in missing.stderr
    helm = helm_path(4) or helm_path(3)
    if helm is None:
        pytest.skip("no Helm 3 or 4: set MPIGEN_HELM3 or MPIGEN_HELM4 (make helm installs them)")
    used = mpigen("diff", "profiles", cwd=tmp_path, helm_env=helm)
    assert used.returncode == 0, used.stderr
    assert "rendering charts mpigen did not compile with helm v" in used.stderr and f"({helm})" in used.stderr


def test_every_help_says_which_helm_in_the_order_it_is_looked_for() -> None:
    """`diff --help` left out the config's `helm` (which diff reads), and the config schema had MPIGEN_HELM lose to it."""
    import json

    from conftest import REPO

    order = "default: $MPIGEN_HELM, else the repository config's `helm`, else helm on PATH"
    for command in ("check", "diff"):
        shown = mpigen(command, "--help")
        assert order in " ".join(shown.stdout.split()), shown.stdout
    schema = json.loads((REPO / "schemas" / "config.schema.json").read_text(encoding="utf-8"))
    assert "--helm, else MPIGEN_HELM, win over it" in schema["properties"]["helm"]["description"]
