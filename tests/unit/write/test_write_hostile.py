"""generator/write.py against an output folder a pull request controls: committed links, a committed
`.mpigen-staging/plan.committed.json`, a damaged `.mpigen-owned`. Through `mpigen render`: one `error:` line, exit 1,
no traceback, and nothing inside or outside the folder touched. The attacks by links and FIFOs run the real command in
a process of its own; the many hostile plans and damaged ownership lists the same command line in-process
(conftest.invoke_mpigen). What is rendered is the base fleet (conftest.base_profiles): the writer's defences do not
depend on how many charts it writes."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest
from conftest import invoke_mpigen, run_mpigen, snapshot

from mpigen.write import COMMITTED_PLAN, OWNERSHIP_FILE, STAGING_DIR, WriteRefused, write_tree


@pytest.fixture(scope="module")
def example_charts(tmp_path_factory: pytest.TempPathFactory, base_profiles: Path) -> Path:
    out = tmp_path_factory.mktemp("example") / "charts"
    assert run_mpigen("render", base_profiles, "-o", out).returncode == 0
    return out


@pytest.fixture
def world(tmp_path: Path, example_charts: Path) -> tuple[Path, Path]:
    """The example charts rendered into tmp/charts, and tmp/outside: a folder with a file to protect."""
    out = tmp_path / "charts"
    shutil.copytree(example_charts, out, symlinks=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.yaml").write_bytes(b"keep me\n")
    return out, outside


def plant_plan(out: Path, plan: object, staged: dict[str, bytes] | None = None) -> Path:
    staging = out / STAGING_DIR
    staging.mkdir(exist_ok=True)
    for path, data in (staged or {}).items():
        (staging / path).parent.mkdir(parents=True, exist_ok=True)
        (staging / path).write_bytes(data)
    text = plan if isinstance(plan, str) else json.dumps(plan)
    (staging / COMMITTED_PLAN).write_text(text, encoding="utf-8")
    return staging


def assert_refused_untouched(result, root: Path, before: dict[str, str], *, says: str) -> None:
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert says in lines[0], lines[0]
    assert snapshot(root) == before, "a refused render changed files"


def test_a_committed_plan_through_a_committed_link_touches_nothing_outside(world, tmp_path, base_profiles):
    """The red team's attack: `charts/evil` links outside; the plan deletes and writes through it."""
    out, outside = world
    (out / "evil").symlink_to(outside, target_is_directory=True)
    plant_plan(out, {"move": ["evil/pwned.yaml"], "delete": ["evil/victim.yaml"]},
               {"evil/pwned.yaml": b"written outside\n"})
    before = snapshot(tmp_path)
    result = run_mpigen("render", base_profiles, "-o", out)
    assert_refused_untouched(result, tmp_path, before, says="is not a plan mpigen wrote")
    assert (outside / "victim.yaml").read_bytes() == b"keep me\n"
    assert not (outside / "pwned.yaml").exists()


HOSTILE_PLANS = {
    "delete-dotdot": ({"move": [], "delete": ["../outside/victim.yaml"]}, {}),
    "delete-absolute": ({"move": [], "delete": ["{outside}/victim.yaml"]}, {}),
    "move-dotdot": ({"move": ["../outside/pwned.yaml"], "delete": []}, {}),
    "move-then-bad-delete": ({"move": ["dgx-lab/infra/Chart.yaml"], "delete": ["../outside/victim.yaml"]},
                             {"dgx-lab/infra/Chart.yaml": b"replaced\n"}),
    "non-canonical": ({"move": ["dgx-lab//infra/Chart.yaml"], "delete": []}, {"dgx-lab/infra/Chart.yaml": b"x\n"}),
    "into-staging": ({"move": [], "delete": [f"{STAGING_DIR}/{COMMITTED_PLAN}"]}, {}),
    "not-json": ("{move: [", {}),
    "a-list": (["dgx-lab/infra/Chart.yaml"], {}),
    "ints": ({"move": [1, 2], "delete": []}, {}),
    "move-not-a-list": ({"move": 5, "delete": []}, {}),
    "missing-key": ({"move": []}, {}),
    "extra-key": ({"move": [], "delete": [], "run": ["rm -rf /"]}, {}),
    "deletes-ownership": ({"move": [], "delete": [OWNERSHIP_FILE]}, {}),
    "twice": ({"move": ["a.yaml", "a.yaml"], "delete": []}, {"a.yaml": b"x\n"}),
}


@pytest.mark.parametrize("case", HOSTILE_PLANS, ids=list(HOSTILE_PLANS))
def test_a_hostile_plan_is_refused_before_anything_moves(world, tmp_path, case, base_profiles):
    out, outside = world
    plan, staged = HOSTILE_PLANS[case]
    plan = json.loads(json.dumps(plan).replace("{outside}", str(outside))) if not isinstance(plan, str) else plan
    plant_plan(out, plan, staged)
    before = snapshot(tmp_path)
    result = invoke_mpigen("render", base_profiles, "-o", out)
    assert_refused_untouched(result, tmp_path, before, says="is not a plan mpigen wrote")


def test_a_staged_link_is_not_moved_into_the_charts(world, tmp_path, base_profiles):
    """A plan that moves a link from the staging folder would put a link to anywhere among the charts."""
    out, outside = world
    staging = plant_plan(out, {"move": ["dgx-lab/infra/Chart.yaml"], "delete": []})
    (staging / "dgx-lab/infra").mkdir(parents=True)
    (staging / "dgx-lab/infra/Chart.yaml").symlink_to(outside / "victim.yaml")
    before = snapshot(tmp_path)
    result = run_mpigen("render", base_profiles, "-o", out)
    assert_refused_untouched(result, tmp_path, before, says="symbolic link")


def test_a_staged_folder_that_links_outside_cannot_pull_files_in(world, tmp_path, base_profiles):
    """`staging/dgx-lab` linking outside: replaying would move the outside file into the charts (gone from there)."""
    out, outside = world
    staging = plant_plan(out, {"move": ["dgx-lab/victim.yaml"], "delete": []})
    (staging / "dgx-lab").symlink_to(outside, target_is_directory=True)
    before = snapshot(tmp_path)
    result = run_mpigen("render", base_profiles, "-o", out)
    assert_refused_untouched(result, tmp_path, before, says="symbolic link")
    assert (outside / "victim.yaml").read_bytes() == b"keep me\n"


def test_a_staging_folder_that_is_a_link_is_refused(world, tmp_path, base_profiles):
    out, outside = world
    (outside / COMMITTED_PLAN).write_text(json.dumps({"move": [], "delete": ["dgx-lab/infra/Chart.yaml"]}))
    (out / STAGING_DIR).symlink_to(outside, target_is_directory=True)
    before = snapshot(tmp_path)
    result = run_mpigen("render", base_profiles, "-o", out)
    assert_refused_untouched(result, tmp_path, before, says="symbolic link")


def test_an_uncommitted_staging_with_links_is_discarded_without_following_them(world, tmp_path, base_profiles):
    """A staging folder without a committed plan is thrown away: its links go, what they point at stays."""
    out, outside = world
    staging = out / STAGING_DIR
    staging.mkdir()
    (staging / "into-outside").symlink_to(outside, target_is_directory=True)
    (staging / "file-link").symlink_to(outside / "victim.yaml")
    result = run_mpigen("render", base_profiles, "-o", out)
    assert result.returncode == 0, result.stderr
    assert not os.path.lexists(staging)
    assert snapshot(outside) == {"victim.yaml": hashlib.sha256(b"keep me\n").hexdigest()}


def test_a_valid_plan_is_replayed(world, base_profiles):
    """What an interrupted render leaves is still completed: the validation refuses only what mpigen never writes."""
    out, _ = world
    chart = out / "dgx-lab/infra/Chart.yaml"
    original = chart.read_bytes()
    plant_plan(out, {"move": ["dgx-lab/infra/Chart.yaml"], "delete": []}, {"dgx-lab/infra/Chart.yaml": b"staged\n"})
    result = run_mpigen("render", base_profiles, "-o", out)
    assert result.returncode == 0, result.stderr
    assert chart.read_bytes() == original  # replayed, then this render put the compiled file back
    assert "1 file(s) written" in result.stdout, result.stdout
    assert not (out / STAGING_DIR).exists()


DAMAGED_OWNERSHIP = {
    "not-json": "{files: [",
    "a-list": '["dgx-lab/infra/Chart.yaml"]',
    "files-an-int": '{"generator": "mpigen", "files": 5}',
    "files-ints": '{"generator": "mpigen", "files": [1, 2]}',
    "files-a-dict": '{"generator": "mpigen", "files": {"a": 1}}',
    "files-leaving": '{"generator": "mpigen", "files": ["../outside/victim.yaml"]}',
    "not-utf8": b"\xff\xfe{}",
}


@pytest.mark.parametrize("case", DAMAGED_OWNERSHIP, ids=list(DAMAGED_OWNERSHIP))
def test_a_damaged_ownership_list_is_one_error_line(world, tmp_path, case, base_profiles):
    out, _ = world
    text = DAMAGED_OWNERSHIP[case]
    (out / OWNERSHIP_FILE).write_bytes(text if isinstance(text, bytes) else text.encode())
    before = snapshot(tmp_path)
    result = invoke_mpigen("render", base_profiles, "-o", out)
    assert_refused_untouched(result, tmp_path, before, says=f"{OWNERSHIP_FILE} is damaged")


def test_an_ownership_list_that_is_a_folder_is_one_error_line(world, tmp_path, base_profiles):
    out, _ = world
    (out / OWNERSHIP_FILE).unlink()
    (out / OWNERSHIP_FILE).mkdir()
    before = snapshot(tmp_path)
    result = run_mpigen("render", base_profiles, "-o", out)
    assert_refused_untouched(result, tmp_path, before, says="is a folder")


def test_an_ownership_list_that_is_a_link_is_not_followed(world, tmp_path, base_profiles):
    """A link to a list elsewhere would make that list decide what is pruned here."""
    out, outside = world
    listed = json.loads((out / OWNERSHIP_FILE).read_text())
    (outside / "list.json").write_text(json.dumps(listed))
    (out / OWNERSHIP_FILE).unlink()
    (out / OWNERSHIP_FILE).symlink_to(outside / "list.json")
    before = snapshot(tmp_path)
    result = run_mpigen("render", base_profiles, "-o", out)
    assert_refused_untouched(result, tmp_path, before, says="symbolic link")


def test_an_output_folder_that_is_a_link_is_refused(world, tmp_path, base_profiles):
    _, outside = world
    link = tmp_path / "charts-link"
    link.symlink_to(outside, target_is_directory=True)
    before = snapshot(tmp_path)
    result = run_mpigen("render", base_profiles, "-o", link)
    assert_refused_untouched(result, tmp_path, before, says="symbolic link")


def test_a_fifo_among_the_charts_does_not_hang_the_render(world, tmp_path, base_profiles):
    out, _ = world
    chart = out / "dgx-lab/infra/Chart.yaml"
    chart.unlink()
    os.mkfifo(chart)
    before = snapshot(tmp_path)
    result = run_mpigen("render", base_profiles, "-o", out)  # run_mpigen's timeout fails the test on a hang
    assert_refused_untouched(result, tmp_path, before, says="not a regular file")


def test_render_check_reports_a_link_as_stale_without_reading_through_it(world, tmp_path, base_profiles):
    out, outside = world
    chart = out / "dgx-lab/infra/Chart.yaml"
    shutil.copy(chart, outside / "same.yaml")  # identical bytes: following the link would call it up to date
    chart.unlink()
    chart.symlink_to(outside / "same.yaml")
    result = run_mpigen("render", base_profiles, "-o", out, "--check")
    assert result.returncode == 1, result.stderr
    assert f"stale: {chart}" in result.stdout.splitlines(), result.stdout


# --- unit level: the same rules for callers of write_tree --------------------------------------------------------------

def test_write_tree_refuses_a_plan_before_moving_any_of_it(tmp_path):
    out = tmp_path / "charts"
    write_tree(out, {"c/a.yaml": b"a\n", "c/b.yaml": b"b\n"})
    plant_plan(out, {"move": ["c/a.yaml"], "delete": ["c/../../x"]}, {"c/a.yaml": b"staged\n"})
    before = snapshot(tmp_path)
    with pytest.raises(WriteRefused, match="is not a plan mpigen wrote"):
        write_tree(out, {"c/a.yaml": b"a\n"})
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("path", ["a/./b.yaml", "a//b.yaml", "a/", f"{STAGING_DIR}/x.yaml", "a\x00b"])
def test_write_tree_refuses_paths_that_are_not_plain(tmp_path, path):
    out = tmp_path / "charts"
    with pytest.raises(WriteRefused):
        write_tree(out, {path: b"x\n"})
    assert not out.exists()
