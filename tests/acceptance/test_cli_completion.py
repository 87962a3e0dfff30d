"""Shell completion, click's own: the script each shell sources, and real bash completing with it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

MPIGEN = Path(sys.executable).parent / "mpigen"


def _source(shell: str) -> str:
    return subprocess.run([str(MPIGEN)], env={**os.environ, "_MPIGEN_COMPLETE": f"{shell}_source"},
                          capture_output=True, text=True, timeout=60, check=True).stdout


@pytest.mark.skipif(not MPIGEN.is_file(), reason="needs the installed mpigen command (make test installs it)")
@pytest.mark.parametrize(("shell", "marker"), [("bash", "complete -o nosort -F _mpigen_completion mpigen"),
                                               ("zsh", "#compdef mpigen"), ("fish", "complete --no-files --command mpigen")])
def test_each_shell_gets_a_script(shell, marker):
    assert marker in _source(shell)


@pytest.mark.skipif(not MPIGEN.is_file() or shutil.which("bash") is None, reason="needs bash and the mpigen command")
@pytest.mark.parametrize(("words", "expected"), [("mpigen ren", ["render"]),
                                                 ("mpigen check --output ", ["json", "junit", "sarif", "text"]),
                                                 ("mpigen render --ch", ["--check"])])
def test_bash_completes_commands_options_and_choices(words, expected):
    script = (f'eval "$(_MPIGEN_COMPLETE=bash_source mpigen)"; COMP_WORDS=({words}); '
              f'COMP_CWORD={len(words.split()) - (0 if words.endswith(" ") else 1)}; '
              '_mpigen_completion mpigen; printf "%s\\n" "${COMPREPLY[@]}"')
    env = {**os.environ, "PATH": f"{MPIGEN.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    result = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == expected


def _complete(words: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """click's completion protocol, as the bash script drives it: the words so far and the one being completed."""
    cword = len(words.split()) - (0 if words.endswith(" ") else 1)
    return subprocess.run([sys.executable, "-m", "mpigen"], capture_output=True, text=True, timeout=60, cwd=cwd,
                          env={**os.environ, **(env or {}), "_MPIGEN_COMPLETE": "bash_complete", "COMP_WORDS": words,
                               "COMP_CWORD": str(cword)})


@pytest.mark.parametrize(("words", "expected"), [
    ("mpigen explain re", ["resnet50-dgx", "resnet50-trainjob"]),
    ("mpigen render --manifests --cluster dgx-", ["dgx-lab", "dgx-pod"]),
    ("mpigen check --cluster cpu-lab --job ", ["cpu-pi"]),  # the jobs of the clusters already chosen
    ("mpigen check charts --cluster cpu", ["cpu-lab"]),  # check's paths are charts: the names come from profiles/
    ("mpigen plan --cluster dgx-lab --pool ", ["cpu", "dgx"]),
    ("mpigen explain -p profiles/jobs/pi.yaml ", ["pi"]),  # the profiles given on the command line
    # profiles typed before an option that waits for its value: click leaves them unparsed, yet they count
    ("mpigen render profiles/clusters/cpu-lab.yaml --manifests --cluster ", ["cpu-lab"]),
    ("mpigen plan profiles/clusters/cpu-lab.yaml profiles/jobs/pi.yaml --job ", ["pi"]),
])
def test_job_cluster_and_pool_names_complete_from_the_profiles(words, expected):
    done = _complete(words, REPO)
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.splitlines() == [f"plain,{name}" for name in expected]


def test_completion_reads_the_repository_config_and_never_prints_an_error(tmp_path):
    (tmp_path / ".git").mkdir()  # the config is looked for above the current folder inside a git work tree only
    (tmp_path / "fleet" / "jobs").mkdir(parents=True)
    (tmp_path / "fleet" / "jobs" / "a.yaml").write_text("kind: Job\nname: alpha\ncluster: c\n", encoding="utf-8")
    (tmp_path / "fleet" / "jobs" / "b.yaml").write_text("kind: Job\nname: [broken\n", encoding="utf-8")
    (tmp_path / ".mpigen.yaml").write_text("profiles: fleet\n", encoding="utf-8")
    done = _complete("mpigen explain ", tmp_path / "fleet" / "jobs")
    assert (done.returncode, done.stdout, done.stderr) == (0, "plain,alpha\n", "")
    (tmp_path / ".mpigen.yaml").write_text("profiles: {wrong: 1}\n", encoding="utf-8")
    for words in ("mpigen explain ", "mpigen plan --cluster "):  # a config that is wrong: nothing, quietly
        done = _complete(words, tmp_path)
        assert (done.returncode, done.stdout.strip(), done.stderr) == (0, "", "")
    (tmp_path / ".mpigen.yaml").unlink()
    done = _complete("mpigen explain ", tmp_path)  # no profiles folder and no config: nothing, quietly
    assert (done.returncode, done.stdout.strip(), done.stderr) == (0, "", "")
