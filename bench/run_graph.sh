#!/bin/sh
# bench/run_graph.sh - issue 16's per-task comparison: parex push (hand-off, inlining off), parex
# graph (record once, re-launch), libgomp depend and Taskflow 4.1.0 (build-and-run, re-run) on
# the chain, independent, wavefront and tree DAGs. The contenders alternate order each round
# (parex first on odd rounds, Taskflow first on even ones) so a drift of the machine's load
# does not favour one; every RESULT line goes to OUT with its round number.
# Usage: bench/run_graph.sh BUILD_DIR [ROUNDS] [OUT]        (from the repository root)
#   SIZE="--ops 200000 --wf 1000 --tree-leaves 131072" REPS=5 WORKERS=2 override the sizes;
#   smoke run: SIZE="--ops 2000 --wf 30 --tree-leaves 512" REPS=1 bench/run_graph.sh build/rel 1
set -e
build=${1:?usage: bench/run_graph.sh BUILD_DIR [ROUNDS] [OUT]}
rounds=${2:-5}
out=${3:-bench/graph_results.txt}
size=${SIZE:---ops 200000 --wf 1000 --tree-leaves 131072}
reps=${REPS:-5}
workers=${WORKERS:-2}
for exe in bench_engine bench_taskflow; do
  [ -x "$build/bench/$exe" ] || { echo "run_graph.sh: $build/bench/$exe not built" >&2; exit 1; }
done
run_parex() {
  for dag in chain independent wavefront tree; do
    # shellcheck disable=SC2086
    PX_ENGINE_INLINE_NS=0 "$build/bench/bench_engine" $size --reps "$reps" --workers "$workers" \
      --only "$dag" --no-starpu | grep '^RESULT' | sed "s/^RESULT /RESULT round=$1 inline_ns=0 /"
  done
}
run_taskflow() {
  # shellcheck disable=SC2086
  "$build/bench/bench_taskflow" $size --reps "$reps" --workers "$workers" |
    grep '^RESULT' | sed "s/^RESULT /RESULT round=$1 /"
}
: > "$out"
r=1
while [ "$r" -le "$rounds" ]; do
  if [ $((r % 2)) -eq 1 ]; then
    run_parex "$r" >> "$out"
    run_taskflow "$r" >> "$out"
  else
    run_taskflow "$r" >> "$out"
    run_parex "$r" >> "$out"
  fi
  r=$((r + 1))
done
cat "$out"
