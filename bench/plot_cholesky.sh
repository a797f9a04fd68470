#!/bin/sh
# bench/plot_cholesky.sh - GFLOP/s against n for parex (tiled DAG), LAPACKE_dpotrf (threaded
# OpenBLAS) and StarPU cholesky_implicit, same tile and worker count; writes
# bench/cholesky_gflops.dat and bench/cholesky_gflops.png (gnuplot). StarPU's example computes
# in single precision (it calls sgemm_/ssyrk_/strsm_), parex and LAPACKE in double.
# PLOT_ONLY=1 redraws the PNG from the existing .dat without measuring.
#
#   bench/plot_cholesky.sh [BUILD_DIR] [TILE] [WORKERS] [REPS] [SIZES...]
#   defaults:               build       256    2         3      1024 2048 3072 4096
set -eu
build=${1:-build}
tile=${2:-256}
workers=${3:-2}
reps=${4:-3}
if [ $# -gt 4 ]; then shift 4; else set --; fi
sizes=${*:-1024 2048 3072 4096}
here=$(cd "$(dirname "$0")" && pwd)
dat=$here/cholesky_gflops.dat
load=$(cut -d' ' -f1-3 /proc/loadavg)
if [ "${PLOT_ONLY:-0}" != 1 ]; then
echo "# n parex lapacke starpu_same_dag starpu_example_float dgemm (GFLOP/s; tile $tile, $workers workers, medians of $reps)" > "$dat"
echo "# load: $load" >> "$dat"
for n in $sizes; do
    out=$("$here/bench_cholesky.sh" "$build" "$n" "$tile" "$workers" "$reps")
    echo "$out" | tail -n 4
    line=$(echo "$out" | grep '^  parex [0-9]')
    px=$(echo "$line" | awk '{ print $2 }')
    lap=$(echo "$line" | awk '{ print $4 }')
    gemm=$(echo "$line" | awk '{ print $6 }')
    sd=$(echo "$line" | awk '{ print $8 }')
    sp=$(echo "$line" | awk '{ print $10 }')
    echo "$n $px $lap $sd $sp $gemm" >> "$dat"
done
fi
load=$(sed -n 's/^# load: //p' "$dat")
gnuplot <<GP
set terminal pngcairo size 800,500 noenhanced
set output "$here/cholesky_gflops.png"
set title "Cholesky (lower), tile $tile, $workers CPU workers / threads, medians of $reps\nload average at start: $load"
set xlabel "n"
set ylabel "GFLOP/s (n^3/3 flops)"
set key bottom right
set grid
plot "$dat" using 1:2 with linespoints lw 2 title "parex tiled DAG", \
     "$dat" using 1:3 with linespoints lw 2 title "OpenBLAS LAPACKE_dpotrf", \
     "$dat" using 1:4 with linespoints lw 2 title "StarPU, same DAG and kernels", \
     "$dat" using 1:5 with linespoints lw 1 dt 3 title "StarPU cholesky_implicit (single precision)", \
     "$dat" using 1:6 with lines dt 2 title "dgemm, 2 threads (reference)"
GP
echo "wrote $dat and $here/cholesky_gflops.png"
