"""The chart files mpigen writes, as one contract between the writer and its readers.

`mpigen.package` writes the charts; `mpigen check` (its chart discovery and its own renderer) and
`mpigen diff` read them back. Both sides take from here the files a chart holds, the `mpigen/*`
annotations of its Chart.yaml, its values, and the template text mpigen writes (the actions standing
for chart values and the named templates of `_helpers.tpl`). A reader that must still parse template
text matches it with a pattern made from the same form the writer fills in (`form_pattern`).
"""

from __future__ import annotations

import re
import string
from typing import TYPE_CHECKING

from mpigen.model import names
from mpigen.vocabulary import helm

if TYPE_CHECKING:
    from mpigen.objects.labels import ChartRef

# --- files ---------------------------------------------------------------------------------------

CHART_YAML = "Chart.yaml"
VALUES_YAML = "values.yaml"
VALUES_SCHEMA = "values.schema.json"
TEMPLATES = "templates"
HELPERS = "_helpers.tpl"
NOTES = "NOTES.txt"
MPIJOB_TEMPLATE = "mpijob.yaml"
VOLCANO_JOB_TEMPLATE = "volcano-job.yaml"
TRAINJOB_TEMPLATE = "trainjob.yaml"
JOB_TEMPLATES = {"mpijob": MPIJOB_TEMPLATE, "volcano-job": VOLCANO_JOB_TEMPLATE, "trainjob": TRAINJOB_TEMPLATE}
"""The template of a job chart's job object, by backend."""
HOSTFILE_TEMPLATE = "hostfile-configmap.yaml"
DEVICE_CLAIM_TEMPLATE = "resourceclaimtemplate.yaml"
COMPUTE_DOMAIN_TEMPLATE = "computedomain.yaml"
NAMESPACES_TEMPLATE = "namespaces.yaml"
TRAINING_RUNTIMES_TEMPLATE = "training-runtimes.yaml"
"""The infra chart's TrainingRuntimes, one per `trainjob` job: Trainer's webhook refuses a TrainJob whose runtime
does not exist yet, and Helm would create a TrainJob before a TrainingRuntime of the same chart."""

TEMPLATE_SUPPORT_FILES = (HELPERS, NOTES)
"""The files of templates/ that render to no object."""
CHART_ENTRIES = {CHART_YAML: False, VALUES_YAML: False, VALUES_SCHEMA: False, TEMPLATES: True}
"""What a chart folder mpigen writes holds, and whether each is a folder."""


def template_path(name: str) -> str:
    """A template's path in its chart (`templates/mpijob.yaml`)."""
    return f"{TEMPLATES}/{name}"


# --- Chart.yaml annotations ----------------------------------------------------------------------

SOURCE = "mpigen/source"
"""The profile the chart is compiled from; a chart carrying it was compiled by mpigen."""
CLUSTER = "mpigen/cluster"
"""The cluster the chart is compiled for; also the label of the cluster's GitOps objects."""
KUBERNETES_VERSION = "mpigen/kubernetes-version"
POOL = "mpigen/pool"
NODE_RESOURCES = "mpigen/node-resources"
DEVICE_CLASSES = "mpigen/device-classes"
"""A DRA job chart's Chart.yaml: the DeviceClasses its cluster's profile says it has (JSON list), which check trusts."""
"""JSON: the extended resources one node of the pool offers (a count, or null where the profiles say none)."""
MPIJOB = "mpigen/mpijob"
"""The name of the chart's job object: its MPIJob's, its Volcano Job's, or its TrainJob's (by backend)."""
NAMING = "mpigen/naming"
RELEASE = "mpigen/release"
"""The mpigen release that compiled the chart (`mpigen --version`)."""
RUN_IDENTITY = "mpigen/run-identity"
"""Job charts: `<scheme>:<sha256>` of what the profiles ask the run to do (generator/resolve/identity.py). A
later render keeps the run's name while it is unchanged, whatever the release compiles."""
RUN_RELEASE = "mpigen/run-release"
"""Job charts: the release whose compile of the job object's spec the chart carries. A run keeps the spec it
started with until it is renamed, so this is older than `mpigen/release` after an upgrade."""
RUN_SPEC = "mpigen/run-spec"
"""Job charts: sha256 of the job object's `spec:` text as written, so that a later render can tell the spec it
keeps from a hand edit."""

# --- object annotations, for the chart's reviewers ---------------------------------------------------

PRIVILEGED_REASON = "mpigen/privileged-reason"
"""On the MPIJob of a job that runs privileged: the profile's reason."""
HOST_PATH_REASON = "mpigen/host-path-reason"
"""On the MPIJob and its pod templates where a host folder that gives the node away is mounted: the reasons."""

# --- values --------------------------------------------------------------------------------------

IMAGE = "image"
WORKERS = "workers"
SUSPEND = "suspend"

# --- template vocabulary -------------------------------------------------------------------------


def action(expression: str) -> str:
    """A template action printing `expression`: `{{ expression }}`."""
    return "{{ " + expression + " }}"


def trimmed_action(expression: str) -> str:
    """`{{- expression }}`: the action, with the white space before it trimmed."""
    return "{{- " + expression + " }}"


GO_ESCAPES = {"\\": "\\", '"': '"', "r": "\r"}
"""The escapes of the quoted Go strings mpigen writes: the letter after the backslash, and the character it
stands for (a backslash first, so that escaping one does not escape the others' backslashes)."""


def go_quoted(text: str) -> str:
    """`text` as a quoted Go string literal with only `GO_ESCAPES` (no newline may be in it)."""
    for letter, char in GO_ESCAPES.items():
        text = text.replace(char, "\\" + letter)
    return '"' + text + '"'


def go_raw(text: str) -> str:
    """`text` as a raw Go string literal: no backtick may be in it, and Go drops carriage returns from it."""
    return "`" + text + "`"


WORKERS_EXPRESSION = f"int .Values.{WORKERS}"
SUSPEND_EXPRESSION = f".Values.{SUSPEND}"
IMAGE_EXPRESSION = f".Values.{IMAGE} | toJson"
VALUE_EXPRESSIONS = {WORKERS: WORKERS_EXPRESSION, SUSPEND: SUSPEND_EXPRESSION, IMAGE: IMAGE_EXPRESSION}
"""The action standing for each value where the object holds it as it is."""
RANK_COUNT_FORM = WORKERS_EXPRESSION.join(("mul (", ") {slots} | toString | quote"))
"""mpirun's rank count: the workers times the slots of each, as a string."""
WORKERS_PLUS_FORM = WORKERS_EXPRESSION.join(("add (", ") {plus}"))
"""A gang's minimum under `AtStartup`: the workers and the launcher, as a number."""
INCLUDE_FORM = 'include "{name}.{helper}" .{trim} | nindent {indent}'
"""A named template of `_helpers.tpl`, indented; `trim` is "" or `TRIM`."""
TRIM = " | trim"
SUSPENDED_NOTE = action(f"if {SUSPEND_EXPRESSION}") + f" (suspended: set {SUSPEND}=false to start it)" + action("end")
"""NOTES.txt: what a suspended job waits for."""

CHART_HELPER = "chart"
LABELS_HELPER = "labels"
HOSTFILE_HELPER = names.HOSTFILE_KEY
RANKFILE_HELPER = names.RANKFILE_KEY
"""The hostfile and rankfile helpers are named after the key of the hostfile ConfigMap they fill."""
INCLUDED_HELPERS = (LABELS_HELPER, HOSTFILE_HELPER, RANKFILE_HELPER)
"""The named templates the chart's templates include."""


def include(name: str, helper: str, indent: str, trim: bool = False) -> str:
    return INCLUDE_FORM.format(name=name, helper=helper, trim=TRIM if trim else "", indent=indent)


def helpers_tpl(ref: ChartRef, extra: str = "") -> str:
    """`_helpers.tpl`: the chart label and the standard labels of every object of the chart, then `extra`."""
    n = ref.name
    return f'''{{{{/* Chart name and version, for the {helm.CHART_LABEL} label. */}}}}
{{{{- define "{n}.{CHART_HELPER}" -}}}}
{{{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}}}
{{{{- end }}}}

{{{{/* Standard labels of every object of this chart. */}}}}
{{{{- define "{n}.{LABELS_HELPER}" -}}}}
{helm.CHART_LABEL}: {{{{ include "{n}.{CHART_HELPER}" . | quote }}}}
{helm.NAME_LABEL}: {{{{ .Chart.Name | quote }}}}
{helm.INSTANCE_LABEL}: {{{{ .Release.Name | quote }}}}
{helm.MANAGED_BY_LABEL}: {{{{ .Release.Service | quote }}}}
{{{{- end }}}}
{extra}'''


_RANGE_WORKERS = "{{{{- range $i := until (" + WORKERS_EXPRESSION + ") }}}}\n"
_END_END = "{{{{- end }}}}\n{{{{- end }}}}\n"
HOSTFILE_DEFINE_FORM = (
    "\n{{{{/* Hostfile lines, one per worker, named as the job's controller names its pods. */}}}}\n"
    '{{{{- define "{name}.' + HOSTFILE_HELPER + '" -}}}}\n' + _RANGE_WORKERS
    + "{{{{ printf {format} $i }}}}\n" + _END_END)
"""The hostfile helper: one line per worker, `format` a Go string literal holding `%d` for the worker index."""
RANKFILE_DEFINE_FORM = (
    "\n{{{{/* Rankfile lines: local rank i of worker w is rank w*{slots}+i, bound to the socket of GPU i's "
    "NIC. */}}}}\n"
    '{{{{- define "{name}.' + RANKFILE_HELPER + '" -}}}}\n' + _RANGE_WORKERS + "{lines}" + _END_END)
"""The rankfile helper; `lines` are `RANKFILE_LINE_FORM`s, one per local rank."""
RANKFILE_LINE_FORM = "{{{{ printf {format} (add (mul $i {slots}) {local}) $i }}}}\n"


def form_pattern(form: str, named: bool = True, **fields: str) -> str:
    """A regular expression matching what `form.format(...)` gives: its literal text exactly, each
    `{field}` as the pattern `fields` gives it, in a group named after it (unnamed unless `named`)."""
    out: list[str] = []
    for literal, field, _, _ in string.Formatter().parse(form):
        out.append(re.escape(literal))
        if field is not None:
            out.append(f"(?P<{field}>{fields[field]})" if named else f"(?:{fields[field]})")
    return "".join(out)
