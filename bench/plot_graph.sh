#!/bin/sh
# bench/plot_graph.sh - bar chart of ns per task by DAG shape (chain, independent, wavefront,
# tree) and contender, from the median table bench/run_graph.sh writes
# (bench/graph_ns_per_task.dat: a "dag <contender>..." header line, then one row per DAG).
# Log scale: the contenders span two orders of magnitude. Needs gnuplot (gnuplot-nox).
# Usage: bench/plot_graph.sh [DAT] [PNG]
#   defaults: bench/graph_ns_per_task.dat bench/graph_ns_per_task.png
set -eu
here=$(cd "$(dirname "$0")" && pwd)
dat=${1:-$here/graph_ns_per_task.dat}
png=${2:-$here/graph_ns_per_task.png}
[ -r "$dat" ] || { echo "plot_graph.sh: cannot read $dat (run bench/run_graph.sh first)" >&2; exit 1; }
header=$(grep -v '^#' "$dat" | head -n 1)
ncols=$(echo "$header" | awk '{ print NF }')
[ "$ncols" -ge 2 ] || { echo "plot_graph.sh: $dat has no contender columns" >&2; exit 1; }
info=$(grep '^# median' "$dat" | sed 's/^# //' | head -n 1)
load=$(sed -n 's/^# load: *//p' "$dat" | head -n 1)
gnuplot <<GP
set terminal pngcairo size 1000,560 noenhanced
set output "$png"
set title "ns per task by DAG shape (lower is better)\n$info\nload average at start: $load"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set logscale y
set yrange [5:*]
set ylabel "ns per task (log scale)"
set grid ytics
set key outside right top vertical
set datafile missing "NaN"
plot for [c=2:$ncols] "$dat" using c:xtic(1) title columnheader(c)
GP
echo "plot_graph.sh: wrote $png"
