"""Which files are profiles: the YAML files below the folders given, never a link out of them, and never a
folder or entry that cannot be read taken for an empty one."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from mpigen.support.diagnostics import Diagnostic, Location

PROFILE_SUFFIXES = (".yaml", ".yml")


def discover(paths: Iterable[Path]) -> tuple[list[tuple[Path, Path]], list[Diagnostic]]:
    """Profile files under `paths`, as (file, root it was found under), sorted for determinism.

    Links are followed only while they stay inside the root; one that leads out is reported, so
    no profile silently goes missing and nothing outside the folder is read. For the same reason a
    folder that cannot be listed, and an entry that might have been a folder (a link to nothing or in a
    circle, a FIFO), are errors: skipping them would compile, and prune, as if their profiles were gone.
    """
    found: list[tuple[Path, Path]] = []
    problems: list[Diagnostic] = []
    for root in paths:
        if root.is_file():
            found.append((root, root.parent))
            continue
        if not root.is_dir():
            what = "is a FIFO, socket or device, not a file or folder" if root.exists() else "no such file or folder"
            problems.append(Diagnostic(Location(str(root)), what,
                                       "give the profiles folder, e.g. `mpigen validate profiles`"))
            continue
        _walk_folder(root, found, problems)
    found.sort(key=lambda pair: pair[0].as_posix())
    return found, problems


def _walk_folder(root: Path, found: list[tuple[Path, Path]], problems: list[Diagnostic]) -> None:
    """Add the profile files below the folder `root` to `found`, and what may not be skipped to `problems`."""
    real_root = root.resolve()
    seen: set[Path] = set()
    unlisted: list[OSError] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=True, onerror=unlisted.append):
        real_dir = Path(dirpath).resolve()
        if real_dir in seen:
            dirnames[:] = []
            continue
        seen.add(real_dir)
        kept = []
        for name in sorted(dirnames):
            folder = Path(dirpath) / name
            if name.startswith("."):
                continue
            problem = _leaves(folder, real_root)
            if problem:
                problems.append(problem)
                continue
            kept.append(name)
        dirnames[:] = kept
        for name in sorted(filenames):
            file = Path(dirpath) / name
            if name.startswith("."):
                continue
            if not name.endswith(PROFILE_SUFFIXES):
                problem = _not_plainly_ignorable(file, real_root)
                if problem:
                    problems.append(problem)
                continue
            # A file that is no link lies where its folder does, and the folder was kept only inside the root.
            problem = _leaves(file, real_root) if os.path.islink(file) else None
            if problem:
                problems.append(problem)
                continue
            found.append((file, root))
    # A folder that cannot be listed is not an empty one: skipping it would prune the charts of its profiles.
    problems += [Diagnostic(Location(str(error.filename or root)),
                            f"cannot read the folder: {error.strerror or error}",
                            "make it readable (or remove it from the profiles); nothing was compiled without it")
                 for error in unlisted]


def _not_plainly_ignorable(path: Path, real_root: Path) -> Diagnostic | None:
    """Why an entry that is not named like a profile may not be skipped: what it is cannot be known (a link to
    nothing, or round in a circle), or it is no file at all (a FIFO, socket or device). Any of these may stand
    where a folder of profiles was (`profiles/jobs`), and skipping it would prune the charts of its profiles.
    A plain file, or a link to one, is skipped as ever (README.md, notes)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return dangling(path, str(path)) if path.is_symlink() else None  # else gone since it was listed: a file, skipped
    except OSError:
        return _leaves(path, real_root) or Diagnostic(Location(str(path)), "cannot be read",
                                                      "make it readable, or remove it")
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    return Diagnostic(Location(str(path)), "is a FIFO, socket or device, not a file or folder",
                      "remove it: the profiles folder holds YAML files and folders of them")


def dangling(link: Path, shown: str) -> Diagnostic:
    return Diagnostic(Location(shown), f"is a link to '{os.readlink(link)}', which does not exist",
                      "point the link at a profile, or remove it")


def _leaves(path: Path, real_root: Path) -> Diagnostic | None:
    """Why `path` may not be read as part of the folder at `real_root`: a link out of it, or round in a circle."""
    try:
        real = path.resolve()
    except (OSError, RuntimeError):  # Python < 3.13 raises RuntimeError on a loop of links
        return Diagnostic(Location(str(path)), "is a link that leads round in a circle (to itself, or through links "
                          "that point at each other)", "point the link at a profile, or remove it")
    if real.is_relative_to(real_root):
        return None
    return Diagnostic(Location(str(path)), "is a link that leads outside the profiles folder",
                      "copy the profiles into the folder instead of linking to them")
