#!/bin/sh
# examples/heat/same_bits.sh - parex-heat's results agree bit for bit on 1, 2 and 3 ranks and in
# both halo modes (heat.c says why: no update depends on the decomposition). Compares the JSON
# fields max_abs_err and last_change (printed with 17 significant digits) of each run with the
# one-rank run's.
#   same_bits.sh MPIEXEC PAREX_HEAT     (ctest heat_mpi_same_bits, examples/heat/CMakeLists.txt)
set -u
mpiexec=$1
heat=$2
ref=
for run in "1 engine" "2 engine" "3 engine" "2 sendrecv"; do
    set -- $run
    out=$("$mpiexec" --allow-run-as-root --oversubscribe -np "$1" "$heat" --n 64 --steps 200 \
        --halo "$2" --json | tail -n 1) || { echo "FAILED: $run ranks/halo did not run"; exit 1; }
    bits=$(echo "$out" | sed -n 's/.*"max_abs_err": \([^,]*\), "last_change": \([^}]*\)}.*/\1 \2/p')
    if [ -z "$bits" ]; then
        echo "FAILED: no JSON line from $run: $out"
        exit 1
    fi
    echo "$1 rank(s), halo $2: max_abs_err last_change = $bits"
    if [ -z "$ref" ]; then
        ref=$bits
    elif [ "$bits" != "$ref" ]; then
        echo "FAILED: $1 rank(s), halo $2 give $bits; 1 rank gave $ref"
        exit 1
    fi
done
echo "same bits on every decomposition"
