"""The stages wired in order, returning results instead of printing: the CLI only reports them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from generator.diagnostics import Diagnostic, errors, sort_diagnostics
from generator.load import load_paths
from generator.model import Fleet
from generator.package import Chart, package_fleet
from generator.resolve import resolve
from generator.validate import validate


@dataclass
class CompileResult:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    fleet: Fleet | None = None
    charts: list[Chart] = field(default_factory=list)
    profile_count: int = 0

    @property
    def ok(self) -> bool:
        return not errors(self.diagnostics)


def check_profiles(paths: Iterable[Path]) -> CompileResult:
    loaded = load_paths(paths)
    diagnostics = sort_diagnostics(loaded.diagnostics + validate(loaded.documents, loaded.unreadable))
    result = CompileResult(diagnostics=diagnostics, profile_count=loaded.file_count)
    if result.ok:
        result.fleet = resolve(loaded.documents)
    return result


def compile_profiles(paths: Iterable[Path]) -> CompileResult:
    result = check_profiles(paths)
    if result.fleet is not None:
        result.charts = package_fleet(result.fleet)
    return result
