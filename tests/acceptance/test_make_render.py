"""`make render`, as users and CI run it: charts/ is what profiles/ compiles to, and stays so."""

from __future__ import annotations

import hashlib
import shutil
import subprocess

import pytest
from conftest import CHARTS, REPO, in_cache


def tree_digest() -> dict[str, str]:
    return {str(p.relative_to(CHARTS)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(CHARTS.rglob("*")) if p.is_file() and not in_cache(p, CHARTS)}


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_render_twice_changes_nothing():
    if not (REPO / ".venv" / ".installed").exists():
        pytest.skip("run through `make test`, which bootstraps .venv first")
    before = tree_digest()
    stamped = (CHARTS / ".mpigen-cache").exists()  # only if a developer rendered with --stamp
    for _ in range(2):
        result = subprocess.run(["make", "--no-print-directory", "render"], cwd=REPO, capture_output=True, text=True,
                                timeout=300)
        assert result.returncode == 0, result.stderr
        assert "0 file(s) written" in result.stdout and "0 removed" in result.stdout, result.stdout
    assert tree_digest() == before
    assert (CHARTS / ".mpigen-cache").exists() == stamped, "make render left a stamp among the charts"
    if (REPO / ".git").exists() and shutil.which("git"):
        status = subprocess.run(["git", "status", "--porcelain", "--", "charts"], cwd=REPO, capture_output=True,
                                text=True, check=True)
        assert status.stdout == "", f"charts/ differs from git after make render:\n{status.stdout}"
