"""The corpus of broken and hostile profile sets in tests/acceptance/corpus/, each with the exact error it must give.

Every case is a folder `tests/acceptance/corpus/<name>/` laid over a scratch folder that holds a copy of the example
fleet as `profiles/` and the example's charts, rendered beforehand, as `charts/`: its files replace or add
files at the same relative paths (raw bytes: tabs, non-UTF-8, byte order marks are kept), and its
`case.yaml` says what else to do and what must come out:

    why: one line: what the case attacks
    remove: [profiles/jobs/pi.yaml]                      # files of the example to delete
    symlinks: {profiles/jobs/x.yaml: ../../outside/x.yaml}  # link -> target, as `ln -s target link`
    generate: {profiles/jobs/big.yaml: {from: profiles/jobs/pi.yaml, bytes: 1048577}}  # padded with comments
    expect: |                                            # stderr, line for line, summary line included
      profiles/jobs/pi.yaml:10:10: error: ...
      1 error(s), 0 warning(s) in 16 profile file(s); nothing was written

`mpigen render profiles -o charts` runs from the scratch folder, so paths read `profiles/...` as a user sees
them. It must exit 1 with exactly the expected lines, no traceback, nothing on stdout, and the scratch folder
(charts, profiles and all) byte for byte as it was. A few cases also run through `mpigen validate`, as the
real command in a process of its own, and (the hostile ones) with their peak memory measured.

Cases named `literal-*` are the opposite: Helm template text planted in free-text fields must render, and
`helm template` (Helm 3 and 4) must give it back literally, in the field it was written for:

    literal:
      - file: dgx-lab/jobs/train     # a chart folder under charts/ (rendered by helm), or a plain YAML file
        kind: MPIJob                 # the one object of this kind there (add `name:`, its metadata.name, where
                                     # there are several; leave `kind` out for a file of one document)
        at: spec.mpiReplicaSpecs.Launcher.template.spec.containers[0].env[name=GREETING].value
        is: '{{ .Release.Name }}'

`at` steps: `.key`, `["key.with.dots"]`, `[3]` or `[-1]` (list index), `[name=X]` (the list item whose
`name` is X), and `|json` (the string so far, parsed as JSON).

Expected text is written by hand after checking every line and column against the case's files; there is
deliberately no way to regenerate it from mpigen's output.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import PROFILES, REPO, run_helm
from ruamel.yaml import YAML

from mpigen.commands import compile_commands
from mpigen.commands.cli import main
from mpigen.commands.pipeline import CompileResult
from mpigen.commands.reporting import report_result
from mpigen.support import profile_rules
from mpigen.support.diagnostics import Diagnostic

CORPUS = Path(__file__).resolve().parent / "corpus"
CASE_FILE = "case.yaml"
CASE_KEYS = {"why", "remove", "symlinks", "generate", "expect", "literal"}
CASES = sorted(path.name for path in CORPUS.iterdir() if (path / CASE_FILE).is_file())
ERROR_CASES = [name for name in CASES if not name.startswith("literal-")]
LITERAL_CASES = [name for name in CASES if name.startswith("literal-")]
# Run as a real process too (the rest run in-process, ~20 times faster): one of each family of failure.
SUBPROCESS_CASES = ["yaml-tab-indent", "encoding-latin1-byte", "size-over-one-mebibyte", "symlink-file-outside",
                    "name-job-path-traversal", "template-in-job-name"]
# `mpigen validate` prints what render does before it writes; checked for one case of each stage that reports.
VALIDATE_CASES = ["yaml-unclosed-quote", "encoding-utf16", "alias-bomb-billion-laughs", "symlink-loop",
                  "extends-cycle-two", "unknown-key-typo", "count-workers-infinite", "ref-pool-unknown",
                  "name-homoglyph-cyrillic", "template-in-cluster-identifiers", "name-duplicate-job"]
SUMMARY = re.compile(r"^\d+ error\(s\), \d+ warning\(s\) in \d+ profile file\(s\); nothing was written$")


def read_case(name: str) -> dict[str, Any]:
    return YAML(typ="safe", pure=True).load((CORPUS / name / CASE_FILE).read_text(encoding="utf-8"))


def expected_lines(case: dict[str, Any]) -> list[str]:
    return case["expect"].rstrip("\n").split("\n")


def apply_case(name: str, scratch: Path) -> None:
    """Lay case `name` over `scratch`, which holds `profiles/` (the example's) and `charts/`."""
    folder = CORPUS / name
    case = read_case(name)
    for relpath in case.get("remove", []):
        (scratch / relpath).unlink()
    for source in sorted(folder.rglob("*")):
        relpath = source.relative_to(folder)
        if source.is_file() and relpath.as_posix() != CASE_FILE:
            target = scratch / relpath
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())
    for relpath, spec in case.get("generate", {}).items():
        start = (scratch / spec["from"]).read_bytes()
        padding = spec["bytes"] - len(start)
        assert padding >= 2, f"{name}: `from` is longer than `bytes`"
        (scratch / relpath).write_bytes(start + b"#" * (padding - 1) + b"\n")
    for relpath, target in case.get("symlinks", {}).items():
        link = scratch / relpath
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(target)


def tree_state(folder: Path) -> dict[str, str]:
    """Every entry under `folder` (hidden ones too; none inside a linked folder): what it is, and a hash of a file's
    bytes or a link's target. One lstat an entry: each case walks the fleet's six hundred entries four times."""
    state = {}
    root = str(folder)
    for dirpath, dirnames, filenames in os.walk(root):
        prefix = dirpath[len(root) + 1:]
        for name in [*dirnames, *filenames]:
            path = os.path.join(dirpath, name)
            status = os.lstat(path)
            key = f"{prefix}/{name}" if prefix else name
            if stat.S_ISLNK(status.st_mode):
                state[key] = f"link {os.readlink(path)}"
            elif stat.S_ISDIR(status.st_mode):
                state[key] = "dir"
            else:
                state[key] = f"file {oct(status.st_mode & 0o777)} {file_digest(path, status)}"
    return state


DIGESTS: dict[tuple[int, ...], str] = {}
"""SHA-256 of files by what their status says of their bytes; see `file_digest`."""
SETTLED_NS = 2_000_000_000


def file_digest(path: str, status: os.stat_result) -> str:
    """The SHA-256 of a file's bytes, read once while the file is unchanged: each case compares the same few
    hundred files of the example fleet before and after. Any write changes a file's ctime (which cannot be set
    back) and a replacement its inode, so a file keeps the key it was hashed under only while its bytes are those
    hashed; and, as git does with racy entries, a file changed within the last seconds (whose ctime a later write
    in the same clock tick could repeat) is read again every time."""
    key = (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)
    known = DIGESTS.get(key)
    if known is not None:
        return known
    with open(path, "rb") as file:
        digest = hashlib.sha256(file.read()).hexdigest()
    if time.time_ns() - status.st_ctime_ns > SETTLED_NS:
        DIGESTS[key] = digest
    return digest


def remove(path: Path, what: str) -> None:
    """Remove the entry `path`, which tree_state says is `what`."""
    if what == "dir":
        shutil.rmtree(path)
    else:
        path.unlink()


def put_back(folder: Path, like: Path, state: dict[str, str]) -> None:
    """Make `folder` what `like` is (whose tree_state is `state`): remove what `like` lacks, copy back what differs."""
    found = tree_state(folder)
    for key in sorted(set(found) - set(state), reverse=True):  # a folder's entries before the folder
        remove(folder / key, found[key])
    for key, what in sorted(state.items()):  # a folder before its entries
        if found.get(key) == what:
            continue
        path, source = folder / key, like / key
        if key in found:
            remove(path, found[key])
        if what == "dir":
            path.mkdir(exist_ok=True)
        elif what.startswith("link "):
            path.symlink_to(os.readlink(source))
        else:
            shutil.copy2(source, path)


@dataclass(frozen=True)
class Example:
    """The example fleet as `profiles/` and, rendered beforehand, `charts/` (`original`, never changed, and its
    tree_state), and a copy of it (`scratch`) that each case is laid over and that is put back after it."""

    original: Path
    state: dict[str, str]
    scratch: Path


@pytest.fixture(scope="session")
def example_tree(tmp_path_factory: pytest.TempPathFactory) -> Example:
    """Built once a process: copying the fleet and its charts for each case cost more than most cases."""
    original = tmp_path_factory.mktemp("example")
    shutil.copytree(PROFILES, original / "profiles")
    result = CliRunner().invoke(main, ["render", str(PROFILES), "-o", str(original / "charts")])
    assert result.exit_code == 0, result.output
    scratch = tmp_path_factory.mktemp("scratch")
    shutil.copytree(original, scratch, symlinks=True, dirs_exist_ok=True)
    return Example(original, tree_state(original), scratch)


@pytest.fixture
def scratch(example_tree: Example) -> Iterator[Path]:
    """The example fleet and its charts, as a case finds them; put back afterwards (copied whole again if that
    does not give the very same tree)."""
    yield example_tree.scratch
    try:
        put_back(example_tree.scratch, example_tree.original, example_tree.state)
        restored = tree_state(example_tree.scratch) == example_tree.state
    except OSError:
        restored = False
    if not restored:
        shutil.rmtree(example_tree.scratch)
        shutil.copytree(example_tree.original, example_tree.scratch, symlinks=True)


def run_in_process(args: list[str], cwd: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str]:
    monkeypatch.chdir(cwd)
    result = CliRunner().invoke(main, args)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError("".join(traceback.format_exception(result.exception)))
    return result.exit_code, result.stdout, result.stderr


def run_process(args: list[str], cwd: Path) -> tuple[int, str, str]:
    result = subprocess.run([sys.executable, "-m", "mpigen", *args], capture_output=True, text=True, cwd=cwd,
                            timeout=60, env={**os.environ, "PYTHONPATH": str(REPO)})
    return result.returncode, result.stdout, result.stderr


def assert_refused(name: str, outcome: tuple[int, str, str], expected: list[str]) -> None:
    code, stdout, stderr = outcome
    assert "Traceback" not in stderr, stderr
    assert stderr.split("\n")[:-1] == expected, f"{name}: stderr differs:\n{stderr}"
    assert stderr.endswith("\n")
    assert code == 1, f"{name}: exit code {code}"
    assert stdout == "", stdout


# --- the corpus itself ------------------------------------------------------------------------------------------


def test_corpus_is_large_enough():
    assert len(ERROR_CASES) >= 50, len(ERROR_CASES)
    assert LITERAL_CASES, "no literal-* case"


def test_every_folder_is_a_case():
    strays = [path.name for path in CORPUS.iterdir() if path.name not in CASES]
    assert strays == [], f"folders without {CASE_FILE}: {strays}"


@pytest.mark.parametrize("name", CASES)
def test_every_case_says_why_and_what_to_expect(name):
    case = read_case(name)
    assert set(case) <= CASE_KEYS, set(case) - CASE_KEYS
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", name), name
    assert isinstance(case.get("why"), str) and case["why"].strip() and "\n" not in case["why"].strip(), name
    if name in LITERAL_CASES:
        assert "expect" not in case and case.get("literal"), name
        for spec in case["literal"]:
            assert {"file", "at", "is"} <= set(spec) <= {"file", "kind", "name", "at", "is"}, spec
        return
    assert "literal" not in case
    lines = expected_lines(case)
    assert lines and SUMMARY.match(lines[-1]), lines[-1]
    for line in lines[:-1]:
        assert re.match(r"^profiles/[^:]+:\d+:\d+: (error|warning): \S", line), line
    errors = sum(": error: " in line for line in lines[:-1])
    assert lines[-1].startswith(f"{errors} error(s), {len(lines) - 1 - errors} warning(s) "), lines[-1]


# --- broken profiles: refused, reported, nothing written ---------------------------------------------------------


@pytest.mark.parametrize("name", ERROR_CASES)
def test_case_is_refused_with_the_expected_error(name, scratch, monkeypatch):
    apply_case(name, scratch)
    before = tree_state(scratch)
    expected = expected_lines(read_case(name))
    reported: list[Diagnostic] = []

    def report_and_keep(result: CompileResult) -> None:
        reported.extend(result.diagnostics)
        report_result(result)

    monkeypatch.setattr(compile_commands, "report_result", report_and_keep)
    assert_refused(name, run_in_process(["render", "profiles", "-o", "charts"], scratch, monkeypatch), expected)
    assert tree_state(scratch) == before
    # Each diagnostic carries the rule of the check that raised it, described for code scanning (`validate --output sarif`).
    unruled = [d.format() for d in reported
               if not (d.rule in profile_rules.DESCRIPTIONS or re.fullmatch(r"schema/\w+", d.rule))]
    assert reported and unruled == []


@pytest.mark.parametrize("name", VALIDATE_CASES)
def test_validate_reports_what_render_does(name, scratch, monkeypatch):
    apply_case(name, scratch)
    before = tree_state(scratch)
    assert_refused(name, run_in_process(["validate", "profiles"], scratch, monkeypatch), expected_lines(read_case(name)))
    assert tree_state(scratch) == before


@pytest.mark.parametrize("name", SUBPROCESS_CASES)
def test_case_is_refused_by_the_real_command(name, scratch):
    apply_case(name, scratch)
    before = tree_state(scratch)
    assert_refused(name, run_process(["render", "profiles", "-o", "charts"], scratch),
                   expected_lines(read_case(name)))
    assert tree_state(scratch) == before


def test_subprocess_and_validate_cases_exist():
    assert set(SUBPROCESS_CASES) | set(VALIDATE_CASES) | set(HOSTILE_CASES) <= set(ERROR_CASES)


# --- hostile input: refused in bounded memory ----------------------------------------------------------------------

# Inputs that would cost memory or stack if anything expanded, parsed or read them in full.
HOSTILE_CASES = ["alias-bomb-billion-laughs", "alias-bomb-in-real-fields", "yaml-deep-block-nesting",
                 "yaml-deep-flow-nesting", "size-far-over-limit"]
MEMORY_MARGIN_KIB = 32 * 1024


# Runs mpigen's command line and writes the process's peak resident memory (VmHWM, KiB) to the file named first.
# VmHWM belongs to the program after exec; getrusage's ru_maxrss would also count the forked test process.
MEASURED = """
import re, runpy, sys
report, sys.argv = sys.argv[1], ["mpigen", *sys.argv[2:]]
try:
    runpy.run_module("mpigen", run_name="__main__", alter_sys=True)
finally:
    with open("/proc/self/status") as status, open(report, "w") as out:
        out.write(re.search(r"VmHWM:\\s*([0-9]+) kB", status.read()).group(1))
"""


def run_measured(args: list[str], cwd: Path) -> tuple[int, str, int]:
    """Exit code, stderr and peak resident memory (KiB) of the real command line in a process of its own."""
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "peak"
        result = subprocess.run([sys.executable, "-c", MEASURED, str(report), *args], capture_output=True, text=True,
                                cwd=cwd, timeout=60, env={**os.environ, "PYTHONPATH": str(REPO)})
        return result.returncode, result.stderr, int(report.read_text())


@pytest.fixture(scope="session")
def example_peak_kib(tmp_path_factory: pytest.TempPathFactory) -> int:
    """What validating the example fleet takes: the measure of what a refusal may cost."""
    if not Path("/proc/self/status").is_file():
        pytest.skip("needs Linux's /proc/self/status to read peak memory from")
    folder = tmp_path_factory.mktemp("baseline")
    shutil.copytree(PROFILES, folder / "profiles")
    code, stderr, peak = run_measured(["validate", "profiles"], folder)
    assert code == 0, stderr
    return peak


@pytest.mark.parametrize("name", HOSTILE_CASES)
def test_hostile_input_is_refused_in_bounded_memory(name, scratch, example_peak_kib):
    apply_case(name, scratch)
    code, stderr, peak = run_measured(["render", "profiles", "-o", "charts"], scratch)
    assert (code, stderr.split("\n")[:-1]) == (1, expected_lines(read_case(name))), stderr
    assert peak < example_peak_kib + MEMORY_MARGIN_KIB, \
        f"{name}: peak {peak} KiB, where the whole example fleet takes {example_peak_kib} KiB"


# --- template text in free-text fields: rendered literally ---------------------------------------------------------

STEP = re.compile(r'\.?([A-Za-z_][-A-Za-z0-9_]*)|\["([^"]+)"\]|\[(-?[0-9]+)\]|\[([A-Za-z]+)=([^\]]+)\]|(\|json)')


def follow(node: Any, path: str) -> Any:
    """The value at `path` (see the module's docstring) inside `node`."""
    position = 0
    while position < len(path):
        step = STEP.match(path, position)
        assert step is not None, f"cannot read {path!r} from column {position + 1}"
        key, quoted_key, index, field, value, _ = step.groups()
        if key is not None or quoted_key is not None:
            node = node[key if key is not None else quoted_key]
        elif index is not None:
            node = node[int(index)]
        elif field is not None:
            [node] = [item for item in node if item.get(field) == value]
        else:
            node = json.loads(node)
        position = step.end()
    return node


def manifests(scratch: Path, file: str, helm: Path) -> list[dict[str, Any]]:
    target = scratch / "charts" / file
    if target.is_dir():
        text = run_helm(helm, "template", "corpus-release", target).stdout
    else:
        text = target.read_text(encoding="utf-8")
    return [doc for doc in YAML(typ="safe", pure=True).load_all(text) if doc is not None]


@pytest.mark.parametrize("name", LITERAL_CASES)
def test_template_text_in_free_text_comes_out_literally(name, scratch, monkeypatch, helm):
    apply_case(name, scratch)
    code, _, stderr = run_in_process(["render", "profiles", "-o", "charts"], scratch, monkeypatch)
    assert (code, stderr) == (0, ""), stderr
    rendered: dict[str, list[dict[str, Any]]] = {}
    for spec in read_case(name)["literal"]:
        docs = rendered.setdefault(spec["file"], manifests(scratch, spec["file"], helm))
        [doc] = [d for d in docs if "kind" not in spec or (d["kind"] == spec["kind"] and spec.get(
                 "name", d["metadata"]["name"]) == d["metadata"]["name"])]
        assert follow(doc, spec["at"]) == spec["is"], (spec["file"], spec["at"])
