"""`mpigen schema`: the profile schemas for an editor, printed or written into a folder of the user's repository,
from the source tree and from an installed wheel alike (which has no schemas/ folder beside it)."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

from conftest import REPO, run_mpigen, snapshot

from mpigen.support.schema_files import CONFIG_SCHEMA_FILE, KIND_SCHEMA_FILES

SCHEMA_FILES = sorted([*KIND_SCHEMA_FILES.values(), CONFIG_SCHEMA_FILE])
"""What `schema --write` writes: every profile kind's schema and the repository config's, as `mpigen init` does."""


def test_schema_prints_one_kind_as_shipped():
    printed = run_mpigen("schema", "job")
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout == (REPO / "schemas" / "job.schema.json").read_text(encoding="utf-8")


def test_schema_write_exports_every_kind_and_replaces_only_its_own(tmp_path):
    folder = tmp_path / "repo" / ".mpigen" / "schemas"
    written = run_mpigen("schema", "--write", folder)
    assert written.returncode == 0, written.stderr
    assert written.stdout == "".join(f"wrote {folder / name}\n" for name in SCHEMA_FILES)
    assert sorted(p.name for p in folder.iterdir()) == SCHEMA_FILES
    for name in SCHEMA_FILES:
        assert (folder / name).read_bytes() == (REPO / "schemas" / name).read_bytes()
    again = run_mpigen("schema", "--write", folder)  # after an upgrade: the same command refreshes them
    assert again.returncode == 0 and again.stdout == written.stdout, again.stderr
    (folder / "job.schema.json").write_text('{"$id": "https://example.com/job.schema.json"}\n', encoding="utf-8")
    before = snapshot(tmp_path)
    refused = run_mpigen("schema", "--write", folder)
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr == (f"error: refusing to write {folder / 'job.schema.json'}: it exists and is not mpigen's "
                              "job.schema.json; nothing was written: remove it, or give another folder\n")
    assert snapshot(tmp_path) == before


def test_schema_prints_the_config_schema_and_writes_quietly(tmp_path):
    printed = run_mpigen("schema", "config")
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout == (REPO / "schemas" / CONFIG_SCHEMA_FILE).read_text(encoding="utf-8")
    for args in (("-q", "schema", "--write", tmp_path / "a"), ("schema", "-q", "--write", tmp_path / "b")):
        quiet = run_mpigen(*args)
        assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", "")
        assert sorted(p.name for p in Path(args[-1]).iterdir()) == SCHEMA_FILES


def test_schema_needs_a_kind_or_a_folder():
    for args in ((), ("job", "--write", "out")):
        done = run_mpigen("schema", *args)
        assert done.returncode == 2 and "give a KIND to print its schema, or --write DIR" in done.stderr, done.stderr


def test_an_installed_wheel_writes_the_schemas_it_ships(tmp_path, built_wheel):
    site = tmp_path / "site"
    zipfile.ZipFile(built_wheel).extractall(site)
    work = tmp_path / "work"
    work.mkdir()
    done = subprocess.run([sys.executable, "-m", "mpigen", "schema", "--write", "schemas"], capture_output=True,
                          text=True, timeout=120, cwd=work, env={"PYTHONPATH": str(site)})
    assert done.returncode == 0, done.stderr
    assert done.stdout == "".join(f"wrote schemas/{name}\n" for name in SCHEMA_FILES)
    for name in SCHEMA_FILES:
        written = json.loads((work / "schemas" / name).read_text(encoding="utf-8"))
        assert written == json.loads((site / "mpigen" / "schemas" / name).read_text(encoding="utf-8"))
        assert written == json.loads((REPO / "schemas" / name).read_text(encoding="utf-8"))
