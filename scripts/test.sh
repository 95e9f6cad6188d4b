#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (unit, integration with real mpirun, e2e).
#   scripts/test.sh             # everything
#   scripts/test.sh -R compare  # extra arguments go to ctest
#   scripts/test.sh -L unit     # one kind of test: unit, integration or e2e (docs/architecture.md)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${BUILD_DIR:-$root/build}
"$root/scripts/setup.sh"

# mpirun as root (CI runs as root); tests pass --oversubscribe themselves.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
cd "$build_dir"
# Serial: the integration and e2e tests time real MPI runs on a 2-core machine.
ctest --output-on-failure --timeout 900 "$@"
# The sanitizer job (ASan + UBSan, unit, loader and bounded fuzz tests) on a full run only: never
# after a run given arguments (-L unit, -R ...).
if [[ $# -eq 0 && ${CCBENCH_SKIP_SANITIZE:-0} != 1 ]]; then
  "$root/scripts/ci/sanitize.sh"
fi
