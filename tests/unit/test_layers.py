"""The layout of generator/ reads in one direction: each folder is one layer, and a module imports only from its
own layer or a lower one. The stages run load -> validate -> resolve -> manifests -> package -> continuity ->
write; below them sit what every stage reads (plumbing, upstream vocabulary, the domain model, the object
plumbing, the network providers, the readers of compiled charts); above them the readers of the model and the
charts (check, insight, adopt, verify, diff) and the commands that wire it all. Also held here: an `__init__.py` only
re-exports, and no module is over 400 lines."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "generator"

LAYERS: tuple[tuple[str, ...], ...] = (
    ("support",),
    ("vocabulary",),
    ("model",),
    ("objects",),
    ("providers",),
    ("readback",),
    ("inventory",),
    ("load",),
    ("validate",),
    ("resolve",),
    ("manifests",),
    ("package",),
    ("continuity",),
    ("write",),
    ("check", "insight", "adopt", "verify"),
    ("diff",),
    ("commands",),
)
"""Lowest first. check, insight, adopt and verify share a rank and import none of each other."""
RANK = {folder: rank for rank, folders in enumerate(LAYERS) for folder in folders}
TOP_LEVEL = {"__init__.py", "__main__.py"}
"""The only modules outside a folder: the version, and `python -m mpigen`, which runs the CLI."""
MAX_LINES = 400


def modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def folder_of(path: Path) -> str:
    return path.relative_to(PACKAGE).parts[0]


MODULE_NAME = re.compile(r"mpigen(?:\.\w+)+")


def imported(path: Path) -> set[str]:
    """The mpigen modules `path` imports (absolute imports only: the project writes no relative ones), and those
    it names in a string, which `importlib.import_module` or a lazy table (generator/load's `_HOMES`) imports."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and MODULE_NAME.fullmatch(node.value):
            found.add(node.value)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}: a relative import"
            base = node.module or ""
            found.update(f"{base}.{alias.name}" for alias in node.names)
            found.add(base)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.startswith("mpigen.")}


def test_every_module_sits_in_a_layer() -> None:
    strays = [str(p.relative_to(PACKAGE)) for p in modules() if p.parent == PACKAGE and p.name not in TOP_LEVEL]
    assert strays == []
    assert sorted({folder_of(p) for p in modules() if p.parent != PACKAGE}) == sorted(RANK)


@pytest.mark.parametrize("path", [p for p in modules() if p.parent != PACKAGE], ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_imports_a_later_layer(path: Path) -> None:
    own = folder_of(path)
    later = sorted(name for name in imported(path)
                   if (other := name.split(".")[1]) in RANK and other != own and RANK[other] >= RANK[own])
    assert later == [], f"{path.relative_to(PACKAGE)} ({own}) imports from a later or sibling layer"


def test_the_top_level_modules_import_only_the_commands() -> None:
    assert imported(PACKAGE / "__init__.py") == set()
    assert {name.split(".")[1] for name in imported(PACKAGE / "__main__.py")} <= {"commands"}


def test_the_check_finds_a_later_import(tmp_path: Path) -> None:
    """The rank test above would pass on an empty import list; this shows it reads an import that runs back up."""
    probe = tmp_path / "probe.py"
    probe.write_text("from mpigen.write import render\nfrom mpigen.model import Job\n"
                     "importlib.import_module('mpigen.commands.cli')\n", encoding="utf-8")
    assert imported(probe) == {"mpigen.write", "mpigen.write.render", "mpigen.model", "mpigen.model.Job",
                               "mpigen.commands.cli"}


REEXPORT_NODES = (ast.ImportFrom, ast.Import)


def only_reexports(tree: ast.Module) -> bool:
    """A docstring, imports (under `if TYPE_CHECKING:` too), `__all__`; the lazy re-export of mpigen.load
    (`__getattr__` importing a name from its home on first use) counts as one."""
    for index, node in enumerate(tree.body):
        if index == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue
        if isinstance(node, REEXPORT_NODES):
            continue
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            continue
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.Expr)) and _is_reexport_table(node):
            continue
        if isinstance(node, ast.FunctionDef) and node.name == "__getattr__":
            continue
        return False
    return True


def _is_reexport_table(node: ast.stmt) -> bool:
    """`__all__ = [...]`, `_HOMES = {...}` (names to the modules they live in), or the docstring of either."""
    if isinstance(node, ast.Expr):
        return isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    names = [t.id for t in targets if isinstance(t, ast.Name)]
    return names in (["__all__"], ["_HOMES"])


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("__init__.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_an_init_only_reexports(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    if path == PACKAGE / "__init__.py":
        assert [type(n) for n in tree.body[1:]] == [ast.Assign, ast.Expr], "generator/__init__.py holds the version alone"
        return
    assert only_reexports(tree), f"{path.relative_to(PACKAGE)} holds more than re-exports: move the work into a module"


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_is_over_the_limit(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(PACKAGE)} has {lines} lines: split it by what its parts do"
