"""generator/package/template.py (data never becomes template code; holes become actions) and
generator/support/yamlio.py (YAML that Go's YAML 1.1 parsers read back unchanged).

PyYAML is a YAML 1.1 parser like the one inside Helm and kubectl (sigs.k8s.io/yaml, go-yaml v2): it reads
`on`, `yes`, `0777` and `1.31` as bool, int and float, so it is the round-trip reference here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from conftest import run_helm

from mpigen.package.template import ESCAPED_OPEN, Hole, escape_text, render_template
from mpigen.support import yamlio

# --- template.py: escaping ------------------------------------------------------------------------------


_GO_LITERAL_ACTION = re.compile(r'\{\{ (`[^`\n]*`|"(?:[^"\\\n]|\\.)*") \}\}')


def _go_literal(literal: str) -> str:
    """The text of a Go string literal, per the Go spec: raw strings as they are (carriage returns dropped),
    quoted ones with their escapes read (only those of a backslash, a quote and CR are expected here)."""
    if literal.startswith("`"):
        return literal[1:-1].replace("\r", "")
    escapes = {"\\\\": "\\", '\\"': '"', "\\r": "\r"}
    return re.sub(r"\\.", lambda m: escapes[m.group(0)], literal[1:-1])


def _as_helm_prints(text: str) -> str:
    """What Helm makes of string-literal actions; fails if any other action is left."""
    printed = _GO_LITERAL_ACTION.sub(lambda m: _go_literal(m.group(1)).replace("{{", "\0"), text)
    assert "{{" not in printed, f"template code left in the output:\n{text}"
    return printed.replace("\0", "{{")


TRICKY = {
    "action": "{{ .Values.secret }}",
    "trim": "{{- fail \"boom\" -}}",
    "glued": "a{{b}}c",
    "open": "{{",
    "close": "}}",
    "nested": "{{{{",
    "escape-looking": '{{ "{{" }}',
    "multi": "line one {{ .x }}\nline two\n",
    "tab": "x\t{{ y }}",
    "backtick": "`{{ .Values.secret }}`",
    "backslashes": "\\{{ \\\" }}\\",
    "raw-close": "` }}{{ `",
}


def test_escaped_open_is_the_go_template_for_a_literal():
    assert ESCAPED_OPEN == '{{ "{{" }}'


def test_curly_braces_in_data_are_escaped():
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": dict(TRICKY)}
    text = render_template(obj, {})
    assert "{{ `  action:" in text and '{{ "  backtick: ' in text
    assert yaml.safe_load(_as_helm_prints(text)) == obj


def test_curly_braces_in_keys_are_escaped():
    obj = {"data": {"{{ .Release.Name }}": "v", "k": "v"}}
    text = render_template(obj, {})
    assert yaml.safe_load(_as_helm_prints(text)) == obj


def test_escape_text():
    assert escape_text("plain") == "plain"
    assert escape_text("a {{ b }} c\nplain") == "{{ `a {{ b }} c` }}\nplain"
    assert escape_text("{{{{") == "{{ `{{{{` }}"
    assert escape_text('`{{` "\\') == '{{ "`{{` \\"\\\\" }}'


@pytest.mark.parametrize("line", ["{{" * 1000, "`{{" * 1000, '"{{\\' * 1000, "{{`\\\"" * 1000])
def test_a_line_of_braces_costs_at_most_twice_its_length(line):
    """Each `{{` escaped alone (`{{ "{{" }}`) made a line five times longer: a 1 MiB profile string, in the
    launcher and in the workers, gave a template over Helm's 5 MiB limit per chart file."""
    text = escape_text(line)
    assert len(text) <= 2 * len(line) + 10
    assert _as_helm_prints(text) == line


# --- template.py: holes ---------------------------------------------------------------------------------


def test_inline_hole_replaces_a_scalar():
    obj = {"spec": {"replicas": 2, "name": "w"}}
    text = render_template(obj, {("spec", "replicas"): Hole("{{ int .Values.workers }}")})
    assert text.splitlines() == ["spec:", "  replicas: {{ int .Values.workers }}", "  name: w"]


def test_block_hole_gets_the_indentation_of_its_line():
    obj = {"metadata": {"name": "x", "labels": {"a": "b"}}, "spec": {"template": {"metadata": {"labels": {"c": "d"}}}}}
    holes = {
        ("metadata", "labels"): Hole('{{- include "x.labels" . | nindent {indent} }}', block=True),
        ("spec", "template", "metadata", "labels"): Hole('{{- include "x.labels" . | nindent {indent} }}', block=True),
    }
    assert render_template(obj, holes).splitlines() == [
        "metadata:",
        "  name: x",
        '  labels: {{- include "x.labels" . | nindent 4 }}',
        "spec:",
        "  template:",
        "    metadata:",
        '      labels: {{- include "x.labels" . | nindent 8 }}',
    ]


def test_hole_in_a_list_item():
    obj = {"command": ["mpirun", "-np", "16", "python"]}
    text = render_template(obj, {("command", 2): Hole("{{ mul (int .Values.workers) 8 | toString | quote }}")})
    assert text.splitlines() == [
        "command:",
        "- mpirun",
        "- -np",
        "- {{ mul (int .Values.workers) 8 | toString | quote }}",
        "- python",
    ]


def test_holes_are_not_escaped_but_data_is():
    obj = {"a": "{{ data }}", "b": "placeholder"}
    text = render_template(obj, {("b",): Hole("{{ .Values.b }}")})
    assert "b: {{ .Values.b }}" in text.splitlines()
    assert "{{ `a: \"{{ data }}\"` }}" in text.splitlines()


def test_a_line_with_a_hole_and_braces_escapes_each_brace():
    """A line holding a hole cannot be one string literal: its data braces are escaped one by one."""
    text = render_template({"{{ k }}": "placeholder"}, {("{{ k }}",): Hole("{{ .Values.k }}")})
    assert text.splitlines() == ['"' + ESCAPED_OPEN + ' k }}": {{ .Values.k }}']


def test_render_does_not_modify_its_input():
    obj = {"spec": {"replicas": 2}}
    render_template(obj, {("spec", "replicas"): Hole("{{ 1 }}")})
    assert obj == {"spec": {"replicas": 2}}


def test_many_holes_each_replaced_once():
    obj = {f"k{i}": f"v{i}" for i in range(12)}
    holes = {(f"k{i}",): Hole(f"{{{{ .Values.v{i} }}}}") for i in range(12)}
    lines = render_template(obj, holes).splitlines()
    assert lines == [f"k{i}: {{{{ .Values.v{i} }}}}" for i in range(12)]


@pytest.mark.parametrize("collision", ["mpigenhole0x", "mpigenhole0x0z", "xmpigenhole0x0zx", "mpigenhole0x1z"])
def test_marker_text_in_data_survives_and_holes_still_land(collision):
    obj = {"data": {"user": collision, "other": f"pre {collision} post"}, "spec": {"replicas": 1, "size": 2}}
    holes = {("spec", "replicas"): Hole("{{ int .Values.workers }}"), ("spec", "size"): Hole("{{ .Values.size }}")}
    lines = render_template(obj, holes).splitlines()
    assert lines == [
        "data:",
        f"  user: {collision}",
        f"  other: pre {collision} post",
        "spec:",
        "  replicas: {{ int .Values.workers }}",
        "  size: {{ .Values.size }}",
    ]


def test_many_marker_lookalikes_cost_one_pass():
    """Every `mpigenhole<n>x` of a profile string is skipped in one pass (a search per n was quadratic)."""
    taken = "".join(f"mpigenhole{n}x" for n in range(20_000))
    lines = render_template({"data": taken, "spec": 1}, {("spec",): Hole("{{ 1 }}")}).splitlines()
    assert lines == [f"data: {taken}", "spec: {{ 1 }}"]


def test_marker_collision_in_a_key():
    obj = {"data": {"mpigenhole0x0z": "k"}, "spec": {"replicas": 1}}
    lines = render_template(obj, {("spec", "replicas"): Hole("{{ int .Values.workers }}")}).splitlines()
    assert lines == ["data:", "  mpigenhole0x0z: k", "spec:", "  replicas: {{ int .Values.workers }}"]


def test_real_helm_prints_data_back_and_fills_holes(helm, tmp_path: Path):
    chart = tmp_path / "t"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: t\nversion: 0.1.0\n", encoding="utf-8")
    (chart / "values.yaml").write_text("answer: 42\n", encoding="utf-8")
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"},
           "data": {**TRICKY, "answer": "placeholder", "mpigenhole0x0z": "mpigenhole0x"}}
    template = render_template(obj, {("data", "answer"): Hole("{{ .Values.answer | toString | quote }}")})
    (chart / "templates" / "cm.yaml").write_text(template, encoding="utf-8")
    rendered = [d for d in yaml.safe_load_all(run_helm(helm, "template", chart).stdout) if d]
    assert rendered == [{**obj, "data": {**obj["data"], "answer": "42"}}]


# --- yamlio.py ------------------------------------------------------------------------------------------

YAML11_SPECIALS = ["on", "On", "ON", "off", "yes", "Yes", "no", "NO", "y", "Y", "n", "N", "true", "False",
                   "null", "Null", "~", "", "0777", "0o17", "0x1F", "1.31", "1e3", "-1", "+1", ".5", "1_000",
                   "12:30", "190:20:30", "2001-01-01", ".inf", "-.Inf", ".NaN", "<<", "="]


@pytest.mark.parametrize("value", YAML11_SPECIALS)
def test_yaml11_specials_are_quoted_and_round_trip(value):
    text = yamlio.dump({"k": value})
    assert text[len("k: ")] in "\"'", f"{value!r} dumped bare: {text!r}"
    assert yaml.safe_load(text) == {"k": value}


@pytest.mark.parametrize("value", ["ml-training", "nvidia.com/gpu", "mpirun", "a b", "Tesla-V100-SXM2-16GB"])
def test_ordinary_strings_stay_plain(value):
    assert yamlio.dump({"k": value}) == f"k: {value}\n"


def test_numbers_and_booleans_stay_typed():
    assert yamlio.dump({"count": 8, "big": True, "off": False}) == 'count: 8\nbig: true\n"off": false\n'
    assert yaml.safe_load(yamlio.dump({"count": 8, "big": True})) == {"count": 8, "big": True}


def test_dict_order_is_kept():
    assert yamlio.dump({"z": 1, "a": 2, "m": 3}) == "z: 1\na: 2\nm: 3\n"


@pytest.mark.parametrize("value", ["a\nb\n", "a\nb", "line one\n\nline three\n", "#!/bin/sh\necho $HOME\n",
                                   "key: value\n- item\n"])
def test_multi_line_strings_become_literal_blocks(value):
    text = yamlio.dump({"k": value})
    assert text.startswith("k: |"), text
    assert yaml.safe_load(text) == {"k": value}


def test_literal_block_exact_text():
    assert yamlio.dump({"hostfile": "a slots=8\nb slots=8\n"}) == "hostfile: |\n  a slots=8\n  b slots=8\n"
    assert yamlio.dump({"k": "a\nb"}) == "k: |-\n  a\n  b\n"


@pytest.mark.parametrize("value", ["a \nb\n", " lead\nx\n", "a\r\nb\n", "a\n  \nb"])
def test_multi_line_strings_unsafe_for_blocks_still_round_trip(value):
    assert yaml.safe_load(yamlio.dump({"k": value})) == {"k": value}


def test_no_anchors_or_aliases_for_a_reused_object():
    shared = {"name": "x", "items": ["a"]}
    text = yamlio.dump({"first": shared, "second": shared, "list": [shared, shared]})
    assert "&" not in text and "*" not in text, text
    assert text == (
        "first:\n  name: x\n  items:\n  - a\n"
        "second:\n  name: x\n  items:\n  - a\n"
        "list:\n- name: x\n  items:\n  - a\n- name: x\n  items:\n  - a\n"
    )


def test_dump_all():
    assert yamlio.dump_all([{"a": 1}, {"b": "on"}]) == '---\na: 1\n---\nb: "on"\n'


@pytest.mark.parametrize("key", ["on", "yes", "no", "off", "y", "n", "On", "YES", "1.31", "0777", "null", "true", "",
                                 "~", "<<"])
def test_yaml11_special_keys_are_quoted(key):
    """Keys too: nodeLabels keys (the nodeSelector) may be `on` or `y`, which YAML 1.1 reads as booleans."""
    text = yamlio.dump({key: "v"})
    assert text[0] in "\"'", f"key {key!r} dumped bare: {text!r}"
    assert yaml.safe_load(text) == {key: "v"}
