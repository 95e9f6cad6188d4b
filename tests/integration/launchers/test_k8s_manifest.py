#!/usr/bin/python3
"""scripts/k8s/ccbench-mpijob.yaml has what a Kubeflow MPIJob v2beta1 on EFA GPU nodes needs.

No cluster runs here, so this checks the structure mpi-operator validates plus the AWS EFA recipe
(README, "Kubernetes"): apiVersion/kind, slotsPerWorker 8, a Launcher (1 replica) and Workers,
GPU/EFA/hugepages resources with requests == limits for the extended resources, /dev/shm as a
memory emptyDir, and the mpirun command with the EFA environment and -np = workers x slots.
"""
import re
import sys

import yaml  # Debian python3-yaml

path = sys.argv[1]
docs = [d for d in yaml.safe_load_all(open(path)) if d]
problems = []


def check(cond, what):
    if not cond:
        problems.append(what)


check(len(docs) == 1, f"{len(docs)} YAML documents, want 1")
job = docs[0]
check(job.get("apiVersion") == "kubeflow.org/v2beta1", f"apiVersion {job.get('apiVersion')}")
check(job.get("kind") == "MPIJob", f"kind {job.get('kind')}")
check(re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", job.get("metadata", {}).get("name", "")), "metadata.name")
spec = job.get("spec", {})
slots = spec.get("slotsPerWorker")
check(slots == 8, f"slotsPerWorker {slots}")
replicas = spec.get("mpiReplicaSpecs", {})
check(set(replicas) == {"Launcher", "Worker"}, f"mpiReplicaSpecs {sorted(replicas)}")
launcher, worker = replicas.get("Launcher", {}), replicas.get("Worker", {})
check(launcher.get("replicas") == 1, "Launcher.replicas must be 1")
workers = worker.get("replicas", 0)
check(isinstance(workers, int) and workers >= 1, f"Worker.replicas {workers}")

for role, rs in (("Launcher", launcher), ("Worker", worker)):
    pod = rs.get("template", {}).get("spec", {})
    containers = pod.get("containers", [])
    check(len(containers) >= 1 and all(c.get("image") and c.get("name") for c in containers),
          f"{role}: containers need a name and an image")
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    for c in containers:
        for m in c.get("volumeMounts", []):
            check(m["name"] in volumes, f"{role}: mount {m['name']} has no volume")

w = worker["template"]["spec"]["containers"][0]
res = w.get("resources", {})
limits, requests = res.get("limits", {}), res.get("requests", {})
check(limits.get("nvidia.com/gpu") == slots, f"worker nvidia.com/gpu {limits.get('nvidia.com/gpu')} != slots {slots}")
check(limits.get("vpc.amazonaws.com/efa") == 32, f"worker vpc.amazonaws.com/efa {limits.get('vpc.amazonaws.com/efa')}")
check(limits.get("hugepages-2Mi") == "5120Mi", f"worker hugepages-2Mi {limits.get('hugepages-2Mi')}")
for key in ("nvidia.com/gpu", "vpc.amazonaws.com/efa", "hugepages-2Mi"):
    # Extended resources and hugepages cannot be overcommitted: requests, when given, equal limits.
    check(requests.get(key, limits.get(key)) == limits.get(key), f"requests[{key}] != limits[{key}]")
check("memory" in limits or "cpu" in limits, "hugepages need a cpu or memory limit too")
wvols = {v["name"]: v for v in worker["template"]["spec"].get("volumes", [])}
shm = [m for m in w.get("volumeMounts", []) if m.get("mountPath") == "/dev/shm"]
check(shm and wvols.get(shm[0]["name"], {}).get("emptyDir", {}).get("medium") == "Memory",
      "/dev/shm must be an emptyDir with medium Memory")

lc = launcher["template"]["spec"]["containers"][0]
command = " ".join(lc.get("command", []) + lc.get("args", []))
for needle in ("mpirun", "FI_PROVIDER=efa", "FI_EFA_FORK_SAFE=1", "NCCL_DEBUG=INFO", "NCCL_SOCKET_IFNAME=^docker,lo,veth",
               "--mca pml ^ucx", "--mca btl tcp,self", "--mca btl_tcp_if_exclude lo,docker0", "--bind-to none",
               "ccbench run", "--backend nccl", "-J "):
    check(needle in command, f"launcher command lacks {needle!r}")
np_match = re.search(r"-np (\d+)", command)
check(np_match and int(np_match.group(1)) == workers * slots,
      f"-np {np_match.group(1) if np_match else None} != workers x slotsPerWorker = {workers * slots}")

if problems:
    print("FAILED:\n  " + "\n  ".join(problems))
    sys.exit(1)
print(f"PASS: MPIJob with {workers} workers x {slots} slots, GPU/EFA/hugepages resources, /dev/shm, EFA mpirun")
