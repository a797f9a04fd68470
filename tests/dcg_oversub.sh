#!/bin/sh
# tests/dcg_oversub.sh MPIRUN PAREX_CG - 4 unbound ranks x 2 threads of a small distributed CG
# (HPCG 8^3 per rank) on a machine with fewer processors than that: parex-cg must converge well
# within the time bound (timeout(1) turns a hang or a crawl into exit 124), and rank 0's
# px_initialize must have said it runs oversubscribed (core/oversub.h). Run by ctest
# (tests/cg.cmake) with PX_NUM_THREADS=2 PX_LOG_LEVEL=info.
mpirun=$1 cg=$2
out=$(timeout -k 5 60 "$mpirun" --allow-run-as-root --oversubscribe --bind-to none -np 4 "$cg" \
      --grid 8 --space threads --progress 0 2>&1)
rc=$?
printf '%s\n' "$out"
[ "$rc" = 0 ] || { echo "dcg_oversub.sh: mpirun exited with $rc (124: the 60 s bound)" >&2; exit 1; }
printf '%s\n' "$out" | grep -q 'converged after' || { echo "dcg_oversub.sh: no convergence" >&2; exit 1; }
cpus=$(getconf _NPROCESSORS_ONLN)
if [ $((4 * 2)) -gt "$(getconf _NPROCESSORS_ONLN)" ]; then
  printf '%s\n' "$out" | grep -q 'oversubscribed (.*4 processes x 2 threads' ||
    { echo "dcg_oversub.sh: 4 x 2 threads on $cpus processors, yet no oversubscription logged" >&2; exit 1; }
fi
echo "dcg_oversub.sh: ok"
