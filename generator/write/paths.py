"""The names mpigen gives its own files in an output folder, the limits on what it reads there, the errors it
raises, and the one check every path from a chart, an ownership list or a plan passes."""

from __future__ import annotations

from pathlib import PurePosixPath

from mpigen.support.diagnostics import one_line

OWNERSHIP_FILE = ".mpigen-owned"
STAGING_DIR = ".mpigen-staging"
CACHE_DIR = ".mpigen-cache"  # the stamp of the last render (stamp.py); ignored by git, never a chart file's place
PLAN_FILE = "plan.json"
COMMITTED_PLAN = "plan.committed.json"
MAX_LIST_BYTES = 16 * 1024 * 1024  # an ownership list or plan larger than this is not one mpigen wrote
MAX_DEPTH = 64  # folders below the output folder; charts are a few levels deep


class WriteError(Exception):
    """Charts could not be written; the message says why and what to do. The CLI prints it as one line."""


class WriteRefused(WriteError):
    """The output folder is not one mpigen may write to (links, foreign files, a damaged list or plan)."""


class WriteFailed(WriteError):
    """The system refused a read or a write (permissions, a full disk); the message says what state it left."""


def check_relative(path: object) -> str:
    """`path` if it is a plain relative path inside the output folder (canonical, no `..`, not mpigen's own
    staging folder), else WriteRefused. Every path from a chart, an ownership list or a plan passes here."""
    if not isinstance(path, str):
        raise WriteRefused(f"refusing to write {one_line(repr(path))}: a path must be a string")
    pure = PurePosixPath(path)
    if (not path or pure.is_absolute() or "\\" in path or "\x00" in path or str(pure) != path
            or ".." in pure.parts or pure.parts[0] in (STAGING_DIR, CACHE_DIR) or len(pure.parts) > MAX_DEPTH):
        raise WriteRefused(f"refusing to write '{one_line(path)}': it is not a plain relative path inside the "
                           "output folder (it would leave it, or names mpigen's staging or cache folder)")
    return path
