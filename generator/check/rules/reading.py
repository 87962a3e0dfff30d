"""Reading untrusted rendered objects without raising: the rules skip what they cannot read, the schema check reports it."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from generator.check.findings import Document, json_path

Path = tuple[str | int, ...]

_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def path_of(parts: Iterable[str | int]) -> str:
    """`json_path`, with keys such as `nvidia.com/gpu` written `["nvidia.com/gpu"]` instead of split at dots."""
    text = ""
    for part in parts:
        text += f"[{json.dumps(part)}]" if isinstance(part, str) and not _PLAIN_KEY.match(part) else json_path([part])
    return text


def as_dict(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def as_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def as_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def metadata_name(document: Document) -> str:
    """metadata.name when it is a string ('' otherwise: Document.name would stringify other types)."""
    metadata = as_dict(document.obj.get("metadata"))
    return (as_str(metadata.get("name")) or "") if metadata else ""
