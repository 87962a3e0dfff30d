"""`mpigen check --strict` on a hand-written KAI Scheduler folder: two Queues (a parent and its leaf), a Topology and
an MPIJob with KAI's queue label, topology annotations and scheduler name pass without `--crds` (KAI's kinds ship
with mpigen); the same job in the parent queue, at a level the Topology lacks and above its queue's GPU limit is
refused with KAI's reasons."""

from __future__ import annotations

import json

from conftest import invoke_mpigen

QUEUES = """\
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata:
  name: research
spec:
  resources:
    gpu: {quota: 16, limit: -1, overQuotaWeight: 1}
    cpu: {quota: 224000, limit: -1, overQuotaWeight: 1}
    memory: {quota: 2000000, limit: -1, overQuotaWeight: 1}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata:
  name: vision
spec:
  parentQueue: research
  resources:
    gpu: {quota: 16, limit: 24, overQuotaWeight: 2}
    cpu: {quota: 224000, limit: -1, overQuotaWeight: 2}
    memory: {quota: 2000000, limit: -1, overQuotaWeight: 2}
"""

TOPOLOGY = """\
apiVersion: kai.scheduler/v1alpha1
kind: Topology
metadata:
  name: lab
spec:
  levels:
  - nodeLabel: example.com/rack
    alias: rack
  - nodeLabel: kubernetes.io/hostname
"""

JOB = """\
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: allreduce
  namespace: vision
  labels:
    kai.scheduler/queue: vision
  annotations:
    kai.scheduler/topology: lab
    kai.scheduler/topology-required-placement: example.com/rack
spec:
  slotsPerWorker: 8
  launcherCreationPolicy: WaitForWorkersReady
  runPolicy:
    cleanPodPolicy: Running
    schedulingPolicy:
      minAvailable: 3
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          schedulerName: kai-scheduler
          containers:
          - name: launcher
            image: mpioperator/mpi-pi:openmpi
            resources:
              limits: {cpu: "1", memory: 1Gi}
    Worker:
      replicas: 2
      template:
        spec:
          schedulerName: kai-scheduler
          containers:
          - name: worker
            image: mpioperator/mpi-pi:openmpi
            resources:
              limits: {nvidia.com/gpu: 8, cpu: "32", memory: 256Gi}
"""


def test_a_hand_written_kai_folder_passes_strictly_and_its_broken_twin_is_refused(tmp_path):
    (tmp_path / "queues.yaml").write_text(QUEUES, encoding="utf-8")
    (tmp_path / "topology.yaml").write_text(TOPOLOGY, encoding="utf-8")
    (tmp_path / "job.yaml").write_text(JOB, encoding="utf-8")
    passed = invoke_mpigen("check", "--no-helm", "--strict", tmp_path)
    assert passed.returncode == 0, passed.stdout + passed.stderr

    broken = JOB.replace("kai.scheduler/queue: vision", "kai.scheduler/queue: research").replace(
        "placement: example.com/rack", "placement: example.com/zone").replace("replicas: 2", "replicas: 4")
    (tmp_path / "job.yaml").write_text(broken.replace("minAvailable: 3", "minAvailable: 5"), encoding="utf-8")
    refused = invoke_mpigen("check", "--no-helm", "--strict", "--output", "json", tmp_path)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    said = [(f["object"], f["path"], f["message"].split(":")[0]) for f in json.loads(refused.stdout)["findings"]
            if f["rule"] == "scheduling"]
    assert said == [
        ("MPIJob/allreduce", '.metadata.annotations["kai.scheduler/topology-required-placement"]',
         "example.com/zone is no level of KAI Topology lab (its levels"),
        ("MPIJob/allreduce", '.metadata.labels["kai.scheduler/queue"]', "Queue research is a parent queue (of vision)")]

    (tmp_path / "job.yaml").write_text(JOB.replace("replicas: 2", "replicas: 4").replace(
        "minAvailable: 3", "minAvailable: 5"), encoding="utf-8")
    over = invoke_mpigen("check", "--no-helm", "--strict", "--output", "json", tmp_path)
    assert over.returncode == 1
    assert [f["message"].split(":")[0] for f in json.loads(over.stdout)["findings"]] == [
        "its 5 pods together ask for 32 GPUs of gpu, above the limit 24 of KAI Queue vision"]
