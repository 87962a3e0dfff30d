"""`mpigen schema --write DIR`: the profile schemas an editor reads, put in a folder of the user's repository, so
that it works offline and with a pip-installed mpigen (which has no schemas/ folder of its own to point at).

The files are written by the rule of every file mpigen writes where a user points it (generator/write/target.py):
never through a link. Into a new folder, or one holding none of them, they are created all or none. Where some are
there already (an earlier `--write`, or `mpigen init`), each is replaced whole, and only once every one of them is
known to be a schema of mpigen's: anything else at one of their names is refused before a file is written.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from mpigen.support.diagnostics import one_line
from mpigen.support.project import SERVED_URL
from mpigen.support.schema_files import SCHEMAS_FOLDER, repository_schemas
from mpigen.write.paths import WriteRefused
from mpigen.write.target import create_files, kind_of, write_file

_MAX_SCHEMA_BYTES = 4 * 1024 * 1024
"""Far above any schema of mpigen's (the largest is under 100 kB): a bigger file is not one."""


def write_schemas(folder: Path) -> list[Path]:
    """Write every schema a repository's editors read (the profile kinds' and the config's) into `folder`; the paths
    written. WriteError when the folder refuses."""
    files = {name: text.encode("utf-8") for name, text in repository_schemas().items()}
    there = [name for name in files if os.path.lexists(folder / name)]
    if not there:
        return create_files(folder, files)
    for name in there:
        _refuse_unless_a_schema(folder / name, name)
    for name, data in files.items():
        write_file(folder / name, data)
    return [folder / name for name in files]


def _refuse_unless_a_schema(path: Path, name: str) -> None:
    """A file that stands where a schema goes may be replaced only if it is mpigen's schema of that name (of any
    release): its `$id` is the address of `schemas/<name>` in mpigen's repository."""
    shown = one_line(str(path))
    found = path.lstat()
    if not stat.S_ISREG(found.st_mode):
        raise WriteRefused(f"refusing to write {shown}: it is {kind_of(found.st_mode)}, not a schema mpigen wrote; "
                           "nothing was written: remove it, or give another folder")
    schema_id = ""
    if found.st_size <= _MAX_SCHEMA_BYTES:
        try:
            schema = json.loads(path.read_bytes())
            schema_id = str(schema.get("$id", "")) if isinstance(schema, dict) else ""
        except (ValueError, OSError):
            pass
    release, _, rest = schema_id.removeprefix(f"{SERVED_URL}/").partition("/")
    if not schema_id.startswith(f"{SERVED_URL}/") or not release or rest != f"{SCHEMAS_FOLDER}/{name}":
        raise WriteRefused(f"refusing to write {shown}: it exists and is not mpigen's {name}; nothing was written: "
                           "remove it, or give another folder")
