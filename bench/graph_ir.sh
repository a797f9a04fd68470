#!/bin/sh
# bench/graph_ir.sh - instructions (callgrind Ir) per task of a graph re-launch, a load-independent
# companion to bench/run_graph.sh's timings (issue 16): bench_engine runs the DAG's graph with
# R1 and then R2 re-launches under callgrind; (Ir(R2) - Ir(R1)) / ((R2 - R1) x ops) leaves
# out recording, set-up and teardown. Also prints the per-function split of that difference.
#
# Usage: bench/graph_ir.sh BUILD_DIR [DAG] [SIZE] [WORKERS]     (from the repository root)
#   DAG wavefront (default), chain, independent or tree; SIZE: the grid side for wavefront
#   (default 300), ops for chain/independent (default 50000), leaves for tree (default 32768).
#   Env: R1=2 R2=6, ENGINE=per_device, OUT=/tmp (callgrind files go there).
# Callgrind runs the threads one at a time, so the split shows the per-op path, not contention.
set -eu
build=${1:?usage: bench/graph_ir.sh BUILD_DIR [DAG] [SIZE] [WORKERS]}
dag=${2:-wavefront}
workers=${4:-2}
r1=${R1:-2}
r2=${R2:-6}
engine=${ENGINE:-per_device}
out=${OUT:-/tmp}
case $dag in
wavefront) size=${3:-300}; opt="--wf $size"; ops=$((size * size)) ;;
tree) size=${3:-32768}; opt="--tree-leaves $size"; ops=$((2 * size - 1)) ;;
chain | independent) size=${3:-50000}; opt="--ops $size"; ops=$size ;;
*) echo "graph_ir: unknown DAG $dag" >&2; exit 2 ;;
esac
command -v valgrind >/dev/null || { echo "graph_ir: valgrind is not installed" >&2; exit 1; }
run() { # reps -> callgrind file
    f=$out/graph_ir.$dag.$1.cg
    # shellcheck disable=SC2086
    valgrind --tool=callgrind --callgrind-out-file="$f" "$build/bench/bench_engine" --only "$dag" \
        --no-push --no-omp --no-starpu $opt --reps "$1" --workers "$workers" --engine "$engine" \
        >/dev/null 2>"$f.log"
    echo "$f"
}
total() { awk '/^(summary|totals):/ {print $2; exit}' "$1"; }
f1=$(run "$r1")
f2=$(run "$r2")
n=$(((r2 - r1) * ops))
echo "graph_ir: dag=$dag size=$size workers=$workers engine=$engine launches=$r1->$r2 ops=$ops"
awk -v a="$(total "$f1")" -v b="$(total "$f2")" -v n="$n" \
    'BEGIN {printf "RESULT bench=graph_ir dag='"$dag"' ir_per_task=%.1f\n", (b - a) / n}'
# Per function (self Ir) of the difference, per task.
split() { callgrind_annotate --auto=no --threshold=100 "$1" 2>/dev/null |
    awk '$1 ~ /^[0-9,]+$/ && $0 ~ /:/ {v = $1; gsub(",", "", v); f = $NF; sub(/^.*\//, "", f);
         for (i = 2; i <= NF; ++i) if ($i ~ /:/) { f = $i; break }
         sub(/^.*\//, "", f); print f, v}'; }
split "$f1" >"$out/graph_ir.1.txt"
split "$f2" >"$out/graph_ir.2.txt"
awk -v n="$n" 'NR == FNR {a[$1] += $2; next} {b[$1] += $2}
     END {for (k in b) { d = (b[k] - a[k]) / n; if (d >= 1 || d <= -1) printf "%8.1f  %s\n", d, k }}' \
    "$out/graph_ir.1.txt" "$out/graph_ir.2.txt" | sort -rn | head -20
