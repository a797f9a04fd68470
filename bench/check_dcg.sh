#!/usr/bin/env bash
# bench/check_dcg.sh - correctness of the distributed-CG baseline (ctest check_dcg_*, label
# "mpi;bench"; bench/dcg.cmake): bench_cg_bsp on P ranks must take the same iterations as one
# rank on the same global grid and reach the same error (its halo maps: faces at P = 2, faces
# and edges at 4, corners at 8, every one of the 26 directions at 27), refuse a process grid
# that does not match the rank count, and bench_pingpong must report every size.
#
# Usage: bench/check_dcg.sh BSP PINGPONG MPIRUN...   (MPIRUN: the mpirun command and its options,
# ending in the rank-count flag, e.g. "mpirun --allow-run-as-root --oversubscribe -np")
set -euo pipefail
bsp=${1:?usage: check_dcg.sh BSP PINGPONG MPIRUN...}
pingpong=${2:?usage: check_dcg.sh BSP PINGPONG MPIRUN...}
shift 2
mpirun=("$@")
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} OMP_WAIT_POLICY=passive
num() { sed -n "s/.*\"$1\": *\([-0-9.eE+]*\).*/\1/p" | tail -1; }
fail() { echo "check_dcg.sh: FAIL: $*" >&2; exit 1; }

# P ranks of N^3 against one rank of the global box.
for case in "2 6" "4 6" "8 4" "27 3"; do
  read -r p n <<<"$case"
  dist=$("${mpirun[@]}" "$p" "$bsp" --grid "$n" --json | grep '^{')
  g=$(sed -n 's/.*"global": \[\([0-9]*\), \([0-9]*\), \([0-9]*\)\].*/\1,\2,\3/p' <<<"$dist")
  [ -n "$g" ] || fail "no global box in the $p-rank JSON: $dist"
  one=$("${mpirun[@]}" 1 "$bsp" --local "$g" --json | grep '^{')
  it_d=$(num iterations <<<"$dist") it_1=$(num iterations <<<"$one")
  err_d=$(num max_abs_err <<<"$dist")
  [ "$it_d" = "$it_1" ] || fail "$p ranks of $n^3: $it_d iterations, one rank of $g: $it_1"
  awk -v e="$err_d" 'BEGIN { exit !(e < 1e-6) }' || fail "$p ranks: max|x-1| $err_d"
  grep -q '"converged": true' <<<"$dist" || fail "$p ranks did not converge"
  echo "check_dcg.sh: $p ranks of $n^3 = one rank of $g: $it_d iterations, max|x-1| $err_d"
done

# A process grid that does not make the rank count: exit status 2 and a message.
set +e
msg=$("${mpirun[@]}" 2 "$bsp" --procs 3,1,1 2>&1)
rc=$?
set -e
if [ "$rc" -ne 2 ] || ! grep -q "does not make 2 ranks" <<<"$msg"; then
  fail "--procs 3,1,1 on 2 ranks: rc $rc, $msg"
fi

# Ping-pong: 8 B .. 1 KiB is 8 sizes; allreduce rows present.
pp=$("${mpirun[@]}" 2 "$pingpong" --max-bytes 1024 --batches 2 --json | grep '^{')
[ "$(grep -o '"bytes"' <<<"$pp" | wc -l)" -eq 8 ] || fail "ping-pong sizes: $pp"
grep -q '"doubles": 2' <<<"$pp" || fail "no allreduce rows: $pp"
echo "check_dcg.sh: all passed"
