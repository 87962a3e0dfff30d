"""Where an output folder sits in git: the work tree it lies in."""

from __future__ import annotations

from pathlib import Path


def git_top(folder: Path) -> Path | None:
    """The work tree `folder` lies in (the nearest parent holding `.git`), or None."""
    here = folder.resolve()
    for candidate in (here, *here.parents):
        if (candidate / ".git").exists():
            return candidate
    return None
