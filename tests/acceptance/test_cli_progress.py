"""The progress line of a long command: on a terminal (a real pseudo-terminal as stderr), `render`, `check` and `plan`
show what they are doing, rewritten in place and cleared, so that what the terminal is left showing is exactly what the
command prints without it; nothing when stderr is not a terminal, under --quiet, or before MPIGEN_PROGRESS_AFTER
seconds (2 by default: a test sets 0, so that no run has to be slow). Ctrl-C during it still ends the command with its
one line. The real command line in processes of its own; the line's drawing itself is held in
tests/unit/commands/test_progress_line.py."""

from __future__ import annotations

import errno
import fcntl
import os
import pty
import selectors
import signal
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest
from conftest import CHARTS, PROFILES, invoke_mpigen, run_mpigen

AT_ONCE = {"MPIGEN_PROGRESS_AFTER": "0"}


def on_terminal(*args: str | Path, env: dict[str, str], cwd: Path | None = None,
                interrupt_at: str | None = None) -> tuple[int, str, str]:
    """`mpigen ARGS` with a pseudo-terminal as stderr and a pipe as stdout: the exit code, stdout, and the bytes the
    terminal received (its line discipline turns each newline into CR LF). `interrupt_at`: Ctrl-C (SIGINT) once
    the terminal has received that text."""
    main, secondary = pty.openpty()
    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 200, 0, 0))
    process = subprocess.Popen([sys.executable, "-m", "mpigen", *map(str, args)], stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=secondary, cwd=cwd, env={**os.environ, **env})
    os.close(secondary)
    assert process.stdout is not None
    out = process.stdout.fileno()
    received = {main: b"", out: b""}
    interrupted = False
    with selectors.DefaultSelector() as selector:
        for fd in received:
            selector.register(fd, selectors.EVENT_READ)
        while selector.get_map():
            for key, _ in selector.select(timeout=120):
                try:
                    chunk = os.read(key.fd, 65536)
                except OSError as exc:  # the terminal's last holder closed it
                    assert exc.errno == errno.EIO
                    chunk = b""
                if not chunk:
                    selector.unregister(key.fd)
                received[key.fd] += chunk
                if interrupt_at and not interrupted and interrupt_at.encode() in received[main]:
                    process.send_signal(signal.SIGINT)
                    interrupted = True
    os.close(main)
    code = process.wait(timeout=120)
    process.stdout.close()
    return code, received[out].decode(), received[main].decode()


def screen(received: str) -> str:
    """What a terminal shows after `received`: a carriage return starts the line again, each character written over
    the one below it; trailing blanks are not seen."""
    lines = []
    for raw in received.replace("\r\n", "\n").split("\n"):
        line: list[str] = []
        column = 0
        for char in raw:
            if char == "\r":
                column = 0
                continue
            line[column:column + 1] = [char]
            column += 1
        lines.append("".join(line).rstrip(" "))
    return "\n".join(lines)


def test_a_render_on_a_terminal_shows_its_stages_and_leaves_exactly_what_it_prints(tmp_path):
    code, stdout, received = on_terminal("render", PROFILES, "-o", "charts", env=AT_ONCE, cwd=tmp_path)
    assert code == 0
    for doing in ("loading profiles", "validating profiles", "resolving jobs", "compiling charts", "writing files"):
        assert f"\rmpigen: {doing}" in received, received
    (tmp_path / "piped").mkdir()
    piped = run_mpigen("render", PROFILES, "-o", "charts", cwd=tmp_path / "piped", env=AT_ONCE)
    assert piped.returncode == 0
    assert "\r" not in piped.stderr and "mpigen: " not in piped.stderr  # not a terminal: no line at all
    assert stdout == piped.stdout  # the summary, on stdout
    assert screen(received) == piped.stderr  # every line drawn was cleared again: "note: ..." lines alone stay


@pytest.mark.parametrize("args", [("check", "--no-helm", CHARTS, "--cluster", "cpu-lab"),
                                  ("plan", PROFILES, "--charts", CHARTS)], ids=["check", "plan"])
def test_check_and_plan_on_a_terminal_print_what_they_print_without_it(args):
    code, stdout, received = on_terminal(*args, env=AT_ONCE)
    plain = invoke_mpigen(*args)
    assert (code, stdout) == (plain.returncode, plain.stdout)
    assert "\rmpigen: " in received
    assert screen(received) == plain.stderr


def test_quiet_or_a_short_run_shows_no_progress(tmp_path):
    code, stdout, received = on_terminal("render", PROFILES, "-o", "quiet", "--quiet", env=AT_ONCE, cwd=tmp_path)
    assert (code, stdout, received) == (0, "", "")
    code, _, received = on_terminal("check", "--no-helm", CHARTS, "--cluster", "cpu-lab", "--output", "json",
                                    env={"MPIGEN_PROGRESS_AFTER": "3600"})
    assert code == 0 and "\r" not in received.replace("\r\n", "\n")  # done before the line was due
    assert "mpigen: " not in received


def test_ctrl_c_during_progress_ends_with_its_one_line(tmp_path):
    code, _, received = on_terminal("render", PROFILES, "-o", "charts", env=AT_ONCE, cwd=tmp_path,
                                    interrupt_at="\rmpigen: ")
    assert code == 130, received
    assert "Traceback" not in received
    assert screen(received) == "error: interrupted\n"
