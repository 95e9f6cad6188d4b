#!/usr/bin/env bash
# mpirun with ccbench's exit codes when the launcher itself is stopped.
#   scripts/mpirun.sh -np 2 build/ccbench run ...      (any mpirun arguments)
#
# Open MPI 4.1's mpirun exits 1 when it receives SIGTERM or SIGINT, whatever its ranks exit with
# (its forced-exit path sets the job's status to its default error code, 1, before it kills the
# ranks; ranks exiting 0, 7 or 143 all give 1). 1 is ccbench's "data check failed". And mpirun
# refuses to forward SIGTERM/SIGINT instead (ess_base_forward_signals: "The system does not
# support trapping and forwarding of the specified signal"). So the launcher level is where the
# code is fixed: this wrapper passes the signal on to mpirun (which sends it to the ranks, which
# save their partial result file with status "interrupted" and exit 128+signal), waits for it,
# and exits 128+signal itself: 143 for SIGTERM, 130 for SIGINT, 129 for SIGHUP. Otherwise its
# exit code is mpirun's. A rank signalled directly (not mpirun) already gives mpirun 128+signal.
#
# As root it also allows Open MPI to run as root (OMPI_ALLOW_RUN_AS_ROOT and ..._CONFIRM, what
# --allow-run-as-root sets), which mpirun otherwise refuses: in a container or on a test machine
# root is the usual user, and this wrapper is what the README offers them.
#
# Open MPI prints two boxed notices when a rank exits with a code other than 0 ("Primary job
# terminated normally, but 1 process returned a non-zero exit code..." and "mpirun detected that
# one or more processes exited with non-zero status..."; 12 lines): ccbench's own one-line message
# and the exit code already say it, so this wrapper drops that pair from mpirun's stderr and passes
# every other line on as it comes (a rank killed by a signal, too few slots, a program not found
# keep their notices). mpirun's own `--quiet` would hide those too.
set -u
mpirun_bin=${MPIRUN:-mpirun}
if [[ $(id -u) == 0 ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT:-1} OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}
fi
signalled=0
drop_exit_notices() {
  awk '
    function out(text) { printf "%s", text; fflush() }
    function release() { out(pending); pending = "" }
    function closed(box) {
      if (box ~ /^-+\nPrimary job +terminated normally, but/) { release(); pending = box }
      else if (pending != "" && box ~ /^-+\nmpirun detected that one or more processes exited with non/) pending = ""
      else { release(); out(box) }
    }
    /^-+$/ && length($0) >= 60 { box = box $0 "\n"; if (++dashes == 2) { closed(box); box = ""; dashes = 0 }; next }
    dashes == 1 { box = box $0 "\n"; next }
    { release(); out($0 "\n") }
    END { release(); out(box) }'
}
notices=$(mktemp -d "${TMPDIR:-/tmp}/ccbench-mpirun.XXXXXX") && mkfifo "$notices/stderr" || exit 2
# The filter ignores the signals meant for mpirun (a terminal's Ctrl-C reaches the whole group):
# it ends when mpirun closes its stderr, so no line mpirun writes on its way out is lost.
(trap '' INT TERM HUP; drop_exit_notices) <"$notices/stderr" >&2 &
filter=$!
# mpirun ends the job alike on TERM and INT; TERM is sent because a background job of a
# non-interactive shell starts with SIGINT ignored.
forward() {
  signalled=$1
  kill -TERM "$child" 2>/dev/null
}
# mpirun gets a process group of its own (job control on for this one job): a signal sent to the
# wrapper's whole group (`timeout` sends its TERM to its process group, a terminal its Ctrl-C to
# the foreground group) then reaches mpirun once, from forward(). Sent to mpirun both directly and
# by forward(), the second TERM made Open MPI kill the ranks at once, before rank 0 saved: the file
# said "incomplete", exit_code 0, with 1 row while the .jsonl held them all. Open MPI does not read
# a terminal's stdin from a background process group, so this costs an interactive run nothing.
set -m
"$mpirun_bin" "$@" 2>"$notices/stderr" &
child=$!
set +m
trap 'forward 143' TERM
trap 'forward 130' INT
trap 'forward 129' HUP
while :; do
  wait "$child"
  rc=$?
  # wait returns early (status > 128) when a trapped signal arrives; go on waiting for mpirun.
  if kill -0 "$child" 2>/dev/null; then continue; fi
  break
done
wait "$filter" 2>/dev/null
rm -rf "$notices"
if [[ $signalled != 0 ]]; then exit "$signalled"; fi
exit "$rc"
