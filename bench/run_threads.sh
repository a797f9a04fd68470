#!/bin/sh
# bench/run_threads.sh - the Threads-vs-OpenMP benchmark at 1, 2 and 4 threads, then the plots.
# Usage: bench/run_threads.sh BUILD_DIR [ROUNDS]   (from the repository root)
# Writes bench/threads_data.txt (the DATA lines) and, through bench/plot_threads.gp,
# bench/threads_latency.png and bench/threads_bandwidth.png.
set -e
build=${1:?usage: bench/run_threads.sh BUILD_DIR [ROUNDS]}
rounds=${2:-7}
data=bench/threads_data.txt
: > "$data"
for p in 1 2 4; do
  OMP_PROC_BIND=close OMP_PLACES=cores PX_NUM_THREADS=$p ${BENCH_PREFIX:-} \
    "$build/bench/bench_threads" --rounds "$rounds" | tee /dev/stderr | grep '^DATA' >> "$data"
done
gnuplot bench/plot_threads.gp
