"""Edits that change nothing on the cluster change no committed chart file, so a review shows only real changes:
reordering a profile's keys (chart comments name a value's profile and key, not its line), and adding or removing a
job that needs nothing new from the cluster (a namespace's `mpigen/pod-security-reason` names no job)."""

from __future__ import annotations

import io
import shutil
from pathlib import Path
from typing import Any

from conftest import CHARTS, PROFILES, in_cache, run_mpigen
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap

# Mappings whose order is what they say: `env` is the containers' environment, in the order written.
ORDERED = frozenset({"env"})


def _reversed(node: Any, key: str = "") -> Any:
    """`node` with the keys of every mapping in reverse order, but those of ORDERED, at every depth."""
    if isinstance(node, CommentedMap):
        items = [(k, _reversed(v, str(k))) for k, v in node.items()]
        for k in list(node):
            del node[k]
        for k, v in items if key in ORDERED else reversed(items):
            node[k] = v
    elif isinstance(node, list):
        node[:] = [_reversed(item, key) for item in node]
    return node


def _files(root: Path) -> dict[str, bytes]:
    """Every file under `root` but a render's cache (a developer may keep a stamp in charts/)."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not in_cache(p, root)}


def _render(profiles: Path, out: Path, over_committed: bool = True) -> dict[str, bytes]:
    """The files `mpigen render` writes for `profiles`: over a copy of the committed charts, which say what each run
    is called (as `make render` does), or into an empty folder."""
    if over_committed:
        shutil.copytree(CHARTS, out, symlinks=True, ignore=shutil.ignore_patterns(".mpigen-cache"))
    result = run_mpigen("render", profiles, "-o", out)
    assert result.returncode == 0, result.stderr
    return _files(out)


def test_reordering_the_keys_of_every_profile_changes_no_chart_file(tmp_path):
    profiles = shutil.copytree(PROFILES, tmp_path / "profiles")
    yaml = YAML()
    moved = 0
    for path in sorted(profiles.rglob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        out = io.StringIO()
        yaml.dump(_reversed(yaml.load(text)), out)
        path.write_text(out.getvalue(), encoding="utf-8")
        moved += out.getvalue() != text
    assert moved == len(list(PROFILES.rglob("*.yaml")))  # jobs, clusters and hardware alike
    assert _render(profiles, tmp_path / "charts") == _files(CHARTS)
    # And what a release compiles of them, without the committed charts' names and specs to keep.
    assert _render(profiles, tmp_path / "fresh", False) == _render(PROFILES, tmp_path / "fresh-as-written", False)


def test_adding_and_removing_a_job_that_needs_nothing_new_changes_no_other_chart(tmp_path):
    """On dgx-lab, in namespace ml-training: a second RDMA job (privileged, like the one there) and a job that needs
    only baseline come, and the baseline job there goes. Only their own charts and the list of Applications change."""
    profiles = shutil.copytree(PROFILES, tmp_path / "profiles")
    for job, copy in (("resnet50-dgx", "aaa-resnet50"), ("tensorflow-benchmarks", "tf-again")):
        text = (profiles / "jobs" / f"{job}.yaml").read_text(encoding="utf-8")
        assert text.count(f"name: {job}\n") == 1 and "namespace: ml-training\n" in text
        (profiles / "jobs" / f"{copy}.yaml").write_text(text.replace(f"name: {job}\n", f"name: {copy}\n"),
                                                         encoding="utf-8")
    (profiles / "jobs" / "tensorflow-benchmarks.yaml").unlink()
    before, after = _files(CHARTS), _render(profiles, tmp_path / "charts")
    changed = {name for name in before.keys() | after.keys() if before.get(name) != after.get(name)}
    own = ("dgx-lab/jobs/aaa-resnet50/", "dgx-lab/jobs/tf-again/", "dgx-lab/jobs/tensorflow-benchmarks/")
    assert {name for name in changed if not name.startswith(own)} == {
        ".mpigen-owned", "dgx-lab/bootstrap/apps/applications.yaml"}
    assert all(any(name.startswith(prefix) for name in changed) for prefix in own)
