"""Limits every YAML or JSON text mpigen reads must pass before a parser sees it, profiles and checked
manifests alike: a bounded size, bounded nesting (the parsers recurse, or slow down quadratically, per
level) and a bounded tree once aliases are expanded (a few hundred bytes can name a billion nodes).

Each check is one linear pass, so hostile input costs no more than its own length.
"""

from __future__ import annotations

import re
from typing import Any

MAX_FILE_BYTES = 1024 * 1024
MAX_EXPANDED_NODES = 100_000
MAX_NESTING = 64
MAX_DOCUMENT_BYTES = 3 * 1024 * 1024
"""One Kubernetes object: the API server refuses a request body over 3 MiB, so no real object is larger
(the largest upstream CRD, Argo CD's ApplicationSet, is 1.4 MB). `check` refuses a larger document;
`render` stays under etcd's smaller default (`vocabulary.kubernetes.ETCD_MAX_REQUEST_BYTES`)."""


def too_deep(text: str) -> tuple[str, int, int] | None:
    """Where lists and mappings first nest deeper than a profile ever needs, before the YAML parser sees
    them: its scanner slows down quadratically on deep flow collections (`[[[[...`), and its composer
    recurses once per level of block nesting (`- - - - x`, or ever deeper indentation) until Python's
    stack runs out. Returns what nests (brackets or blocks), and the line and column where it goes too deep.

    Counts outside quotes (with their escapes, `\\"` and `''`) and comments: brackets; and per line, the
    indentations still open above it plus one level for each compact `- ` entry.
    """
    depth = 0
    quote = ""
    indents: list[int] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not depth and not quote:
            content = line.lstrip(" ")
            column = len(line) - len(content)
            if content and not content.startswith("#"):
                while indents and indents[-1] > column:
                    indents.pop()
                if not indents or indents[-1] < column:
                    indents.append(column)
                while len(indents) <= MAX_NESTING and content.startswith(("- ", "-\t")):
                    rest = content[1:].lstrip(" \t")
                    column += len(content) - len(rest)
                    content = rest
                    indents.append(column)
                if len(indents) > MAX_NESTING:
                    return "lists and mappings", number, column + 1
        previous = " "
        escaped = False  # the character after `\\` in double quotes, or after the first `'` of `''` in single
        for column, ch in enumerate(line, start=1):
            if escaped:
                escaped = False
            elif quote:
                if quote == '"' and ch == "\\":
                    escaped = True
                elif ch == quote:
                    escaped = quote == "'" and line.startswith("'", column)
                    quote = quote if escaped else ""
            elif ch in "'\"" and previous in " \t:-[{,?":
                quote = ch
            elif ch == "#" and previous in " \t":
                break
            elif ch in "[{":
                depth += 1
                if depth > MAX_NESTING:
                    return "brackets", number, column
            elif ch in "]}":
                depth = max(depth - 1, 0)
            previous = ch
    return None


_LINE_BREAK = re.compile("\r\n?|\n")


def line_column(text: str, index: int) -> tuple[int, int]:
    """Line and column (1-based, in characters) of `text[index]`, counting line breaks as the parser's marks
    do: CR LF, LF, and a lone CR (YAML 1.2 has no others: NEL and U+2028 are characters of the line)."""
    index = min(max(index, 0), len(text))
    breaks = list(_LINE_BREAK.finditer(text, 0, index))
    start = breaks[-1].end() if breaks else 0
    return len(breaks) + 1, index - start + 1


def expanded_size(node: Any, budget: int) -> int:
    """Nodes the tree has once aliases are expanded, counting stops just past `budget`."""
    count = 0
    stack: list[Any] = [node]
    while stack:
        current = stack.pop()
        count += 1
        if count > budget:
            return count
        if isinstance(current, dict):
            stack.extend(current.values())
        elif isinstance(current, list):
            stack.extend(current)
    return count
