"""MPIJobs an import refuses: one line each, naming the file, the line and column where the file says it, the
object, what is wrong and what to do; nothing is adopted (`adopt_jobs` raises, so the command writes nothing)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mpigen.adopt import AdoptionError, adopt_jobs
from mpigen.readback.documents import read_manifest_file

GOOD = """\
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: pi
spec:
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
          - name: launcher
            image: mpioperator/mpi-pi:openmpi
            command: [mpirun, -n, "2", /home/mpiuser/pi]
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: worker
            image: mpioperator/mpi-pi:openmpi
"""

WORKER = "          - name: worker\n"
IMAGE = "            image: mpioperator/mpi-pi:openmpi\n"
COMMAND = '[mpirun, -n, "2", /home/mpiuser/pi]'
CASES = {
    "older": GOOD.replace("v2beta1", "v1"),
    "unknown": GOOD.replace("v2beta1", "v3"),
    "dots": GOOD.replace("name: pi", "name: pi.v2"),
    "long": GOOD.replace("name: pi", "name: " + "p" * 50),
    "nolauncher": GOOD.replace("    Launcher:", "    Launcherx:"),
    "noimage": GOOD.replace(IMAGE + "            command", "            command"),
    "twocontainers": GOOD.replace(WORKER, WORKER + IMAGE + "          - name: worker2\n"),
    "twolaunchers": GOOD.replace("          - name: launcher\n", "          - name: a\n            image: x\n"
                                 "            command: [mpirun, b]\n          - name: launcher\n"),
    "noreplicas": GOOD.replace("      replicas: 2\n", ""),
    "noprogram": GOOD.replace(COMMAND, '[mpirun, -n, "2"]'),
    "secret": GOOD.replace(COMMAND, '[mpirun, -x, "DB_PASSWORD=hunter22", /home/mpiuser/pi]'),
    "otherimage": GOOD.replace(WORKER + IMAGE, WORKER + "            image: other\n"),
}

EXPECTED = {
    'older': (
        "older.yaml:1:1: MPIJob/pi: apiVersion kubeflow.org/v1 is mpi-operator's v1 API, whose launcher "
        'starts the ranks through `kubectl exec` (its workers run no sshd); move it to kubeflow.org/v2beta1 '
        "(the workers' image must run sshd: mpi-operator's v2 examples show how), then import it again"),
    'unknown': (
        "unknown.yaml:1:1: MPIJob/pi: unknown MPIJob apiVersion 'kubeflow.org/v3'; mpigen adopts "
        'kubeflow.org/v2beta1 MPIJobs (`kubectl get mpijobs.kubeflow.org -o yaml`)'),
    'dots': (
        "dots.yaml:4:3: MPIJob/pi.v2: name 'pi.v2' cannot name a job profile: a DNS-1035 label must consist "
        "of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an "
        "alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is "
        "'[a-z]([-a-z0-9]*[a-z0-9])?'); rename the MPIJob in the file to a name of at most 46 lower-case "
        "letters, digits and '-', starting with a letter (mpigen names the MPIJob `<name>-<hash>` and its "
        'pods `<name>-<hash>-worker-<i>`)'),
    'long': (
        'long.yaml:4:3: MPIJob/pppppppppppppppppppppppppppppppppppppppppppppppppp: name '
        "'pppppppppppppppppppppppppppppppppppppppppppppppppp' cannot name a job profile: worker pod name "
        "'pppppppppppppppppppppppppppppppppppppppppppppppppp-<hash>-worker-1' is 67 characters, more than "
        "63; rename the MPIJob in the file to a name of at most 46 lower-case letters, digits and '-', "
        'starting with a letter (mpigen names the MPIJob `<name>-<hash>` and its pods '
        '`<name>-<hash>-worker-<i>`)'),
    'nolauncher': (
        'nolauncher.yaml:6:3: MPIJob/pi: no Launcher in spec.mpiReplicaSpecs: nothing says what the job '
        'runs; add the Launcher replica with its mpirun command, or import the file the job was applied from'),
    'noimage': (
        'noimage.yaml:12:13: MPIJob/pi: the MPI container has no image; name the image of the launcher and '
        'workers (`image:`) and import it again'),
    'twocontainers': (
        'twocontainers.yaml:19:11: MPIJob/pi: the Worker has 2 containers (worker, worker2) and 2 of them '
        "have the launcher's image: mpigen cannot tell which is the MPI process; keep only the MPI container "
        'in the Worker (a profile holds one), and import it again'),
    'twolaunchers': (
        'twolaunchers.yaml:11:11: MPIJob/pi: the Launcher has 2 containers (a, launcher) and 2 of them run '
        'mpirun: mpigen cannot tell which is the MPI process; keep only the MPI container in the Launcher (a '
        'profile holds one), and import it again'),
    'noreplicas': (
        'noreplicas.yaml:15:5: MPIJob/pi: the Worker has no replicas (mpi-operator refuses the job); write '
        'the number of workers as `replicas:`, and import it again'),
    'noprogram': (
        "noprogram.yaml:14:13: MPIJob/pi: the launcher's mpirun names no program to run; write the program "
        "after mpirun's flags, and import it again"),
    'secret': (
        "secret.yaml:14:13: MPIJob/pi: the launcher's command writes out the value of DB_PASSWORD, which is "
        'named like a secret (mpigen copies no secret into a profile); give the job the secret from a Secret '
        '(`env` with valueFrom.secretKeyRef), and import it again'),
    'otherimage': (
        "otherimage.yaml:21:13: MPIJob/pi: the workers' image 'other' is not the launcher's "
        "'mpioperator/mpi-pi:openmpi', and a job profile has one image for both; use one image with the MPI, "
        'sshd and the program for both, and import it again'),
}


def test_the_good_job_is_adopted(tmp_path: Path) -> None:
    (tmp_path / "good.yaml").write_text(GOOD, encoding="utf-8")
    objects, _ = read_manifest_file(tmp_path / "good.yaml")
    assert [p.name for p in adopt_jobs(objects, None, None, None).profiles] == ["pi"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_refused_in_one_line(case: str, tmp_path: Path) -> None:
    path = tmp_path / f"{case}.yaml"
    path.write_text(CASES[case], encoding="utf-8")
    objects, findings = read_manifest_file(path)
    assert findings == []
    with pytest.raises(AdoptionError) as caught:
        adopt_jobs(objects, None, None, None)
    assert str(caught.value) == f"{tmp_path}/" + EXPECTED[case]
    assert "\n" not in str(caught.value) and "hunter22" not in str(caught.value)
