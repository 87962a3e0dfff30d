"""The text of a node's own tools (`nvidia-smi topo -m`, `ibdev2netdev`, `lspci -nn`) as people paste it: what the
three parsers share. Such text comes from a terminal, an issue or a ticket, so it carries CRLF line ends, ANSI colour
codes, tabs where the tool printed spaces (or the other way round), trailing blanks and a shell prompt above the
output; every line is cleaned of those the same way, and keeps its number for the error that names it."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Protocol, TypeVar

from mpigen.readback.inputs import InputError, read_text
from mpigen.support.diagnostics import one_line

MAX_TOOL_TEXT_BYTES = 1024 * 1024
"""One tool's output for one node: `lspci -nn` of a large server is some 30 KiB; far below what would hang import."""

# An ANSI escape: CSI (ESC [ parameters final byte) or a lone two-byte ESC sequence. Anchored at the ESC and made of
# single character classes, so it cannot backtrack.
ANSI_ESCAPE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|[@-_])")


class Numbered(Protocol):
    @property
    def line(self) -> int: ...


Record = TypeVar("Record", bound=Numbered)


class ToolTextError(Exception):
    """A tool's text that cannot be read; str() is one line, `source:line: what is wrong; how to fix it`, with any
    control character of the quoted text escaped, so a pasted line cannot drive the reader's terminal."""

    def __init__(self, source: str, line: int, message: str) -> None:
        super().__init__(one_line(f"{source}:{line}: {message}"))
        self.source = source
        self.line = line


def tool_lines(text: str) -> Iterator[tuple[int, str]]:
    """Each line (numbered from 1) without colour codes, carriage returns or trailing blanks. Tabs stay: every parser
    splits on any whitespace."""
    for number, raw in enumerate(text.splitlines(), 1):
        line = ANSI_ESCAPE.sub("", raw) if "\x1b" in raw else raw
        yield number, line.replace("\r", "").rstrip()


def is_shell_prompt(line: str) -> bool:
    """A bare shell prompt, nothing typed after it (`$`, `user@dgx:~$`, `[root@dgx ~]#`): a short line ending in
    the prompt character, which no tool's record does."""
    words = line.split()
    return bool(words) and len(words) <= 3 and words[-1][-1] in "$#%>" and "==>" not in line


def record_lines(text: str, source: str, starts: Callable[[str], bool], read: Callable[[str, int], Record],
                 missing: str) -> list[Record]:
    """The records of a tool that prints one a line (`ibdev2netdev`, `lspci -nn`). Lines above the first one `starts`
    accepts (a shell prompt) are skipped, and so are the bare prompts at the end; from it on, every line that is not
    blank is `read`, which raises for a line that is not a record. No record at all: `missing`, at the first line
    with text."""
    records: list[Record] = []
    lines = [(number, line) for number, line in tool_lines(text) if line.strip()]
    end = len(lines)
    while end and is_shell_prompt(lines[end - 1][1]) and not starts(lines[end - 1][1]):
        end -= 1  # the prompt the terminal printed after the output, pasted with it
    for number, line in lines[:end]:
        if records or starts(line):
            records.append(read(line, number))
    if not records:
        raise ToolTextError(source, lines[0][0] if lines else 1, missing)
    return records


def refuse_repeats(records: Sequence[Record], key: Callable[[Record], str], source: str) -> None:
    """One node's output names each port or device once; a second time means two outputs were pasted together."""
    seen: dict[str, int] = {}
    for record in records:
        name = key(record)
        if name in seen:
            raise ToolTextError(source, record.line, f"{name} is listed twice (first on line {seen[name]}); paste one "
                                                     f"node's output")
        seen[name] = record.line


def read_tool_text(path: Path, limit: int = MAX_TOOL_TEXT_BYTES) -> str:
    """A tool's saved output, bounded like every file mpigen reads (a regular file, at most `limit` bytes, UTF-8)."""
    try:
        return read_text(path, limit)
    except InputError as exc:
        raise ToolTextError(str(path), 1, f"{exc}; save the tool's output as a plain UTF-8 text file") from exc
