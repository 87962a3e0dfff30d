"""mpigen's own renderer of the charts mpigen compiled, for when no Helm is at hand.

It evaluates only the few template actions mpigen writes, and refuses any chart holding anything else,
so that what it renders is exactly what `helm template` gives (the tests hold both equal).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mpigen.objects import chartfiles
from mpigen.objects.labels import ChartRef, standard_labels
from mpigen.readback.discover import ChartInfo, chart_refusal_findings
from mpigen.readback.documents import load_yaml_file, parse_documents
from mpigen.readback.findings import Finding, RenderedObject
from mpigen.readback.inputs import MAX_DOCUMENT_BYTES, InputError, read_text
from mpigen.support import yamlio
from mpigen.vocabulary import helm


class Unsupported(Exception):
    """Something mpigen never writes: only Helm can render this chart as Argo CD will."""


_SEMVER = re.compile(r"[0-9]+\.[0-9]+\.[0-9]+")
_PRINTF = r'"(?:[^"\\\n]|\\.)*"'
_HOSTFILE_DEFINE = re.compile(chartfiles.form_pattern(chartfiles.HOSTFILE_DEFINE_FORM, name=r'[^"\n]+',
                                                      format=_PRINTF))
_RANKFILE_LINE = re.compile(chartfiles.form_pattern(chartfiles.RANKFILE_LINE_FORM, format=_PRINTF, slots="[0-9]+",
                                                    local="[0-9]+"))
_RANKFILE_DEFINE = re.compile(chartfiles.form_pattern(
    chartfiles.RANKFILE_DEFINE_FORM, name=r'[^"\n]+', slots="[0-9]+",
    lines="(?:" + chartfiles.form_pattern(chartfiles.RANKFILE_LINE_FORM, named=False, format=_PRINTF,
                                          slots="[0-9]+", local="[0-9]+") + ")+"))


def _go_format(literal: str, verbs: int) -> str:
    """A printf format mpigen writes, as a Python format: a Go string literal that is also JSON, holding
    `verbs` times `%d` and no other verb or brace (anything else Go and Python would read apart)."""
    try:
        text = json.loads(literal)
    except ValueError as exc:
        raise Unsupported("printf format mpigen does not write") from exc
    if text.count("%") != verbs or text.count("%d") != verbs or "{" in text or "}" in text or "\\" in literal:
        raise Unsupported("printf format mpigen does not write")
    return text.replace("%d", "{}")


@dataclass(frozen=True)
class _Helpers:
    """What the `_helpers.tpl` mpigen writes defines: the hostfile line and the rankfile lines."""

    hostfile: str | None = None
    rankfile: tuple[tuple[str, int, int], ...] = ()


def _parse_helpers(text: str, name: str) -> _Helpers:
    """The helpers of a chart named `name`, if the file is exactly what mpigen writes; Unsupported otherwise
    (a helper of another shape renders another thing under Helm, e.g. extra objects from `labels`)."""
    prefix = chartfiles.helpers_tpl(ChartRef(name, name))
    if not text.startswith(prefix):
        raise Unsupported("_helpers.tpl is not the one mpigen writes")
    rest = text[len(prefix):]
    if not rest:
        return _Helpers()
    hostfile = _HOSTFILE_DEFINE.match(rest)
    if not hostfile or hostfile.group("name") != name:
        raise Unsupported("_helpers.tpl is not the one mpigen writes")
    line = _go_format(hostfile.group("format"), 1)
    rest = rest[hostfile.end():]
    if not rest:
        return _Helpers(line)
    rankfile = _RANKFILE_DEFINE.fullmatch(rest)
    if not rankfile or rankfile.group("name") != name:
        raise Unsupported("_helpers.tpl is not the one mpigen writes")
    lines = tuple((_go_format(f, 2), int(slots), int(local))
                  for f, slots, local in _RANKFILE_LINE.findall(rankfile.group("lines")))
    return _Helpers(line, lines)


def _helper_lines(which: str, helpers: _Helpers, workers: int) -> str:
    """The lines the hostfile or rankfile helper prints for `workers` workers."""
    if which == chartfiles.HOSTFILE_HELPER:
        if helpers.hostfile is None:
            raise Unsupported("include of a hostfile helper the chart does not define")
        return "\n".join(helpers.hostfile.format(i) for i in range(workers))
    if not helpers.rankfile:
        raise Unsupported("include of a rankfile helper the chart does not define")
    return "\n".join(f.format(i * slots + local, i) for i in range(workers) for f, slots, local in helpers.rankfile)


_INCLUDE = re.compile(chartfiles.form_pattern(chartfiles.INCLUDE_FORM, name='[^"]+',
                                             helper="|".join(chartfiles.INCLUDED_HELPERS),
                                             trim=f"(?:{re.escape(chartfiles.TRIM)})?", indent="[0-9]{1,3}"))
_MUL = re.compile(chartfiles.form_pattern(chartfiles.RANK_COUNT_FORM, slots="[0-9]{1,6}"))
_ADD = re.compile(chartfiles.form_pattern(chartfiles.WORKERS_PLUS_FORM, plus="[0-9]{1,6}"))
_PRINTED: dict[str, Callable[[Any], str]] = {
    chartfiles.WORKERS: str,
    chartfiles.SUSPEND: lambda suspend: "true" if suspend else "false",
    chartfiles.IMAGE: json.dumps,
}
_VALUE_ACTIONS = {expression: (key, _PRINTED[key]) for key, expression in chartfiles.VALUE_EXPRESSIONS.items()}
"""The actions standing for a chart value: the value, and how the action prints it."""


def _action(expression: str, values: dict[str, Any], chart: ChartInfo, helpers: _Helpers, version: str) -> str:
    literal = go_string(expression)
    if literal is not None:
        return literal
    if expression in _VALUE_ACTIONS:
        key, printed = _VALUE_ACTIONS[expression]
        return printed(values[key])
    match = _MUL.fullmatch(expression)
    if match:
        return json.dumps(str(values[chartfiles.WORKERS] * int(match.group("slots"))))
    match = _ADD.fullmatch(expression)
    if match:
        return str(values[chartfiles.WORKERS] + int(match.group("plus")))
    match = _INCLUDE.fullmatch(expression)
    if match and match.group("name") == chart.name:
        pad = " " * int(match.group("indent"))
        if match.group("helper") == chartfiles.LABELS_HELPER:
            text = yamlio.dump(standard_labels(ChartRef(chart.name, chart.name, version))).rstrip("\n")
        else:
            text = _helper_lines(match.group("helper"), helpers, values[chartfiles.WORKERS])
        return "\n" + "\n".join(pad + part if part else part for part in text.split("\n"))
    raise Unsupported(f"template action `{{{{ {expression[:80]} }}}}`")


_GO_SPACE = " \t\r\n"


_GO_ESCAPE_LETTERS = "[" + re.escape("".join(chartfiles.GO_ESCAPES)) + "]"
_GO_QUOTED = re.compile(r'"(?:[^"\\\n]|\\' + _GO_ESCAPE_LETTERS + ')*"')
_GO_UNQUOTE = re.compile(r"\\(" + _GO_ESCAPE_LETTERS + ")")


def go_string(expression: str) -> str | None:
    """The text of a Go string literal of the forms mpigen writes (a raw string, or a quoted one whose only
    escapes are of a backslash, a double quote and a carriage return), or None when `expression` is not one."""
    if len(expression) >= 2 and expression[0] == expression[-1] == "`" and "`" not in expression[1:-1]:
        return expression[1:-1].replace("\r", "")
    if _GO_QUOTED.fullmatch(expression):
        return _GO_UNQUOTE.sub(lambda m: chartfiles.GO_ESCAPES[m.group(1)], expression[1:-1])
    return None


def template_actions(text: str) -> list[tuple[int, int, bool, str, bool]]:
    """Each `{{ ... }}` of a Go template: start, end, trim before, expression, trim after. One pass with
    `str.find`: an action ends at the first `}}` after its `{{` and past a string literal it starts with (Go
    reads a `}}` inside a string as part of it; mpigen's literal lines are such actions). Go's trim markers
    are `{{- ` and ` -}}`, with the space."""
    actions: list[tuple[int, int, bool, str, bool]] = []
    position = 0
    while (start := text.find("{{", position)) != -1:
        inner = start + 2
        close = text.find("}}", _after_string(text, inner))
        if close == -1:
            raise Unsupported("a template action that never closes")
        body = text[inner:close]
        trim_before = body.startswith("-") and len(body) > 1 and body[1] in _GO_SPACE
        trim_after = body.endswith("-") and len(body) > 1 and body[-2] in _GO_SPACE
        expression = body[1 if trim_before else 0:len(body) - 1 if trim_after else len(body)].strip(_GO_SPACE)
        actions.append((start, close + 2, trim_before, expression, trim_after))
        position = close + 2
    return actions


def _after_string(text: str, inner: int) -> int:
    """Where to look for an action's `}}`: past the string literal it starts with (mpigen's escaped braces
    and literal lines), else at once. A string that does not end on its line is no action mpigen writes."""
    at = inner + 2 if text.startswith("- ", inner) else inner
    while at < len(text) and text[at] in _GO_SPACE and at - inner < 8:
        at += 1
    if at >= len(text) or text[at] not in "`\"":
        return inner
    line_end = text.find("\n", at)
    line_end = len(text) if line_end == -1 else line_end
    if text[at] == "`":
        end = text.find("`", at + 1, line_end)
        return inner if end == -1 else end + 1
    quoted = _GO_QUOTED.match(text, at, line_end)
    return inner if quoted is None else quoted.end()


def render_template_text(text: str, values: dict[str, Any], chart: ChartInfo, helpers: _Helpers,
                         version: str) -> str:
    """Evaluate the few template actions mpigen writes, with Go's whitespace trimming."""
    out: list[str] = []
    position = 0
    trim_next = False
    for start, end, trim_before, expression, trim_after in template_actions(text):
        literal = text[position:start]
        if trim_next:
            literal = literal.lstrip(_GO_SPACE)
        if trim_before:
            literal = literal.rstrip(_GO_SPACE)
        out.append(literal)
        out.append(_action(expression, values, chart, helpers, version))
        trim_next = trim_after
        position = end
    tail = text[position:]
    out.append(tail.lstrip(_GO_SPACE) if trim_next else tail)
    return "".join(out)


def _own_layout(chart: ChartInfo) -> list[str]:
    """The templates to render, if the chart folder holds only what mpigen writes, as regular files;
    Unsupported otherwise. Helm renders every file of templates/ and its subfolders (any suffix), subcharts
    in charts/, and crds/: a chart holding more than mpigen's own renderer reads is Helm's to render."""
    try:
        entries = {e.name: e for e in os.scandir(chart.path)}
        allowed = chartfiles.CHART_ENTRIES
        for name, entry in entries.items():
            if name not in allowed or entry.is_symlink() or entry.is_dir() != allowed[name]:
                raise Unsupported(f"`{name[:80]}` is not a file mpigen writes in a chart")
        for required in (chartfiles.CHART_YAML, chartfiles.VALUES_YAML, chartfiles.TEMPLATES):
            if required not in entries:
                raise Unsupported(f"no {required}")
        templates: list[str] = []
        for entry in os.scandir(chart.path / chartfiles.TEMPLATES):
            if entry.is_symlink() or not entry.is_file():
                raise Unsupported(f"`{chartfiles.template_path(entry.name[:80])}` is not a file mpigen writes")
            if entry.name in chartfiles.TEMPLATE_SUPPORT_FILES:
                continue
            if not entry.name.endswith(".yaml") or entry.name.startswith(("_", ".")):
                raise Unsupported(f"`{chartfiles.template_path(entry.name[:80])}` is not a file mpigen writes")
            templates.append(entry.name)
    except OSError as exc:
        raise Unsupported(f"cannot list the chart: {exc.strerror}") from exc
    return sorted(templates)


def _own_values(chart: ChartInfo) -> tuple[dict[str, Any], str]:
    """values.yaml and the chart version, if they hold what mpigen writes (values of other types would
    print otherwise under Go's template functions than under Python's)."""
    meta = load_yaml_file(chart.path / chartfiles.CHART_YAML)
    if not isinstance(meta, dict) or meta.get("apiVersion") != helm.CHART_API_VERSION or "dependencies" in meta:
        raise Unsupported("Chart.yaml is not the one mpigen writes (apiVersion v2, no dependencies)")
    version = meta.get("version")
    if not isinstance(version, str) or not _SEMVER.fullmatch(version):
        raise Unsupported("Chart.yaml's version is not the MAJOR.MINOR.PATCH mpigen writes")
    values = load_yaml_file(chart.path / chartfiles.VALUES_YAML) or {}
    if not isinstance(values, dict):
        raise Unsupported("values.yaml is not a mapping")
    checks = {chartfiles.WORKERS: lambda v: isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 10_000,
              chartfiles.SUSPEND: lambda v: isinstance(v, bool), chartfiles.IMAGE: lambda v: isinstance(v, str)}
    for key, check in checks.items():
        if key in values and not check(values[key]):
            raise Unsupported(f"values.yaml: {key} is not of the type mpigen writes")
    return values, version


def own_render(chart: ChartInfo) -> tuple[list[RenderedObject], list[Finding]]:
    """What `helm template <name> <chart>` gives, for charts mpigen compiled; the tests hold both equal.
    Refuses (a `render` finding) any chart holding something it would not render exactly as Helm does."""
    refusals = chart_refusal_findings(chart)
    if refusals:
        return [], refusals
    try:
        if not chart.has_valid_name:
            raise Unsupported("a chart name mpigen does not write")
        templates = _own_layout(chart)
        values, version = _own_values(chart)
        helpers_file = chart.path / chartfiles.TEMPLATES / chartfiles.HELPERS
        helpers = _parse_helpers(read_text(helpers_file, MAX_DOCUMENT_BYTES), chart.name) \
            if helpers_file.exists() else _Helpers()
        documents: list[RenderedObject] = []
        findings: list[Finding] = []
        for template in templates:
            text = render_template_text(read_text(chart.path / chartfiles.TEMPLATES / template, MAX_DOCUMENT_BYTES),
                                        values, chart, helpers, version)
            source = f"{chart.display}/{chartfiles.template_path(template)}"
            docs, problems = parse_documents(text, source, chart.display)
            documents += [RenderedObject(source, d.obj, chart.display) for d in docs]
            findings += problems
        return documents, findings
    except Unsupported as exc:
        return [], [Finding(chart.display, "", "", f"cannot render without helm: {exc}; install helm or pass --helm",
                            "render")]
    except (InputError, KeyError, TypeError, ValueError) as exc:
        return [], [Finding(chart.display, "", "", f"cannot render without helm: {exc}", "render")]
