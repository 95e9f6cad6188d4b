#!/usr/bin/python3
"""scripts/k8s/ccbench-mpijob.yaml does what it says, as far as this machine can tell without a cluster.

It used to compare fields with numbers copied from the file. Now each value a launcher depends on is
checked against what uses it or what it claims:

- an MPIJob v2beta1 whose mpiImplementation matches the mpirun syntax of its command (Open MPI);
- one rank per GPU: slotsPerWorker == the worker's nvidia.com/gpu == the GPUs of the instance it
  is written for, and -np == workers x slots;
- the EFA devices asked for, and every "N on INSTANCE" the manifest's comment and docs/launch.md
  give, are the instance profiles' efa_devices (configs/instances/aws.yaml);
- docs/launch.md's numbers (workers, slots, GPUs, EFA devices, hugepages, the binary's path) are the
  manifest's;
- extended resources and hugepages as Kubernetes takes them (requests == limits, a HugePages volume
  has a hugepages request, /dev/shm in memory); every mount has its volume;
- the launcher's script: bash parses it, each `-x NAME` is set in the launcher, the workers get the
  same libraries and provider, every --mca parameter exists in this Open MPI, the -J file lies on a
  mounted volume and is the one it prints and `kubectl cp` fetches, the log command names the job;
- the ccbench arguments, expanded by bash as in the launcher pod, are run by the real ccbench under
  a real mpirun on 2 ranks (the MPI backend and small sizes given after them, since flags win):
  the file records the label the pod gives and the manifest's trials.

Usage: test_k8s_manifest.py MANIFEST CCBENCH CHECKOUT
"""
import atexit
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

import yaml  # Debian python3-yaml

manifest, ccbench, checkout = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
MPIRUN = ["mpirun", "--oversubscribe", "--allow-run-as-root", "--bind-to", "none"]
problems = []


def check(cond, what):
    if not cond:
        problems.append(what)
    return cond


def finish():
    if problems:
        print("FAILED:\n  " + "\n  ".join(problems))
        sys.exit(1)


with open(manifest) as f:
    text = f.read()
docs = [d for d in yaml.safe_load_all(text) if d]
with open(os.path.join(checkout, "configs/instances/aws.yaml")) as f:
    instances = yaml.safe_load(f)["instances"]
with open(os.path.join(checkout, "docs", "launch.md")) as f:
    launch_doc = f.read()
doc_k8s = re.search(r"\*\*Kubernetes\*\*.*?\n\n", launch_doc, re.DOTALL)
check(doc_k8s, "docs/launch.md has no **Kubernetes** paragraph")
doc_k8s = doc_k8s.group(0) if doc_k8s else ""
header = "".join(line for line in text.splitlines(keepends=True) if line.startswith("#"))

check(len(docs) == 1, f"{len(docs)} YAML documents, want 1")
job = docs[0]
check(job.get("apiVersion") == "kubeflow.org/v2beta1", f"apiVersion {job.get('apiVersion')}")
check(job.get("kind") == "MPIJob", f"kind {job.get('kind')}")
name = job.get("metadata", {}).get("name", "")
check(re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", name), f"metadata.name {name!r} is not a DNS label")
spec = job.get("spec", {})
slots = spec.get("slotsPerWorker")
replicas = spec.get("mpiReplicaSpecs", {})
check(set(replicas) == {"Launcher", "Worker"}, f"mpiReplicaSpecs {sorted(replicas)}")
launcher, worker = replicas.get("Launcher", {}), replicas.get("Worker", {})
check(launcher.get("replicas") == 1, "Launcher.replicas must be 1")
workers = worker.get("replicas", 0)
check(isinstance(workers, int) and workers >= 1, f"Worker.replicas {workers}")
finish()

pods = {}
for role, rs in (("Launcher", launcher), ("Worker", worker)):
    pod = rs.get("template", {}).get("spec", {})
    pods[role] = pod
    containers = pod.get("containers", [])
    check(len(containers) >= 1 and all(c.get("image") and c.get("name") for c in containers),
          f"{role}: containers need a name and an image")
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    for c in containers:
        for mount in c.get("volumeMounts", []):
            check(mount["name"] in volumes, f"{role}: mount {mount['name']} has no volume")
finish()
lc, wc = pods["Launcher"]["containers"][0], pods["Worker"]["containers"][0]
check(lc["image"] == wc["image"], f"launcher image {lc['image']} != worker image {wc['image']} (ranks run both)")

# The instance the manifest is written for (the first of its "p5/p5e/p5en.48xlarge") and every
# "N on NAME" of the manifest's comment and docs/launch.md's paragraph against the instance profiles.
listed = re.search(r"\b((?:p[0-9][a-z0-9-]*/)*p[0-9][a-z0-9-]*)\.48xlarge", header)
check(listed, "the manifest's comment names no instance type (NAME.48xlarge)")
instance = f"{listed.group(1).split('/')[0]}.48xlarge" if listed else "?"
profile = instances.get(instance, {})
check(profile, f"{instance} is not in configs/instances/aws.yaml")
for where, source in (("manifest comment", header), ("docs/launch.md", doc_k8s)):
    pairs = re.findall(r"\b(\d+) on (p[0-9][a-z0-9-]*)\b", source)
    check(pairs, f"{where}: no 'N on INSTANCE' EFA counts")
    for count, family in pairs:
        known = instances.get(f"{family}.48xlarge")
        check(known and known["efa_devices"] == int(count),
              f"{where}: '{count} on {family}', but aws.yaml says "
              f"{known['efa_devices'] if known else 'nothing'} for {family}.48xlarge")

res = wc.get("resources", {})
limits, requests = res.get("limits", {}), res.get("requests", {})
gpus = limits.get("nvidia.com/gpu")
efa = limits.get("vpc.amazonaws.com/efa")
check(slots == gpus == profile.get("gpus"),
      f"slotsPerWorker {slots}, worker nvidia.com/gpu {gpus} and the GPUs of {instance} "
      f"({profile.get('gpus')}) must be one number: one rank per GPU")
check(efa == profile.get("efa_devices"),
      f"worker vpc.amazonaws.com/efa {efa} != efa_devices {profile.get('efa_devices')} of the instance")
for key in ("nvidia.com/gpu", "vpc.amazonaws.com/efa", "hugepages-2Mi"):
    # Extended resources and hugepages cannot be overcommitted: requests, when given, equal limits.
    check(requests.get(key, limits.get(key)) == limits.get(key), f"requests[{key}] != limits[{key}]")
check("memory" in limits or "cpu" in limits, "hugepages need a cpu or memory limit too")
wvols = {v["name"]: v for v in pods["Worker"].get("volumes", [])}
for v in wvols.values():
    medium = v.get("emptyDir", {}).get("medium", "")
    if medium.startswith("HugePages-"):
        size = medium.split("-", 1)[1]
        check(f"hugepages-{size}" in limits, f"volume {v['name']} ({medium}) without a hugepages-{size} limit")
shm = [mnt for mnt in wc.get("volumeMounts", []) if mnt.get("mountPath") == "/dev/shm"]
check(shm and wvols.get(shm[0]["name"], {}).get("emptyDir", {}).get("medium") == "Memory",
      "/dev/shm must be an emptyDir with medium Memory")

for claim in (f"{workers} workers x {slots} slots", f"`nvidia.com/gpu: {gpus}`", f"`vpc.amazonaws.com/efa: {efa}`",
              f"`hugepages-2Mi: {limits.get('hugepages-2Mi')}`", f"`{job['apiVersion']}`"):
    check(claim in doc_k8s, f"docs/launch.md's Kubernetes paragraph does not say {claim} (the manifest's value)")

# The launcher's script.
command = lc.get("command", []) + lc.get("args", [])
check(command[:2] == ["/bin/bash", "-c"] and len(command) == 3, f"launcher command {command[:2]}: want bash -c SCRIPT")
script = command[-1]
syntax = subprocess.run(["bash", "-n", "-c", script], capture_output=True, text=True, timeout=30)
check(syntax.returncode == 0, f"bash cannot parse the launcher script: {syntax.stderr.strip()}")
joined = script.replace("\\\n", " ")
mpirun_line = next((line.strip() for line in joined.splitlines() if line.strip().startswith("mpirun ")), "")
check(mpirun_line, "the launcher script has no mpirun line")
check(job.get("spec", {}).get("mpiImplementation") == "OpenMPI", "mpiImplementation must be OpenMPI for -x/--mca")
finish()

launcher_env = {e["name"]: e.get("value") for e in lc.get("env", [])}
worker_env = {e["name"]: e.get("value") for e in wc.get("env", [])}
pod_name = f"{name}-launcher-x7k2p"  # mpi-operator's launcher Job names its pod NAME-launcher-<suffix>
expand = subprocess.run(["bash", "-c", "set -- " + mpirun_line[len("mpirun "):] + '\nprintf "%s\\0" "$@"'],
                        capture_output=True, text=True, timeout=30, env={"HOSTNAME": pod_name, "PATH": "/usr/bin:/bin"})
check(expand.returncode == 0, f"bash cannot expand the mpirun line: {expand.stderr.strip()}")
argv = expand.stdout.split("\0")[:-1]
binaries = [i for i, a in enumerate(argv) if a.endswith("/ccbench")]
check(len(binaries) == 1, f"the mpirun line starts {len(binaries)} ccbench binaries, want 1")
finish()
mpirun_opts, ccbench_path, ccbench_args = argv[:binaries[0]], argv[binaries[0]], argv[binaries[0] + 1:]

doc_binary = re.search(r"ccbench at `([^`]+)`", doc_k8s)
check(doc_binary and doc_binary.group(1) == ccbench_path,
      f"docs/launch.md's binary {doc_binary.group(1) if doc_binary else None} != the launcher's {ccbench_path}")
check(os.path.dirname(ccbench_path) in launcher_env.get("PATH", "").split(":"),
      f"{os.path.dirname(ccbench_path)} is not on the launcher's PATH")
np_value = mpirun_opts[mpirun_opts.index("-np") + 1] if "-np" in mpirun_opts else None
check(np_value == str(workers * slots), f"-np {np_value} != workers x slotsPerWorker = {workers * slots}")
mca = []
for i, opt in enumerate(mpirun_opts):
    if opt == "-x":
        var, _, value = mpirun_opts[i + 1].partition("=")
        if not value:
            check(var in launcher_env, f"mpirun -x {var}: {var} is not set in the launcher's env")
        elif var in worker_env:
            check(worker_env[var] == value, f"mpirun -x {var}={value} but the workers' env has {worker_env[var]}")
    if opt == "--mca":
        mca.append(mpirun_opts[i + 1])
check(worker_env.get("LD_LIBRARY_PATH") == launcher_env.get("LD_LIBRARY_PATH"),
      "the workers' LD_LIBRARY_PATH differs from the launcher's (ranks load the same libraries)")
check(mca, "no --mca parameters")
params = subprocess.run(["ompi_info", "--all", "--parsable"], capture_output=True, text=True, timeout=60).stdout
for param in mca:
    check(re.search(rf"^mca:[a-z0-9_]+:[a-z0-9_]+:param:{re.escape(param)}:value:", params, re.MULTILINE),
          f"--mca {param}: Open MPI has no such parameter (ompi_info --all)")

check(ccbench_args[:1] == ["run"], f"ccbench {ccbench_args[:1]}: want run")
out_path = ccbench_args[ccbench_args.index("-J") + 1] if "-J" in ccbench_args else ""
mounts = [mnt["mountPath"] for mnt in lc.get("volumeMounts", [])]
check(any(out_path.startswith(mp.rstrip("/") + "/") for mp in mounts),
      f"-J {out_path} is on no volume of the launcher ({mounts})")
check(f"cat {out_path}" in script, f"the script does not print {out_path}")
check(f"mkdir -p {os.path.dirname(out_path)}" in script, f"the script does not create {os.path.dirname(out_path)}")
check(f":{out_path} " in header, f"the comment's kubectl cp does not fetch {out_path}")
for where, source in (("manifest comment", header), ("docs/launch.md", doc_k8s)):
    logs = re.findall(r"kubectl logs -f job/([a-z0-9-]+)", source)
    check(logs == [f"{name}-launcher"], f"{where}: kubectl logs names job/{logs}, the launcher job is {name}-launcher")
finish()

# The arguments themselves, through the real parser and a real run (flags win: the MPI backend,
# small sizes and a result file of ours after the manifest's).
folder = tempfile.mkdtemp(prefix="ccbench-k8s-")
atexit.register(shutil.rmtree, folder, True)
result = os.path.join(folder, "r.json")
run = MPIRUN + ["-np", "2", ccbench] + ccbench_args + ["--backend", "mpi", "-e", "64", "-n", "2", "-w", "0",
                                                       "-J", result]
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
p = subprocess.run(run, capture_output=True, text=True, timeout=120, env=env)
check(p.returncode == 0, f"{shlex.join(run)}: exit {p.returncode}\n{p.stderr[-2000:]}")
finish()
with open(result) as f:
    doc = json.load(f)
check(doc["run"]["label"] == f"eks-{name}", f"label {doc['run']['label']!r}, want 'eks-{name}' in pod {pod_name}")
if "--trials" in ccbench_args:
    trials = int(ccbench_args[ccbench_args.index("--trials") + 1])
    check(doc["config"]["trials"] == trials and {r["trial"] for r in doc["results"]} == set(range(trials)),
          f"trials {doc['config']['trials']}, want the manifest's {trials}")
finish()
print(f"PASS: MPIJob {name}: {workers} workers x {slots} slots on {instance}, -np {np_value}, "
      f"{len(mca)} --mca parameters known, ccbench {' '.join(ccbench_args[:1])} ran with its arguments")
