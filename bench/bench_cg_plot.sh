#!/bin/sh
# bench/bench_cg_plot.sh - effective bandwidth of CG against the HPCG grid size, parex-cg
# (threads space) and the OpenMP baseline (bench_cg_omp) with the same thread count, and the
# STREAM triad of the same run as a reference line. Writes bench/bench_cg_plot.dat and
# bench/bench_cg_plot.png (gnuplot, when installed).
#
#   bench/bench_cg_plot.sh [BUILD_DIR] [THREADS] [REPS] [GRIDS...]
#   defaults:               build       2         3      16 24 32 40 48 64
#
# Each point is the fastest single iteration seen in REPS runs, as GB/s by the byte model of
# examples/cg/cg.c (bytes per iteration / fastest iteration time): on a shared machine that
# estimate survives other load far better than whole-run means (see bench/RESULTS.md). Small
# grids run from cache (the model then exceeds the triad); from about 40^3 (matrix 28 MB of the
# 32 MiB L3 on the reference machine) the solver is memory-bound.
set -eu
build=${1:-build}
threads=${2:-2}
reps=${3:-3}
if [ $# -gt 3 ]; then shift 3; else set --; fi
grids=${*:-16 24 32 40 48 64}
here=$(cd "$(dirname "$0")" && pwd)
dat=$here/bench_cg_plot.dat
px=$build/examples/cg/parex-cg
omp=$build/bench/bench_cg_omp
field() { grep -o "\"$1\": [0-9.e+-]*" | tail -n 1 | cut -d' ' -f2; }
# GB/s of the fastest iteration: gbs * seconds_per_iter is the bytes of one iteration (GB).
peak() { j=$(cat); echo "$(echo "$j" | field gbs) $(echo "$j" | field seconds_per_iter) \
    $(echo "$j" | field min_iter_seconds)" | awk '{ if ($3 > 0) print $1 * $2 / $3 }'; }
best() { sort -g | tail -n 1; }

triad=$(OMP_NUM_THREADS=$threads OMP_PROC_BIND=close OMP_PLACES=cores "$omp" --stream --json |
        field triad_gbs)
load=$(cut -d' ' -f1-3 /proc/loadavg)
echo "# grid n nnz parex_gbs omp_gbs triad_gbs ($threads threads, fastest iteration of $reps runs; load $load)" > "$dat"
for g in $grids; do
    pxs=""
    omps=""
    for r in $(seq 1 "$reps"); do
        j=$(PX_NUM_THREADS=$threads PX_BIND=close "$px" --grid "$g" --space threads --progress 0 \
            --json 2>/dev/null | tail -n 1)
        pxs="$pxs $(echo "$j" | peak)"
        n=$(echo "$j" | field n)
        nnz=$(echo "$j" | field nnz)
        j=$(OMP_NUM_THREADS=$threads OMP_PROC_BIND=close OMP_PLACES=cores "$omp" --grid "$g" \
            --json | tail -n 1)
        omps="$omps $(echo "$j" | peak)"
    done
    p=$(echo "$pxs" | tr ' ' '\n' | grep . | best)
    o=$(echo "$omps" | tr ' ' '\n' | grep . | best)
    echo "$g $n $nnz $p $o $triad" | tee -a "$dat"
done
if command -v gnuplot > /dev/null 2>&1; then
    gnuplot <<GP
set terminal pngcairo size 800,500 noenhanced
set output "$here/bench_cg_plot.png"
set title "CG on the HPCG grid, $threads threads: effective bandwidth (load $load)"
set xlabel "grid size N (N^3 rows, 27-point stencil)"
set ylabel "GB/s, fastest iteration (byte model of examples/cg/cg.c)"
set key top right
set grid
plot "$dat" using 1:4 with linespoints title "parex-cg (threads space)", \
     "$dat" using 1:5 with linespoints title "OpenMP CSR CG", \
     "$dat" using 1:6 with lines dashtype 2 title "STREAM triad (same run)"
GP
    echo "wrote $dat and $here/bench_cg_plot.png"
else
    echo "wrote $dat (gnuplot not found: no png)"
fi
