#!/usr/bin/env bash
# Issue 27 item 17: scripts/mpirun.sh, which the README offers as the launcher for root, starts a job
# as root without --allow-run-as-root or the OMPI_ALLOW_RUN_AS_ROOT variables (mpirun alone refuses:
# "mpirun has detected an attempt to run as root", exit 1). Real mpirun, 1 rank; about 1 s.
# Usage: test_mpirun_sh_root.sh MPIRUN_SH   (root and mpirun; exit 77 to skip otherwise)
set -uo pipefail
wrapper=$(readlink -f "$1")
[[ $(id -u) == 0 ]] || { echo "SKIP: needs root (what is tested is mpirun as root)"; exit 77; }
command -v mpirun >/dev/null || { echo "SKIP: no mpirun"; exit 77; }
unset OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
out=$(timeout 60 "$wrapper" -np 1 hostname 2>&1)
rc=$?
[[ $rc == 0 && $out == "$(hostname)" ]] || { echo "FAIL: mpirun.sh -np 1 hostname as root: exit $rc: $(head -3 <<<"$out")"; exit 1; }
echo "PASS: mpirun.sh -np 1 hostname as root: $out"
