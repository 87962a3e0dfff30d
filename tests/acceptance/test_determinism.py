"""The same profiles give the same bytes: in one process, across processes and working directories, and
in the committed charts/ folder (the "charts always up to date" rule: `make render` leaves git clean)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from conftest import CHARTS, PROFILES, REPO, in_cache, run_mpigen

from mpigen.commands.pipeline import compile_profiles
from mpigen.package import output_files


def _tree(root: Path) -> dict[str, bytes]:
    """Every file under `root`, dotfiles included (but the cache, `in_cache`), by its path relative to `root`."""
    files: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        assert not path.is_symlink(), f"{path} is a link"
        if path.is_file() and not in_cache(path, root):
            files[path.relative_to(root).as_posix()] = path.read_bytes()
    return files


def _differences(expected: dict[str, bytes], actual: dict[str, bytes]) -> list[str]:
    lines = [f"missing: {p}" for p in sorted(expected.keys() - actual.keys())]
    lines += [f"extra: {p}" for p in sorted(actual.keys() - expected.keys())]
    lines += [f"differs: {p}" for p in sorted(expected.keys() & actual.keys()) if expected[p] != actual[p]]
    return lines


def test_compiling_twice_gives_identical_bytes():
    first = compile_profiles([PROFILES])
    second = compile_profiles([PROFILES])
    assert first.ok and second.ok
    a, b = output_files(first.charts), output_files(second.charts)
    assert len(a) >= 20
    assert a == b, _differences(a, b)


def test_compiling_a_copy_elsewhere_gives_identical_bytes(tmp_path):
    copy = tmp_path / "somewhere" / "else" / "profiles"
    shutil.copytree(PROFILES, copy)
    a = output_files(compile_profiles([PROFILES]).charts)
    b = output_files(compile_profiles([copy]).charts)
    assert a == b, _differences(a, b)
    joined = b"".join(b.values())
    assert str(tmp_path).encode() not in joined, "an absolute path leaked into the charts"
    assert str(REPO).encode() not in joined, "an absolute path leaked into the charts"


def test_cli_renders_identically_from_two_working_directories(tmp_path, monkeypatch):
    first_cwd, second_cwd = tmp_path / "cwd-a", tmp_path / "deeper" / "cwd-b"
    first_cwd.mkdir()
    second_cwd.mkdir(parents=True)
    out_a, out_b = tmp_path / "out-a", tmp_path / "out-b"
    monkeypatch.setenv("PYTHONHASHSEED", "1")
    result = run_mpigen("render", PROFILES, "-o", out_a, cwd=first_cwd)
    assert result.returncode == 0, result.stderr
    monkeypatch.setenv("PYTHONHASHSEED", "2")
    relative_profiles = os.path.relpath(PROFILES, second_cwd)
    assert relative_profiles.startswith("..")
    result = run_mpigen("render", relative_profiles, "-o", out_b, cwd=second_cwd)
    assert result.returncode == 0, result.stderr
    a, b = _tree(out_a), _tree(out_b)
    assert ".mpigen-owned" in a
    assert a == b, _differences(a, b)


def test_cli_renders_identically_with_relative_paths(tmp_path):
    out_a, out_b = tmp_path / "a", tmp_path / "b"
    result = run_mpigen("render", "profiles", "-o", out_a, cwd=REPO)
    assert result.returncode == 0, result.stderr
    result = run_mpigen("render", "./profiles/", "-o", out_b, cwd=REPO)
    assert result.returncode == 0, result.stderr
    a, b = _tree(out_a), _tree(out_b)
    assert a == b, _differences(a, b)


def test_cli_render_matches_the_in_process_compile(tmp_path):
    result = run_mpigen("render", PROFILES, "-o", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    rendered = _tree(tmp_path / "out")
    expected = output_files(compile_profiles([PROFILES]).charts)
    assert {k: v for k, v in rendered.items() if k != ".mpigen-owned"} == expected


def test_committed_charts_equal_a_render_of_the_profiles(tmp_path):
    """`make render` runs `mpigen render profiles -o charts` from the repository root: over the committed charts,
    which say what each run is called, it gives them back exactly."""
    copy = tmp_path / "charts"
    shutil.copytree(CHARTS, copy, symlinks=True, ignore=shutil.ignore_patterns(".mpigen-cache"))
    result = run_mpigen("render", "profiles", "-o", copy, cwd=REPO)
    assert result.returncode == 0, result.stderr
    committed, rendered = _tree(CHARTS), _tree(copy)
    assert ".mpigen-owned" in committed, "charts/ has no .mpigen-owned"
    problems = _differences(rendered, committed)
    assert not problems, "charts/ is not a render of profiles/ (run `make render`):\n" + "\n".join(problems)


def test_rendering_into_the_committed_charts_changes_nothing(tmp_path):
    """Rendering over a copy of charts/ rewrites no chart file and prunes nothing."""
    copy = tmp_path / "charts"
    shutil.copytree(CHARTS, copy, symlinks=True)
    old = 1_000_000_000 * 10**9
    for path in copy.rglob("*"):
        if path.is_file():
            os.utime(path, ns=(old, old))
    before = _tree(copy)
    result = run_mpigen("render", "profiles", "-o", copy, cwd=REPO)
    assert result.returncode == 0, result.stderr
    assert _tree(copy) == before
    touched = [p.relative_to(copy).as_posix() for p in copy.rglob("*")
               if p.is_file() and p.name != ".mpigen-owned" and not in_cache(p, copy) and p.stat().st_mtime_ns != old]
    assert not touched, f"rewritten although unchanged: {touched}"
