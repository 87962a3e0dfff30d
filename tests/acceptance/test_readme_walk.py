"""The README's walk for a new repository, run as a newcomer runs it: mpigen installed from its wheel (no checkout,
no virtualenv of this repository), then every line of the block in order, in an empty folder, with a `kubectl` that
exports the DGX-1 pool of the cluster fixtures (tests/fixtures/clusters/dgx-1.yaml and operators.yaml). Every line must
succeed, and nothing mpigen prints on the way may send the user to a command that is not theirs (this repository's
`make` targets, its `.venv`, the source folder)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

from conftest import REPO, require_helm

HEADING = "## In your own repository"
OWN_TOOLS = {"mpigen", "helm", "kubectl", "git", "flux", "argocd", "cd", "docker", "pre-commit"}
"""What a user of the charts runs: mpigen, and the tools of the cluster and of git."""


def walk_block() -> list[str]:
    """The command lines of the first `sh` block under the walk's heading, comments dropped."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index(HEADING):]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block is not None, f"README.md: no sh block under {HEADING!r}"
    return [line.split("  #")[0].strip() for line in block.group(1).splitlines() if line.strip()]


def test_the_walk_starts_with_an_install_and_ends_with_a_commit_and_a_check():
    lines = walk_block()
    assert lines[0].startswith("pip install")
    assert any(line.startswith("kubectl get nodes,") and line.endswith("-o yaml > cluster.yaml") for line in lines)
    assert any(line.startswith("mpigen import cluster.yaml ") for line in lines)
    assert any("git commit" in line for line in lines)
    assert lines[-1] == "mpigen render --check"


def test_a_newcomer_walks_from_init_to_commit_with_their_own_commands(tmp_path: Path, built_wheel: Path) -> None:
    site = tmp_path / "site"
    zipfile.ZipFile(built_wheel).extractall(site)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "mpigen"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m mpigen "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    (bin_dir / "helm").symlink_to(require_helm(4))
    clusters = REPO / "tests" / "fixtures" / "clusters"
    kubectl = bin_dir / "kubectl"
    kubectl.write_text(f'#!/bin/sh\n[ "$1" = get ] || exit 1\ncat "{clusters / "dgx-1.yaml"}"\necho ---\n'
                       f'cat "{clusters / "operators.yaml"}"\n', encoding="utf-8")
    kubectl.chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    lines = walk_block()
    script = "set -eu\n" + "\n".join(f"echo '+ {line}'\n{line}" for line in lines[1:]) + "\n"  # the wheel is installed
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(site), "HOME": str(tmp_path),
           "GIT_AUTHOR_NAME": "A User", "GIT_AUTHOR_EMAIL": "a.user@example.com", "GIT_COMMITTER_NAME": "A User",
           "GIT_COMMITTER_EMAIL": "a.user@example.com", "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C.UTF-8"}
    done = subprocess.run(["bash", "-c", script], cwd=work, env=env, capture_output=True, text=True, timeout=300)
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    fleet = work / "fleet"
    assert (fleet / "profiles" / "hardware" / "dgx-1.yaml").is_file() and list((fleet / "charts").rglob("Chart.yaml"))
    status = subprocess.run(["git", "status", "--porcelain"], cwd=fleet, env=env, capture_output=True, text=True)
    assert status.stdout == "?? cluster.yaml\n"  # the commit holds everything the walk made but the export
    assert "charts is up to date with the profiles" in done.stdout
    for foreign in ("make ", ".venv", "python -m", "generator/", "tests/", "scripts/"):
        assert foreign not in said, f"the walk printed {foreign!r}:\n{said}"
    for command in re.findall(r"`([^`\n]+)`", said):
        word = command.split()[0]
        if " " in command and re.fullmatch(r"[a-z][-a-z0-9]*", word):  # a command line, not a name or a path
            assert word in OWN_TOOLS, f"the walk printed the command `{command}`, which is not the user's own"
