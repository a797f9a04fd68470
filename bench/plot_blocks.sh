#!/usr/bin/env bash
# bench/plot_blocks.sh - bar chart of issue 14's ratios (parex / best peer, higher is better)
# from bench/blocks_ratios.dat into bench/blocks_ratios.png. Usage: bench/plot_blocks.sh [DAT] [PNG]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dat=${1:-$here/blocks_ratios.dat}
png=${2:-$here/blocks_ratios.png}
gnuplot <<GP
set terminal pngcairo size 1000,520 font ",11"
set output "$png"
set title "Kernel building blocks: parex / best peer (Kokkos, OpenMP, Random123), 2 threads\nhigher is better; the line is the issue's target"
set style data histograms
set style fill solid 0.8 border -1
set boxwidth 0.7
set yrange [0:1.6]
set ylabel "ratio"
set xtics rotate by -35 left
set grid ytics
set arrow from graph 0, first 1 to graph 1, first 1 nohead lw 2 dt 2
plot "$dat" using 2:xtic(1) notitle lc rgb "#3b7dd8"
GP
echo "plot_blocks.sh: wrote $png"
