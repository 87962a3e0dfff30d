"""YAML as Kubernetes reads it, for `mpigen check`: what a manifest means to the cluster, not to YAML 1.2.

Kubernetes (and Helm, and Argo CD) read manifests with sigs.k8s.io/yaml, which is go-yaml v2 (YAML 1.1)
turned into JSON: `on`, `yes` and `y` are true, `0777` is 511, `1_000` is 1000, a timestamp stays the
string it was written as, a key is a string (`yes:` is "true"), and `<<` merges mappings. Reading the
same text as YAML 1.2 would judge another object than the one the cluster runs (`privileged: on`).

The tree is built from the C parser's events with an explicit stack, never by recursion, and within
limits that hostile text cannot pass: nesting depth (each level is one more event on the stack) and the
nodes aliases add (counted as they are made, before any code walks the tree). Each costs one pass.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import _ruamel_yaml

from mpigen.support.yamllimits import MAX_EXPANDED_NODES

MAX_MANIFEST_NESTING = 100
"""Deeper than any real object (the deepest upstream CRD, Kubeflow's TrainJob, nests 47 levels), and
shallow enough for every recursive walk after the parse (schema validation, rules, dumps) to stay far
from Python's recursion limit."""


class KubeYAMLError(Exception):
    """Text Kubernetes would refuse, or that exceeds a limit; `line` is 1-based, 0 when unknown."""

    def __init__(self, message: str, line: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


_BOOLS = {**dict.fromkeys(("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"), True),
          **dict.fromkeys(("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"), False)}
_NULLS = frozenset(("", "~", "null", "Null", "NULL"))
_SPECIAL_FLOATS = {**dict.fromkeys((".nan", ".NaN", ".NAN"), math.nan),
                   **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), math.inf),
                   **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), -math.inf)}
_YAML_STYLE_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_DOT_FLOAT = re.compile(r"\.[0-9]+([eE][-+]?[0-9]+)?")
_GO_DIGITS = {"0x": (16, "0123456789abcdefABCDEF"), "0o": (8, "01234567"), "0b": (2, "01")}
_INT64 = (-(1 << 63), (1 << 63) - 1)
_UINT64_MAX = (1 << 64) - 1
_TAG = "tag:yaml.org,2002:"
_RESOLVABLE_TAGS = frozenset(_TAG + t for t in ("str", "bool", "int", "float", "null", "timestamp"))


def _go_parse_int(text: str) -> int | None:
    """Go's strconv.ParseInt/ParseUint with base 0 (sign, then 0x, 0o, 0b or a leading 0 for octal)."""
    sign, body = (-1, text[1:]) if text.startswith("-") else (1, text[1:] if text.startswith("+") else text)
    base, digits = 10, "0123456789"
    prefix = body[:2].lower()
    if prefix in _GO_DIGITS:
        base, digits = _GO_DIGITS[prefix]
        body = body[2:]
    elif len(body) > 1 and body.startswith("0"):
        base, digits = 8, "01234567"
        body = body[1:]
    if not body or len(body) > 70 or any(c not in digits for c in body):
        return None
    value = sign * int(body, base)
    if _INT64[0] <= value <= _INT64[1] or (sign > 0 and value <= _UINT64_MAX):
        return value
    return None


def _json_number(value: float) -> int | float:
    """What a Go float64 becomes after sigs.k8s.io/yaml's JSON round trip: whole numbers below 1e21 print
    without a dot or exponent, and Kubernetes reads them back as integers."""
    return int(value) if value.is_integer() and abs(value) < 1e21 else value


def resolve_plain(text: str) -> Any:
    """The value of an untagged plain scalar, by go-yaml v2's rules (resolve.go)."""
    if text in _BOOLS:
        return _BOOLS[text]
    if text in _NULLS:
        return None
    if text in _SPECIAL_FLOATS:
        return _SPECIAL_FLOATS[text]
    first = text[0]
    if first == ".":
        return _json_number(float(text)) if _DOT_FLOAT.fullmatch(text) else text
    if first in "+-0123456789":
        plain = text.replace("_", "")
        number = _go_parse_int(plain)
        if number is not None:
            return number
        if _YAML_STYLE_FLOAT.fullmatch(plain):
            value = float(plain)
            if not math.isinf(value):
                return _json_number(value)
    return text  # timestamps included: go-yaml v2 gives them to interface{} as the string written


def _scalar(event: Any) -> Any:
    tag = event.tag
    value: str = event.value
    if tag is None:
        return resolve_plain(value) if event.implicit[0] and value else (None if event.implicit[0] else value)
    if tag not in _RESOLVABLE_TAGS or tag in (_TAG + "str", _TAG + "timestamp"):
        return value  # go-yaml v2 keeps an unknown tag's text, and `!!str` forces a string
    resolved = resolve_plain(value) if value else None
    wanted = tag[len(_TAG):]
    kinds: dict[str, type] = {"bool": bool, "null": type(None)}
    ok = (isinstance(resolved, kinds[wanted]) if wanted in kinds
          else isinstance(resolved, int) and not isinstance(resolved, bool) if wanted == "int"
          else isinstance(resolved, (int, float)) and not isinstance(resolved, bool))
    if not ok:
        raise KubeYAMLError(f"cannot read `{value[:40]}` as !!{wanted}", event.start_mark.line + 1)
    return _json_number(float(resolved)) if wanted == "float" and resolved is not None else resolved


def _key_text(key: Any, line: int) -> str:
    """A mapping key as sigs.k8s.io/yaml makes it a JSON object key."""
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, str):
        return key
    if isinstance(key, int) and _INT64[0] <= key <= _INT64[1]:
        return str(key)
    if isinstance(key, float):
        return {math.inf: ".inf", -math.inf: "-.inf"}.get(key, ".nan" if math.isnan(key) else f"{key:g}")
    raise KubeYAMLError("a mapping key must be a string, number or boolean (Kubernetes cannot read this key)",
                        line)


@dataclass
class _Open:
    """A collection being built: its value, its expanded size so far, and for mappings the pending key."""

    value: Any
    anchor: str | None
    size: int = 1
    key: Any = None
    has_key: bool = False
    merging: bool = False
    explicit: set[str] | None = None


_MERGE = object()


def _is_merge_key(event: Any) -> bool:
    return event.tag is None and event.implicit[0] and event.value == "<<"


def load_all(text: str, max_depth: int = MAX_MANIFEST_NESTING,
             max_added_nodes: int = MAX_EXPANDED_NODES) -> list[Any]:
    """Every document of `text`, as Kubernetes reads it. Raises KubeYAMLError (limits, keys, tags) or
    ruamel's YAMLError (syntax)."""
    parser = _ruamel_yaml.CParser(text)
    reader = _Reader(max_depth, max_added_nodes)
    try:
        while reader.read(parser.get_event()):
            pass
    finally:
        parser.dispose()
    return reader.documents


class _Reader:
    """Builds documents from parser events with an explicit stack, counting nodes as they are made."""

    def __init__(self, max_depth: int, max_added_nodes: int) -> None:
        self.max_depth, self.max_added_nodes = max_depth, max_added_nodes
        self.documents: list[Any] = []
        self.stack: list[_Open] = []
        self._start_document()

    def _start_document(self) -> None:
        self.anchors: dict[str, tuple[Any, int]] = {}
        self.root: Any = None
        self.written = 0  # nodes as written; aliases may add at most `max_added_nodes` beyond them
        self.expanded = 0

    def read(self, event: Any) -> bool:
        """Take one event; False once the stream ends."""
        name = type(event).__name__
        line = event.start_mark.line + 1
        if name == "StreamEndEvent":
            return False
        if name == "DocumentStartEvent":
            self._start_document()
        elif name == "DocumentEndEvent":
            self.documents.append(self.root)
        elif name in ("SequenceStartEvent", "MappingStartEvent"):
            self._open(event, name == "MappingStartEvent", line)
        elif name in ("SequenceEndEvent", "MappingEndEvent"):
            done = self.stack.pop()
            if done.anchor is not None:
                self.anchors[done.anchor] = (done.value, done.size)
            self._finish(done.value, done.size, line)
        elif name == "AliasEvent":
            self._finish(*self._alias(event, line), line)
        elif name == "ScalarEvent":
            self._finish(self._scalar_node(event), 1, line)
        return True

    def _open(self, event: Any, mapping: bool, line: int) -> None:
        if len(self.stack) >= self.max_depth:
            raise KubeYAMLError(f"lists and mappings nest more than {self.max_depth} deep", line)
        self.written += 1
        self.expanded += 1
        self.stack.append(_Open({} if mapping else [], event.anchor, explicit=set() if mapping else None))

    def _alias(self, event: Any, line: int) -> tuple[Any, int]:
        if event.anchor not in self.anchors:
            raise KubeYAMLError(f"alias *{event.anchor} names no anchor before it", line)
        value, size = self.anchors[event.anchor]
        self.expanded += size
        if self.expanded > self.written + self.max_added_nodes:
            raise KubeYAMLError(f"YAML aliases expand to more than {self.max_added_nodes} nodes beyond those "
                                "written; write the values out instead of nesting anchors and aliases", line)
        return value, size

    def _scalar_node(self, event: Any) -> Any:
        self.written += 1
        self.expanded += 1
        parent = self.stack[-1] if self.stack else None
        merge = parent is not None and isinstance(parent.value, dict) and not parent.has_key and _is_merge_key(event)
        value = _MERGE if merge else _scalar(event)
        if event.anchor is not None:
            self.anchors[event.anchor] = (value, 1)
        return value

    def _finish(self, value: Any, size: int, line: int) -> None:
        """A node is complete: the document's root, or the next item of the collection it is in."""
        if self.stack:
            _add(self.stack[-1], value, size, line)
        else:
            self.root = value


def _add(parent: _Open, value: Any, size: int, line: int) -> None:
    """Put a finished node into the collection being built."""
    parent.size += size
    is_key = isinstance(parent.value, dict) and not parent.has_key
    if isinstance(value, float) and not math.isfinite(value) and not is_key:
        raise KubeYAMLError(f"{value} is not a number JSON can hold: Kubernetes cannot read it; quote it if you "
                            "mean the text", line)
    if isinstance(parent.value, list):
        parent.value.append(value)
        return
    if not parent.has_key:
        parent.key, parent.has_key = value, True
        return
    key, parent.has_key = parent.key, False
    if key is _MERGE:
        sources = value if isinstance(value, list) else [value]
        if not all(isinstance(s, dict) for s in sources):
            raise KubeYAMLError("`<<` merges only mappings, or a list of mappings", line)
        for source in reversed(sources):  # go-yaml v2: earlier mappings in the list win; later keys overwrite
            parent.value.update(source)
        return
    if isinstance(key, (dict, list)) or key is None:
        raise KubeYAMLError("a mapping key must be a string, number or boolean (Kubernetes cannot read this key)",
                            line)
    text = _key_text(key, line)
    assert parent.explicit is not None
    if text in parent.explicit:
        raise KubeYAMLError(f"duplicate key `{text[:60]}`: Kubernetes keeps only one of them; remove the other",
                            line)
    parent.explicit.add(text)
    parent.value[text] = value
