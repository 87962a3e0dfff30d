"""Shell completion, click's own: the script each shell sources, and real bash completing with it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

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
