"""Characters no profile string may hold, wherever it stands: one pass over every key and value.

Control characters reach the charts from YAML escapes (`"\\x7f"`, `"\\0"`): a DEL or NUL in an image
makes a chart Helm cannot render, a C1 character (NEL) breaks a line in some readers, and bidi controls
(U+202E RIGHT-TO-LEFT OVERRIDE...) make a reviewer read `program` or a reason differently from what
runs. A lone surrogate (`"\\ud800"`) cannot even be written out as UTF-8. A value may hold a tab or a
newline (a script in `launcherCommand`, a description); a key may not.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from mpigen.load import ProfileFile
from mpigen.support.diagnostics import BIDI_CONTROLS, LINE_SEPARATORS, SURROGATES, Diagnostic, raises
from mpigen.support.profile_rules import CHARACTERS
from mpigen.validate.fields import field_name

_OTHERS = "\x7f-\x9f" + "".join(sorted(BIDI_CONTROLS | LINE_SEPARATORS)) + SURROGATES
FORBIDDEN_IN_VALUES = re.compile(f"[\x00-\x08\x0b-\x1f{_OTHERS}]")
FORBIDDEN_IN_KEYS = re.compile(f"[\x00-\x1f{_OTHERS}]")


def describe(ch: str) -> str:
    """`U+202E RIGHT-TO-LEFT OVERRIDE`, or `U+007F, a control character` where Unicode gives no name."""
    if "\ud800" <= ch <= "\udfff":
        return f"U+{ord(ch):04X}, half of a UTF-16 surrogate pair, not a character"
    name = unicodedata.name(ch, "")
    return f"U+{ord(ch):04X} {name}" if name else f"U+{ord(ch):04X}, a control character"


def profile_strings(node: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...], str, bool]]:
    """(path, text, is a key) for every string of a profile tree, keys included."""
    if isinstance(node, CommentedMap):
        for key, value in node.items():
            if isinstance(key, str):
                yield (*path, key), key, True
            yield from profile_strings(value, (*path, str(key)))
    elif isinstance(node, CommentedSeq):
        for index, value in enumerate(node):
            yield from profile_strings(value, (*path, index))
    elif isinstance(node, str):
        yield path, node, False


@raises(CHARACTERS)
def check_characters(document: ProfileFile) -> list[Diagnostic]:
    """Every key and value of `document` that holds a character it may not, at its place, naming it."""
    found: list[Diagnostic] = []
    for path, text, key in profile_strings(document.data):
        match = (FORBIDDEN_IN_KEYS if key else FORBIDDEN_IN_VALUES).search(text)
        if match is None:
            continue
        ch, index = match.group(), match.start()
        what = f"key {field_name(path)}" if key else field_name(path)
        found.append(Diagnostic(document.location(*path, at_key=key),
                                f"{what} holds {describe(ch)} (character {index + 1}), which no manifest may carry",
                                "delete it" + ("; a line ends with a newline alone" if ch == "\r" and not key else "")))
    return found
