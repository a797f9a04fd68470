#!/usr/bin/env bash
# bench/check_dcg.sh - correctness of the distributed-CG baseline (ctest check_dcg_*, label
# "mpi;bench"; bench/dcg.cmake): bench_cg_bsp on P ranks must take the same iterations as one
# rank on the same global grid and reach the same error (its halo maps: faces at P = 2, faces
# and edges at 4, all 26 directions at 8, corners included), stay within 3% of one
# rank's iterations on a Matrix Market file (env DCG_MATRIX) with block and METIS parts, refuse
# a missing file and a process grid that does not match the rank count, take plain CG's
# iterations with --cg pipelined and pipelined-nb on HPCG, the same ones with and without
# OpenMP regions on one thread (--omp-one-thread), time its first iterations one by one
# (first_iters_seconds); bench_pingpong must
# report every size, its exchanges posted three ways and its allreduces called four ways, and bench_engine_pingpong (env
# DCG_ENGINE_PINGPONG) every field.
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

# P ranks of N^3 against one rank of the global box. At 8 ranks (2 x 2 x 2) every one of the 26
# halo directions is some rank's (a corner rank has 7); 27 ranks, which gave one rank all 26,
# ran until session 27 (3 s of the check's 16 here, 27 processes on 2 cores).
for case in "2 6" "4 6" "8 4"; do
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

# --cg pipelined and pipelined-nb (Ghysels-Vanroose, one allreduce an iteration): in exact
# arithmetic plain CG's iterates, so on the well-conditioned HPCG box the same iterations as
# plain CG on 1 and 4 ranks and the same error bound; an unknown variant is exit status 2.
for p in 1 4; do
  it_plain=$("${mpirun[@]}" "$p" "$bsp" --grid 6 --json | grep '^{' | num iterations)
  for v in pipelined pipelined-nb; do
    out=$("${mpirun[@]}" "$p" "$bsp" --grid 6 --cg "$v" --json | grep '^{')
    grep -q "\"cg\": \"$v\"" <<<"$out" || fail "--cg $v: no \"cg\": \"$v\" in $out"
    [ "$(num iterations <<<"$out")" = "$it_plain" ] \
      || fail "--cg $v on $p ranks: $(num iterations <<<"$out") iterations, plain $it_plain"
    awk -v e="$(num max_abs_err <<<"$out")" 'BEGIN { exit !(e < 1e-6) }' \
      || fail "--cg $v on $p ranks: max|x-1| $(num max_abs_err <<<"$out")"
    echo "check_dcg.sh: --cg $v on $p ranks of 6^3: $it_plain iterations as plain CG"
  done
done
# first_iters_seconds: the first 8 iterations timed one by one (as many as ran, when fewer),
# each positive, together within the solve's seconds; the plain loop on a solve shorter than 8
# iterations, the pipelined one on a longer solve (two runs, not four: CI time).
for case in "plain 3" "pipelined-nb 12"; do
  read -r v it <<<"$case"
  out=$("${mpirun[@]}" 2 "$bsp" --grid 6 --cg "$v" --iters "$it" --json | grep '^{')
  python3 -c 'import json, sys
j, it = json.loads(sys.argv[1]), int(sys.argv[2])
f = j["first_iters_seconds"]
assert j["iterations"] == it and len(f) == min(it, 8), (it, f)
assert all(t > 0 for t in f) and sum(f) <= j["seconds"] * (1 + 1e-5) + 1e-6, (f, j["seconds"])
' "$out" "$it" || fail "--cg $v --iters $it: first_iters_seconds in $out"
  echo "check_dcg.sh: --cg $v --iters $it: first_iters_seconds times the first $((it < 8 ? it : 8))"
done
# One thread runs the loops outside OpenMP regions unless --omp-one-thread (bench_cg_bsp.c's
# "Loops"); both are the same loops in the same order: the same iterations and residual, bit for
# bit, plain and pipelined on 2 ranks; two threads run them in regions.
for v in plain pipelined; do
  inl=$(OMP_NUM_THREADS=1 "${mpirun[@]}" 2 "$bsp" --grid 6 --cg "$v" --json | grep '^{')
  reg=$(OMP_NUM_THREADS=1 "${mpirun[@]}" 2 "$bsp" --grid 6 --cg "$v" --omp-one-thread --json \
    | grep '^{')
  grep -q '"omp_regions": false' <<<"$inl" || fail "one thread, --cg $v: regions in $inl"
  grep -q '"omp_regions": true' <<<"$reg" || fail "--omp-one-thread --cg $v: no regions in $reg"
  [ "$(num iterations <<<"$inl")/$(num relres <<<"$inl")" \
    = "$(num iterations <<<"$reg")/$(num relres <<<"$reg")" ] \
    || fail "--cg $v: $(num iterations <<<"$inl") iterations, relres $(num relres <<<"$inl") \
without regions; $(num iterations <<<"$reg"), $(num relres <<<"$reg") with"
  echo "check_dcg.sh: --cg $v, one thread a rank: the same $(num iterations <<<"$inl") iterations \
and relres with and without OpenMP regions"
done
two=$(OMP_NUM_THREADS=2 "${mpirun[@]}" 1 "$bsp" --grid 6 --json | grep '^{')
grep -q '"omp_regions": true' <<<"$two" || fail "two threads: no regions in $two"
set +e
msg=$("${mpirun[@]}" 1 "$bsp" --cg chebyshev 2>&1)
rc=$?
set -e
[ "$rc" -eq 2 ] && grep -q "is not plain, pipelined or pipelined-nb" <<<"$msg" \
  || fail "--cg chebyshev: rc $rc, $msg"

# A Matrix Market file (DCG_MATRIX, skipped when unset or missing), block and METIS parts on 2
# and 4 ranks: iterations within 3% of one rank's (sums in another order), same error bound.
if [ -n "${DCG_MATRIX:-}" ] && [ -r "$DCG_MATRIX" ]; then
  it_1=$("${mpirun[@]}" 1 "$bsp" --matrix "$DCG_MATRIX" --json | grep '^{' | num iterations)
  for part in block metis; do
    for p in 2 4; do
      out=$("${mpirun[@]}" "$p" "$bsp" --matrix "$DCG_MATRIX" --partition "$part" --json | grep '^{')
      it=$(num iterations <<<"$out")
      awk -v a="$it" -v b="$it_1" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 0.03 * b) }' \
        || fail "$DCG_MATRIX, $part, $p ranks: $it iterations, one rank $it_1"
      grep -q '"converged": true' <<<"$out" || fail "$DCG_MATRIX, $part, $p ranks did not converge"
      echo "check_dcg.sh: $(basename "$DCG_MATRIX") $part on $p ranks: $it iterations (one rank $it_1)"
    done
  done
else
  echo "check_dcg.sh: DCG_MATRIX unset or unreadable, Matrix Market cases skipped"
fi
set +e
msg=$("${mpirun[@]}" 2 "$bsp" --matrix /nonexistent.mtx 2>&1)
rc=$?
set -e
if [ "$rc" -ne 1 ] || ! grep -q "nonexistent.mtx" <<<"$msg"; then
  fail "--matrix /nonexistent.mtx: rc $rc, $msg"
fi

# A process grid that does not make the rank count: exit status 2 and a message.
set +e
msg=$("${mpirun[@]}" 2 "$bsp" --procs 3,1,1 2>&1)
rc=$?
set -e
if [ "$rc" -ne 2 ] || ! grep -q "does not make 2 ranks" <<<"$msg"; then
  fail "--procs 3,1,1 on 2 ranks: rc $rc, $msg"
fi

# --independent (run_dcg.sh's calibration): every rank solves its own one-rank box, so 3
# instances take one rank's iterations, report 3 instance times and the slowest as the rate;
# with --matrix or --procs it is refused with exit status 2.
one=$("${mpirun[@]}" 1 "$bsp" --local 6,5,4 --json | grep '^{')
ind=$("${mpirun[@]}" 3 "$bsp" --independent --local 6,5,4 --json | grep '^{')
[ "$(num iterations <<<"$ind")" = "$(num iterations <<<"$one")" ] \
  || fail "--independent on 3 ranks: $ind, one rank: $one"
grep -q '"ranks": 1, "instances": 3, "instance_seconds_per_iter": \[[^],]*,[^],]*,[^],]*\]' \
  <<<"$ind" || fail "--independent: no 3 instance times in $ind"
python3 -c 'import json, sys; d = json.loads(sys.argv[1])
sys.exit(d["seconds_per_iter"] != max(d["instance_seconds_per_iter"]))' "$ind" \
  || fail "--independent: seconds_per_iter is not the slowest instance's: $ind"
for bad in "--matrix /nonexistent.mtx" "--procs 2,1,1"; do
  read -ra args <<<"$bad"
  set +e
  msg=$("${mpirun[@]}" 2 "$bsp" --independent "${args[@]}" 2>&1)
  rc=$?
  set -e
  if [ "$rc" -ne 2 ] || ! grep -q "not with --matrix or --procs" <<<"$msg"; then
    fail "--independent $bad: rc $rc, $msg"
  fi
done
echo "check_dcg.sh: --independent on 3 ranks: $(num iterations <<<"$ind") iterations each"

# The synchronized calibration (run_dcg.sh, cg_model.py assumption 1b): 3 copies of a box down
# the diagonal of one matrix (bench/hpcg_mtx.py), cut into 3 row blocks, are 3 ranks with no
# halo whose dot products still sum over all 3: the same iterations as the box on one rank
# (the blocks are equal, so every global sum is 3 times one block's). The scripts' self-tests.
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$here/hpcg_mtx.py" 6 5 4 3 "$tmp/blocks.mtx"
syn=$("${mpirun[@]}" 3 "$bsp" --matrix "$tmp/blocks.mtx" --partition block --json | grep '^{')
[ "$(num iterations <<<"$syn")" = "$(num iterations <<<"$one")" ] \
  || fail "3 blocks of 6x5x4 on 3 ranks: $syn, one rank of the box: $one"
[ "$(num halo_bytes <<<"$syn")" = 0 ] || fail "3 blocks on 3 ranks exchange a halo: $syn"
echo "check_dcg.sh: 3 blocks of 6x5x4 on 3 ranks: $(num iterations <<<"$syn") iterations, no halo"
python3 "$here/hpcg_mtx.py" --self-test
python3 "$here/cg_model.py" --self-test

# Ping-pong: 8 B .. 1 KiB is 8 sizes; the exchange 8 B .. 8 KiB 11, each posted three ways;
# allreduce rows present.
pp=$("${mpirun[@]}" 2 "$pingpong" --max-bytes 1024 --batches 2 --json | grep '^{')
python3 -c '
import json, sys
j = json.loads(sys.argv[1])
assert [r["bytes"] for r in j["pingpong"]] == [8 << k for k in range(8)], "ping-pong sizes"
assert [r["bytes"] for r in j["exchange"]] == [8 << k for k in range(11)], "exchange sizes"
for r in j["exchange"]:
    for k in ("isend_irecv", "persistent", "isend_persistent_recv"):
        assert r[k + "_us"] > 0 and 0 < r[k + "_us_min"] <= r[k + "_us"], "exchange " + k
' "$pp" || fail "ping-pong or exchange rows: $pp"
xo=$("${mpirun[@]}" 2 "$pingpong" --exchange-only --batches 2 --json | grep '^{')
python3 -c '
import json, sys
j = json.loads(sys.argv[1])
assert not j["pingpong"] and not j["allreduce"] and len(j["exchange"]) == 11
' "$xo" || fail "--exchange-only: $xo"
set +e
msg=$("${mpirun[@]}" 2 "$pingpong" --exchange-only --allreduce-only 2>&1)
rc=$?
set -e
[ "$rc" -eq 2 ] && grep -q "exclude each other" <<<"$msg" \
  || fail "--exchange-only --allreduce-only: rc $rc, $msg"
grep -q '"doubles": 2' <<<"$pp" || fail "no allreduce rows: $pp"
for k in us iallreduce_test_us iallreduce_wait_us; do
  [ "$(grep -o "\"$k\": [0-9]" <<<"$pp" | wc -l)" -eq 2 ] || fail "allreduce: $k not in both rows: $pp"
done
# -1: an MPI without persistent collectives.
[ "$(grep -o '"persistent_test_us": -\{0,1\}[0-9]' <<<"$pp" | wc -l)" -eq 2 ] \
  || fail "allreduce: persistent_test_us not in both rows: $pp"

# The engine ping-pong (env DCG_ENGINE_PINGPONG, skipped when unset): every field of its JSON,
# a positive engine half round trip, and exit status 2 on a rank count other than 2.
if [ -n "${DCG_ENGINE_PINGPONG:-}" ]; then
  ep=$(PX_ENGINE_INLINE_NS=0 "${mpirun[@]}" 2 "$DCG_ENGINE_PINGPONG" --round-trips 20 --batches 3 \
       --json | grep '^{')
  for k in engine_half_rtt_us engine_half_rtt_us_min mpi_half_rtt_us mpi_half_rtt_us_min \
           engine_extra_us op_roundtrip_us op_roundtrip_us_min; do
    grep -q "\"$k\": -\{0,1\}[0-9]" <<<"$ep" || fail "engine ping-pong: no $k in $ep"
  done
  awk -v e="$(num engine_half_rtt_us <<<"$ep")" 'BEGIN { exit !(e > 0) }' \
    || fail "engine ping-pong: half round trip not positive: $ep"
  set +e
  msg=$("${mpirun[@]}" 3 "$DCG_ENGINE_PINGPONG" 2>&1)
  rc=$?
  set -e
  [ "$rc" -eq 2 ] && grep -q "got 3 ranks" <<<"$msg" || fail "engine ping-pong on 3 ranks: rc $rc, $msg"
  echo "check_dcg.sh: engine ping-pong: $(num engine_half_rtt_us <<<"$ep") us per message (MPI $(num mpi_half_rtt_us <<<"$ep"))"
fi
echo "check_dcg.sh: all passed"
