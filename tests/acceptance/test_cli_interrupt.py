"""Ctrl-C and SIGTERM at any moment of a real `mpigen render`: one line on stderr, exit 130 (143), no traceback, the
charts old or new (never a mix, never a staging folder), nothing left in TMPDIR.

generator/__main__.py installs its handling before it imports anything else. The moments are counted from
when it has done so, which the test reads from the kernel (/proc/<pid>/status, SigCgt: the process catches
SIGTERM only once mpigen's own handler is in place). Before that moment runs CPython's own start-up (about
10 ms: site, runpy), where no code of a package can run; a Ctrl-C there is CPython's to report."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import PROFILES, run_mpigen

from mpigen.write import STAGING_DIR

MOMENTS = [i * 0.025 for i in range(16)] + [0.45, 0.6, 0.8, 1.0, 1.5]  # a render takes ~0.3-0.5 s
PROC = Path("/proc")


def digest(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def catches(pid: int, signum: int) -> bool:
    """Whether process `pid` has a handler installed for `signum`, as the kernel sees it."""
    try:
        status = (PROC / str(pid) / "status").read_text()
    except FileNotFoundError:
        return False
    mask = int(re.search(r"^SigCgt:\s*([0-9a-f]+)$", status, re.M).group(1), 16)
    return bool(mask & (1 << (signum - 1)))


@pytest.fixture(scope="module")
def fleets(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, str], dict[str, str]]:
    """Old charts (the example), new profiles (every job image retagged), and the digests of both outputs."""
    root = tmp_path_factory.mktemp("fleets")
    old = root / "old"
    assert run_mpigen("render", PROFILES, "-o", old).returncode == 0
    new_profiles = root / "profiles"
    shutil.copytree(PROFILES, new_profiles)
    for job in (new_profiles / "jobs").glob("*.yaml"):
        text = job.read_text(encoding="utf-8")
        job.write_text(re.sub(r"(?m)^image: (\S+)$", r"image: \1-r2", text), encoding="utf-8")
    new = root / "new"
    assert run_mpigen("render", new_profiles, "-o", new).returncode == 0
    assert digest(old) != digest(new)
    return old, new_profiles, digest(old), digest(new)


def launchers() -> dict[str, list[str]]:
    script = Path(sys.executable).parent / "mpigen"
    if not script.is_file():
        pytest.fail(f"no console script at {script}: run `make test`, which installs mpigen (pip install -e .)",
                    pytrace=False)
    return {"module": [sys.executable, "-m", "mpigen"], "script": [str(script)]}


@pytest.mark.parametrize(("signum", "code", "line"), [(signal.SIGINT, 130, "error: interrupted"),
                                                      (signal.SIGTERM, 143, "error: terminated")], ids=["INT", "TERM"])
@pytest.mark.parametrize("launcher", ["module", "script"])
def test_a_signal_at_any_moment_is_one_line_and_leaves_old_or_new_charts(tmp_path, fleets, launcher, signum, code,
                                                                         line):
    if not PROC.is_dir():
        pytest.skip("needs Linux's /proc to see when mpigen's signal handling is in place")
    old, new_profiles, old_state, new_state = fleets
    command = launchers()[launcher]
    outcomes = []
    for index, moment in enumerate(MOMENTS):
        out = tmp_path / f"charts-{index}"
        shutil.copytree(old, out)
        tmpdir = tmp_path / f"tmp-{index}"
        tmpdir.mkdir()
        process = subprocess.Popen([*command, "render", str(new_profiles), "-o", str(out)],
                                   env={**os.environ, "TMPDIR": str(tmpdir)},
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 30
        while not catches(process.pid, signal.SIGTERM) and process.poll() is None:
            assert time.monotonic() < deadline, "mpigen never installed its signal handling"
            time.sleep(0.0005)
        try:  # a render that ends before the moment gets no signal: waiting on would only pass the time
            process.wait(timeout=moment)
        except subprocess.TimeoutExpired:
            process.send_signal(signum)
        _, stderr = process.communicate(timeout=60)
        assert "Traceback" not in stderr, (moment, stderr)
        if process.returncode == 0:
            outcomes.append("finished")
        else:
            assert (process.returncode, stderr) == (code, f"{line}\n"), (moment, process.returncode, stderr)
            outcomes.append("stopped")
        state = digest(out)
        assert state in (old_state, new_state), f"after {moment} s: neither the old charts nor the new ones"
        assert not (out / STAGING_DIR).exists(), f"after {moment} s: the staging folder was left behind"
        assert list(tmpdir.iterdir()) == [], f"after {moment} s: left in TMPDIR: {list(tmpdir.iterdir())}"
    assert outcomes[0] == "stopped" and outcomes.count("stopped") >= len(MOMENTS) // 3, outcomes  # it did interrupt


def test_a_signal_a_library_swallows_still_ends_the_command_as_stopped():
    """ruamel.yaml's `CommentedMap.get` swallows any exception (a bare `except:`) and returns its default: a signal
    that lands inside it leaves the command running on a wrong value (a profile without its `kind`) until something
    fails. Whatever fails after a signal, the command ends as stopped: one line, 143, no traceback."""
    probe = ("import os, signal\n"
             "import mpigen.__main__ as entry\n"
             "import mpigen.commands.cli as cli\n"
             "from ruamel.yaml.comments import CommentedMap\n"
             "class Interrupted(CommentedMap):\n"
             "    def __getitem__(self, key):\n"
             "        os.kill(os.getpid(), signal.SIGTERM)\n"
             "        return super().__getitem__(key)\n"
             "def main(**_):\n"
             "    document = Interrupted(kind='Job')\n"
             "    {'Job': []}[document.get('kind')]  # KeyError: None, as resolve met it\n"
             "cli.main = main\n"
             "entry.run()\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=False)
    assert (result.returncode, result.stderr) == (143, "error: terminated\n")
