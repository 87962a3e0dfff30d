"""Running Helm (`lint`, `template`, `version`) as Argo CD would, within bounds: a hostile chart can make Helm
print without end or never finish, and only values mpigen checked are ever passed to it as arguments.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mpigen.readback.discover import ChartInfo, chart_refusal_findings
from mpigen.readback.documents import parse_documents
from mpigen.readback.findings import Finding, RenderedObject
from mpigen.readback.inputs import MAX_MANIFEST_FILE_BYTES, chart_refusals
from mpigen.vocabulary.helm import SUPPORTED_MAJORS
from mpigen.vocabulary.repository import HELM_ENV

HELM_TIMEOUT = 120
"""Seconds a `helm lint` or `helm template` of one chart may take."""
HELM_VERSION_TIMEOUT = 10
"""Seconds `helm version` may take: it reads no chart, so a Helm that takes longer hangs, and is not waited for."""


def find_helm(explicit: str | None) -> str | None:
    """The program to run: a path (any name holding a `/`) made absolute, where it exists, and never looked up on
    PATH; a bare name looked up on PATH only (as the shell would); `helm` on PATH where none is asked for."""
    if explicit:
        if "/" in explicit or (os.sep != "/" and os.sep in explicit):
            return os.path.abspath(explicit) if Path(explicit).exists() else None
        return shutil.which(explicit)
    return shutil.which("helm")


class HelmHangs(Exception):
    """`helm version` did not answer within HELM_VERSION_TIMEOUT."""


class HelmRefused(Exception):
    """The Helm asked for (or the one on PATH) cannot be used: the message says which, why, and what to give."""


@dataclass(frozen=True)
class ChosenHelm:
    """The Helm a command renders with, and the version it answered: what the command's note says."""

    path: str
    version: str

    def note(self, purpose: str) -> str:
        return f"{purpose} with helm {self.version} ({self.path})"


def choose_helm(explicit: str | None, given_as: str = "--helm") -> ChosenHelm | None:
    """`explicit` (named `given_as` in messages: `--helm` or `MPIGEN_HELM`), else `helm` on PATH, once it has
    answered `version` as Helm of a major mpigen supports. None when none was asked for and PATH has no Helm; a Helm
    asked for that is missing, is no Helm, or is of another major is refused (HelmRefused), and so is a `helm` on PATH
    of another major: rendering with it would judge the charts as no GitOps tool does."""
    helm = find_helm(explicit)
    if explicit and helm is None:
        raise HelmRefused(f"{given_as} {explicit}: no such program")
    try:
        version = helm_version(helm) if helm else ""
    except HelmHangs:
        which = f"{given_as} {explicit}" if explicit else f"helm on PATH ({helm})"
        raise HelmRefused(f"{which} did not answer `helm version` within {HELM_VERSION_TIMEOUT} s: it hangs; give "
                          f"a Helm that works with --helm PATH or {HELM_ENV}") from None
    if helm is None or not version:
        if explicit:
            raise HelmRefused(f"{given_as} {explicit}: does not answer `version` like Helm")
        return None
    major = int(version[1:].split(".")[0])
    if major not in SUPPORTED_MAJORS:
        which = f"{given_as} {explicit}" if explicit else f"helm on PATH ({helm})"
        supported = " or ".join(map(str, SUPPORTED_MAJORS))
        raise HelmRefused(f"{which} is Helm {version}; mpigen renders with Helm {supported}, as Argo CD and Flux "
                          f"do: give one with --helm PATH or the {HELM_ENV} environment variable")
    return ChosenHelm(helm, version)


@dataclass(frozen=True)
class _Finished:
    returncode: int
    stdout: str
    stderr: str


MAX_HELM_STDERR = 1024 * 1024


def _late(timeout: int) -> str:
    return f"did not finish within {timeout} s"


def _run(command: list[str], timeout: int = HELM_TIMEOUT) -> _Finished | str:
    """The finished process, or why it could not run or was stopped: each stream is read within a bound
    (a hostile chart can make Helm print without end), and the process is killed past it or the timeout."""
    try:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE)
    except OSError as exc:
        return f"cannot run {command[0]}: {exc.strerror or exc}"
    over: list[str] = []

    def pump(stream: Any, into: bytearray, limit: int, name: str) -> None:
        while chunk := stream.read1(65536):
            if len(into) + len(chunk) > limit:
                over.append(f"printed more than {limit} bytes on {name}; no chart's objects are so large")
                process.kill()
                break
            into += chunk
        stream.close()

    out, err = bytearray(), bytearray()
    readers = [threading.Thread(target=pump, args=(process.stdout, out, MAX_MANIFEST_FILE_BYTES, "stdout")),
               threading.Thread(target=pump, args=(process.stderr, err, MAX_HELM_STDERR, "stderr"))]
    for reader in readers:
        reader.start()
    try:
        returncode = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        over.append(_late(timeout))
        returncode = -1
    for reader in readers:
        reader.join()
    if over:
        return over[0]
    try:
        stdout = out.decode("utf-8")
    except UnicodeDecodeError:
        return "printed bytes that are not UTF-8"
    return _Finished(returncode, stdout, err.decode("utf-8", errors="replace"))


def helm_version(helm: str) -> str:
    """`v3.17.3`, or '' when the program does not answer like Helm; HelmHangs when it does not answer in time."""
    out = _run([helm, "version", "--template", "{{.Version}}"], HELM_VERSION_TIMEOUT)
    if out == _late(HELM_VERSION_TIMEOUT):
        raise HelmHangs(helm)
    if isinstance(out, str) or out.returncode != 0:
        return ""
    version = out.stdout.strip()
    return version if re.fullmatch(r"v\d+\.\d+\.\d+\S*", version) else ""


def _counts_lint_summary(line: str) -> bool:
    """Whether the line holds Helm's `N chart(s) linted` summary (searched without backtracking)."""
    start = line.find(_LINTED)
    while start != -1:
        if start > 0 and line[start - 1].isdigit():
            return True
        start = line.find(_LINTED, start + 1)
    return False


_LINTED = " chart(s) linted"


def _error_lines(text: str) -> list[str]:
    lines = [line.strip() for line in text.splitlines()]
    return [line for line in lines if line.startswith(("[ERROR]", "[WARNING]", "Error:"))
            and not _counts_lint_summary(line)]


def _chart_argument(chart: ChartInfo) -> str:
    """The chart folder as Helm must see it: absolute, so it never reads as a flag or a repository name."""
    return os.path.abspath(chart.path)


def helm_lint(helm: str, chart: ChartInfo) -> list[Finding]:
    if chart_refusals(chart.path):
        return []  # helm_template reports them; Helm gets nothing to read
    out = _run([helm, "lint", "--strict", "--", _chart_argument(chart)])
    if isinstance(out, str):
        return [Finding(chart.display, "", "", f"helm lint --strict: {out}", "lint")]
    if out.returncode == 0:
        return []
    return [Finding(chart.display, "", "", f"helm lint --strict: {line}", "lint")
            for line in _error_lines(out.stdout + "\n" + out.stderr) or ["failed"]]


LINT_BATCH = 24
"""Charts one `helm lint` process judges at most: Helm's start costs about as much as linting a chart."""


def helm_lint_all(helm: str, charts: Sequence[ChartInfo]) -> list[list[Finding]]:
    """`helm_lint` of each chart, from one Helm process where they all pass (the usual case); where any does not
    (or Helm is stopped), each chart is linted again on its own, so every finding names its own chart exactly as
    `helm_lint` says it."""
    lintable = [chart for chart in charts if not chart_refusals(chart.path)]
    if len(lintable) > 1:
        out = _run([helm, "lint", "--strict", "--", *map(_chart_argument, lintable)], HELM_TIMEOUT // 4)
        if not isinstance(out, str) and out.returncode == 0:
            return [[] for _ in charts]
    return [helm_lint(helm, chart) for chart in charts]


def helm_template(helm: str, chart: ChartInfo, kube_version: str | None) -> tuple[list[RenderedObject], list[Finding]]:
    """`helm template` as Argo CD runs it: release named after the chart, CRDs and hooks included.

    Only values mpigen checked follow `--`: the release name (the chart's, when Helm would take it) and
    the chart's absolute path; nothing from a file can be read as a flag.
    """
    refusals = chart_refusal_findings(chart)
    if refusals:
        return [], refusals
    command = [helm, "template", "--include-crds"]
    if kube_version:
        command += ["--kube-version", kube_version]
    out = _run([*command, "--", chart.release, _chart_argument(chart)])
    if isinstance(out, str):
        return [], [Finding(chart.display, "", "", f"helm template: {out}", "render")]
    if out.returncode != 0:
        lines = _error_lines(out.stderr) or out.stderr.strip().splitlines()[-1:] or ["failed"]
        return [], [Finding(chart.display, "", "", f"helm template: {line}", "render") for line in lines]
    return parse_documents(out.stdout, chart.display, chart.display)
