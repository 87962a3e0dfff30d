"""`mpigen plan --html/--svg` looked at as a person would: the page is rendered by a real headless Chromium (Debian's
package; `make test` installs it where apt works), and what the browser made of it is checked: every job and rail of
the example fleet is on the page, each running job's colour is on the screen, and each rank's NIC on the page is the
NIC `mpigen explain` names for it."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest
from conftest import PROFILES, REPO, invoke_mpigen, run_mpigen

from mpigen.commands.pipeline import check_profiles
from mpigen.insight.picture import job_colours
from mpigen.insight.plan import plan_fleet

# The example fleet's job that waits (`mpigen plan`): language-bert, for its cohort's quota. A waiting job's ranks
# are not drawn.
WAITING = {"language-bert"}


def chromium() -> str:
    """The browser: MPIGEN_CHROMIUM, or `chromium` on the PATH. `make chromium` installs Debian's package only where
    apt-get runs as root, so without one this test skips on a developer's machine; in CI (`CI` set) it fails."""
    found = os.environ.get("MPIGEN_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        reason = "no chromium (Debian's package `chromium`: `make chromium` installs it where apt-get runs as root)"
        if os.environ.get("CI"):
            pytest.fail(f"{reason}; CI is set, where the picture test must run", pytrace=False)
        pytest.skip(reason)
    return found


def browse(tmp_path: Path, page: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    """Headless Chromium on a local file, with its profile in `tmp_path` and no network."""
    command = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--mute-audio",
               "--no-first-run", f"--user-data-dir={tmp_path / 'chromium-profile'}",
               "--proxy-server=127.0.0.1:9", *args, page.as_uri()]
    return subprocess.run(command, capture_output=True, timeout=120, check=True,
                          env={**os.environ, "HOME": str(tmp_path)})


class Elements(HTMLParser):
    """Every element's attributes, and each `data-cluster` section's, as the browser serialised the page."""

    def __init__(self) -> None:
        super().__init__()
        self.elements: list[tuple[str | None, dict[str, str]]] = []
        self.cluster: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {k: v or "" for k, v in attrs}
        if tag == "section":
            self.cluster = found.get("data-cluster")
        self.elements.append((self.cluster, found))


def png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and rows of RGB(A) bytes of an 8-bit, non-interlaced PNG (what Chromium writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0, header
    step = 4 if colour == 6 else 3
    raw, stride, rows, previous = zlib.decompress(chunks), width * step, [], bytearray(width * step)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - step] if i >= step else 0
            up, corner = previous[i], previous[i - step] if i >= step else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 0xFF
        rows.append(bytes(line if step == 3 else b"".join(line[i:i + 3] for i in range(0, stride, 4))))
        previous = line
    return width, height, rows


@pytest.fixture(scope="module")
def drawn(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    out = tmp_path_factory.mktemp("picture")
    made = run_mpigen("plan", PROFILES, "--html", out / "plan.html", "--svg", out / "plan.svg")
    assert made.returncode == 0, made.stderr
    return out, out / "plan.html", out / "plan.svg"


def test_the_page_is_self_contained_and_the_same_every_time(drawn, tmp_path):
    out, html, svg = drawn
    again = run_mpigen("plan", PROFILES, "--html", tmp_path / "again.html", "--svg", tmp_path / "again.svg")
    assert again.returncode == 0
    assert html.read_bytes() == (tmp_path / "again.html").read_bytes()
    assert svg.read_bytes() == (tmp_path / "again.svg").read_bytes()
    for page in (html, svg):
        text = page.read_text(encoding="utf-8")
        assert "<script" not in text.lower() and "url(" not in text and "href" not in text
        assert {part.split('"')[0] for part in text.split("http")[1:]} == {"://www.w3.org/2000/svg"}
    assert sorted(p.name for p in out.iterdir()) == ["plan.html", "plan.svg"], "no temporary file is left"


def test_chromium_shows_every_job_and_rail_and_each_ranks_nic_is_explains(drawn, tmp_path):
    _, html, _ = drawn
    dom = browse(tmp_path, html, "--dump-dom").stdout.decode("utf-8")
    parsed = Elements()
    parsed.feed(dom)
    result = check_profiles([PROFILES])
    fleet = result.fleet
    for cluster in fleet.clusters:
        attrs = [a for c, a in parsed.elements if c == cluster.name]
        assert {a["data-legend-job"] for a in attrs if "data-legend-job" in a} == \
            {job.name for job in fleet.jobs_of(cluster)}
        drawn_rails = {a["data-rail"] for a in attrs if "data-rail" in a and a.get("data-rail")}
        assert drawn_rails == {rail.name for rail in cluster.rails}
        assert {int(a["data-node"]) for a in attrs if "data-node" in a} == \
            set(range(max(pool.nodes for pool in cluster.pools)))
    # Every rank drawn: its NIC is the one `mpigen explain` names for it (through the real command).
    ranks = [(c, a) for c, a in parsed.elements if "data-rank" in a]
    assert len(ranks) == sum(j.worker_count * j.slots_per_worker for j in fleet.jobs if j.uses_gpus
                             and j.name not in WAITING), "every rank of every GPU job that starts"
    explained = {}
    for _, attrs in ranks:
        job = attrs["data-job"]
        if job not in explained:
            said = invoke_mpigen("explain", job, "-p", PROFILES, "--output", "json")
            assert said.returncode == 0, said.stderr
            explained[job] = {rank["rank"]: rank for rank in json.loads(said.stdout)["ranks"]}
        rank = explained[job][int(attrs["data-rank"])]
        assert attrs["data-nic"] == (rank["nic"] or ""), (job, attrs)
    # And, apart from explain: a rank's NIC is the box its GPU is drawn beside, the first NIC whose `gpus` the
    # hardware profile lists that GPU under (empty where the worker's GPUs are the device plugin's choice).
    jobs = {(job.cluster.name, job.name): job for job in fleet.jobs}
    beside = None
    checked = 0
    for cluster, attrs in parsed.elements:
        if "data-nic" in attrs and "data-rank" not in attrs:
            beside = attrs["data-nic"]
        elif "data-node" in attrs:
            beside = None
        if "data-rank" not in attrs or not attrs["data-nic"]:
            continue
        hardware = jobs[(cluster, attrs["data-job"])].pool.hardware
        listed = next(nic.name for nic in hardware.nics if int(attrs["data-gpu"]) in nic.gpus)
        assert attrs["data-nic"] == beside == listed, (cluster, attrs)
        checked += 1
    assert checked >= 16 * 3, "the whole-node jobs' ranks of dgx-lab, netapp-lab and volcano-lab at least"
    resnet = [a for c, a in ranks if a["data-job"] == "resnet50-dgx" and a["data-rank"] == "13"]
    assert [(a["data-gpu"], a["data-nic"]) for a in resnet] == [("5", "ib2")]


def test_chromium_paints_each_running_jobs_colour(drawn, tmp_path):
    _, html, svg = drawn
    result = check_profiles([PROFILES])
    for page in (html, svg):
        shot = tmp_path / f"{page.suffix[1:]}.png"
        browse(tmp_path, page, "--window-size=1900,4000", f"--screenshot={shot}")
        width, height, rows = png_pixels(shot.read_bytes())
        assert (width, height) == (1900, 4000)
        counts: dict[bytes, int] = {}
        for row in rows:
            for i in range(0, len(row), 3):
                counts[row[i:i + 3]] = counts.get(row[i:i + 3], 0) + 1
        colours = job_colours(plan_fleet(result.fleet, result.documents))
        assert len(set(colours.values())) == len(colours), "the example fleet's jobs each have a colour of their own"
        for job in result.fleet.jobs:
            colour = bytes.fromhex(colours[(job.cluster.name, job.name)][1:])
            # A legend swatch is 12 x 12 pixels; a GPU box 26 x 22, of which about 430 keep the colour around the
            # rank's number; a CPU job's workers are named in its colour. A job that waits: its swatch only.
            drawn = job.worker_count * job.gpus_per_worker * 400 if job.uses_gpus else 100
            least = 144 + (drawn if job.name not in WAITING else 0)
            assert counts.get(colour, 0) >= least, (page.name, job.name, counts.get(colour, 0))


def run_html(tmp_path: Path, root: Path) -> Path:
    page = tmp_path / "small.html"
    assert invoke_mpigen("plan", root, "--html", page).returncode == 0
    return page


def test_a_64_node_pool_stays_readable(profiles_copy, tmp_path):
    cluster = (PROFILES / "clusters/dgx-pod.yaml").read_text(encoding="utf-8")
    assert "    nodes: 8\n" in cluster
    root = profiles_copy({"clusters/dgx-pod.yaml": cluster.replace("    nodes: 8\n", "    nodes: 64\n")})
    page = tmp_path / "big.html"
    assert invoke_mpigen("plan", root, "--html", page).returncode == 0
    dom = browse(tmp_path, page, "--dump-dom").stdout.decode("utf-8")
    parsed = Elements()
    parsed.feed(dom)
    nodes = [a for c, a in parsed.elements if c == "dgx-pod" and "data-node" in a]
    assert {int(a["data-node"]) for a in nodes} == set(range(64))
    # Eight nodes a row, eight rows, each node as wide as on a 4-node pool: the page stays a screen wide and the
    # boxes keep their size (a GPU box holds its rank number at 9 pixels).
    corners = [tuple(map(int, a["transform"][len("translate("):-1].split(","))) for a in nodes]
    assert len({x for x, _ in corners}) == 8 and len({y for _, y in corners}) == 8
    svg = next(a for c, a in parsed.elements if c == "dgx-pod" and "width" in a and "viewbox" in a)
    assert int(svg["width"]) <= 1900
    small = Elements()
    small.feed(browse(tmp_path, run_html(tmp_path, PROFILES), "--dump-dom").stdout.decode("utf-8"))
    width_of = {c: int(a["width"]) for c, a in small.elements if "viewbox" in a}
    assert width_of["netapp-lab"] < int(svg["width"]), "a 2-node pool is drawn narrower"
    def node_boxes(elements: list[tuple[str | None, dict[str, str]]], cluster: str) -> set[tuple[str, str]]:
        return {(a["width"], a["height"]) for c, a in elements if c == cluster and a.get("rx") == "6"}

    assert node_boxes(parsed.elements, "dgx-pod") == node_boxes(small.elements, "dgx-pod"), "boxes keep their size"


def test_the_docs_show_the_example_fleet_as_chromium_drew_it():
    page = (REPO / "docs/plan-and-explain.md").read_text(encoding="utf-8")
    assert "![mpigen plan --html of the example fleet](plan-example-fleet.png)" in page
    width, height, rows = png_pixels((REPO / "docs/plan-example-fleet.png").read_bytes())
    assert (width, height) == (1560, 4000), "the window `make screenshot` uses"
    painted = set()
    for row in rows:
        painted.update(row[i:i + 3] for i in range(0, len(row), 3))
    result = check_profiles([PROFILES])
    colours = job_colours(plan_fleet(result.fleet, result.documents))
    missing = [job for (_, job), colour in colours.items() if bytes.fromhex(colour[1:]) not in painted]
    assert not missing, f"the screenshot lacks these jobs' colours (run `make screenshot`): {missing}"
