"""What `mpigen explain` says of a fabric acceptance job: what it proves, and the floors `mpigen verify` judges its
logs by, each step of each floor's chain with where its number comes from (model/floors.py). The job was resolved
from a Job document its cluster's `acceptance` implies (load/derived.py): explain reads its lines from that."""

from __future__ import annotations

from mpigen.insight.explanation import Fact
from mpigen.insight.facts import Where, fact, said
from mpigen.load import ProfileFile, to_plain
from mpigen.load.derived import acceptance_documents
from mpigen.model import Job
from mpigen.model.floors import Floor, NoFloor, bus_bandwidth_floor, figure, rail_floor
from mpigen.vocabulary import fabric

SECTION = "acceptance"


def acceptance_document(job: Job, documents: list[ProfileFile]) -> ProfileFile | None:
    """The Job document an acceptance job was resolved from, located at the `acceptance` key that asks for it."""
    cluster = next((d for d in documents if d.kind == "Cluster" and d.data.get("name") == job.cluster.name), None)
    if cluster is None:
        return None
    hardware = {str(d.data.get("name")): to_plain(d.data) for d in documents if d.kind == "Hardware"}
    return next((document for document, _ in acceptance_documents(cluster, hardware)
                 if document.data.get("name") == job.name), None)


def acceptance_facts(job: Job, at_cluster: Where) -> list[Fact]:
    """The acceptance section of explain; nothing for a real job."""
    acceptance = job.acceptance
    if acceptance is None:
        return []
    index = next(i for i, pool in enumerate(job.cluster.pools) if pool.name == job.pool.name)
    asked = said(at_cluster("nodePools", index, "acceptance"), f"acceptance of pool {job.pool.name}",
                 said(at_cluster("acceptance"), "acceptance", f"cluster {job.cluster.name}'s acceptance"))
    facts = [fact(SECTION, "proves", acceptance.what, asked + f": run by hand, its chart in {job.chart_dir} delivered "
                  "without automated sync; `mpigen verify LOG --job " + job.name + "` judges its launcher's log")]
    if acceptance.collective is not None:
        facts += _floor_facts("bus bandwidth floor", bus_bandwidth_floor(job),
                              f"the mean, over the rows of at least {figure(fabric.LARGEST_SIZES_SHARE * 100)}% of "
                              "the largest size, of each row's better busbw (out-of-place or in-place)")
    if acceptance.rail_test is not None:
        rail = acceptance.rail_test.rail
        attachment = next(a for a in job.rails if a.rail.name == rail)
        facts += _floor_facts(f"rail {rail} floor", rail_floor(attachment, job.pool.hardware.name),
                              "ib_write_bw's BW average, --report_gbits")
        facts.append(fact(SECTION, "ib_read_lat", "reported, not judged", "no sourced ceiling for a rail's latency "
                          "exists to judge it by"))
    return facts


def _floor_facts(name: str, floor: Floor | NoFloor, judged: str) -> list[Fact]:
    """The floor, then each step of its chain as a fact of its own: the fact and its number, from its source."""
    if isinstance(floor, NoFloor):
        return [fact(SECTION, name, "none: reported, not judged", floor.reason)]
    facts = [fact(SECTION, name, f"{floor.text}, of {floor.measure}", f"the steps below; judged on {judged}")]
    return facts + [fact(SECTION, f"  {step.fact}", step.number, step.source) for step in floor.chain]
