"""Go's and k8s.io/apimachinery's error texts, so findings read as the operator and the API server word them.

Sources: see rules/mpi_operator.py (field/errors.go, validation.go, generic.go).
"""

from __future__ import annotations

from collections.abc import Iterable

NONNEGATIVE = "must be greater than or equal to 0"


def go_quote(text: str) -> str:
    """Go's strconv.Quote / %q of a string."""
    escapes = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
               '"': '\\"', "\\": "\\\\"}
    out = []
    for char in text:
        code = ord(char)
        if char in escapes:
            out.append(escapes[char])
        elif char.isprintable():
            out.append(char)
        elif code < 0x80:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return '"' + "".join(out) + '"'


def go_json_string(text: str) -> str:
    """Go's json.Marshal of a string (HTML-safe escaping), how a named string type prints as a bad value."""
    escapes = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}
    out = []
    for char in text:
        code = ord(char)
        if char in escapes:
            out.append(escapes[char])
        elif code < 0x20 or char in "<>&" or code in (0x2028, 0x2029):
            out.append(f"\\u{code:04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def field_required(field: str, detail: str) -> str:
    return f"{field}: Required value: {detail}"


def field_invalid(field: str, shown_value: str, detail: str) -> str:
    return f"{field}: Invalid value: {shown_value}: {detail}"


def field_not_supported(field: str, shown_value: str, valid: Iterable[str], in_order: bool = False) -> str:
    """field.NotSupported; `in_order`: the values as the caller lists them (a literal list), not sorted (a set's)."""
    supported = ", ".join(go_quote(v) for v in (valid if in_order else sorted(valid)))
    return f"{field}: Unsupported value: {shown_value}: supported values: {supported}"


