"""`compare_tree` (generator/write/compare.py): what `render --check` lists, and the stale files it keeps."""

from __future__ import annotations

from mpigen.write import compare_tree, write_tree

FILES = {"c/Chart.yaml": b"old chart\n", "c/values.yaml": b"old values\n", "d/Chart.yaml": b"same\n"}


def test_the_stale_files_asked_for_are_kept_as_found(tmp_path):
    out = tmp_path / "out"
    write_tree(out, FILES)
    wanted = {"c/Chart.yaml": b"new chart\n", "c/values.yaml": b"new values\n", "d/Chart.yaml": b"same\n",
              "e/Chart.yaml": b"added\n"}
    diff = compare_tree(out, wanted, keep_found=lambda path: path.endswith("/Chart.yaml"))
    assert diff.stale == [".mpigen-owned", "c/Chart.yaml", "c/values.yaml"] and diff.missing == ["e/Chart.yaml"]
    assert diff.found == {"c/Chart.yaml": b"old chart\n"}  # not values.yaml (not asked), nor d (up to date), nor e
    assert compare_tree(out, wanted).found == {}
