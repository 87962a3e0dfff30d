"""tests/upstream/: the upstream files the tests read are in the repository, each recorded in SOURCES.yaml with its
repository, commit, path and licence, and nothing is recorded that is not there; no test reads from beside the
repository, where a user's clone has nothing."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from conftest import REPO, UPSTREAM
from ruamel.yaml import YAML

SOURCES = UPSTREAM / "SOURCES.yaml"
# SPDX ids (or LicenseRef-) of the copies' licences
LICENSES = {"Apache-2.0", "BSD-3-Clause", "CC-BY-4.0", "LicenseRef-OASIS-IPR"}
# A path that leaves the repository: the folder beside it (`..` then `/shared`), `REPO.parent`, "shared" joined
# onto the repository or a parent of it (`parents[2] / "shared"`), or an absolute path of this machine's work folder.
BESIDE = re.compile(r"\.\./shared|\bREPO\.parent\b|(?:REPO|PROFILES|parent|\])\s*/\s*[\"']shared[\"']|[\"']/work/")
LICENSE_TEXTS = UPSTREAM / "LICENSES"


def recorded() -> list[dict[str, Any]]:
    return YAML(typ="safe").load(SOURCES.read_text(encoding="utf-8"))["sources"]


def test_every_copied_file_has_one_entry_and_every_entry_a_file():
    listed = sorted(file for entry in recorded() for file in entry["files"])
    present = sorted(path.relative_to(UPSTREAM).as_posix() for path in UPSTREAM.rglob("*")
                     if path.is_file() and path != SOURCES and LICENSE_TEXTS not in path.parents)
    assert listed == present


def test_every_entry_names_its_repository_commit_paths_and_licence():
    for entry in recorded():
        assert set(entry) == {"repo", "commit", "license", "files"}, entry
        assert re.fullmatch(r"[\w.-]+/[\w.-]+", entry["repo"]), entry["repo"]
        assert re.fullmatch(r"[0-9a-f]{40}", entry["commit"]), entry["commit"]
        assert entry["license"] in LICENSES, entry["license"]
        for file, path in entry["files"].items():
            assert isinstance(path, str) and path and not path.startswith("/"), (file, path)


def test_no_test_or_script_reads_from_beside_the_repository():
    sources = [REPO / "Makefile", REPO / ".ci" / "run", *sorted((REPO / "tests").rglob("*.py")),
               *sorted((REPO / "scripts").rglob("*.py"))]
    found = [f"{path.relative_to(REPO)}:{number}: {line.strip()}" for path in sources if path != Path(__file__)
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if BESIDE.search(line)]
    assert found == []


def test_every_licence_of_a_copied_file_ships_with_the_copy():
    """Apache-2.0 asks that recipients get a copy of the licence (section 4(a)); CC BY 4.0 its text or its URI; BSD-3-Clause
    its notice, conditions and disclaimer."""
    named = {entry["license"] for entry in recorded()}
    assert sorted(path.stem for path in LICENSE_TEXTS.glob("*.txt")) == sorted(named)
    assert "Version 2.0, January 2004" in (LICENSE_TEXTS / "Apache-2.0.txt").read_text(encoding="utf-8")
    assert "https://creativecommons.org/licenses/by/4.0/legalcode" in (LICENSE_TEXTS / "CC-BY-4.0.txt").read_text(
        encoding="utf-8")
    assert "Redistribution and use in source and binary forms" in (LICENSE_TEXTS / "BSD-3-Clause.txt").read_text(
        encoding="utf-8")
    assert "OASIS policies" in (LICENSE_TEXTS / "LicenseRef-OASIS-IPR.txt").read_text(encoding="utf-8")
