#!/bin/bash
# Launched by mpirun in place of ccbench (tests/e2e/emulate/congestion.sh): runs the measured ranks
# (CCB_PIN_MEASURED, world ranks separated by spaces) on CPU 0 and every other rank on CPU 1, so
# that on a 2-core machine the congestors' processes never take CPU time from the measured ranks
# and what the impact factor shows is the links (docs/congestion.md, "Known answers").
r=${OMPI_COMM_WORLD_RANK:?not started by Open MPI}
cpu=1
for m in ${CCB_PIN_MEASURED:-}; do [[ $m == "$r" ]] && cpu=0; done
exec taskset -c "$cpu" "$@"
