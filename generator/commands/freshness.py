"""The key of a render: everything its output and its messages depend on, as one digest.

A `render --stamp` leaves a stamp in its output folder (generator/write/stamp.py) with its key; the next
render whose key is the same, into a folder the stamp proves untouched, has nothing to compile or write. So the
key covers the profile files (each by the path given, its stable name and its bytes), mpigen's own files, the
packages installed beside it and the interpreter, how the output folder was named and where it lies in git
(the delivery-path warnings depend on it). A key never matches by accident of an unchanged version number:
mpigen's files are read, not its version.
"""

from __future__ import annotations

import functools
import hashlib
import os
import site
import sys
from collections.abc import Iterable
from pathlib import Path

from mpigen.support.worktree import git_top

_PACKAGE = Path(__file__).resolve().parent.parent


@functools.cache
def code_identity() -> str:
    """A digest of mpigen's own files (the package and the schemas it reads), the distributions installed in
    its site-packages (by name and version), where Python looks for modules, and the Python it runs on."""
    from mpigen.support.schema_files import schema_dir

    digest = hashlib.sha256(f"mpigen code 1\0{sys.version}\0{sys.flags.optimize}\0{sys.path}\0".encode())
    for top in sorted({_PACKAGE, schema_dir().resolve()}):
        digest.update(files_digest(top).encode())
    for packages in sorted({*site.getsitepackages(), site.getusersitepackages()}):
        try:
            installed = sorted(name for name in os.listdir(packages) if name.endswith((".dist-info", ".egg-info")))
        except OSError:
            continue
        digest.update(f"{packages}\0{'/'.join(installed)}\0".encode())
    return digest.hexdigest()


def files_digest(top: Path) -> str:
    """A digest of every file below `top` by relative name and bytes (compiled `__pycache__` left out)."""
    digest = hashlib.sha256()
    for folder, folders, files in os.walk(top):
        folders[:] = sorted(name for name in folders if name != "__pycache__")
        for name in sorted(files):
            path = Path(folder) / name
            relative = path.relative_to(top).as_posix().encode("utf-8", "surrogateescape")
            data = path.read_bytes()
            digest.update(len(relative).to_bytes(8, "big") + relative + len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()


def render_key(profiles_fingerprint: str, paths: Iterable[Path], output: Path) -> str:
    """The key of rendering the profiles read as `profiles_fingerprint` (from `paths`) into `output`."""
    top = git_top(output)
    parts = [code_identity(), profiles_fingerprint, *(str(path) for path in paths), "\0", str(output),
             str(output.resolve()), str(top) if top else ""]
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogateescape")).hexdigest()
