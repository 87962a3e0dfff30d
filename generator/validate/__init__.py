"""Stage 2: every problem of every profile in one pass, schema first, then cross-references."""

from __future__ import annotations

from mpigen.validate.profiles import validate

__all__ = ["validate"]
