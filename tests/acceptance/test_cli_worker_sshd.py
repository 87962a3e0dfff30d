"""Issue 32 point 9 through the real command line: mpi-operator's pi-intel example, ported as a profile with
`sshPort`, renders with the readiness probe on sshd's port 2222 its original carries (examples/v2beta1/pi/pi-intel.yaml;
build/base/Dockerfile `ARG port=2222`), and a job run as user 1000 whose sshd would have port 22 is warned at its
`runAsUser`, with no probe on a port that sshd cannot bind."""

from __future__ import annotations

from pathlib import Path

import yaml
from conftest import UPSTREAM, WIDE_JOB, run_mpigen

CLUSTER = """\
apiVersion: mpigen/v1alpha1
kind: Cluster
name: lab
kubernetesVersion: "1.31"
namespaces: [hpc]
nodePools:
  - name: cpu
    hardware: cpu-node
    nodes: 4
"""

# conftest's non-root pi job without its sshPort, on `lab`. Line 8: `runAsUser: 1000`.
NON_ROOT = WIDE_JOB.replace("name: wide", "name: pi-user").replace("cluster: big", "cluster: lab").replace(
    "pool: p0", "pool: cpu").replace("sshPort: 2222\n", "") + "workers: 2\n"
assert NON_ROOT.splitlines()[7] == "runAsUser: 1000" and "sshPort" not in NON_ROOT


def _ported_pi_intel() -> str:
    """The upstream example as a profile, its values read from the example itself."""
    upstream = yaml.safe_load((UPSTREAM / "mpi-operator" / "examples" / "pi__pi-intel.yaml").read_text("utf-8"))
    worker = upstream["spec"]["mpiReplicaSpecs"]["Worker"]
    container = worker["template"]["spec"]["containers"][0]
    return yaml.safe_dump({
        "apiVersion": "mpigen/v1alpha1", "kind": "Job", "name": "pi", "cluster": "lab", "pool": "cpu",
        "image": container["image"], "workers": worker["replicas"], "slotsPerWorker": upstream["spec"]["slotsPerWorker"],
        "mpiImplementation": upstream["spec"]["mpiImplementation"], "program": ["/home/mpiuser/pi"],
        "runAsUser": container["securityContext"]["runAsUser"], "sshAuthMountPath": upstream["spec"]["sshAuthMountPath"],
        "workerCommand": container["args"], "sshPort": container["readinessProbe"]["tcpSocket"]["port"],
    }, sort_keys=False)


def test_ported_pi_intel_keeps_its_probe_and_a_non_root_sshd_on_22_is_warned(tmp_path: Path) -> None:
    profiles = tmp_path / "profiles"
    for path, text in (("clusters/lab.yaml", CLUSTER), ("jobs/pi.yaml", _ported_pi_intel()),
                       ("jobs/pi-user.yaml", NON_ROOT)):
        (profiles / path).parent.mkdir(parents=True, exist_ok=True)
        (profiles / path).write_text(text, encoding="utf-8")
    done = run_mpigen("render", profiles, "-o", tmp_path / "charts")
    assert done.returncode == 0, done.stderr
    (warning,) = [line for line in done.stderr.splitlines() if ": warning: " in line]
    assert warning.startswith(f"{profiles / 'jobs' / 'pi-user.yaml'}:8:12: warning: sshd run as user 1000 cannot bind "
                              "port 22, below 1024"), warning
    assert "`sshPort: 2222` and `workerCommand: [/usr/sbin/sshd, -De, -f, /home/mpiuser/.sshd_config]`" in warning

    def worker(job: str) -> dict:
        text = (tmp_path / "charts" / "lab" / "jobs" / job / "templates" / "mpijob.yaml").read_text(encoding="utf-8")
        start = text.index("    Worker:")
        return yaml.safe_load("\n".join(line for line in text[start:].splitlines() if "{{" not in line))

    pi = worker("pi")["Worker"]["template"]["spec"]["containers"][0]
    assert pi["readinessProbe"] == {"tcpSocket": {"port": 2222}, "initialDelaySeconds": 2}
    assert pi["command"] == ["/usr/sbin/sshd", "-De", "-f", "/home/mpiuser/.sshd_config"]
    assert "readinessProbe" not in worker("pi-user")["Worker"]["template"]["spec"]["containers"][0]
