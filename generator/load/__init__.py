"""Stage 1: read profile files into YAML trees that remember line and column of every node.

Nothing here knows what a profile means; it only refuses files that are not one YAML mapping
(bad encoding, bad YAML, duplicate keys, several documents, alias bombs, oversized files), and
paths it cannot read: a folder that cannot be listed is never taken for an empty one, since its
profiles' charts would then be pruned.

What YAML decides by a scalar's look stays the text written where no profile wants a type: keys,
timestamps, `=`. Merge keys (`<<: *base`) work, and a merged value is located where it was written.
Every scan of the text is linear in its size (files are at most 1 MiB of hostile text).

discover.py finds the files, files.py reads them, parse.py and constructor.py build the tree,
problems.py words what is wrong with it, document.py locates its nodes, plain.py turns it into plain values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

# Imported now, not on first use: the function `discover` shares its name with its module, which would otherwise
# stand in its place here once anything imports mpigen.load.discover.
from mpigen.load.discover import PROFILE_SUFFIXES, discover
from mpigen.support.lazy import lazy_name

if TYPE_CHECKING:
    from mpigen.load.document import LoadResult, ProfileFile, Unreadable, position
    from mpigen.load.files import load_file, load_paths
    from mpigen.load.parse import load_bytes
    from mpigen.load.plain import to_plain
    from mpigen.load.reading import fingerprint_paths
    from mpigen.support.yamllimits import MAX_FILE_BYTES

_HOMES = {
    "LoadResult": "mpigen.load.document", "ProfileFile": "mpigen.load.document",
    "Unreadable": "mpigen.load.document", "position": "mpigen.load.document",
    "load_file": "mpigen.load.files", "load_paths": "mpigen.load.files",
    "load_bytes": "mpigen.load.parse", "to_plain": "mpigen.load.plain",
    "fingerprint_paths": "mpigen.load.reading", "MAX_FILE_BYTES": "mpigen.support.yamllimits",
}
"""Where each name of this package lives: imported on first use, so that reading profiles without parsing them
(a render whose stamp holds) never imports the YAML parser."""


def __getattr__(name: str) -> Any:
    return lazy_name(__name__, _HOMES, name)


__all__ = [
    "MAX_FILE_BYTES",
    "PROFILE_SUFFIXES",
    "LoadResult",
    "ProfileFile",
    "Unreadable",
    "discover",
    "fingerprint_paths",
    "load_bytes",
    "load_file",
    "load_paths",
    "position",
    "to_plain",
]
