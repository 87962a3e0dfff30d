"""One profile's bytes to its YAML tree: UTF-8, one document, one mapping, within the limits on nesting and on
what aliases expand to, and nothing tagged. Every refusal is one diagnostic at the place it concerns."""

from __future__ import annotations

import warnings
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.error import MarkedYAMLError, YAMLError, YAMLWarning
from ruamel.yaml.reader import ReaderError

from mpigen.load.constructor import ProfileConstructor
from mpigen.load.cparse import parse_plain
from mpigen.load.document import ProfileFile, node_position, one_based
from mpigen.load.problems import first_odd_node, yaml_problem, yaml_warning
from mpigen.load.reading import too_big
from mpigen.support.diagnostics import Diagnostic, Location
from mpigen.support.yamllimits import MAX_EXPANDED_NODES, MAX_FILE_BYTES, MAX_NESTING
from mpigen.support.yamllimits import expanded_size as _expanded_size
from mpigen.support.yamllimits import line_column as _line_column
from mpigen.support.yamllimits import too_deep as _too_deep


class _Refused(Exception):
    """Why the file is not a profile, and where: ends the load with one diagnostic."""

    def __init__(self, message: str, hint: str = "", line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.message, self.hint, self.line, self.column = message, hint, line, column


def load_bytes(raw: bytes, path: str, source: str) -> tuple[ProfileFile | None, list[Diagnostic]]:
    if len(raw) > MAX_FILE_BYTES:
        return None, [too_big(path, len(raw))]
    try:
        text = _decode(raw)
        data = _one_mapping(_parse(text))
        _check_expansion(data)
        odd = first_odd_node(data)
        if odd is not None:
            (line, column), message, hint = odd
            raise _Refused(message, hint, line, column)
    except _Refused as refused:
        return None, [Diagnostic(Location(path, refused.line, refused.column), refused.message, refused.hint)]
    return ProfileFile(path=path, source=source, data=data, lines=tuple(text.splitlines())), []


def _decode(raw: bytes) -> str:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        prefix = raw[:exc.start].decode("utf-8")  # valid: the decoder stopped after it
        line, column = _line_column(prefix, len(prefix))
        raise _Refused(f"byte 0x{raw[exc.start]:02x} is not valid UTF-8", "save the file as UTF-8",
                       line, column) from None
    return text[1:] if text.startswith("\ufeff") else text


def _parse(text: str) -> list[Any]:
    """The file's YAML documents, empty ones left out: at C speed where the file is plain (cparse.py), else by
    ruamel.yaml's pure-Python reader, whose messages and marks the diagnostics below are built on."""
    too_deep = _too_deep(text)
    if too_deep is not None:
        what, line, column = too_deep
        raise _Refused(f"{what} nest more than {MAX_NESTING} deep", "a profile needs no such nesting", line, column)
    plain = parse_plain(text)
    if plain is not None:
        return plain
    yaml = YAML(typ="rt", pure=True)
    yaml.Constructor = ProfileConstructor
    yaml.allow_duplicate_keys = False
    caught: list[warnings.WarningMessage] | None = None
    try:
        with warnings.catch_warnings(record=True) as caught:
            # The parser's warnings are the file's problems, and the first ends the parse: recording each of
            # 170,000 reused anchors on a 1 MiB line took 13 s, to report only the first.
            warnings.simplefilter("error", YAMLWarning)
            documents = list(yaml.load_all(text))
    except YAMLWarning as warning:
        _pass_on(caught)
        line, column, message, hint = yaml_warning(warning)
        raise _Refused(message, hint, line, column) from None
    except MarkedYAMLError as exc:
        mark, message, hint = yaml_problem(exc)
        line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        raise _Refused(message, hint, line, column) from None
    except ReaderError as exc:  # a character YAML does not allow anywhere, e.g. NUL: its position, no mark
        line, column = _line_column(text, int(exc.position))
        code = int(exc.character)
        escape = f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"
        raise _Refused(f"character U+{code:04X} is not allowed in YAML",
                       f'delete it, or write it as the escape "{escape}" inside a double-quoted string',
                       line, column) from None
    except YAMLError as exc:
        raise _Refused(f"not valid YAML: {' '.join(str(exc).split())}") from None
    except RecursionError:  # deeper than _too_deep counts (e.g. nesting within one flow item): no position
        raise _Refused("lists and mappings nest too deep", "a profile needs no such nesting") from None
    _pass_on(caught)
    return [d for d in documents if d is not None]


def _one_mapping(documents: list[Any]) -> CommentedMap:
    if not documents:
        raise _Refused("file is empty", "a profile needs at least apiVersion, kind and name")
    if len(documents) > 1:
        line, column = node_position(documents[1])
        raise _Refused(f"file holds {len(documents)} YAML documents",
                       "put one profile in each file and remove the `---` separators", line, column)
    data = documents[0]
    if not isinstance(data, CommentedMap):
        raise _Refused("a profile must be a mapping of keys to values",
                       "start with `apiVersion: mpigen/v1alpha1` and `kind:`")
    return data


def _check_expansion(data: CommentedMap) -> None:
    """Refuse a tree whose aliases expand past MAX_EXPANDED_NODES, at the key whose value passes it."""
    count = 1
    for key, value in data.items():  # key by key, to point at the one whose value blows the budget
        count += 1 + _expanded_size(value, MAX_EXPANDED_NODES - count)
        if count > MAX_EXPANDED_NODES:
            line, column = one_based(data.lc.value(key))
            raise _Refused(f"YAML aliases expand to more than {MAX_EXPANDED_NODES} nodes",
                           "write the values out instead of nesting anchors and aliases", line, column)


def _pass_on(caught: list[warnings.WarningMessage] | None) -> None:
    """Warnings other than the parser's (a library's DeprecationWarning) are not ours to judge: pass them on."""
    for warning in caught or ():
        warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
