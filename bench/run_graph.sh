#!/bin/sh
# bench/run_graph.sh - issue 16's comparison, one contender per process, interleaved:
#
# 1. ns per empty task on the chain, independent, wavefront and tree DAGs (bench_engine,
#    bench_taskflow): parex push with inlining off (PX_ENGINE_INLINE_NS=0) and with the default
#    inlining, parex graph (record once, re-launch; also its build+first run), Taskflow 4.1.0
#    (build-and-run, re-run of the built graph) and libgomp `omp task depend`.
# 2. Overhead as a fraction of the work for ops of 1, 10 and 100 us (bench_overhead,
#    bench_overhead_taskflow): parex push (default inlining and PX_ENGINE_INLINE_NS=0), parex
#    graph re-launch, Taskflow build-and-run and re-run, libgomp depend; chain and independent.
# 3. parex-cholesky --repeat 10 with --graph on and off (n 4096, tile 256): the change a graph
#    makes to a real DAG that repeats (the restore of A and the tile ops, see
#    examples/cholesky/README.md); best and median seconds of the repeats, medians over rounds.
#
# Every round runs each contender once per DAG, in the listed order on odd rounds and in reverse
# on even ones (the first of two back-to-back processes runs slower on these VMs, and the load
# drifts: see bench/compare_builds.sh), so neither order favours a contender. Medians over the
# rounds are printed, with the ratios parex / Taskflow, and written for the plot:
#   OUT (default bench/graph_results.txt)     every RESULT line, with round= (both parts)
#   bench/graph_ns_per_task.dat               median ns/task: one row per DAG, one column per
#                                             contender (bench/plot_graph.sh draws it)
#   bench/graph_overhead.dat                  median overhead per contender, DAG and work size
# and bench/plot_graph.sh makes bench/graph_ns_per_task.png (skipped without gnuplot or PLOT=0).
#
# Usage: bench/run_graph.sh BUILD_DIR [ROUNDS] [OUT]        (from the repository root)
#   ROUNDS default 3 (about 4 minutes on a quiet 2-core machine with the default sizes).
# Environment knobs:
#   SIZE="--ops 200000 --wf 1000 --tree-leaves 131072"  part 1 sizes; REPS=5 runs per process
#   WORKERS=2                           workers of every contender
#   OVERHEAD=1                          0 skips part 2; OV_REPS=3 runs per process,
#   OV_TARGET_S=0.3                     ideal seconds of one run, OV_WORK_US=1,10,100
#   DAGS="chain independent wavefront tree"   part 1 DAGs
#   CHOL=1                              0 skips part 3; CHOL_N=4096 CHOL_TILE=256 CHOL_REPEAT=10
#   PLOT=1                              0 skips the PNG
#   DAT_DIR=bench                       where the .dat files and the PNG go (smoke runs: /tmp)
# Smoke run (seconds): SIZE="--ops 2000 --wf 30 --tree-leaves 512" REPS=1 OV_TARGET_S=0.01 \
#   OV_REPS=1 DAT_DIR=/tmp bench/run_graph.sh build/rel 2 /tmp/graph_smoke.txt
set -eu
build=${1:?usage: bench/run_graph.sh BUILD_DIR [ROUNDS] [OUT]}
rounds=${2:-3}
out=${3:-bench/graph_results.txt}
size=${SIZE:---ops 200000 --wf 1000 --tree-leaves 131072}
reps=${REPS:-5}
workers=${WORKERS:-2}
dags=${DAGS:-chain independent wavefront tree}
overhead=${OVERHEAD:-1}
ov_reps=${OV_REPS:-3}
ov_target=${OV_TARGET_S:-0.3}
ov_work=${OV_WORK_US:-1,10,100}
here=$(cd "$(dirname "$0")" && pwd)
dat_dir=${DAT_DIR:-$here}
dat=$dat_dir/graph_ns_per_task.dat
ovdat=$dat_dir/graph_overhead.dat
chol=${CHOL:-1}
chol_n=${CHOL_N:-4096}
chol_tile=${CHOL_TILE:-256}
chol_repeat=${CHOL_REPEAT:-10}
chol_exe=$build/examples/cholesky/parex-cholesky
need="bench/bench_engine bench/bench_taskflow"
[ "$overhead" = 0 ] || need="$need bench/bench_overhead bench/bench_overhead_taskflow"
[ "$chol" = 0 ] || need="$need examples/cholesky/parex-cholesky"
for exe in $need; do
  [ -x "$build/$exe" ] || { echo "run_graph.sh: $build/$exe not built" >&2; exit 1; }
done

# Part 1 contenders: one process each; "tag" prefixes its RESULT lines.
engine() { # engine INLINE_NS DAG FLAGS... : bench_engine lines, impl relabelled for inlining off
  inl=$1 dag=$2
  shift 2
  # shellcheck disable=SC2086
  if [ "$inl" = default ]; then
    "$build/bench/bench_engine" $size --reps "$reps" --workers "$workers" --only "$dag" \
      --no-starpu "$@"
  else
    PX_ENGINE_INLINE_NS=0 "$build/bench/bench_engine" $size --reps "$reps" \
      --workers "$workers" --only "$dag" --no-starpu "$@" | sed 's/impl=parex_push /impl=parex_push_noinline /'
  fi | grep '^RESULT'
}
run_dag_contender() { # run_dag_contender NAME DAG
  case $1 in
    push_noinline) engine 0 "$2" --no-graph --no-omp ;;
    push) engine default "$2" --no-graph --no-omp ;;
    graph) engine 0 "$2" --no-push --no-omp ;;
    libgomp) engine 0 "$2" --no-push --no-graph ;;
    taskflow)
      # shellcheck disable=SC2086
      "$build/bench/bench_taskflow" $size --reps "$reps" --workers "$workers" --only "$2" |
        grep '^RESULT' ;;
  esac
}
run_ov_contender() { # run_ov_contender NAME
  set -- "$1" --work-us "$ov_work" --target-s "$ov_target" --reps "$ov_reps" --workers "$workers"
  name=$1
  shift
  case $name in
    push) "$build/bench/bench_overhead" --impl parex_push "$@" ;;
    push_noinline) PX_ENGINE_INLINE_NS=0 "$build/bench/bench_overhead" --impl parex_push "$@" ;;
    graph) "$build/bench/bench_overhead" --impl parex_graph "$@" ;;
    libgomp) "$build/bench/bench_overhead" --impl libgomp "$@" ;;
    taskflow) "$build/bench/bench_overhead_taskflow" "$@" ;;
  esac 2>/dev/null | grep '^RESULT'
}
run_chol() { # run_chol on|off: one RESULT line from parex-cholesky's JSON
  OPENBLAS_NUM_THREADS=1 "$chol_exe" --n "$chol_n" --tile "$chol_tile" --workers "$workers" \
    --repeat "$chol_repeat" --graph "$1" --residual none --json | tail -n 1 |
    sed -n "s/.*\"seconds\": \([0-9.]*\), \"seconds_median\": \([0-9.]*\).*/RESULT bench=cholesky_repeat impl=graph_$1 n=$chol_n tile=$chol_tile repeat=$chol_repeat best_s=\1 median_s=\2/p"
}
order() { # order ROUND LIST...: the list, reversed on even rounds
  r=$1
  shift
  if [ $((r % 2)) -eq 1 ]; then
    echo "$@"
  else
    rev=
    for c in "$@"; do rev="$c $rev"; done
    echo "$rev"
  fi
}

contenders="push_noinline graph taskflow libgomp push"
: > "$out"
echo "# load at start: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out"
r=1
# shellcheck disable=SC2086  # $contenders is a list of words on purpose
while [ "$r" -le "$rounds" ]; do
  for dag in $dags; do
    for c in $(order "$r" $contenders); do
      run_dag_contender "$c" "$dag" | sed "s/^RESULT /RESULT round=$r /" >> "$out"
    done
  done
  if [ "$overhead" != 0 ]; then
    for c in $(order "$r" $contenders); do
      run_ov_contender "$c" | sed "s/^RESULT /RESULT round=$r /" >> "$out"
    done
  fi
  if [ "$chol" != 0 ]; then
    for g in $(order "$r" on off); do
      run_chol "$g" | sed "s/^RESULT /RESULT round=$r /" >> "$out"
    done
  fi
  echo "run_graph.sh: round $r of $rounds done" >&2
  r=$((r + 1))
done
echo "# load at end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out"

# show FILE: its comment lines, then the table aligned
show() {
  grep '^#' "$1"
  grep -v '^#' "$1" | column -t 2>/dev/null || grep -v '^#' "$1"
}
# field NAME: the value of NAME=... on each line of stdin
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }
# Medians per key: stdin "key value" lines -> "key median" (keys sorted).
medians() {
  sort -k1,1 -k2,2g | awk '
    function flush() { if (n) print key, (n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2) }
    $1 != key { flush(); key = $1; n = 0 }
    { v[++n] = $2 }
    END { flush() }'
}

# Part 1 summary: ns/task medians, the .dat for the plot, ratios parex / Taskflow.
cols="parex_push_noinline parex_push parex_graph parex_graph_build taskflow_build_run taskflow_rerun libgomp"
grep -v 'bench=overhead' "$out" | grep '^RESULT' | while read -r line; do
  d=$(echo "$line" | field dag) i=$(echo "$line" | field impl) v=$(echo "$line" | field ns_per_task)
  echo "$d/$i $v"
done | medians > "$out.medians"
{
  echo "# median ns per task over $rounds rounds, $workers workers, sizes: $size"
  echo "# load: $(grep '^# load at start' "$out" | cut -d: -f2-)"
  echo "dag $cols"
  for dag in $dags; do
    row=$dag
    for c in $cols; do
      v=$(awk -v k="$dag/$c" '$1 == k { print $2 }' "$out.medians")
      row="$row ${v:-NaN}"
    done
    echo "$row"
  done
} > "$dat"
echo "== ns per task (median of $rounds rounds; $dat) =="
show "$dat"
echo "== ratios parex / Taskflow (issue 16 targets: push_noinline/build_run <= 0.8, graph/rerun <= 1.0) =="
printf '%-12s %24s %20s %24s\n' dag push_noinline/build_run graph/rerun graph_build/build_run
for dag in $dags; do
  awk -v d="$dag" '
    { m[$1] = $2 }
    function ratio(a, b) { return (m[d "/" a] > 0 && m[d "/" b] > 0) ? sprintf("%.2f", m[d "/" a] / m[d "/" b]) : "n/a" }
    END { printf "%-12s %24s %20s %24s\n", d, ratio("parex_push_noinline", "taskflow_build_run"),
          ratio("parex_graph", "taskflow_rerun"), ratio("parex_graph_build", "taskflow_build_run") }' \
    "$out.medians"
done

# Part 2 summary: overhead fractions.
if [ "$overhead" != 0 ]; then
  grep 'bench=overhead' "$out" | while read -r line; do
    d=$(echo "$line" | field dag) i=$(echo "$line" | field impl)
    w=$(echo "$line" | field work_us) v=$(echo "$line" | field overhead)
    echo "$d/$w/$i $v"
  done | medians > "$out.ov_medians"
  ovcols="parex_push parex_push_noinline parex_graph taskflow_build_run taskflow_rerun libgomp"
  {
    echo "# median overhead (measured - ideal) / ideal over $rounds rounds, $workers workers"
    echo "dag work_us $ovcols"
    for dag in chain independent; do
      for w in $(echo "$ov_work" | tr ',' ' '); do
        row="$dag $w"
        for c in $ovcols; do
          v=$(awk -v k="$dag/$w/$c" '$1 == k { print $2 }' "$out.ov_medians")
          row="$row ${v:-NaN}"
        done
        echo "$row"
      done
    done
  } > "$ovdat"
  echo "== overhead as a fraction of the work (median of $rounds rounds; $ovdat) =="
  show "$ovdat"
  echo "== overhead ratios parex / Taskflow (graph/rerun, push/build_run, push_noinline/build_run) =="
  awk '!/^#/ && $1 != "dag" && $3 > 0 && $4 > 0 && $5 > 0 && $6 > 0 && $7 > 0 {
         printf "%-12s %6s us  graph/rerun %6.2f  push/build_run %6.2f  push_noinline/build_run %6.2f\n",
                $1, $2, $5 / $7, $3 / $6, $4 / $6 }' "$ovdat"
  rm -f "$out.ov_medians"
fi
rm -f "$out.medians"

# Part 3 summary: Cholesky repeats through a graph against pushed repeats.
if [ "$chol" != 0 ]; then
  echo "== parex-cholesky --n $chol_n --tile $chol_tile --repeat $chol_repeat (median over $rounds rounds) =="
  for k in best_s median_s; do
    on=$(grep 'impl=graph_on' "$out" | field "$k" | awk '{ print "x", $1 }' | medians | awk '{ print $2 }')
    off=$(grep 'impl=graph_off' "$out" | field "$k" | awk '{ print "x", $1 }' | medians | awk '{ print $2 }')
    awk -v k="$k" -v on="$on" -v off="$off" 'BEGIN {
      if (on > 0 && off > 0) printf "%-9s graph on %.6f s  off %.6f s  on/off %.3f\n", k, on, off, on / off
      else printf "%-9s no data\n", k }'
  done
fi
if [ "${PLOT:-1}" != 0 ] && command -v gnuplot > /dev/null; then
  "$here/plot_graph.sh" "$dat" "$dat_dir/graph_ns_per_task.png"
fi
