"""One Kubernetes object of a chart and the template file it lives in."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Manifest:
    template: str
    obj: dict[str, Any]
