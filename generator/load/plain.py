"""A profile's YAML tree as plain JSON-like values, the form every later stage reads."""

from __future__ import annotations

import math
from typing import Any

from ruamel.yaml.scalarbool import ScalarBoolean

EXACT_FLOAT_INTEGERS = 2**53
"""Beyond this a float no longer holds every whole number: `1e300` stays a float (and schema maxima refuse it)."""


def to_plain(data: Any) -> Any:
    """The YAML tree as plain JSON-like values (keys are text already: see `ProfileConstructor`).

    A whole number written as a float (`4.0`, `1e3`) is that integer: it means the same in JSON, and a chart
    must not say `replicas: 1000.0`, which Kubernetes refuses for an integer field. A boolean with an anchor
    (`&ro true`) is ruamel's int subclass: it is a bool here.
    """
    if isinstance(data, dict):
        return {str(k): to_plain(v) for k, v in data.items()}
    if isinstance(data, list):
        return [to_plain(v) for v in data]
    if isinstance(data, (bool, ScalarBoolean)):
        return bool(data)
    if data is None:
        return None
    if isinstance(data, int):
        return int(data)
    if isinstance(data, float):
        whole = math.isfinite(data) and data.is_integer() and abs(data) <= EXACT_FLOAT_INTEGERS
        return int(data) if whole else float(data)
    return str(data)
