"""Fuzzing where mpigen writes a file a user points it at (`plan --html/--svg FILE`; generator/write/target.py, the
rule `init` shares): every target is either written as a regular file at exactly that path with nothing else
changed, or refused with nothing changed anywhere.

Each example builds a small world in a fresh folder: `work/` (the current folder) holding a profiles folder, an
input file and a hard link to it, a picture from before, a folder, a FIFO, a socket, a character device (where the
tests may make one), links to a file outside, to a folder outside, to nothing, to `/dev/null`, to
`/proc/self/fd/1`, to the profiles, to a folder inside `work/`, to itself; and `outside/` with a file to protect.
The target is drawn from: a parent (none, `.`, a folder, `..`, a missing folder, a file, a FIFO, a link on the
way, a path into the profiles, `site/..`, a doubled `/`) and a name (each of those things, `-`, `.`, `..`, a
trailing `/`, names of any printable or control character, bytes that are not UTF-8, names too long for the
file system), relative or absolute.

Every thing of the world is tried at the name and on the way on each run (explicit examples); the seed draws the
rest. An oracle written apart from the rule (lstat along the path as written) says what must happen: written where
every folder on the way is a folder and no link, the name is missing or a regular file, and it is neither an input
nor inside one; refused otherwise. The tree (files by content, links by target, special files by kind) must then
differ by exactly the written file, or not at all, and `/dev/null` must still be a character device.

Most examples call the rule in-process; a few run the real `mpigen plan PROFILES --svg TARGET`, where `-` is
standard output and a refusal is one `error:` line (exit 1) or a usage error (exit 2, a path inside the profiles).
The same targets, taken as a folder, go to `mpigen schema --write` (generator/commands/schema_export.py, which
makes a missing folder): its schemas are written, each a regular file, into one folder reached through no link,
with nothing else changed but the folders it made; or it is refused with nothing changed.

CI runs a fixed number of examples from a fixed seed without an example database (80 drawn in-process besides the
58 explicit ones, 40 folders for the schemas, 4 through the command line: a few seconds); `make fuzz` draws
MPIGEN_FUZZ_EXAMPLES in-process, half as many folders, and one in 50 of them through the command line, from its
seed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conftest import PROFILES, REPO, current_folder, snapshot
from hypothesis import HealthCheck, assume, event, example, given, seed, settings
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase

from mpigen.commands.schema_export import write_schemas
from mpigen.support.schema_files import repository_schemas
from mpigen.write import WriteError
from mpigen.write.target import write_file

LONG = "MPIGEN_FUZZ_EXAMPLES" in os.environ
EXAMPLES = int(os.environ["MPIGEN_FUZZ_EXAMPLES"]) if LONG else 80  # CI: a second or two
CLI_EXAMPLES = max(EXAMPLES // 50, 4) if LONG else 4  # each a real `mpigen plan`: about half a second
SEED = int(os.environ.get("MPIGEN_FUZZ_SEED") or 20_261_127)
PAGE = b"<svg>the fleet</svg>\n"

# --- the world -----------------------------------------------------------------------------------------------

LINKS = {"link-file": "../outside/victim.txt", "link-dir": "../outside", "link-dangling": "../outside/nothing",
         "link-null": "/dev/null", "link-stdout": "/proc/self/fd/1", "link-profiles": "profiles", "link-site": "site",
         "link-loop": "link-loop"}
PARENTS = ["", ".", "site", "./site", "site//", "..", "site/..", "site/../profiles", "profiles", "profiles/jobs",
           "missing", "missing/deeper", "old.svg", "fifo", "sock", "dev", "lone.yaml", *LINKS]
NAMES = ["old.svg", "new.svg", "fifo", "sock", "dev", "site", "profiles", "jobs", "pi.yaml", "lone.yaml",
         "lone-hard.yaml", "pi-hard.yaml", "victim.txt", "-", ".", "..", "", *LINKS]


@dataclass(frozen=True)
class World:
    root: Path
    work: Path

    @property
    def inputs(self) -> list[Path]:
        return [self.work / "profiles", self.work / "lone.yaml"]


def build(root: Path, fleet: bool) -> World:
    """The world described above, under `root`; with `fleet`, the profiles are a copy of the example fleet."""
    work = root / "work"
    work.mkdir()
    if fleet:
        shutil.copytree(PROFILES, work / "profiles")
    else:
        (work / "profiles" / "jobs").mkdir(parents=True)
        (work / "profiles" / "jobs" / "pi.yaml").write_bytes(b"kind: Job\n")
    (root / "outside").mkdir()
    (root / "outside" / "victim.txt").write_bytes(b"keep me\n")
    (work / "site").mkdir()
    (work / "site" / "old.svg").write_bytes(b"old picture in site\n")
    (work / "old.svg").write_bytes(b"old picture\n")
    (work / "lone.yaml").write_bytes(b"kind: Job\n")
    os.link(work / "lone.yaml", work / "lone-hard.yaml")
    os.link(next((work / "profiles" / "jobs").glob("*.yaml")), work / "pi-hard.yaml")
    os.mkfifo(work / "fifo")
    with socket.socket(socket.AF_UNIX) as server, current_folder(work):
        server.bind("sock")
    with contextlib.suppress(PermissionError):  # a device node needs CAP_MKNOD: root in CI
        os.mknod(work / "dev", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    for name, pointee in LINKS.items():
        (work / name).symlink_to(pointee)
    return World(root, work)


@contextlib.contextmanager
def fresh_world(fleet: bool = False) -> Iterator[World]:
    with tempfile.TemporaryDirectory(prefix="mpigen-paths-") as folder:
        yield build(Path(folder), fleet)


# --- the targets ---------------------------------------------------------------------------------------------

NOT_UTF8 = [os.fsdecode(raw) for raw in (b"\xff.svg", b"\xc3(.svg", b"\xed\xa0\x80.svg", b"a\x80b")]
odd_names = st.one_of(
    st.text(st.characters(codec="utf-8", exclude_characters="/\x00"), min_size=1, max_size=24),
    st.text(st.sampled_from("-. \t\n\x1b\x7f~*?[]$`'\"\\é"), min_size=1, max_size=8),
    st.sampled_from(NOT_UTF8),
    st.integers(250, 300).map(lambda n: "p" * n),  # past NAME_MAX (255 bytes)
)


@st.composite
def targets(draw: st.DrawFn) -> tuple[str, bool]:
    """A target as a user would type it, and whether it is absolute: a thing of the world at the name, a thing
    of the world on the way, or both drawn at once."""
    plain = st.sampled_from(["", ".", "site/.."])
    names = st.one_of(st.sampled_from(NAMES), odd_names)
    parent, name = draw(st.one_of(st.tuples(plain, names), st.tuples(st.sampled_from(PARENTS), st.just("new.svg")),
                                  st.tuples(st.sampled_from(PARENTS), names)))
    absolute = draw(st.booleans())
    event(f"parent {parent or '(none)'}")
    return (f"{parent}/{name}" if parent else name), absolute


def every_thing_once(test: Callable[..., None]) -> Callable[..., None]:
    """Each thing of the world at the name and on the way, on every run whatever the seed draws."""
    for target in [*((name, False) for name in NAMES), *((f"{parent}/new.svg", True) for parent in PARENTS)]:
        test = example(target=target)(test)
    return test


# --- the oracle ----------------------------------------------------------------------------------------------


def expected(world: World, text: str) -> Path | None:
    """Where the file must be written, None if it must be refused: walked with lstat, apart from the rule."""
    absolute = text.startswith("/")
    parts = text.split("/")[1:] if absolute else text.split("/")
    *folders, name = parts
    here = Path("/") if absolute else world.work
    try:
        for part in folders:
            if part in ("", "."):
                continue
            if part == "..":
                here = here.parent  # lexically: no link was passed on the way, so this is the kernel's `..` too
                continue
            if not stat.S_ISDIR(os.lstat(here / part).st_mode):
                return None  # a link, a file, a FIFO on the way
            here = here / part
        if name in ("", ".", ".."):
            return None
        final = here / name
        try:
            found = os.lstat(final)
        except FileNotFoundError:
            found = None
    except OSError:  # a missing folder, a name too long
        return None
    if found is not None and not stat.S_ISREG(found.st_mode):
        return None
    given = {(info.st_dev, info.st_ino) for info in map(os.stat, world.inputs)}
    if found is not None and (found.st_dev, found.st_ino) in given:
        return None
    if any(here == path or here.is_relative_to(path) for path in world.inputs):
        return None
    return final


def tree(world: World) -> dict[str, str]:
    """The whole world as `snapshot` sees it (links by target, special files by kind), and /dev/null's kind."""
    found = snapshot(world.root)
    found["/dev/null"] = "character device" if stat.S_ISCHR(os.stat("/dev/null").st_mode) else "REPLACED"
    return found


def assert_outcome(world: World, before: dict[str, str], where: Path | None, written: bool, detail: str,
                   page: Callable[[bytes], bool] = PAGE.__eq__) -> None:
    """Refused with the tree as it was, or written as a regular file holding the `page` at `where` alone."""
    after = tree(world)
    if where is None:
        assert not written, f"written, but the rule refuses it: {detail}"
        assert after == before, f"refused, yet the tree changed: {detail}"
        return
    assert written, f"refused, but the rule writes it: {detail}"
    assert stat.S_ISREG(os.lstat(where).st_mode) and page(where.read_bytes()), detail
    key = where.relative_to(world.root).as_posix()
    assert {k: v for k, v in after.items() if k != key} == {k: v for k, v in before.items() if k != key}, \
        f"more than the file changed: {detail}"


def _settings(examples: int) -> Callable[[Any], Any]:
    database = DirectoryBasedExampleDatabase(str(REPO / ".hypothesis" / "examples"))
    return settings(max_examples=examples, deadline=None, database=database if LONG else None, print_blob=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@seed(SEED)
@_settings(EXAMPLES)
@given(target=targets())
@every_thing_once
def test_a_target_is_written_as_a_plain_file_there_or_refused_untouched(target: tuple[str, bool]) -> None:
    text, absolute = target
    with fresh_world() as world, current_folder(world.work):
        if absolute:
            text = f"{world.work}/{text}"
        where = expected(world, text)
        before = tree(world)
        try:
            write_file(text, PAGE, inputs=world.inputs)
            written, detail = True, repr(text)
        except WriteError as exc:
            written, detail = False, f"{text!r}: {exc}"
            assert str(exc).startswith(("refusing to write", "cannot write")) and "\n" not in str(exc), detail
        event("written" if written else "refused")
        assert_outcome(world, before, where, written, detail)


@seed(SEED)
@_settings(CLI_EXAMPLES)
@given(target=st.one_of(st.just(("-", False)), targets()))
def test_plan_draws_into_a_plain_file_or_refuses_untouched(target: tuple[str, bool]) -> None:
    """The real command line: `-` is standard output and the plan is not printed; a refusal is one line."""
    text, absolute = target
    with fresh_world(fleet=True) as world:
        if absolute:
            text = f"{world.work}/{text}"
        where = None if text == "-" else expected(world, text)
        before = tree(world)
        done = subprocess.run([sys.executable, "-m", "mpigen", "plan", "profiles", "--svg", text],
                              capture_output=True, cwd=world.work, timeout=120)
        stderr = done.stderr.decode("utf-8", "replace")
        assert "Traceback" not in stderr, stderr
        detail = f"{text!r}: exit {done.returncode}: {stderr}"
        if text == "-":
            assert done.returncode == 0 and done.stdout.startswith(b"<svg") and b"job(s):" not in done.stdout, detail
            assert tree(world) == before, detail
            return
        if done.returncode == 0:
            assert_outcome(world, before, where, True, detail, page=lambda data: data.startswith(b"<svg"))
            return
        assert done.returncode in (1, 2) and done.stdout == b"", detail
        if done.returncode == 1:
            assert len(stderr.splitlines()) == 1 and stderr.startswith("error: "), detail
        assert_outcome(world, before, where, False, detail)


@seed(SEED)
@_settings(max(EXAMPLES // 2, 1))
@given(target=targets())
def test_schemas_are_written_into_a_plain_folder_there_or_refused_untouched(target: tuple[str, bool]) -> None:
    text, absolute = target
    assume(text.rstrip("/").rpartition("/")[2] != "..")  # `../..` from work/ is a folder outside the world
    with fresh_world() as world, current_folder(world.work):
        if absolute:
            text = f"{world.work}/{text}"
        before = tree(world)
        try:
            written = write_schemas(Path(text))
        except WriteError as exc:
            assert str(exc).startswith(("refusing to write", "cannot write")) and "\n" not in str(exc), f"{text!r}: {exc}"
            assert tree(world) == before, f"refused, yet the tree changed: {text!r}: {exc}"
            event("refused")
            return
        event("written")
        exported = repository_schemas()
        (folder,) = {path.parent for path in written}
        assert sorted(path.name for path in written) == sorted(exported), text
        assert os.path.realpath(folder) == os.path.normpath(os.path.abspath(folder)), f"through a link: {text!r}"
        for path in written:
            assert stat.S_ISREG(os.lstat(path).st_mode) and path.read_text(encoding="utf-8") == exported[path.name]
        after = tree(world)
        files = {Path(os.path.abspath(path)).relative_to(world.root).as_posix() for path in written}
        changed = {key for key in before.keys() | after.keys() if before.get(key) != after.get(key)}
        assert {key for key in changed - files if not (key not in before and after[key] == "folder")} == set(), text
