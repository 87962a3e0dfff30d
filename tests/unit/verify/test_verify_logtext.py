"""Reading a log (generator/verify/logtext.py): within bounds, as UTF-8, from a file or standard input, each line as the
tool printed it under what kubectl puts in front."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from mpigen.verify import LogError, read_log
from mpigen.verify.logtext import MAX_LOG_BYTES, cleaned


def test_kubectl_s_prefix_and_timestamps_are_taken_off_and_nothing_else() -> None:
    assert cleaned("[pod/x-launcher-abcde/launcher] 2025-06-20T10:10:40.123Z # nThread 1\r\n"
                   "2025-06-20T10:10:40+02:00 #  Rank  0 Group  0\n"
                   "\x1b[1m# Out of bounds values : 0 OK\x1b[0m\n"
                   "  2025-06-20T10:10:40Z is not at the start\n") == (
        (1, "# nThread 1"), (2, "#  Rank  0 Group  0"), (3, "# Out of bounds values : 0 OK"),
        (4, "  2025-06-20T10:10:40Z is not at the start"))


def test_a_file_and_standard_input(tmp_path: Path) -> None:
    path = tmp_path / "launcher.log"
    path.write_bytes(b"\xef\xbb\xbf# nThread 1\n")
    assert read_log(str(path), io.BytesIO()).lines == ((1, "# nThread 1"),)
    log = read_log("-", io.BytesIO(b"# nThread 1\n"))
    assert (log.name, log.lines) == ("standard input", ((1, "# nThread 1"),))


def test_what_cannot_be_read_is_refused_saying_what_to_do(tmp_path: Path) -> None:
    binary = tmp_path / "log.bin"
    binary.write_bytes(b"# nThread \xff\n")
    with pytest.raises(LogError, match=r"log\.bin: cannot read: byte 0xff at offset 10 is not valid UTF-8; .*kubectl"):
        read_log(str(binary), io.BytesIO())
    with pytest.raises(LogError, match=r"missing\.log: cannot read: .*; save the log with `kubectl logs"):
        read_log(str(tmp_path / "missing.log"), io.BytesIO())
    with pytest.raises(LogError, match="is a folder, not a file"):
        read_log(str(tmp_path), io.BytesIO())
    with pytest.raises(LogError, match=f"standard input: over {MAX_LOG_BYTES} bytes"):
        read_log("-", io.BytesIO(b"#" * (MAX_LOG_BYTES + 1)))


def test_a_fifo_is_refused_not_waited_on(tmp_path: Path) -> None:
    """A FIFO nobody writes would hang a read: it is refused at once (pipe the log into `-` instead)."""
    fifo = tmp_path / "log"
    os.mkfifo(fifo)
    with pytest.raises(LogError, match="not a regular file"):
        read_log(str(fifo), io.BytesIO())
