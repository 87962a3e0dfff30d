"""Values as the API server decodes and validates them in Kubernetes' own kinds, beyond the grammars of names
(vocabulary/kubernetes.py): quantities as it parses them, environment variable names by version, and the words of
its range errors. `mpigen check`'s rules for built-in kinds judge with them (check/rules/quantities.py, pod_spec.py,
immutable.py)."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from typing import Any

from mpigen.vocabulary.kubernetes import exact, regex_error

# --- quantities as the API server reads them (apimachinery pkg/api/resource/quantity.go @
# 008b3652959ca58af8be3fb5b6ecfe9ae7638282: ParseQuantity, whose grammar the OpenAPI pattern above spells; a JSON
# number is read as its text). A quantity it cannot parse fails the whole request while it is decoded, before any
# validation, with ErrFormatWrong's words:
QUANTITY_FORMAT_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
_QUANTITY = re.compile(r"([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))((?:[KMGTPE]i)|[numkMGTPE]|[eE][+-]?[0-9]+)?")
_QUANTITY_SUFFIX: dict[str, Decimal] = {
    "": Decimal(1), "n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "k": Decimal(10**3),
    "M": Decimal(10**6), "G": Decimal(10**9), "T": Decimal(10**12), "P": Decimal(10**15), "E": Decimal(10**18),
    "Ki": Decimal(2**10), "Mi": Decimal(2**20), "Gi": Decimal(2**30), "Ti": Decimal(2**40), "Pi": Decimal(2**50),
    "Ei": Decimal(2**60)}
_EXPONENT_BOUND = 10**6
"""An exponent past this is refused here rather than computed (ParseQuantity caps a value at 2^63-1 of its scale
anyway, so no real quantity needs one)."""


def quantity_text(value: Any) -> str | None:
    """The text a quantity field holds: a string as written, a YAML number as JSON writes it; None for anything else
    (a boolean, a mapping), which the API server cannot decode as a quantity either."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return json.dumps(value) if value == value and abs(value) != float("inf") else None
    return None


@exact
def parse_quantity(value: Any) -> Decimal | None:
    """A quantity field's value as a number, exactly (`500m` -> 0.5, `1Gi` -> 1073741824, `1e3` -> 1000); None where
    the API server would refuse to decode it (`QUANTITY_FORMAT_ERROR`). Leading and trailing blanks are dropped, as
    ParseQuantity does."""
    text = quantity_text(value)
    match = _QUANTITY.fullmatch(text.strip()) if text is not None else None
    if match is None:
        return None
    number, suffix = Decimal(match.group(1)), match.group(2) or ""
    if suffix not in _QUANTITY_SUFFIX:  # an exponent (`E` alone is exa, `Ei` exbi)
        exponent = int(suffix[1:])
        return number.scaleb(exponent) if abs(exponent) <= _EXPONENT_BOUND else None
    return number * _QUANTITY_SUFFIX[suffix]


# --- environment variable names (apimachinery pkg/util/validation/validation.go @
# 008b3652959ca58af8be3fb5b6ecfe9ae7638282: IsEnvVarName, IsRelaxedEnvVarName, hasChDirPrefix) ------------------------
ENV_VAR_NAME_FORMAT = "[-._a-zA-Z][-._a-zA-Z0-9]*"
_ENV_VAR_NAME = re.compile(ENV_VAR_NAME_FORMAT)
_ENV_VAR_NAME_ERROR = ("a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or "
                       "'.', and must not start with a digit")
_RELAXED_ENV_VAR_NAME_ERROR = ("a valid environment variable name must consist only of printable ASCII characters "
                               "other than '='")
RELAXED_ENV_VAR_NAMES_FROM = (1, 32)
"""The Kubernetes version whose API server takes any printable ASCII name but '=' by default: the
RelaxedEnvironmentVariableValidation gate, alpha in 1.30, beta and on by default from 1.32, GA in 1.34
(kubernetes pkg/features/kube_features.go @ b0b89d3bd251db932ed5a7bef66039fb88acab64)."""


def env_var_name_problems(name: str, relaxed: bool) -> list[str]:
    """What the API server says of an env var name (or an envFrom prefix): with `relaxed`, printable ASCII but '='
    (IsRelaxedEnvVarName); otherwise C-identifier-like, and not `.`, `..` or `..`-prefixed (IsEnvVarName)."""
    if relaxed:
        return [_RELAXED_ENV_VAR_NAME_ERROR] if any(not " " <= c <= "~" or c == "=" for c in name) else []
    problems = [] if _ENV_VAR_NAME.fullmatch(name) else [regex_error(_ENV_VAR_NAME_ERROR, ENV_VAR_NAME_FORMAT,
                                                                      "my.env-name", "MY_ENV.NAME", "MyEnvName1")]
    if name == ".":
        problems.append("must not be '.'")
    elif name == "..":
        problems.append("must not be '..'")
    elif name.startswith(".."):
        problems.append("must not start with '..'")
    return problems


def inclusive_range_error(low: int, high: int) -> str:
    """apimachinery InclusiveRangeError."""
    return f"must be between {low} and {high}, inclusive"
