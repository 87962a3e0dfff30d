"""A log as `kubectl logs` gives it, read within bounds and cleaned line by line: CR line ends and colour codes gone
(the node tools' cleaning, inventory/tooltext.py), and the prefixes `kubectl logs --prefix` and `--timestamps` put in
front of each line taken off, so the parsers see the lines the tools printed."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from mpigen.inventory.tooltext import tool_lines
from mpigen.readback.inputs import InputError, decode, read_bytes
from mpigen.support.diagnostics import one_line

MAX_LOG_BYTES = 64 * 1024 * 1024
"""One launcher's log: an nccl-tests run over a pool with NCCL_DEBUG=INFO is some megabytes; far below what would
hang a CI runner."""
STDIN = "-"
STDIN_NAME = "standard input"

KUBECTL_PREFIX = re.compile(r"^(?:\[pod/[^\]]*\] )?(?:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d) )?")
"""`kubectl logs --prefix` (`[pod/<pod>/<container>] `), then `--timestamps` (RFC 3339, `2025-06-20T10:10:40.1Z `)."""


class LogError(Exception):
    """A log that cannot be read or holds nothing to judge; str() is one line: `<log>: what is wrong; what to do`."""

    def __init__(self, log: str, message: str) -> None:
        super().__init__(one_line(f"{log}: {message}"))


@dataclass(frozen=True)
class Log:
    name: str
    """As the command line named it (`standard input` for `-`)."""
    lines: tuple[tuple[int, str], ...]
    """Each line with its number (from 1), cleaned."""


def cleaned(text: str) -> tuple[tuple[int, str], ...]:
    return tuple((number, KUBECTL_PREFIX.sub("", line, count=1)) for number, line in tool_lines(text))


def log_of(name: str, data: bytes) -> Log:
    try:
        text = decode(data)
    except InputError as exc:
        raise LogError(name, f"{exc}; save the log as `kubectl logs` prints it") from exc
    return Log(name, cleaned(text))


def read_log(path: str, stdin: BinaryIO) -> Log:
    """The log at `path`, or standard input for `-`: at most MAX_LOG_BYTES, UTF-8, a regular file (or the stream)."""
    if path == STDIN:
        data = stdin.read(MAX_LOG_BYTES + 1)
        if len(data) > MAX_LOG_BYTES:
            raise LogError(STDIN_NAME, f"over {MAX_LOG_BYTES} bytes, more than verify reads; give the launcher's log "
                                       "alone")
        return log_of(STDIN_NAME, data)
    try:
        return log_of(path, read_bytes(Path(path), MAX_LOG_BYTES))
    except InputError as exc:
        raise LogError(path, f"{exc}; save the log with `kubectl logs <launcher pod> > FILE`, or pipe it into "
                             "`mpigen verify -`") from exc
