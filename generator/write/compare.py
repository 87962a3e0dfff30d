"""How an output folder differs from what the profiles compile to, reading only (`mpigen render --check`)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from mpigen.support.diagnostics import one_line
from mpigen.support.progress import Tally, tallied
from mpigen.write.folder import _Folder, reason
from mpigen.write.lock import open_output
from mpigen.write.ownership import ownership_bytes
from mpigen.write.paths import (
    CACHE_DIR,
    COMMITTED_PLAN,
    OWNERSHIP_FILE,
    STAGING_DIR,
    WriteFailed,
    WriteRefused,
    check_relative,
)
from mpigen.write.stamp import CACHE_FILES


@dataclass
class TreeDiff:
    """How an output folder differs from what the profiles compile to."""

    missing: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    """A committed plan in the staging folder: the next render replays it, so the folder will change."""
    found: dict[str, bytes] = field(default_factory=dict)
    """What is on disk of the stale files the caller asked to keep (`compare_tree`'s `keep_found`)."""

    @property
    def clean(self) -> bool:
        return not (self.missing or self.stale or self.extra or self.pending)


def committed_plan_waits(folder: _Folder) -> bool:
    """Whether the staging folder holds a committed plan (whatever stands there): the next render completes it, or
    refuses it. A staging folder that is no folder is an `extra:` of its own; one without a plan is a render that
    never committed, which the next render throws away without changing a chart."""
    try:
        return folder.kind(COMMITTED_PLAN, root=STAGING_DIR) != "missing"
    except WriteRefused:
        return False


def compare_tree(out_dir: Path, files: dict[str, bytes], keep_found: Callable[[str], bool] | None = None,
                 tally: Tally | None = None) -> TreeDiff:
    """What `write_tree` would change, reading only: missing, stale and extra files (the ownership list too), and a
    committed plan waiting in the staging folder. A link or folder where a file belongs is stale; links elsewhere
    are extra. Nothing is followed. The bytes found in each stale file `keep_found` chooses are kept in `found`,
    read once with the rest (`render --check` reads the old Chart.yaml files for the release that compiled them).
    `tally` hears of the files compared."""
    for path in files:
        check_relative(path)
    wanted = {**files, OWNERSHIP_FILE: ownership_bytes(files)}
    diff = TreeDiff()
    if not os.path.lexists(out_dir):
        diff.missing = sorted(wanted)
        return diff
    try:
        fd = open_output(out_dir)
        try:
            folder = _Folder(out_dir, fd)
            for path, data in tallied(sorted(wanted.items()), len(wanted), tally):
                try:
                    found = folder.read(path)
                except WriteRefused:
                    diff.stale.append(path)
                    continue
                if found is None:
                    diff.missing.append(path)
                elif found != data:
                    diff.stale.append(path)
                    if keep_found is not None and keep_found(path):
                        diff.found[path] = found
            diff.extra = [path for path in folder.files() if path not in wanted and not path.startswith(f"{STAGING_DIR}/")
                          and not (path.startswith(f"{CACHE_DIR}/") and path[len(CACHE_DIR) + 1:] in CACHE_FILES)]
            diff.pending = [f"{STAGING_DIR}/{COMMITTED_PLAN}"] if committed_plan_waits(folder) else []
        finally:
            folder.close()
            os.close(fd)
    except OSError as exc:
        raise WriteFailed(f"cannot read {one_line(str(out_dir))}: {reason(exc)}") from None
    return diff
