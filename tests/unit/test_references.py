"""Every reference mpigen prints resolves for whoever runs it, a pip-installed mpigen included: no file of the
repository by its path (docs/..., README, CHANGELOG.md, an example profile), no `make` target, no document outside
the project. A page is cited by its address at this release (mpigen.support.project.page_url), which must name a
file, and heading, the repository has. Read from the package's strings that reach a user (docstrings and comments
reach none) and from the health checks mpigen writes into charts."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from mpigen.support import project
from mpigen.support.project import REPOSITORY_URL, SERVED_URL

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "generator"
CITING = {"page_url", "file_url"}
"""The functions that make a file of the repository into its address at this release."""

REFERENCE = re.compile(r"https?://[^\s\"'`)>]+|\b[\w.-]+\.md\b|\bREADME\b|\b(?:docs|schemas|scripts|tests|profiles)/"
                       r"[\w./-]*|\bmake (?:render|test|check|validate|helm|lint|typecheck|fuzz|bench)\b")
PROJECT = re.compile(rf"^(?:{re.escape(REPOSITORY_URL)}/blob|{re.escape(SERVED_URL)})/[^/]+/([^#]+)(?:#(.+))?$")


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        for statement in getattr(node, "body", []) if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                                                           ast.AsyncFunctionDef)) else []:
            if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
                found.add(id(statement.value))
    return found


def printed_strings() -> list[tuple[str, str]]:
    """(where, text) of every string the package may print or write: a call of a citing function with constant
    arguments counts as the address it makes (the schemas' addresses, made from names, are held by
    tests/unit/support/test_schema_files.py)."""
    out: list[tuple[str, str]] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skipped = _docstrings(tree)
        for node in ast.walk(tree):
            name = getattr(node, "func", None) and getattr(node.func, "id", getattr(node.func, "attr", ""))
            if isinstance(node, ast.Call) and name in CITING and all(isinstance(a, ast.Constant) for a in node.args):
                out.append((f"{path.relative_to(REPO)}:{node.lineno}",
                            getattr(project, name)(*(arg.value for arg in node.args))))
                skipped.update(id(arg) for arg in node.args)
        out += [(f"{path.relative_to(REPO)}:{node.lineno}", node.value) for node in ast.walk(tree)
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skipped]
    for path in sorted(PACKAGE.rglob("*.lua")):  # written into bootstrap/ as they are, comments and all
        out += [(f"{path.relative_to(REPO)}:{number}", line)
                for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)]
    return out


def headings(page: Path) -> set[str]:
    """GitHub's anchors of a page's headings."""
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.MULTILINE | re.DOTALL)
    return {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
            for heading in re.findall(r"^#+ (.+)$", text, re.MULTILINE)}


def problem(reference: str) -> str | None:
    """Why a reference mpigen prints does not resolve for its user; None when it does."""
    project = PROJECT.match(reference)
    if project:
        page, anchor = project.groups()
        if not (REPO / page).is_file():
            return f"the repository has no {page}"
        return f"{page} has no heading #{anchor}" if anchor and anchor not in headings(REPO / page) else None
    if reference.startswith(("http://", "https://")):
        return "an address of mpigen's own that is not pinned to this release" if "mpigen" in reference else None
    return "a file or command of the repository, which a pip-installed mpigen does not have: cite the page by " \
           "page_url(...), name an mpigen command, or say the fact itself"


def test_every_reference_mpigen_prints_resolves() -> None:
    unresolved = []
    for where, text in printed_strings():
        unresolved += [f"{where}: {match[0]!r}: {why}" for match in REFERENCE.finditer(text)
                       if (why := problem(match[0])) is not None]
    assert unresolved == []


@pytest.mark.parametrize(("reference", "resolves"), [
    ("see docs/gitops.md", False), ("DOMAIN.md section 5", False), ("run `make render`", False),
    ("(README, \"GitOps delivery\")", False), ("as profiles/clusters/netapp-lab.yaml does", False),
    (f"{REPOSITORY_URL}/blob/v0.2.0/docs/gitops.md#argo-cds-health-check-for-mpijobs", True),
    (f"{REPOSITORY_URL}/blob/v0.2.0/docs/nothing.md", False),
    (f"{REPOSITORY_URL}/blob/v0.2.0/docs/gitops.md#no-such-heading", False),
    (f"{SERVED_URL}/v0.2.0/schemas/job.schema.json", True),
    ("https://kubernetes.default.svc", True), ("I_MPI_PIN_DOMAIN", True), ("`mpigen render`", True),
])
def test_the_scan_tells_what_resolves(reference: str, resolves: bool) -> None:
    found = [problem(match[0]) for match in REFERENCE.finditer(reference)]
    assert (found == [] or found == [None] * len(found)) == resolves, found
