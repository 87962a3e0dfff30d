"""Every regular expression mpigen applies to profile text, and every schema `pattern`, runs in linear time.

A profile may be 1 MiB. A pattern that backtracks quadratically (`[a-z]+://` searched through a line of
letters tries every start and runs to the end from each) takes minutes on that, in CI, on a pull request.

The patterns are found, not listed: every `re.<function>("literal", ...)` call in generator/ (module
constants and inline calls alike), read with `ast`, and every `pattern` of schemas/*.schema.json. The
adversarial inputs are generated from each pattern's own parts (its literal runs and a member of each
character class, repeated alone, in pairs in the pattern's order, and as the pattern's prefix), each up to
1 MiB (jsonschema runs a `pattern` whatever the `maxLength`), with an ending that makes a match fail.
Each pattern runs in a process of its own, so a quadratic one is stopped at its bound instead of hanging.
"""

from __future__ import annotations

import ast
import importlib
import json
import multiprocessing
import re
import shutil
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection

import pytest
from conftest import REPO, TRAIN_JOB

from mpigen.commands.pipeline import compile_profiles
from mpigen.load import load_bytes, load_paths
from mpigen.support.yamllimits import MAX_FILE_BYTES
from mpigen.validate import validate

try:  # Python 3.11+
    from re import _constants as sre_constants
    from re import _parser as sre_parse
except ImportError:  # pragma: no cover
    import sre_constants  # type: ignore[no-redef]
    import sre_parse  # type: ignore[no-redef]

GENERATOR = REPO / "generator"
SCHEMAS = REPO / "schemas"
# A quarter of the largest profile per pattern: a linear pass takes milliseconds, a quadratic one still takes
# tens of seconds (the old password-in-URL pattern over a minute at 300 KB, the old JWT one 4 s at 160 KB), and
# the hundreds of patterns stay within the suite's time. Whole profiles of the full size are tested below.
SIZE = MAX_FILE_BYTES // 4
FULL_SIZE = MAX_FILE_BYTES
BOUND_SECONDS = 3.0
METHODS = ("match", "fullmatch", "search", "sub", "subn", "split", "findall", "finditer")
# Characters tried as members of a pattern's character classes.
ALPHABET = "a0A_-./:@ \t\n#=,{}[]()$'\"*+?!~%&;<>\\|^`\x00\x7f\u00e9\u0430"

# Patterns in modules other owners are still fixing: (file, line) -> who. Each is xfail(strict=True), so a
# fix makes the test fail until the mark is removed.
KNOWN_QUADRATIC: dict[tuple[str, int], str] = {}


@dataclass(frozen=True)
class Use:
    """One pattern as mpigen uses it: where, its source and flags, and the `re` methods applied to it."""

    where: str
    line: int
    pattern: str
    flags: int
    methods: tuple[str, ...]

    @property
    def id(self) -> str:
        return f"{self.where}:{self.line}"


def _flags(node: ast.expr | None) -> int:
    """The flags argument, where it is written as `re.X | re.Y` (else none)."""
    if node is None:
        return 0
    if isinstance(node, ast.BinOp):
        return _flags(node.left) | _flags(node.right)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "re":
        return int(getattr(re, node.attr))
    return 0


def _literal(node: ast.expr) -> str | None:
    """The text of a string literal, also an f-string whose parts are module constants (joined as written)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def regex_uses() -> list[Use]:
    """Every regular expression with a literal pattern in generator/, with the methods its module calls on it."""
    uses: list[Use] = []
    for path in sorted(GENERATOR.rglob("*.py")):
        source = path.read_text()
        tree = ast.parse(source)
        assigned: dict[int, str] = {}  # id of a compile call -> the name it is bound to
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                assigned[id(node.value)] = node.targets[0].id
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                assigned[id(node.value)] = node.target.id
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "re"
                    and (node.func.attr == "compile" or node.func.attr in METHODS) and node.args):
                continue
            pattern = _literal(node.args[0])
            compiled_at_import = None
            if pattern is None and node.func.attr == "compile" and id(node) in assigned:
                # built from constants (an f-string): the module's own compiled pattern says what it became
                module = importlib.import_module(".".join(("mpigen", *path.relative_to(GENERATOR).with_suffix("").parts)))
                compiled_at_import = getattr(module, assigned[id(node)], None)
                pattern = getattr(compiled_at_import, "pattern", None)
            if pattern is None:
                continue  # built at run time: covered where its parts come from (the schema patterns)
            flags_node = next((k.value for k in node.keywords if k.arg == "flags"), None)
            if flags_node is None and len(node.args) > (1 if node.func.attr == "compile" else 2):
                flags_node = node.args[-1] if node.func.attr in ("compile", "match", "fullmatch", "search",
                                                                 "findall", "finditer") else None
            if node.func.attr != "compile":
                methods: tuple[str, ...] = (node.func.attr,)
            else:
                name = assigned.get(id(node))
                called = set(re.findall(rf"\b{re.escape(name)}\.({'|'.join(METHODS)})\(", source)) if name else set()
                # A pattern kept in a table (no name of its own) is searched: the most a caller can ask of it.
                methods = tuple(sorted(called)) or ("search", "finditer")
            where = str(path.relative_to(REPO))
            flags = compiled_at_import.flags & ~re.UNICODE if compiled_at_import is not None else _flags(flags_node)
            uses.append(Use(where, node.lineno, pattern, flags, methods))
    return uses


def schema_patterns() -> list[Use]:
    """Every `pattern` of the profile schemas, as validate/schema.py runs it (search, `$` as the very end)
    and as its error message re-runs it (fullmatch)."""
    found: list[Use] = []

    def walk(node: object, where: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "pattern" and isinstance(value, str):
                    found.append(Use(where, 0, value, 0, ("search", "fullmatch")))
                walk(value, f"{where}/{key}")
        elif isinstance(node, list):
            for index, value in enumerate(node):
                walk(value, f"{where}/{index}")

    for path in sorted(SCHEMAS.glob("*.schema.json")):
        walk(json.loads(path.read_text()), path.name + "#")
    return sorted(set(found), key=lambda use: use.where)


def _in_class(items: list, ch: str) -> bool:
    """Whether `ch` is in a parsed character class (`sre_parse`'s IN items)."""
    code = ord(ch)
    negate = False
    hit = False
    for op, arg in items:
        if op is sre_constants.NEGATE:
            negate = True
        elif op is sre_constants.LITERAL:
            hit = hit or code == arg
        elif op is sre_constants.RANGE:
            hit = hit or arg[0] <= code <= arg[1]
        elif op is sre_constants.CATEGORY:
            probe = {sre_constants.CATEGORY_DIGIT: r"\d", sre_constants.CATEGORY_NOT_DIGIT: r"\D",
                     sre_constants.CATEGORY_SPACE: r"\s", sre_constants.CATEGORY_NOT_SPACE: r"\S",
                     sre_constants.CATEGORY_WORD: r"\w", sre_constants.CATEGORY_NOT_WORD: r"\W"}.get(arg)
            hit = hit or bool(probe and re.fullmatch(probe, ch))
    return hit != negate


def pattern_parts(pattern: str, flags: int = 0) -> list[str]:
    """The pattern's pieces in order: each run of literal characters, and a letter, a digit and a sign
    of each character class (or `.`), found by walking the parsed pattern."""
    parts: list[str] = []

    def walk(items: object) -> None:
        run = ""
        for op, arg in items:
            if op is sre_constants.LITERAL:
                run += chr(arg)
                continue
            if run:
                parts.append(run)
                run = ""
            if op is sre_constants.IN:
                members = [ch for ch in ALPHABET if _in_class(arg, ch)]
                # one of each sort: a letter, a digit, a sign (`-` of `[A-Za-z0-9_-]`), anything else
                for sort in (str.isalpha, str.isdigit, lambda ch: ch.isascii() and not ch.isalnum(), str.isprintable):
                    parts.extend([ch for ch in members if sort(ch)][:1])
            elif op is sre_constants.NOT_LITERAL:
                parts.append("a" if arg != ord("a") else "b")
            elif op is sre_constants.ANY:
                parts.append("a")
            elif op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, sre_constants.POSSESSIVE_REPEAT):
                walk(arg[2])
            elif op is sre_constants.SUBPATTERN:
                walk(arg[-1])
            elif op is sre_constants.BRANCH:
                for branch in arg[1]:
                    walk(branch)
            elif op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
                walk(arg[1])
            elif op is sre_constants.ATOMIC_GROUP:
                walk(arg)
        if run:
            parts.append(run)

    walk(sre_parse.parse(pattern, flags))
    return list(dict.fromkeys(p for p in parts if p))


def adversarial_inputs(pattern: str, flags: int = 0, size: int = SIZE) -> dict[str, str]:
    """Inputs of `size` characters that make backtracking patterns work hard, named for the report."""
    parts = pattern_parts(pattern, flags)
    inputs: dict[str, str] = {}

    def add(name: str, unit: str, endings: tuple[str, ...]) -> None:
        body = unit * max(1, (size - 1) // len(unit))
        for ending in endings:
            inputs[f"{name}*N+{ending!r}"] = body + ending

    for part in parts:
        add(repr(part), part, ("", "\x00", "\n"))
    few = parts[:12]  # a long alternation of words (YAML 1.1's `yes|no|...`) adds nothing new after a dozen
    for first in few:  # every ordered pair: `-eyJ` is a sign of a later class before the literal `eyJ`
        for second in few:
            if first != second:
                add(repr(first + second), first + second, ("\x00",))
    for end in range(3, len(parts) + 1):
        add(f"prefix {end}", "".join(parts[:end]), ("", "\x00"))
    inputs["' '*N+'x'"] = " " * (size - 1) + "x"
    inputs["'a'*N+'!'"] = "a" * (size - 1) + "!"
    return inputs


def _apply_to_inputs(pattern: str, flags: int, methods: list[str], report: Connection) -> None:
    """In the forked child: apply the pattern to each adversarial input, saying when each starts and ends."""
    compiled = re.compile(pattern, flags)
    for name, text in adversarial_inputs(pattern, flags).items():
        for method in methods:
            report.send([name, method])
            start = time.perf_counter()
            if method in ("sub", "subn"):
                getattr(compiled, method)("", text)
            elif method == "finditer":
                for _ in compiled.finditer(text):
                    pass
            else:
                getattr(compiled, method)(text)
            report.send([name, method, time.perf_counter() - start])
    report.send(None)


def run_bounded(use: Use) -> None:
    """Apply `use` to each adversarial input in a forked child (no start-up to pay: it has this module loaded),
    which reports when it starts and ends each; stop it and fail as soon as one input runs past the bound
    (a regex cannot be interrupted from inside)."""
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_apply_to_inputs, args=(use.pattern, use.flags, list(use.methods), send))
    child.start()
    send.close()
    running: list[str] | None = None
    try:
        while True:
            if not receive.poll(BOUND_SECONDS * 2):  # building the inputs counts too
                what = f"{running[1]} on {running[0]}" if running else "building the inputs"
                pytest.fail(f"{use.id} {use.pattern!r}: {what} did not finish in {BOUND_SECONDS * 2:.0f} s")
            try:
                record = receive.recv()
            except EOFError:
                pytest.fail(f"{use.id} {use.pattern!r}: the child ended without finishing (exit {child.exitcode})")
            if record is None:
                break
            if len(record) == 2:
                running = record
            else:
                running = None
                name, method, seconds = record
                assert seconds <= BOUND_SECONDS, f"{use.id} {use.pattern!r}: {method} on {name} took {seconds:.1f} s"
    finally:
        child.kill()
        child.join()
        receive.close()


def _report_outcome(task: Callable[[], float], report: Connection) -> None:
    """In the forked child: what `task` returns, or its traceback."""
    try:
        report.send(task())
    except BaseException:
        report.send(traceback.format_exc())


def in_forked_child(task: Callable[[], float], timeout: float) -> float:
    """What `task()` returns, run in a forked child (no start-up to pay: it has mpigen and what the test built
    loaded), which is stopped, failing the test, if it has not finished after `timeout` seconds; an exception in
    it fails the test with its traceback."""
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_report_outcome, args=(task, send))
    child.start()
    send.close()
    try:
        if not receive.poll(timeout):
            pytest.fail(f"did not finish in {timeout:.0f} s")
        try:
            outcome = receive.recv()
        except EOFError:
            pytest.fail(f"the child ended without finishing (exit {child.exitcode})")
    finally:
        child.kill()
        child.join()
        receive.close()
    if isinstance(outcome, str):
        pytest.fail(outcome)
    return float(outcome)


REGEXES = regex_uses()
SCHEMA_PATTERNS = schema_patterns()


def _param(use: Use) -> object:
    owner = KNOWN_QUADRATIC.get((use.where, use.line))
    marks = [pytest.mark.xfail(strict=True, reason=f"quadratic; {owner} fixes it")] if owner else []
    return pytest.param(use, id=use.id, marks=marks)


def test_the_search_finds_the_patterns_it_must():
    """The collector sees constants, tables and inline calls (else the tests below would pass vacuously)."""
    found = {(use.where, use.pattern) for use in REGEXES}
    assert ("generator/validate/secrets.py", r"[A-Za-z0-9+.-]://[^/\s:@]+:[^/\s@]+@") in found \
        or any(use.where == "generator/validate/secrets.py" and "://" in use.pattern for use in REGEXES)
    assert any(use.where == "generator/load/reading.py" for use in REGEXES)  # a module-level constant
    assert any(use.where == "generator/validate/text.py" for use in REGEXES)  # compiled from an f-string
    assert any(use.where.startswith("generator/check/") for use in REGEXES)
    assert len(SCHEMA_PATTERNS) >= 20
    assert len(REGEXES) >= 30


def test_the_inputs_are_built_from_the_pattern():
    inputs = adversarial_inputs(r"[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]+:[^/\s@]+@", size=1000)
    assert inputs["'://'*N+''"].startswith("://://") and inputs["'://'*N+'\\x00'"].endswith("://\x00")
    assert "'_eyJ'*N+'\\x00'" in adversarial_inputs(r"(?<![A-Za-z0-9])eyJ[A-Za-z0-9_-]{8,}", size=1000)
    assert all(len(text) <= 1000 for text in inputs.values())


@pytest.mark.parametrize("pattern", [
    r"[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]+:[^/\s@]+@",  # the old password-in-URL pattern: 'a'*N
    r"(?<![A-Za-z0-9])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",  # the old JWT one: '-eyJ'*N
])
def test_a_quadratic_pattern_is_caught(pattern: str):
    """The harness itself: the patterns the secrets check had before must fail it."""
    with pytest.raises((AssertionError, pytest.fail.Exception), match=r"did not finish|took"):
        run_bounded(Use("old", 0, pattern, 0, ("search",)))


@pytest.mark.parametrize("use", [_param(use) for use in REGEXES])
def test_regex_is_linear(use: Use):
    run_bounded(use)


@pytest.mark.parametrize("use", [pytest.param(use, id=f"{use.where}{use.pattern}") for use in SCHEMA_PATTERNS])
def test_schema_pattern_is_linear(use: Use):
    run_bounded(Use(use.where, use.line, re.sub(r"(?<!\\)\$$", r"\\Z", use.pattern), 0, ("search",)))
    run_bounded(Use(use.where, use.line, use.pattern, 0, ("fullmatch",)))


@pytest.mark.parametrize("field", ["description", "env-value", "program", "image", "host-path", "key"])
@pytest.mark.parametrize("unit", ["a", "a:", "://", "a://a:", " ", "{{", "-eyJ", "--password=", "hf_", "/", "\u202e"])
def test_validate_is_linear_on_a_profile_of_the_largest_size(field: str, unit: str):
    """The whole of validation (schema, secrets, control characters, host paths) on one big hostile string."""
    written = len(json.dumps(unit, ensure_ascii=False)[1:-1].encode())  # bytes of one unit in the file
    quoted = json.dumps(unit * ((FULL_SIZE - 1024) // written), ensure_ascii=False)  # a YAML double-quoted scalar
    extra = {"description": f"description: {quoted}\n",
             "env-value": f"env: {{DB_PASSWORD: {quoted}}}\n",
             "program": f"mpirunArgs: [-x, {quoted}]\n",
             "image": "",
             "host-path": f"volumes: [{{name: d, mountPath: /d, hostPath: {quoted}}}]\n",
             "key": f"env:\n  ? {quoted}\n  : x\n"}[field]
    job = TRAIN_JOB.replace("image: nvcr.io/nvidia/pytorch:24.03-py3", f"image: {quoted}") if field == "image" \
        else TRAIN_JOB
    raw = (job + "workers: 2\n" + extra).encode()
    document, problems = load_bytes(raw, "job.yaml", "job.yaml")
    assert document is not None, problems
    assert len(raw) > FULL_SIZE - 1024

    def timed_validate() -> float:
        start = time.perf_counter()
        validate([document])
        return time.perf_counter() - start

    # In a child process: a quadratic scanner is stopped at the bound instead of running for an hour.
    assert in_forked_child(timed_validate, BOUND_SECONDS * 4) < BOUND_SECONDS * 2


def _marker_lookalikes(size: int) -> str:
    text, n, length = [], 0, 0
    while length < size - 32:
        text.append(f"mpigenhole{n}x")
        length += len(text[-1])
        n += 1
    return "".join(text)


@pytest.mark.parametrize("field", ["env-value", "program", "description"])
@pytest.mark.parametrize("unit", ["{{", "`{{", '{{"\\', "markers"])
def test_compile_is_linear_on_a_profile_of_the_largest_size(field: str, unit: str, tmp_path):
    """Build and package (template escaping, hole markers chosen to occur nowhere in the data) on one big
    hostile string: the hole markers were found by one search of the whole data per candidate, quadratic in
    a string of `mpigenhole0x mpigenhole1x ...`."""
    size = FULL_SIZE - 4096
    written = len(json.dumps(unit, ensure_ascii=False)[1:-1])  # characters of one unit in the file
    text = _marker_lookalikes(size) if unit == "markers" else unit * (size // written)
    quoted = json.dumps(text, ensure_ascii=False)
    extra = {"env-value": f"env: {{BIG: {quoted}}}\n", "program": f"program: [/bin/true, {quoted}]\n",
             "description": f"description: {quoted}\n"}[field]
    job = "\n".join(line for line in (REPO / "profiles" / "jobs" / "pi.yaml").read_text().split("\n")
                    if not line.startswith("program:")) + ("" if field == "program" else "program: [/bin/true]\n")
    profiles = tmp_path / "profiles"
    (profiles / "jobs").mkdir(parents=True)
    for folder in ("hardware", "clusters"):
        shutil.copytree(REPO / "profiles" / folder, profiles / folder)
    (profiles / "jobs" / "pi.yaml").write_bytes((job + extra).encode())
    assert FULL_SIZE - 8192 < (profiles / "jobs" / "pi.yaml").stat().st_size <= FULL_SIZE

    def timed_compile() -> float:
        load_paths([profiles])  # the loader is bounded on its own; this times the stages after it
        start = time.perf_counter()
        result = compile_profiles([profiles])
        # Packaged whole: only the size of what it made may be refused (an env value is in two containers).
        refused = [d.format()[:300] for d in result.diagnostics if "more than etcd stores" not in d.message]
        assert not refused, refused
        return time.perf_counter() - start

    assert in_forked_child(timed_compile, BOUND_SECONDS * 8) < BOUND_SECONDS * 2
