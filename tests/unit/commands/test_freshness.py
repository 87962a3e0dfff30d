"""generator/commands/freshness.py: the key of a render changes with everything its output or messages depend on."""

from __future__ import annotations

import os
from pathlib import Path

from mpigen.commands.freshness import code_identity, files_digest, render_key


def test_the_key_follows_the_profiles_the_paths_given_and_the_output_named(tmp_path):
    profiles, out = [Path("profiles")], tmp_path / "charts"
    key = render_key("a" * 64, profiles, out)
    assert render_key("a" * 64, profiles, out) == key
    assert render_key("b" * 64, profiles, out) != key
    assert render_key("a" * 64, [Path(os.path.abspath("profiles"))], out) != key  # messages name them as given
    assert render_key("a" * 64, profiles, Path(os.path.relpath(out))) != key  # and the output folder too
    (tmp_path / ".git").mkdir()  # now in a work tree: the delivery-path warnings may change
    assert render_key("a" * 64, profiles, out) != key


def test_mpigens_own_files_are_read_not_its_version(tmp_path):
    tree = tmp_path / "generator"
    (tree / "build").mkdir(parents=True)
    (tree / "build/mpijob.py").write_text("WORKERS = 2\n", encoding="utf-8")
    before = files_digest(tree)
    (tree / "__pycache__").mkdir()
    (tree / "__pycache__/mpijob.cpython-311.pyc").write_bytes(b"\0compiled")
    assert files_digest(tree) == before  # compiled files follow their source
    (tree / "build/mpijob.py").write_text("WORKERS = 3\n", encoding="utf-8")
    assert files_digest(tree) != before
    assert len(code_identity()) == 64
