"""check's compiled validator (generator/check/compiled_schemas.py) gives LinearValidator's verdict wherever it is asked:
on every pattern it runs (written for the `regex` crate, in linear time), on every document of the example fleet
under every Kubernetes version check knows, on documents mutated at random (mpigen's own schemas and the upstream
CRDs), and it leaves to LinearValidator what it cannot judge alike: a pattern linregex refuses, `(?i)`,
`unevaluatedProperties`, a text too long for linregex, a value it cannot take. The findings stay LinearValidator's."""

from __future__ import annotations

import copy
import math
import os
import string
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
from conftest import CHARTS, mutated_tree, schema_verdict_disagreements
from hypothesis import HealthCheck, event, given, seed, settings
from hypothesis import strategies as st
from test_check_schemas import UPSTREAM_CRDS

from mpigen.check import linregex
from mpigen.check.compiled_schemas import compile_check_schema, portable_pattern, portable_schema
from mpigen.check.linear_validator import LinearValidator
from mpigen.check.schemas import SchemaSet, bundled_kube_versions
from mpigen.commands.pipeline import CompileResult
from mpigen.readback.findings import RenderedObject
from mpigen.support.diagnostics import Severity

EXAMPLES = int(os.environ["MPIGEN_FUZZ_EXAMPLES"]) if "MPIGEN_FUZZ_EXAMPLES" in os.environ else 300
SEED = int(os.environ.get("MPIGEN_FUZZ_SEED") or 20_261_127)
VERSION = "1.31"


def rust_search(pattern: str, text: str) -> bool | None:
    """What the compiled validator makes of `pattern` (as check writes it) on `text`; None where it is not asked."""
    written = portable_pattern(pattern)
    if written is None:
        return None
    try:
        validator = jsonschema_rs.Draft202012Validator({"pattern": written}, pattern_options=jsonschema_rs.RegexOptions())
    except Exception:  # the crate refuses it (check's compile_schema leaves the schema to LinearValidator)
        return None
    return validator.is_valid(text)


def linear_search(pattern: str, text: str) -> bool | None:
    try:
        return linregex.search(pattern, text)
    except linregex.Unsupported:
        return None


# --- patterns ------------------------------------------------------------------------------------------------

ALPHABET = "aAbz09_-.\n\r\t \x0b\x0c\x85\xa0\u2028\ufeffſKé[]{}()&~<>#/\\٣²^$|*+?,:"
LITERALS = [*"abz09_-/é ſK#&~<>,:", "\\.", "\\-", "\\\\", "\\/", "\\[", "\\]", "\\{", "\\}", "\\(", "\\)", "\\|", "\\*",
            "\\+", "\\?", "\\^", "\\$", "\\<", "\\>", "\\&", "\\~", "\\ ", "\\#", "{", "}", "]", "{,2}", "{²}", "."]
ESCAPES = ["\\d", "\\D", "\\w", "\\W", "\\s", "\\S", "\\t", "\\n", "\\r", "\\f", "\\v", "\\0", "\\x41", "\\u00e9",
           "\\b", "\\B", "\\z", "\\A", "\\p{L}", "\\1", "\\k<g>", "\\e", "\\a", "\\cJ"]
CLASS_ITEMS = ["a", "z", "a-z", "0-9", "A-Z", "\\d", "\\w", "\\s", "\\S", "\\D", "-", "\\-", "\\]", "[", "&&", "~~",
               "--", ".", "^", "é", "\\x41-\\x5a", "\\n", "\r", "\\\\", "]", ":", "[:alpha:]", "ſ", "+--", "a-\\x7a"]
QUANTIFIERS = ["", "", "", "*", "+", "?", "{2}", "{1,3}", "{2,}", "*?", "+?", "{0}", "{1,2}?", "{2}{3}", "**"]

classes = st.tuples(st.booleans(), st.lists(st.sampled_from(CLASS_ITEMS), min_size=1, max_size=4)).map(
    lambda parts: "[" + ("^" if parts[0] else "") + "".join(parts[1]) + "]")
atoms = st.tuples(st.one_of(st.sampled_from(LITERALS), st.sampled_from(ESCAPES), classes),
                  st.sampled_from(QUANTIFIERS)).map("".join)
patterns = st.recursive(atoms, lambda inner: st.one_of(
    st.lists(inner, min_size=1, max_size=4).map("".join),
    st.tuples(st.sampled_from(["(", "(?:", "(?P<g>", "(?<g>", "(?i)", "(?=", "(?s)"]), inner,
              st.sampled_from([")", ")", ")*", ")+", "){2}", ")?"])).map("".join),
    st.tuples(inner, inner).map("|".join),
    st.tuples(st.sampled_from(["^", ""]), inner, st.sampled_from(["$", ""])).map("".join)), max_leaves=8)


@seed(SEED)
@settings(max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(pattern=patterns, texts=st.lists(st.text(alphabet=ALPHABET, max_size=8), min_size=1, max_size=12))
def test_a_pattern_matches_the_same_texts_in_both_engines(pattern: str, texts: list[str]) -> None:
    judged = 0
    for text in texts:
        rust = rust_search(pattern, text)
        if rust is None:
            break
        linear = linear_search(pattern, text)
        assert linear is not None  # a pattern linregex refuses is never written for the crate
        assert rust == linear, (pattern, portable_pattern(pattern), text)
        judged += 1
    event("judged by both" if judged else "left to linregex")


@pytest.mark.parametrize("punctuation", sorted(set(string.punctuation + " ")))
def test_every_escaped_punctuation_is_that_character_in_both(punctuation: str) -> None:
    pattern = f"^\\{punctuation}$"
    for text in (punctuation, "a", "\\", f"\\{punctuation}", ""):
        assert rust_search(pattern, text) == linear_search(pattern, text), (pattern, text)
    assert rust_search(pattern, punctuation) is True


@pytest.mark.parametrize(("pattern", "text", "matches"), [
    ("^[a-z]+$", "dgx-lab\n", False),  # `$` ends the text, as in Go
    ("^a.b$", "a\rb", True),  # linregex's `.` takes `\r`, which jsonschema-rs's own `.` would not
    ("^\\s$", "\x0b", True), ("^\\s$", "\xa0", False), ("^\\S+$", "a\x85", True), ("^\\d$", "٣", False),
    ("^\\w$", "é", False), ("^[]a]$", "]", True), ("^[^]a]$", "b", True), ("^a{,2}$", "a{,2}", True),
    ("^a{²}$", "a{²}", True), ("^[&&]$", "&", True), ("^[a-]$", "-", True), ("^\\<$", "<", True),
])
def test_written_patterns_keep_linregex_s_meaning(pattern: str, text: str, matches: bool) -> None:
    assert linear_search(pattern, text) is matches
    assert rust_search(pattern, text) is matches


@pytest.mark.parametrize("pattern", ["(?i)^[a-z]$", "^[\\S]$", "\\bword", "^(a)\\1$", "(?=a)", "[[:alpha:]]",
                                     "a{2}{3}", "^\\z", "a{1001}", "\ud800"])
def test_a_pattern_read_otherwise_is_left_to_linregex(pattern: str) -> None:
    """Case folding (`ſ` is `s` to the crate), a negated shorthand in a class, and what linregex refuses."""
    assert rust_search(pattern, "ſ") is None


# --- schemas -------------------------------------------------------------------------------------------------

CRD_SCHEMA = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
    "name": {"type": "string", "pattern": "^(a+)+$"},
    "note": {"type": "string"},
    "size": {"type": "integer", "minimum": 1},
    "labels": {"type": "object", "additionalProperties": {"type": "string"}}}}}}


def widget_set(schema: dict[str, Any] = CRD_SCHEMA, version: str = VERSION) -> SchemaSet:
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "widgets.example.com"},
           "spec": {"group": "example.com", "names": {"kind": "Widget", "plural": "widgets"}, "scope": "Namespaced",
                    "versions": [{"name": "v1", "served": True, "storage": True,
                                  "schema": {"openAPIV3Schema": schema}}]}}
    schema_set = SchemaSet(version)
    assert schema_set.add_crd_objects([("crd.yaml", crd)]) == []
    return schema_set


def widget(spec: dict[str, Any]) -> RenderedObject:
    return RenderedObject("w.yaml", {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
                                     "spec": spec})


def test_a_catastrophic_pattern_is_judged_in_linear_time_by_both() -> None:
    """`^(a+)+$` against forty `a`s and a `!` runs for hours where a pattern backtracks; here it ends at once."""
    schema_set = widget_set()
    for spec, valid in (({"name": "a" * 40 + "!"}, False), ({"name": "a" * 4000}, True), ({"name": "a" * 41}, True)):
        assert schema_set.verdicts(widget(spec)) == (valid, valid)
    (found,) = schema_set.check(widget({"name": "a" * 40 + "!"}))
    assert found.path == ".spec.name" and "does not match" in found.message


def test_null_fields_of_a_custom_resource_are_pruned_first() -> None:
    schema_set = widget_set()
    for spec in ({"note": None, "size": 2}, {"labels": None}, {"labels": {"a": None}}):
        assert schema_set.verdicts(widget(spec)) == (True, True), spec
        assert schema_set.check(widget(spec)) == []
    assert schema_set.verdicts(widget({"size": None, "labels": {"a": 1}})) == (False, False)


@pytest.mark.parametrize("spec", [{"name": "a\ud800"}, {"size": 10**400}, {"size": math.inf}, {"size": -math.nan},
                                  {"note": "\ud800\udc00"}])
def test_what_jsonschema_rs_cannot_take_or_see_is_judged_by_linear_validator(spec: dict[str, Any]) -> None:
    compiled, reference = widget_set().verdicts(widget(spec))
    assert compiled in (None, reference)


def test_a_pattern_linregex_refuses_keeps_its_warning() -> None:
    schema = copy.deepcopy(CRD_SCHEMA)
    schema["properties"]["spec"]["properties"]["name"]["pattern"] = "\\bword"
    schema_set = widget_set(schema)
    assert schema_set.verdicts(widget({"name": "word"})) == (None, False)
    (found,) = schema_set.check(widget({"name": "word"}))
    assert found.severity is Severity.WARNING and "schema cannot be used" in found.message
    assert schema_set.check(widget({"size": 3})) == []  # no text meets the pattern: no warning, as before


def test_a_pattern_the_crate_cannot_compile_leaves_the_schema_to_linear_validator() -> None:
    """A lone surrogate is a character to linregex, and no UTF-8 to jsonschema-rs, which refuses the schema."""
    schema = copy.deepcopy(CRD_SCHEMA)
    schema["properties"]["spec"]["properties"]["name"]["pattern"] = "^a\ud800?$"
    schema_set = widget_set(schema)
    assert schema_set.verdicts(widget({"name": "a"})) == (None, True)
    assert schema_set.verdicts(widget({"name": "b"})) == (None, False)


def test_a_text_longer_than_linregex_judges_is_left_to_it() -> None:
    schema = copy.deepcopy(CRD_SCHEMA)
    schema["properties"]["spec"]["properties"]["name"]["pattern"] = "^[a-z]{1000}$"
    longest = linregex.longest_text("^[a-z]{1000}$")
    assert 5_000 < longest < 20_000
    schema_set = widget_set(schema)
    assert schema_set.verdicts(widget({"note": "x" * longest}))[0] is True
    assert schema_set.verdicts(widget({"note": "x" * (longest + 1)}))[0] is None
    assert schema_set.verdicts(widget({"name": "a" * 1000}))[0] is True


def test_unevaluated_properties_is_left_to_linear_validator_which_does_not_judge_it() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "unevaluatedProperties": False}
    assert portable_schema(schema) is None
    compiled = compile_check_schema(schema, None)
    assert compiled is None
    assert LinearValidator(schema).is_valid({"a": "x", "b": 1})
    assert not jsonschema_rs.Draft202012Validator(schema).is_valid({"a": "x", "b": 1})


def test_a_schema_without_patterns_is_compiled_as_it_is() -> None:
    schema = {"type": "object", "properties": {"pattern": {"type": "string"}}}
    portable = portable_schema(schema)
    assert portable is not None and portable.schema is schema and portable.longest is None


def test_pattern_properties_keys_are_written_for_the_crate_too() -> None:
    schema = {"type": "object", "patternProperties": {"^a.$": {"type": "integer"}}, "additionalProperties": False}
    portable = portable_schema(schema)
    assert portable is not None and list(portable.schema["patternProperties"]) == ["^a[^\\x0a]$"]
    for instance, valid in (({"a\r": 1}, True), ({"ab": "x"}, False), ({"b": 1}, False)):
        assert LinearValidator(schema).is_valid(instance) is valid
        assert jsonschema_rs.Draft202012Validator(portable.schema).is_valid(instance) is valid


# --- documents -----------------------------------------------------------------------------------------------

def test_jsonschema_is_not_even_loaded_where_every_document_is_valid() -> None:
    """`mpigen check` of the example's charts: the compiled validators find every document valid."""
    code = ("import sys\nfrom mpigen.commands.cli import main\n"
            f"try:\n    main(['check', '--no-helm', {str(CHARTS)!r}])\nexcept SystemExit as done:\n"
            "    assert done.code == 0\nprint('jsonschema' in sys.modules)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.stdout.splitlines()[-1] == "False", result.stdout[-2000:] + result.stderr



class Fleet(list[RenderedObject]):
    def __repr__(self) -> str:  # hypothesis shows the fixtures of a failing example: not the whole fleet
        return f"<the example fleet's {len(self)} documents>"


@pytest.fixture(scope="module")
def documents(example: CompileResult) -> list[RenderedObject]:
    return Fleet(RenderedObject(f"{chart.directory}/templates/{manifest.template}", manifest.obj, chart.directory)
                 for chart in example.charts for manifest in chart.manifests)


@pytest.fixture(scope="module")
def upstream_set(upstream: Path) -> SchemaSet:
    schema_set = SchemaSet(VERSION)
    assert schema_set.add_crds([upstream / name for name in UPSTREAM_CRDS]) == []
    return schema_set


def broken(obj: dict[str, Any]) -> dict[str, Any]:
    """The object with an unknown field and a name of the wrong type: every schema refuses it."""
    obj = copy.deepcopy(obj)
    obj["metadata"] = {**obj["metadata"], "name": 5}
    obj["unknownField"] = True
    return obj


def test_every_document_of_the_example_fleet_gets_the_same_verdict_under_every_kubernetes_version(
        documents: list[RenderedObject]) -> None:
    """The whole fleet under the newest version; each kind's first document, and it broken, under every version."""
    judged = schema_verdict_disagreements(SchemaSet(bundled_kube_versions()[-1]), documents)
    assert judged.disagreements == [] and judged.compiled == len(documents)
    firsts = list({(d.api_version, d.kind): d for d in documents}.values())
    for version in bundled_kube_versions():
        judged = schema_verdict_disagreements(SchemaSet(version), [
            *firsts, *(RenderedObject(d.source, broken(d.obj), d.chart) for d in firsts)])
        assert judged.disagreements == [], version
        assert judged.compiled >= len(firsts), version  # DRA's kinds are served from 1.34 on: fewer before
        assert judged.refused * 2 == judged.compiled, version


def test_the_upstream_crds_give_the_fleet_the_same_verdicts(documents: list[RenderedObject],
                                                             upstream_set: SchemaSet) -> None:
    known = [d for d in documents if upstream_set.has_schema(d.api_version, d.kind)]  # DRA's kinds: from 1.34
    judged = schema_verdict_disagreements(upstream_set, [*known, *(RenderedObject(d.source, broken(d.obj), d.chart)
                                                                    for d in known[:40])])
    assert judged.disagreements == []
    assert (judged.compiled, judged.refused) == (len(known) + 40, 40)


# An in-process fuzzer: documents of the example fleet with values replaced, removed or added anywhere.
VALUES = [None, 0, -1, 1.5, 2**31, 2**63, 10**400, math.inf, -math.inf, math.nan, True, "", "x", "16Gi", "500m",
          "a\n", "dgx-lab\n", "1e3", "\ud800", "é", [], {}, [None], {"a": None}, "a" * 300, "0x1F", "+1", ".5"]
values = st.sampled_from(VALUES).map(copy.deepcopy)  # a fresh one each time: a mutation may change it


@st.composite
def mutations(draw: st.DrawFn, documents: list[RenderedObject]) -> RenderedObject:
    document = draw(st.sampled_from(documents))
    obj = mutated_tree(draw, document.obj, values, ["x", "name", "image", "cpu", "labels", "nullable"],
                       fixed=("apiVersion", "kind"))  # a kind no schema serves is not judged
    return RenderedObject(document.source, obj, document.chart)


@seed(SEED)
@settings(max_examples=EXAMPLES // 3, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_documents_get_the_same_verdict_both_ways(data: st.DataObject, documents: list[RenderedObject],
                                                          upstream_set: SchemaSet) -> None:
    document = data.draw(mutations(documents))
    for schema_set in (own_set(), upstream_set):
        judged = schema_verdict_disagreements(schema_set, [document])
        assert judged.disagreements == []
        event(f"compiled: {'asked' if judged.compiled else 'not asked'}, "
              f"{'refused' if judged.refused else 'accepted'}")


_OWN: list[SchemaSet] = []


def own_set() -> SchemaSet:
    if not _OWN:
        _OWN.append(SchemaSet(VERSION))
    return _OWN[0]
