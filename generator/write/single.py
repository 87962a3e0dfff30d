"""One file written whole or not at all (`mpigen plan --html`): a reader never sees half a page."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from generator.write.folder import reason
from generator.write.lock import signals_deferred
from generator.write.paths import WriteFailed


def write_file(path: Path, data: bytes) -> None:
    """Write `data` beside `path` under a fixed temporary name, then rename it over `path`. The name is fixed so a
    run killed halfway leaves at most that one file, which the next run replaces."""
    temporary = path.with_name(f".{path.name}.mpigen-tmp")
    try:
        with signals_deferred():
            descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(descriptor, view):]
                os.fsync(descriptor)
            finally:
                os.close(descriptor)
            os.replace(temporary, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise WriteFailed(f"cannot write {path}: {reason(exc)}") from exc
