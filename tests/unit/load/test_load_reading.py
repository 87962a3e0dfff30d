"""generator/load/reading.py: reading profiles without parsing them gives the fingerprint loading gives, and
the fingerprint follows every byte, name and path of the profiles."""

from __future__ import annotations

import shutil

import pytest
from conftest import PROFILES

from mpigen.load import fingerprint_paths, load_paths
from mpigen.load.reading import source_names

pytestmark = pytest.mark.usefixtures("parse_every_time")  # tests of loading parse each file (conftest.ParseMemo)


def test_reading_and_loading_agree_on_the_fingerprint(tmp_path):
    assert fingerprint_paths([PROFILES]) == load_paths([PROFILES]).fingerprint is not None
    profiles = shutil.copytree(PROFILES, tmp_path / "profiles")
    before = fingerprint_paths([profiles])
    job = next(iter(sorted((profiles / "jobs").glob("*.yaml"))))
    job.write_bytes(job.read_bytes() + b"\n")  # one byte more, nothing else
    assert fingerprint_paths([profiles]) not in (before, None)
    assert fingerprint_paths([profiles]) == load_paths([profiles]).fingerprint
    job.rename(job.with_name("renamed.yaml"))
    assert fingerprint_paths([profiles]) not in (before, None)


def test_a_profile_that_cannot_be_read_gives_no_fingerprint(tmp_path):
    profiles = shutil.copytree(PROFILES, tmp_path / "profiles")
    (profiles / "jobs" / "broken.yaml").symlink_to(tmp_path / "nowhere.yaml")
    assert fingerprint_paths([profiles]) is None and load_paths([profiles]).fingerprint is None


def test_names_are_stable_and_a_link_is_named_by_where_it_leads(tmp_path):
    profiles = shutil.copytree(PROFILES, tmp_path / "profiles")
    (profiles / "jobs" / "alias.yaml").symlink_to(profiles / "jobs" / "pi.yaml")
    files = [(profiles / "jobs" / "pi.yaml", profiles), (profiles / "jobs" / "alias.yaml", profiles)]
    assert source_names(files) == ["profiles/jobs/pi.yaml", "profiles/jobs/pi.yaml"]
