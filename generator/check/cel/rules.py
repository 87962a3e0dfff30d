"""Judging one object by its CRD's CEL rules, as the API server does on create (and, given the live object, on
update): each rule evaluated at every instance of its node, a false result or an evaluation error a finding in the
server's words, and what could not be judged handed back to be said in the report's notes.

Upstream: apiextensions-apiserver pkg/apiserver/schema/cel/validation.go @ 00c30b354df7afc15258ecdbdd629555d200de5a:
validateExpressions (a transition rule only where an old value correlates; "<err> evaluating rule: <rule>";
messageExpression trimmed, non-empty, one line, else the message; ruleMessageOrDefault "failed rule: <rule>";
fieldErrorForReason), validateMap (old values of a map correlate unless its x-kubernetes-map-type is another than
granular or atomic), validateArray (list items correlate by their keys in lists of x-kubernetes-list-type map
only); k8s.io/apimachinery pkg/util/validation/field errors.go (Error(): "<field>: <body>", "<nil>" for the root;
"Invalid value: <%q of the type>", "Forbidden", "Required value", "Duplicate value").
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from mpigen.check.cel.environment import OLD_SELF, SELF, Compiled, compile_rule, evaluate
from mpigen.check.cel.tree import CrdRule, RuleNode, without_strings
from mpigen.check.cel.values import as_cel, escape, present, type_name
from mpigen.check.rules.goerrors import go_quote

Path = tuple[str | int, ...]
_CORRELATED_MAPS = (None, "granular", "atomic")
_MESSAGE_LIMIT = 5 * 1024  # k8s.io/apiserver pkg/apis/cel config.go MaxEvaluatedMessageExpressionSizeBytes


@dataclass(frozen=True)
class RuleFailure:
    """One finding: where in the object (`path`), and the server's whole message (field path first)."""

    path: Path
    message: str


@dataclass
class Judgement:
    """What judging one object found: failures, and the rules not evaluated for want of the live object."""

    failures: list[RuleFailure] = field(default_factory=list)
    without_old: list[CrdRule] = field(default_factory=list)
    shows_values: bool = True


@dataclass(frozen=True)
class _Place:
    """A node being judged: the object path, the server's field path (map keys as `[key]`), value and old value."""

    path: Path
    field: str
    value: Any
    old: Any


def judge_object(tree: RuleNode, obj: Any, old: Any, live_given: bool, root: bool = True,
                 shows_values: bool = True) -> Judgement:
    """Every rule of `tree` over `obj` (a custom resource, as given; `root` False: a value at a node below one);
    `old` is the live object or None, and `live_given` whether one was given at all (else a transition rule is
    noted as not checked). `shows_values`: a failed rule's message shows the value that failed, as the API server
    does from Kubernetes 1.35 (`spec.queue: Invalid value: "a": ...`), else the value's type (`Invalid value:
    "string"`), as before."""
    judgement = Judgement(shows_values=shows_values)
    _judge(tree, _Place((), "", obj, old), root, live_given, judgement)
    return judgement


def _judge(tree: RuleNode, place: _Place, root: bool, live_given: bool, judgement: Judgement) -> None:
    if place.value is None:  # the server validates non-null values only
        return
    if tree.rules:
        _evaluate_rules(tree, place, root, live_given, judgement)
    value, old = place.value, place.old
    if isinstance(value, dict):
        old_map = old if isinstance(old, dict) and tree.schema.get("x-kubernetes-map-type") in _CORRELATED_MAPS else None
        for name, child in tree.properties:
            there, item = present(value, name, child.schema)
            if there:
                _, old_item = present(old_map, name, child.schema) if old_map is not None else (False, None)
                _judge(child, _Place((*place.path, name), _child(place.field, name), item, old_item), False,
                       live_given, judgement)
        if tree.values is not None:
            for key, item in value.items():
                old_item = old_map.get(key) if old_map is not None else None
                _judge(tree.values, _Place((*place.path, key), f"{place.field}[{key}]", item, old_item), False,
                       live_given, judgement)
    elif isinstance(value, list) and tree.items is not None:
        olds = _correlated_items(tree.schema, value, old)
        for index, item in enumerate(value):
            _judge(tree.items, _Place((*place.path, index), f"{place.field}[{index}]", item, olds[index]), False,
                   live_given, judgement)


def _child(field_path: str, name: str) -> str:
    return f"{field_path}.{name}" if field_path else name


def _correlated_items(schema: Mapping[str, Any], items: list[Any], old: Any) -> list[Any]:
    """The old item each item is compared with: that of the same keys in a list of type map, else none."""
    keys = schema.get("x-kubernetes-list-map-keys") or ()
    if schema.get("x-kubernetes-list-type") != "map" or not isinstance(old, list) or not keys:
        return [None] * len(items)

    def key_of(item: Any) -> tuple[Any, ...] | None:
        return tuple(repr(item.get(k)) for k in keys) if isinstance(item, dict) else None

    by_key = {key_of(item): item for item in old if key_of(item) is not None}
    return [by_key.get(key_of(item)) if key_of(item) is not None else None for item in items]


def _evaluate_rules(tree: RuleNode, place: _Place, root: bool, live_given: bool, judgement: Judgement) -> None:
    """The node's own rules. `self` (and `oldSelf`) are built once for all of them."""
    variables: dict[str, Any] | None = None
    for rule in tree.rules:
        compiled = compile_rule(rule.text)
        if not isinstance(compiled, Compiled) or rule.optional_old_self or rule.reads_typed:
            continue  # unsupported: listed by --explain-rules and said in a note (crd_rules.py)
        if rule.transition and place.old is None:
            if not live_given:
                judgement.without_old.append(rule)
            continue  # the server too evaluates a transition rule only against a correlated old value
        if variables is None:
            read = _read_properties(tree)
            variables = {SELF: as_cel(_only(place.value, read), tree.schema, root)}
        if rule.transition and OLD_SELF not in variables:
            variables[OLD_SELF] = as_cel(_only(place.old, _read_properties(tree)), tree.schema, root)
        result, error = evaluate(compiled, variables)
        failure = _failure(tree, place, rule, variables, result, error, judgement.shows_values)
        if failure is not None:
            judgement.failures.append(failure)


_WHOLE = re.compile(r"\b(?:self|oldSelf)\b(?!\s*\??\.)")
"""`self` or `oldSelf` used whole (compared, indexed, passed on), not only as the holder of a field."""
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_READ: dict[int, tuple[RuleNode, frozenset[str] | None]] = {}


def _read_properties(tree: RuleNode) -> frozenset[str] | None:
    """The properties of an object node its rules (and message expressions) can read, by the names their code holds
    (escaped or not); None where one uses `self` or `oldSelf` whole, so the whole value is built. `self` is built once
    per object node a rule sits at: leaving out what no rule names keeps a root rule on `metadata.name` from building
    the whole object. Worked out once per node for the process."""
    known = _READ.get(id(tree))
    if known is not None and known[0] is tree:
        return known[1]
    codes = [without_strings(text) for rule in tree.rules for text in (rule.text, rule.message_expression) if text]
    read: frozenset[str] | None = None
    if not any(_WHOLE.search(code) for code in codes):
        names = {name for code in codes for name in _NAME.findall(code)}
        read = frozenset(name for name in (tree.schema.get("properties") or {})
                         if name in names or escape(name) in names)
    _READ[id(tree)] = (tree, read)
    return read


def _only(value: Any, read: frozenset[str] | None) -> Any:
    """An object with only the properties `read` names (all of it where `read` is None, or it is no object)."""
    if read is None or not isinstance(value, dict):
        return value
    return {name: item for name, item in value.items() if name in read}


def _failure(tree: RuleNode, place: _Place, rule: CrdRule, variables: dict[str, Any], result: Any,
             error: str | None, shows_values: bool) -> RuleFailure | None:
    if error is None and result is True:
        return None
    shown = place.field or "<nil>"
    kind = go_quote(type_name(tree.schema))
    if error is not None:
        if error.startswith("no such overload"):
            detail = (f"'{error}': call arguments did not match a supported operator, function or macro signature "
                      f"for rule: {rule.label}")
        else:
            detail = f"{error} evaluating rule: {rule.label}"
        return RuleFailure(place.path, f"{shown}: Invalid value: {kind}: {detail}")
    if result is True:
        return None
    path, field_path = place.path, place.field
    if rule.field_path:
        more = _normalized(rule.field_path)
        path, field_path = (*path, *more), field_path + "".join(f".{part}" for part in more)
        field_path = field_path.lstrip(".")
    shown = field_path or "<nil>"
    detail = _message_expression(rule, variables) or (rule.message.strip() or f"failed rule: {rule.text.strip()}")
    reason = rule.reason
    if reason == "FieldValueForbidden":
        return RuleFailure(path, f"{shown}: Forbidden: {detail}")
    if reason == "FieldValueRequired":
        return RuleFailure(path, f"{shown}: Required value: {detail}")
    value = (_go_value(place.value) if type_name(tree.schema) not in ("object", "array") else "") \
        if shows_values else kind
    if reason == "FieldValueDuplicate":
        return RuleFailure(path, f"{shown}: Duplicate value" + (f": {value}" if value else ""))
    return RuleFailure(path, f"{shown}: Invalid value: " + (f"{value}: " if value else "") + detail)


def _go_value(value: Any) -> str:
    """A simple value as apimachinery's field.Error prints it (`%q` of a string, `%v` of a number or bool); '' for
    another (an object or a list: the value is omitted, field.OmitValueType)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _go_float(value)
    if isinstance(value, str):
        return go_quote(value)
    return ""


def _go_float(value: float) -> str:
    """Go's `%v` of a float64: the shortest digits that read back as it, in exponent form where the exponent is below
    -4 or at least 6 (strconv.FormatFloat 'g' with the shortest precision: `100`, `1e+06`, `1.5e-05`)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "0"
    negative, digit_tuple, exponent = Decimal(repr(value)).normalize().as_tuple()
    significant = "".join(map(str, digit_tuple))
    point = len(significant) + int(exponent)  # where the decimal point falls after the significant digits
    sign = "-" if negative else ""
    power = point - 1
    if power < -4 or power >= 6:
        mantissa = significant[0] + ("." + significant[1:] if len(significant) > 1 else "")
        return f"{sign}{mantissa}e{'-' if power < 0 else '+'}{abs(power):02d}"
    if point <= 0:
        return f"{sign}0.{'0' * -point}{significant}"
    if point >= len(significant):
        return f"{sign}{significant}{'0' * (point - len(significant))}"
    return f"{sign}{significant[:point]}.{significant[point:]}"


def _normalized(field_path: str) -> tuple[str, ...]:
    """A rule's fieldPath (`.spec.x`, `.m['key']`) as its parts."""
    parts: list[str] = []
    rest = field_path
    while rest:
        if rest.startswith("['"):
            end = rest.index("']")
            parts.append(rest[2:end].replace("\\'", "'"))
            rest = rest[end + 2:]
        elif rest.startswith("."):
            name = rest[1:].split(".")[0].split("[")[0]
            parts.append(name)
            rest = rest[1 + len(name):]
        else:
            break
    return tuple(parts)


def _message_expression(rule: CrdRule, variables: dict[str, Any]) -> str | None:
    """The messageExpression's message where it gives one the server would use; None: the message stands."""
    if not rule.message_expression:
        return None
    compiled = compile_rule(rule.message_expression)
    if not isinstance(compiled, Compiled):
        return None
    result, error = evaluate(compiled, variables)
    if error is not None or not isinstance(result, str):
        return None
    text = result.strip()
    return text if text and "\n" not in text and len(text) <= _MESSAGE_LIMIT else None
