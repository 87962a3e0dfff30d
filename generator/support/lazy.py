"""Names of a package imported on first use: a package whose modules load heavy stages (the YAML parser, the
validators) re-exports them without importing them, so a command that needs none of them starts at once."""

from __future__ import annotations

import importlib
import sys
from typing import Any


def lazy_name(package: str, homes: dict[str, str], name: str) -> Any:
    """What a package's `__getattr__` answers: `name` imported from its module in `homes` (where it lives), then kept
    in the package like any other name; AttributeError for a name that is not there."""
    if name not in homes:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(homes[name]), name)
    setattr(sys.modules[package], name, value)
    return value
