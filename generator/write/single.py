"""One file written whole or not at all (`mpigen plan --html`): a reader never sees half a page."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from generator.write.folder import reason, write_all
from generator.write.lock import signals_deferred
from generator.write.paths import WriteFailed


def write_file(path: Path, data: bytes) -> None:
    """Write `data` into a temporary file of its own beside `path`, then rename it over `path`: two runs never
    share a temporary file, and Ctrl-C or SIGTERM wait until the rename is done (only SIGKILL can leave the
    temporary file `.<name>.*.mpigen-tmp` behind)."""
    temporary: str | None = None
    try:
        with signals_deferred():
            descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".mpigen-tmp",
                                                     dir=path.parent)
            try:
                write_all(descriptor, data)
                os.fchmod(descriptor, 0o644)
                os.fsync(descriptor)
            finally:
                os.close(descriptor)
            os.replace(temporary, path)
    except OSError as exc:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
        raise WriteFailed(f"cannot write {path}: {reason(exc)}") from exc
