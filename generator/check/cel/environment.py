"""The CEL environment a CRD's `x-kubernetes-validations` rules compile in, as the API server offers it: standard CEL
with the strings, optional and bindings extensions and the Kubernetes library functions that return plain values
(generator/check/cel/library.py), in the C++ CEL implementation's Python bindings (cel-expr-python).

Each rule text is compiled once per process (`compile_rule`). A rule that does not compile here is not faked: it is
`Unsupported`, with the reason `--explain-rules` lists (the bindings not installed, a Kubernetes library function
that returns an opaque type the bindings cannot return, two-variable comprehensions).

Upstream: kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/cel/environment/base.go
@ 00c30b354df7afc15258ecdbdd629555d200de5a (the libraries of the base environment: ext.Strings, cel.OptionalTypes,
ext.Bindings, library.Lists, Regex, URLs, Quantity, IP, CIDR, Format, SemverLib, Sets, TwoVarComprehensions).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from mpigen.check.cel.library import LIBRARY, Overloading

SELF, OLD_SELF = "self", "oldSelf"

# Libraries of the Kubernetes CEL environment whose functions return an opaque type (URL, Quantity, IP, CIDR,
# Semver, Format): cel-expr-python 0.1 cannot return a value of a type it does not know ("Unimplemented type"), so a
# rule that calls one is unsupported, never evaluated with a stand-in.
OPAQUE_FUNCTIONS = {"url": "URL", "quantity": "Quantity", "ip": "IP", "cidr": "CIDR", "semver": "Semver",
                    "format": "Format"}
# Their checks that return a bool could be written here, but only with each library's exact parsing (Go's
# net/url, net/netip, resource.ParseQuantity, semver): not done, so unsupported too.
UNWRITTEN_FUNCTIONS = {"isURL": "url", "isIP": "ip", "isCIDR": "cidr", "isSemver": "semver", "isQuantity": "quantity"}
# The lists library's indexOf and lastIndexOf share their names with the strings extension's; the bindings take
# one declaration of a name, so the strings' stand, and a rule calling either (on a list or a string: which, only
# its evaluation would tell) is unsupported rather than risk a wrong verdict.
_SHADOWED = re.compile(r"\b(?:indexOf|lastIndexOf)\s*\(")
_UNDECLARED = re.compile(r"undeclared reference to '([^']+)'")


@dataclass(frozen=True)
class Compiled:
    """A rule (or messageExpression) compiled once; `program` is the bindings' Expression."""

    text: str
    program: Any


@dataclass(frozen=True)
class Unsupported:
    """Why a rule cannot be evaluated by mpigen (said by `check --explain-rules` and in the report's notes)."""

    reason: str


@cache
def bindings_problem() -> str | None:
    """Why the CEL bindings cannot be used here (not installed: no wheel for this platform or Python); None: usable."""
    try:
        from cel_expr_python import cel  # noqa: F401
    except ImportError:
        return ("the CEL library (cel-expr-python) is not installed: it has wheels for CPython 3.11-3.13 on Linux "
                "x86_64, macOS and Windows only")
    return None


@cache
def _environment() -> Any:
    """The bindings' Env: `self` and `oldSelf` of any type, the extensions and the library functions."""
    from cel_expr_python import cel
    from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings

    return cel.NewEnv(variables={SELF: cel.Type.DYN, OLD_SELF: cel.Type.DYN},
                      extensions=[ext_strings.ExtStrings(), ext_optional.ExtOptional(), ext_bindings.ExtBindings()],
                      functions=[_declaration(cel, name, overloads) for name, overloads in LIBRARY.items()])


def _declaration(cel: Any, name: str, overloads: tuple[Overloading, ...]) -> Any:
    types = {"bool": cel.Type.BOOL, "int": cel.Type.INT, "string": cel.Type.STRING, "dyn": cel.Type.DYN,
             "list": cel.Type.List(cel.Type.DYN), "list_string": cel.Type.List(cel.Type.STRING)}
    return cel.FunctionDecl(name, [cel.Overload(o.id, types[o.returns], [types[p] for p in o.parameters],
                                                is_member=o.member, impl=o.impl) for o in overloads])


@cache
def compile_rule(text: str) -> Compiled | Unsupported:
    """A rule or messageExpression compiled, once per process; Unsupported with the reason where it cannot be."""
    problem = bindings_problem()
    if problem is not None:
        return Unsupported(problem)
    if _SHADOWED.search(text):
        return Unsupported("calls indexOf() or lastIndexOf(): mpigen's CEL bindings have the strings extension's "
                           "(on strings) and cannot add the lists library's (on lists) beside them")
    try:
        return Compiled(text, _environment().compile(text))
    except RuntimeError as error:
        return Unsupported(_why_not(str(error)))


def _why_not(error: str) -> str:
    """A compile error in words: the library it needs, or the bindings' own first line."""
    for name in _UNDECLARED.findall(error):
        if name in OPAQUE_FUNCTIONS:
            return (f"uses {name}() of the Kubernetes {name} library, whose {OPAQUE_FUNCTIONS[name]} type mpigen's CEL "
                    "bindings cannot return")
        if name in UNWRITTEN_FUNCTIONS:
            return (f"uses {name}() of the Kubernetes {UNWRITTEN_FUNCTIONS[name]} library, which mpigen does not "
                    "evaluate (it would need that library's exact parsing)")
    if "undeclared reference to 'all'" in error or "undeclared reference to 'exists'" in error:
        return "uses a two-variable comprehension, which mpigen's CEL bindings do not compile"
    first = error.splitlines()[0] if error else "unknown error"
    return f"does not compile in mpigen's CEL bindings: {first.removeprefix('INVALID_ARGUMENT: ')}"


def evaluate(compiled: Compiled, variables: dict[str, Any]) -> tuple[Any, str | None]:
    """(the result as a Python value, None), or (None, the evaluation error in the API server's words)."""
    from cel_expr_python import cel

    try:
        result = compiled.program.eval(data=variables)
    except (RuntimeError, ValueError, TypeError, OverflowError) as error:  # a value the bindings cannot take in
        return None, _go_error(str(error))
    if result.type() == cel.Type.ERROR:
        return None, _go_error(str(result.value()))
    return result.value(), None


# cel-cpp's runtime errors, in cel-go's words (what the API server says): cel-go common/types/err.go and
# interpreter, as quoted in apiextensions-apiserver pkg/apiserver/schema/cel/validation.go ("no such key: {key},
# index out of bounds: {index}, integer overflow, division by zero, ...").
_GO_ERRORS = (
    (re.compile(r'Key not found in map : "?(.*?)"?$'), lambda m: f"no such key: {m[1]}"),
    (re.compile(r"Index error: index=(-?\d+) size=\d+"), lambda m: f"index out of bounds: {m[1]}"),
    (re.compile(r"No matching overloads found : (.*)"), lambda m: f"no such overload: {m[1]}"),
    (re.compile(r"divide by zero"), lambda m: "division by zero"),
    (re.compile(r"modulus by zero"), lambda m: "modulus by zero"),
)
_STATUS = re.compile(r"^[A-Z_]+: ")


def _go_error(text: str) -> str:
    text = _STATUS.sub("", text)
    for pattern, words in _GO_ERRORS:
        match = pattern.search(text)
        if match:
            return words(match)
    return text
