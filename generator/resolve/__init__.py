"""Stage 3: turn validated profiles into the frozen model, filling defaults and derived values.

Runs only on profiles `validate` passed; a lookup that fails here is a bug, not a user error.
"""

from __future__ import annotations

from mpigen.resolve.fleet import resolve

__all__ = ["resolve"]
