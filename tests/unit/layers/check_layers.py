#!/usr/bin/python3
"""The layer diagram of docs/architecture.md, enforced: every `#include "folder/..."` under src/ must
follow an allowed arrow, the arrows must form no cycle, and MPI is called only by the control
channel (sweep/mpi_channel) and the MPI backend (backends/mpi).

Usage: check_layers.py SRC_DIR   (exit 0 when clean, 1 with one line per violation)"""
import os
import re
import sys

# A file belongs to the node of its longest matching prefix (relative to src/).
NODES = {
    "core": "core/",
    "system": "system/",
    "compare": "compare/",
    "import": "import/",
    "trace": "trace/",
    "report": "report/",
    "model": "model/",
    "screen": "screen/",
    "congestion": "congestion/",
    "congestion_run": "congestion_run/",  # ccbench congestion over MPI: above sweep and the backends
    "replay": "replay/",                # ccbench replay: a trace over the backends of run
    "checkpoint": "checkpoint/",
    "checkpoint_run": "checkpoint_run/",  # ccbench checkpoint's runtime: above checkpoint and sweep
    "launch": "launch/",
    "backends": "backends/",            # the Backend interface (backend.hpp/.cpp)
    "backends/mpi": "backends/mpi/",
    "backends/nccl": "backends/nccl/",
    "registry": "backends/registry.cpp",  # the table of every backend, above all of them
    "fabric": "fabric/",
    "channel": "sweep/channel.hpp",     # header-only control channel: the one sweep header below backends
    "sweep": "sweep/",
    "measure": "measure/",            # the frame of the measuring commands: above sweep, below cli
    "cli": "cli/",
}

# node -> nodes it may include (besides itself). Lower layers never include higher ones.
ALLOWED = {
    "core": set(),
    "system": {"core"},
    "channel": set(),
    "compare": {"core"},
    "import": {"core"},
    "trace": {"core"},
    "report": {"core"},
    "model": {"core", "system", "trace"},
    # the search, one test as a job started through launch (below it), and the run over them
    "screen": {"core", "system", "compare", "import", "report", "model", "launch"},
    "congestion": {"core", "compare"},
    "checkpoint": {"core", "model"},
    # launcher command lines, host lists, jobs under a deadline, failure classes
    "launch": {"core", "system", "compare", "import", "report", "model"},
    "backends": {"core", "channel"},
    "backends/mpi": {"backends", "core", "system", "channel"},
    "backends/nccl": {"backends", "core", "system", "channel"},
    "sweep": {"backends", "core", "system", "report", "channel"},
    "fabric": {"backends", "core", "system", "sweep", "channel"},
    "registry": {"backends", "backends/mpi", "backends/nccl", "fabric", "core", "channel"},
    # the phases of `ccbench congestion` over the sweep's engine and channels (the flags stay in cli)
    "congestion_run": {"core", "system", "compare", "report", "congestion", "backends", "channel", "sweep"},
    # `ccbench checkpoint`'s set-up, trials and finish over the channel and Storage (flags in cli)
    "checkpoint_run": {"core", "system", "model", "checkpoint", "channel", "sweep"},
    # a trace's calls replayed over the backends of `run` and the control channel (the flags stay in cli)
    "replay": {"core", "system", "trace", "backends", "channel", "sweep"},
    # MPI's life cycle, the signal mask and the one ending ladder of every measuring command
    "measure": {"core", "system", "backends", "channel", "sweep"},
    "cli": {n for n in NODES if n != "cli"},
}

# Arrows that exist today and are being removed on another branch (issue 10 item 6: report's
# renderers take the verdict's JSON form instead of compare's types). Accepted with a note until
# then; the lead deletes an entry when its branch lands.
TRANSITIONAL: set = set()  # arrows accepted while they are being removed (none today)

# Only these may call MPI or include <mpi.h>.
MPI_ALLOWED = ("sweep/mpi_channel.", "backends/mpi/")

INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+/[^"]+)"', re.M)
MPI_INCLUDE = re.compile(r'^\s*#\s*include\s+<mpi\.h>', re.M)
MPI_CALL = re.compile(r'\bP?MPI_[A-Z][a-z_]*\s*\(')


def node_of(rel):
    best = None
    for node, prefix in NODES.items():
        if rel.startswith(prefix) and (best is None or len(prefix) > len(NODES[best])):
            best = node
    return best


def find_cycle():
    seen, stack = {}, []

    def visit(n):
        seen[n] = "open"
        stack.append(n)
        for m in sorted(ALLOWED.get(n, ())):
            if seen.get(m) == "open":
                return stack[stack.index(m):] + [m]
            if m not in seen:
                cycle = visit(m)
                if cycle:
                    return cycle
        seen[n] = "done"
        stack.pop()
        return None

    for n in sorted(ALLOWED):
        if n not in seen:
            cycle = visit(n)
            if cycle:
                return cycle
    return None


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def check(src):
    problems, notes = [], set()
    cycle = find_cycle()
    if cycle:
        problems.append("the allowed arrows form a cycle: " + " -> ".join(cycle))
    for root, _, files in os.walk(src):
        for name in sorted(files):
            if not name.endswith((".hpp", ".cpp", ".cu", ".h", ".in")):
                continue
            path = os.path.join(root, name)
            rel = os.path.relpath(path, src).replace(os.sep, "/")
            node = node_of(rel)
            if node is None:
                problems.append(f"src/{rel}: folder not in the layer table (tests/unit/layers/check_layers.py)")
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            for match in INCLUDE.finditer(text):
                target = match.group(1)
                line = text.count("\n", 0, match.start()) + 1
                to = node_of(target)
                if to is None or to == node:
                    continue
                if (node, to) in TRANSITIONAL:
                    notes.add(f"note: {node} -> {to} is accepted while it is being removed")
                    continue
                if to not in ALLOWED.get(node, set()):
                    problems.append(f"src/{rel}:{line}: {node} includes {target} ({to}): not an arrow of the layer diagram")
            if rel.startswith(MPI_ALLOWED):
                continue
            code = strip_comments(text)
            for match in MPI_INCLUDE.finditer(code):
                line = code.count("\n", 0, match.start()) + 1
                problems.append(f"src/{rel}: includes <mpi.h>; only the control channel and the MPI backend use MPI")
            for match in MPI_CALL.finditer(code):
                problems.append(f"src/{rel}: calls {match.group(0).rstrip('( ')}; only the control channel and the MPI backend use MPI")
    return problems, sorted(notes)


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", "..", "src")
    problems, notes = check(src)
    for n in notes:
        print(n)
    for p in problems:
        print(p)
    print(f"{len(problems)} layer violation(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
