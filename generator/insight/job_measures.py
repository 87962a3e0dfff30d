"""What `plan` says of one job beside where it runs: the GPU-hours of one run, and how its topology level fits it."""

from __future__ import annotations

from decimal import Decimal

from mpigen.model import Job


def topology_fit_text(job: Job) -> str:
    """`level rack (required): 4 nodes, a rack holds 4: fits in one rack`; empty without a topology level."""
    fit = job.scheduling.fit
    if fit is None:
        return ""
    mode = "required" if fit.required else "preferred"
    held = f"a {fit.domain.level} holds {fit.domain.nodes}" if fit.domain.nodes is not None else "size unknown"
    return f"level {fit.domain.level} ({mode}): {fit.nodes_needed} node(s), {held}: {fit.verdict()}"


def gpu_hours(job: Job) -> tuple[Decimal | None, bool, str]:
    """GPU-hours of one run: the job's estimate, else at most its active deadline (then `bound` is True); None
    without either, or for a CPU job."""
    gpus = job.worker_count * job.gpus_per_worker
    if not gpus:
        return None, False, ""
    if job.estimated_hours is not None:
        return (Decimal(str(job.estimated_hours)) * gpus).quantize(Decimal("0.1")), False, \
            f"{gpus} GPUs x estimatedHours {job.estimated_hours}"
    deadline = job.run_policy.active_deadline_seconds
    if deadline is not None:
        return (Decimal(deadline) * gpus / 3600).quantize(Decimal("0.1")), True, \
            f"at most: {gpus} GPUs x activeDeadlineSeconds {deadline}"
    return None, False, ""
