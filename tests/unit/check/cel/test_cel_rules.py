"""The CRD rules judged through a CRD converted as `--crds` converts one: messages, reasons, fieldPath,
messageExpression, evaluation errors, defaults, escaping, transition rules with and without the live object, and the
notes of what is not checked."""

from __future__ import annotations

from typing import Any

from mpigen.check.cel.catalog import EVALUATED, LIVE_ONLY, UNSUPPORTED, list_rules
from mpigen.check.cel.crd_rules import check_crd_rules
from mpigen.check.cel.environment import compile_rule
from mpigen.check.cel.values import as_cel, escape
from mpigen.check.crdschema import crd_schemas
from mpigen.readback.findings import CheckContext, RenderedObject


def _crd(spec_schema: dict[str, Any], root_rules: tuple[dict[str, Any], ...] = ()) -> dict[str, Any]:
    root: dict[str, Any] = {"type": "object", "properties": {"spec": spec_schema}}
    if root_rules:
        root["x-kubernetes-validations"] = list(root_rules)
        root["properties"]["metadata"] = {"type": "object"}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "names": {"kind": "Widget", "plural": "widgets"},
                     "versions": [{"name": "v1", "served": True, "schema": {"openAPIV3Schema": root}}]}}


def _widget(spec: Any, name: str = "w", namespace: str = "", stored: bool = False) -> RenderedObject:
    """A Widget; `stored`: as read from the cluster (`kubectl get -o yaml`), with the resourceVersion the server gave."""
    metadata = {"name": name, **({"namespace": namespace} if namespace else {}),
                **({"resourceVersion": "4711", "uid": "5b1c"} if stored else {})}
    return RenderedObject("w.yaml", {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": metadata,
                                     "spec": spec})


def _check(crd: dict[str, Any], *documents: RenderedObject, live: tuple[RenderedObject, ...] = ()):
    return check_crd_rules(list(documents), CheckContext(extra=live, custom_schemas=crd_schemas(crd)))


def _spec(rules: list[dict[str, Any]], **properties: Any) -> dict[str, Any]:
    return {"type": "object", "x-kubernetes-validations": rules,
            "properties": properties or {"size": {"type": "integer"}, "name": {"type": "string"}}}


def test_a_false_rule_is_an_invalid_value_in_the_servers_words():
    outcome = _check(_crd(_spec([{"rule": "self.size < 3", "message": "size must be small "}])), _widget({"size": 5}))
    (finding,) = outcome.findings
    assert (finding.path, finding.rule) == (".spec", "crd-rules")
    assert finding.message == 'spec: Invalid value: size must be small'
    assert _check(_crd(_spec([{"rule": "self.size < 3"}])), _widget({"size": 1})).findings == ()


def test_a_rule_without_message_says_the_failed_rule():
    (finding,) = _check(_crd(_spec([{"rule": "self.size < 3"}])), _widget({"size": 5})).findings
    assert finding.message == 'spec: Invalid value: failed rule: self.size < 3'


def test_reasons_and_field_path():
    rules = [{"rule": "self.size < 3", "message": "too big", "reason": "FieldValueForbidden", "fieldPath": ".size"},
             {"rule": "has(self.name)", "message": "name it", "reason": "FieldValueRequired", "fieldPath": ".name"},
             {"rule": "self.size != 5", "reason": "FieldValueDuplicate"}]
    findings = _check(_crd(_spec(rules)), _widget({"size": 5})).findings
    assert [(f.path, f.message) for f in findings] == [
        (".spec.size", "spec.size: Forbidden: too big"),
        (".spec.name", "spec.name: Required value: name it"),
        (".spec", 'spec: Duplicate value')]


def test_message_expression_and_its_fallback():
    rules = [{"rule": "self.size < 3", "message": "static", "messageExpression": "'size ' + string(self.size) + ' > 2'"},
             {"rule": "self.size < 4", "message": "static", "messageExpression": "self.missing"}]
    findings = _check(_crd(_spec(rules)), _widget({"size": 5})).findings
    assert [f.message for f in findings] == ['spec: Invalid value: size 5 > 2',
                                             'spec: Invalid value: static']


def test_an_evaluation_error_is_a_finding_saying_so():
    crd = _crd(_spec([{"rule": "self.name.startsWith('a')", "message": "starts with a"}]))
    (finding,) = _check(crd, _widget({"size": 1})).findings
    assert finding.message == 'spec: Invalid value: "object": no such key: name evaluating rule: starts with a'


def test_rules_at_every_item_and_map_value_with_their_paths():
    spec = {"type": "object", "properties": {
        "items": {"type": "array", "items": {"type": "integer", "x-kubernetes-validations": [{"rule": "self > 0"}]}},
        "labels": {"type": "object", "additionalProperties": {"type": "string", "x-kubernetes-validations": [
            {"rule": "size(self) < 4", "message": "short"}]}}}}
    findings = _check(_crd(spec), _widget({"items": [1, 0, -1], "labels": {"a": "ok", "my.key": "too long"}})).findings
    assert [(f.path, f.message) for f in findings] == [
        (".spec.items[1]", 'spec.items[1]: Invalid value: 0: failed rule: self > 0'),
        (".spec.items[2]", 'spec.items[2]: Invalid value: -1: failed rule: self > 0'),
        ('.spec.labels["my.key"]', 'spec.labels[my.key]: Invalid value: "too long": short')]


def test_before_kubernetes_1_35_a_failed_rule_shows_the_type_not_the_value():
    """kubernetes#132798 and #133832 (1.35): the value that failed, an object's or a list's omitted; before, its type."""
    spec = {"type": "object", "x-kubernetes-validations": [{"rule": "self.size < 3", "message": "small"}],
            "properties": {"size": {"type": "integer"}, "name": {"type": "string", "x-kubernetes-validations": [
                {"rule": "self.startsWith('a')", "message": "starts with a"}]},
                "ratio": {"type": "number", "x-kubernetes-validations": [{"rule": "self < 1.0", "message": "below 1"}]}}}
    widget = _widget({"size": 5, "name": "b", "ratio": 1000000})
    for version, expected in (("1.34", ['spec: Invalid value: "object": small', 'spec.name: Invalid value: "string": '
                                        'starts with a', 'spec.ratio: Invalid value: "number": below 1']),
                              ("1.35", ['spec: Invalid value: small', 'spec.name: Invalid value: "b": starts with a',
                                        'spec.ratio: Invalid value: 1000000: below 1'])):
        found = check_crd_rules([widget], CheckContext(custom_schemas=crd_schemas(_crd(spec)), kube_version=version))
        assert [f.message for f in found.findings] == expected, version


def test_defaults_apply_before_the_rules_and_nulls_are_pruned():
    spec = _spec([{"rule": "self.mode == 'fast'", "message": "fast only"}],
                 mode={"type": "string", "default": "fast"}, other={"type": "string"})
    assert _check(_crd(spec), _widget({})).findings == ()
    assert _check(_crd(spec), _widget({"mode": None})).findings == ()  # a null non-nullable field takes its default
    assert len(_check(_crd(spec), _widget({"mode": "slow"})).findings) == 1


def test_escaped_names_and_root_metadata():
    spec = _spec([{"rule": "self.max__dash__size > 1 && self.__namespace__ == 'a' && self.namespace == 'a'"}],
                 **{"max-size": {"type": "integer"}, "namespace": {"type": "string"}})
    assert _check(_crd(spec), _widget({"max-size": 2, "namespace": "a"})).findings == ()
    root = _crd(_spec([]), ({"rule": "self.metadata.name.startsWith('w')"},
                            {"rule": "!has(self.metadata.namespace)", "message": "metadata: name only"}))
    assert _check(root, _widget({}, name="w1", namespace="team")).findings == ()
    assert [f.path for f in _check(root, _widget({}, name="x")).findings] == [""]
    assert _check(root, _widget({}, name="x")).findings[0].message.startswith('<nil>: Invalid value: failed rule')


def test_escape_as_the_server():
    assert [escape(n) for n in ("a-b", "a.b", "a/b", "a__b", "in", "1a", "a b", "_x")] == [
        "a__dash__b", "a__dot__b", "a__slash__b", "a__underscores__b", "__in__", None, None, "_x"]


def test_as_cel_types_numbers_as_the_schema_says():
    assert as_cel({"n": 1, "i": 1}, {"type": "object", "properties": {"n": {"type": "number"}, "i": {"type": "integer"}}}) \
        == {"n": 1.0, "i": 1}


IMMUTABLE = _crd(_spec([{"rule": "self.size == oldSelf.size", "message": "size is immutable"}]))


def test_a_transition_rule_without_the_live_object_is_noted_not_judged():
    outcome = _check(IMMUTABLE, _widget({"size": 1}, name="a"), _widget({"size": 2}, name="b"))
    assert outcome.findings == ()
    assert outcome.notes == ("2 Widget(s): rule 'size is immutable' compares with the live object (oldSelf): not "
                             "checked; give the live objects with --context",)


def test_a_transition_rule_is_judged_against_the_live_object_of_the_same_name():
    live = (_widget({"size": 1}, name="a", namespace="ns", stored=True),)
    changed = _check(IMMUTABLE, _widget({"size": 2}, name="a", namespace="ns"), live=live)
    assert [f.message for f in changed.findings] == ['spec: Invalid value: size is immutable']
    assert not changed.notes
    assert _check(IMMUTABLE, _widget({"size": 1}, name="a", namespace="ns"), live=live).findings == ()
    other = _check(IMMUTABLE, _widget({"size": 2}, name="a", namespace="other"), live=live)
    assert other.findings == () and other.notes  # another object: a create, noted


def test_a_context_object_the_server_never_stored_is_no_old_object():
    """A context chart's or a hand-written manifest's object of the same name is no live one: no resourceVersion."""
    written = (_widget({"size": 1}, name="a", namespace="ns"),)
    judged = _check(IMMUTABLE, _widget({"size": 2}, name="a", namespace="ns"), live=written)
    assert judged.findings == () and judged.notes


def test_list_items_of_a_map_list_correlate_by_key():
    spec = {"type": "object", "properties": {"ports": {
        "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
        "items": {"type": "object", "properties": {"name": {"type": "string"}, "port": {"type": "integer"}},
                  "x-kubernetes-validations": [{"rule": "self.port == oldSelf.port", "message": "fixed"}]}}}}
    live = (_widget({"ports": [{"name": "a", "port": 1}, {"name": "b", "port": 2}]}, stored=True),)
    found = _check(_crd(spec), _widget({"ports": [{"name": "b", "port": 2}, {"name": "a", "port": 3}]}), live=live)
    assert [f.path for f in found.findings] == [".spec.ports[1]"]


def test_unsupported_rules_are_listed_and_noted_with_the_reason():
    rules = [{"rule": "quantity(self.name).isInteger()", "message": "whole"},
             {"rule": "isURL(self.name)", "message": "a URL"},
             {"rule": "self.size > 0", "message": "positive"},
             {"rule": "self.size == oldSelf.size", "message": "fixed"}]
    crd = _crd(_spec(rules))
    statuses = [(listing.message, listing.status) for listing in list_rules(crd_schemas(crd))]
    assert statuses == [("whole", UNSUPPORTED), ("a URL", UNSUPPORTED), ("positive", EVALUATED), ("fixed", LIVE_ONLY)]
    notes = _check(crd, _widget({"size": 1, "name": "x"})).notes
    assert any("'whole' is not checked: it uses quantity() of the Kubernetes quantity library" in n for n in notes)
    assert any("'a URL' is not checked: it uses isURL()" in n for n in notes)


def test_library_functions_with_values_from_the_upstream_tests():
    """kubernetes/apiserver pkg/cel/library lists_test.go / regex_test.go examples."""
    cases = {"[1, 2, 3].isSorted()": True, "['a', 'b', 'b', 'c'].isSorted()": True, "[2.0, 1.0].isSorted()": False,
             "[1, 3].sum() == 4": True, "[].sum() == 0": True, "[1, 3].min() == 1": True, "[1, 3].max() == 3": True,
             "'abc 123'.find('[0-9]+') == '123'": True, "'abc'.find('[0-9]+') == ''": True,
             "'123 abc 456'.findAll('[0-9]+') == ['123', '456']": True,
             "'123 abc 456'.findAll('[0-9]+', 1) == ['123']": True,
             "sets.contains([1, 2, 3], [3, 1])": True, "sets.equivalent([1, 2], [2, 1, 1])": True,
             "sets.intersects([1], [2])": False, "'hello'.upperAscii() == 'HELLO'": True, "size('é') == 1": True}
    from mpigen.check.cel.environment import Compiled, evaluate

    for text, wanted in cases.items():
        compiled = compile_rule(text)
        assert isinstance(compiled, Compiled), (text, compiled)
        assert evaluate(compiled, {}) == (wanted, None), text
    compiled = compile_rule("[].min()")
    assert isinstance(compiled, Compiled) and evaluate(compiled, {})[1] == "min called on empty list"


def test_a_generated_name_is_what_the_root_rules_see():
    """The server generates the name from `generateName` before it validates: a rule on `self.metadata.name` passes."""
    crd = _crd(_spec([]), root_rules=({"rule": "self.metadata.name.startsWith('job-')", "message": "job- names"},))
    generated = _widget({"size": 1}, name="")
    generated.obj["metadata"] = {"generateName": "job-"}
    assert _check(crd, generated).findings == ()
    generated.obj["metadata"] = {"generateName": "run-"}
    assert [f.message for f in _check(crd, generated).findings] == ["<nil>: Invalid value: job- names"]


def test_no_rule_is_evaluated_on_an_object_the_schema_refuses_and_that_is_said():
    """strategy.go hasBlockingErr: after a Required, TypeInvalid, NotSupported, TooLong or TooMany error."""
    crd = _crd(_spec([{"rule": "self.size < 3", "message": "small"}]))
    widget = _widget({"size": 5})
    refused = CheckContext(custom_schemas=crd_schemas(crd), schema_refused=frozenset({("w.yaml", "Widget/w")}))
    assert [f.message for f in check_crd_rules([widget], refused).findings] == [
        "<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct "
        "the existing errors to complete validation"]
    assert [f.message for f in _check(crd, widget).findings] == ["spec: Invalid value: small"]


def test_a_rule_reading_a_duration_or_timestamp_string_is_unsupported_not_misjudged():
    """The server gives CEL a `format: duration` string as a duration, `date-time` as a timestamp; the bindings take
    neither, so such a rule is listed and noted as not checked, never evaluated on the string."""
    spec = _spec([{"rule": "!has(self.timeout) || self.timeout <= duration('1h')", "message": "at most 1h"},
                  {"rule": "has(self.start)", "message": "a start"}],
                 timeout={"type": "string", "format": "duration"}, start={"type": "string", "format": "date-time"})
    crd = _crd(spec)
    statuses = [(listing.message, listing.status, listing.reason) for listing in list_rules(crd_schemas(crd))]
    assert statuses == [("at most 1h", UNSUPPORTED, "reads timeout (a duration), which the API server gives CEL as "
                         "that type: the CEL bindings take no duration, timestamp or bytes value as input"),
                        ("a start", EVALUATED, "")]
    judged = _check(crd, _widget({"timeout": "30m", "start": "2024-05-01T00:00:00Z"}))
    assert judged.findings == () and any("'at most 1h' is not checked: it reads timeout" in n for n in judged.notes)


def test_a_transition_rule_compares_the_object_as_applied_over_the_live_one():
    """A field the chart leaves out keeps its live value under `kubectl apply`, as the immutable rule holds for
    built-in kinds: `self == oldSelf` on the spec passes when the chart only leaves a field out."""
    spec = _spec([{"rule": "self == oldSelf", "message": "immutable"}], size={"type": "integer"},
                 nodes={"type": "integer"})
    stored = (_widget({"size": 1, "nodes": 2}, name="a", namespace="ns", stored=True),)
    assert _check(_crd(spec), _widget({"size": 1}, name="a", namespace="ns"), live=stored).findings == ()
    changed = _check(_crd(spec), _widget({"size": 2}, name="a", namespace="ns"), live=stored)
    assert [f.message for f in changed.findings] == ["spec: Invalid value: immutable"]
