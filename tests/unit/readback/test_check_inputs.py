"""generator/readback/inputs.py: what check (and Helm) may read: regular files within bounds, inside the chart."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from mpigen.readback.inputs import (
    MAX_CHART_FILES,
    InputError,
    chart_refusals,
    json_too_deep,
    load_json,
    read_bytes,
    read_text,
)


def test_a_regular_file_within_the_limit_is_read(tmp_path):
    file = tmp_path / "m.yaml"
    file.write_bytes(b"\xef\xbb\xbfa: 1\n")
    assert read_text(file, 100) == "a: 1\n"


@pytest.mark.parametrize("kind", ["fifo", "device", "folder"])
def test_what_is_not_a_regular_file_is_refused_without_blocking(tmp_path, kind):
    path = tmp_path / "m.yaml"
    if kind == "fifo":
        os.mkfifo(path)  # no writer: a blocking open would wait for ever
    elif kind == "device":
        path.symlink_to("/dev/zero")
    else:
        path.mkdir()
    with pytest.raises(InputError, match=r"is not a regular file|is a folder"):
        read_bytes(path, 100)


def test_a_file_over_the_limit_is_refused_unread(tmp_path):
    file = tmp_path / "m.yaml"
    file.write_bytes(b"x" * 101)
    with pytest.raises(InputError, match="file is 101 bytes, more than the 100 check reads"):
        read_bytes(file, 100)


def test_a_dangling_link_and_bad_utf8_say_so(tmp_path):
    (tmp_path / "gone.yaml").symlink_to(tmp_path / "nowhere")
    with pytest.raises(InputError, match=r"is a link to '.*nowhere', which does not exist"):
        read_bytes(tmp_path / "gone.yaml", 100)
    (tmp_path / "latin1.yaml").write_bytes(b"a: caf\xe9\n")
    with pytest.raises(InputError, match="byte 0xe9 at offset 6 is not valid UTF-8"):
        read_text(tmp_path / "latin1.yaml", 100)


@pytest.mark.parametrize(("text", "where"), [
    ("[" * 3 + "]" * 3, None), ("[" * 4, 3), ('["[[[[[["]', None), ('["\\"[[[[[["]', None),
    ('{"a\\\\": [[[[', 10), ('"\\\\"[[[[', 7),
])
def test_json_depth_is_counted_outside_strings(text, where):
    assert json_too_deep(text, 3) == where


def test_deep_json_is_refused_before_the_recursive_parser(tmp_path):
    with pytest.raises(ValueError, match="nest more than 100 deep"):
        load_json("[" * 100_000 + "]" * 100_000, 100)
    started = time.monotonic()
    assert json_too_deep('"' + "\\\"" * 500_000 + '"', 100) is None
    assert time.monotonic() - started < 5


def _chart(tmp_path: Path) -> Path:
    chart = tmp_path / "c"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n", encoding="utf-8")
    return chart


def test_a_chart_of_plain_files_and_inner_file_links_is_accepted(tmp_path):
    chart = _chart(tmp_path)
    (chart / "templates" / "a.yaml").write_text("a: 1\n", encoding="utf-8")
    (chart / "templates" / "b.yaml").symlink_to("a.yaml")
    assert chart_refusals(chart) == []


def test_links_out_folder_links_and_special_files_are_refused(tmp_path):
    chart = _chart(tmp_path)
    (tmp_path / "secret").write_text("s\n", encoding="utf-8")
    (chart / "leak.txt").symlink_to(tmp_path / "secret")
    (chart / "templates" / "loop").symlink_to(chart, target_is_directory=True)
    (chart / "templates" / "zero.yaml").symlink_to("/dev/zero")
    os.mkfifo(chart / "templates" / "fifo.yaml")
    refusals = {r.path: r.why for r in chart_refusals(chart)}
    assert sorted(refusals) == ["leak.txt", "templates/fifo.yaml", "templates/loop", "templates/zero.yaml"]
    assert refusals["leak.txt"].startswith(f"is a link to '{tmp_path / 'secret'}', outside the chart")
    assert refusals["templates/loop"].startswith(f"is a link to the folder '{chart}'")
    assert refusals["templates/fifo.yaml"].startswith("is not a regular file")


def test_a_chart_of_too_many_files_is_refused(tmp_path):
    chart = _chart(tmp_path)
    for number in range(MAX_CHART_FILES + 1):
        (chart / "templates" / f"{number}.yaml").touch()
    assert [r.path for r in chart_refusals(chart)] == ["."]
