"""generator/readback/kubeyaml.py: YAML read as Kubernetes reads it (sigs.k8s.io/yaml over go-yaml v2), within limits.

Expected values are go-yaml v2's resolve.go rules, turned into JSON as sigs.k8s.io/yaml does, written by hand.
"""

from __future__ import annotations

import pytest
from ruamel.yaml.error import YAMLError

from mpigen.readback.kubeyaml import MAX_MANIFEST_NESTING, KubeYAMLError, load_all


def value(text: str) -> object:
    return load_all(f"v: {text}\n")[0]["v"]


@pytest.mark.parametrize(("text", "expected"), [
    # YAML 1.1 booleans, every spelling go-yaml v2 knows; other case mixes stay strings.
    *((t, True) for t in ("y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "true", "True", "TRUE")),
    *((t, False) for t in ("n", "N", "no", "No", "NO", "off", "Off", "OFF", "false", "False", "FALSE")),
    ("yES", "yES"), ("oN", "oN"),
    # Nulls.
    ("~", None), ("null", None), ("Null", None), ("NULL", None), ("", None), ("nULL", "nULL"),
    # Integers: Go's ParseInt with base 0 after removing underscores; a leading 0 is octal.
    ("0777", 511), ("0o17", 15), ("0x1F", 31), ("0b101", 5), ("-0b101", -5), ("+12", 12), ("1_000", 1000),
    ("9223372036854775807", 9223372036854775807), ("18446744073709551615", 18446744073709551615),
    # Not octal, but a YAML float whose JSON is the whole number 8.
    ("08", 8), ("1e3", 1000), ("3.0", 3), ("0.5", 0.5), (".5", 0.5), ("1.", 1), ("1e400", "1e400"),
    # go-yaml v2 has no sexagesimal numbers, and gives timestamps to interface{} as the text written.
    ("1:20", "1:20"), ("2024-01-02", "2024-01-02"), ("2024-01-02T03:04:05Z", "2024-01-02T03:04:05Z"),
    # Quoted and tagged scalars.
    ('"on"', "on"), ("'0777'", "0777"), ("!!str 3", "3"), ("!!int 0x10", 16), ("!!float 1", 1), ("!custom on", "on"),
    ("! on", "on"),
])
def test_scalars_resolve_as_go_yaml_v2_does(text, expected):
    result = value(text)
    assert result == expected and type(result) is type(expected)


def test_keys_become_strings_as_sigs_k8s_yaml_makes_them():
    assert load_all("yes: 1\nn: 2\n3: 3\n0x10: 4\n1.5: 5\n") == [{"true": 1, "false": 2, "3": 3, "16": 4, "1.5": 5}]


def test_merge_keys_merge_and_later_keys_win():
    text = "base: &b {a: 1, b: 2}\nother: &o {b: 3, c: 4}\nm: {<<: [*b, *o], c: 5}\nq: {x: 0, <<: *b}\n"
    documents = load_all(text)
    assert documents[0]["m"] == {"a": 1, "b": 2, "c": 5}  # earlier mappings of the list win
    assert documents[0]["q"] == {"x": 0, "a": 1, "b": 2}


@pytest.mark.parametrize(("text", "message", "line"), [
    ("a: 1\nb: 2\na: 3\n", "duplicate key `a`: Kubernetes keeps only one of them; remove the other", 3),
    ("yes: 1\ntrue: 2\n", "duplicate key `true`", 2),
    ("a: *nowhere\n", "alias *nowhere names no anchor before it", 1),
    ("a: .inf\n", "inf is not a number JSON can hold", 1),
    ("a: [1, .nan]\n", "nan is not a number JSON can hold", 1),
    ("? [1, 2]\n: x\n", "a mapping key must be a string, number or boolean", 2),
    ("~: x\n", "a mapping key must be a string, number or boolean", 1),
    ("a: !!int x\n", "cannot read `x` as !!int", 1),
    ("a: !!bool 1\n", "cannot read `1` as !!bool", 1),
    ("a: {<<: [1]}\n", "`<<` merges only mappings, or a list of mappings", 1),
])
def test_what_kubernetes_cannot_read_is_an_error_with_its_line(text, message, line):
    with pytest.raises(KubeYAMLError) as error:
        load_all(text)
    assert error.value.message.startswith(message) and error.value.line == line


def test_syntax_errors_are_the_parsers():
    with pytest.raises(YAMLError):
        load_all("a: [\n")


def test_nesting_is_limited_exactly():
    assert load_all("[" * MAX_MANIFEST_NESTING + "]" * MAX_MANIFEST_NESTING) is not None
    with pytest.raises(KubeYAMLError, match=f"nest more than {MAX_MANIFEST_NESTING} deep"):
        load_all("[" * (MAX_MANIFEST_NESTING + 1) + "]" * (MAX_MANIFEST_NESTING + 1))
    block = "".join(f"{'  ' * i}k:\n" for i in range(MAX_MANIFEST_NESTING)) + "  " * MAX_MANIFEST_NESTING + "k: v\n"
    with pytest.raises(KubeYAMLError, match="nest more than"):
        load_all(block)


def test_aliases_may_add_a_bounded_number_of_nodes():
    ten = "a: &a [" + ", ".join(["x"] * 10) + "]\n"
    within = ten + "b: [" + ", ".join(["*a"] * 9000) + "]\n"  # 99,000 nodes added
    assert len(load_all(within, max_added_nodes=100_000)[0]["b"]) == 9000
    with pytest.raises(KubeYAMLError, match="YAML aliases expand to more than 1000 nodes beyond those written"):
        load_all(ten + "b: [" + ", ".join(["*a"] * 100) + "]\n", max_added_nodes=1000)


def test_documents_of_a_stream_each_count_their_own_aliases():
    text = "a: &a [1, 2]\nb: *a\n---\nc: 1\n---\n"
    assert load_all(text) == [{"a": [1, 2], "b": [1, 2]}, {"c": 1}, None]
    with pytest.raises(KubeYAMLError, match="names no anchor"):
        load_all("a: &a 1\n---\nb: *a\n")
