#!/bin/sh
# bench/bench_cholesky.sh - Cholesky in one go: parex (tiled DAG on the engine, single-threaded
# OpenBLAS tiles) vs OpenBLAS LAPACKE_dpotrf (threaded) and dgemm (both measured inside
# bench_cholesky), and StarPU's cholesky_implicit example (Debian starpu-examples) on the same
# size, tile and number of CPU workers, plus bench_cholesky_starpu: parex's own DAG and tile
# kernels (double precision) submitted to StarPU, the like-for-like runtime comparison (the
# Debian example computes in single precision). All are interleaved, one repetition of each in
# turn, so load changes on a shared machine hit all of them alike; medians are reported.
#
#   bench/bench_cholesky.sh [BUILD_DIR] [N] [TILE] [WORKERS] [REPS]
#   defaults:                build        4096 256   2         5
# Extra arguments for bench_cholesky (e.g. --fifo 1 or --engine pooled) go in BENCH_ARGS.
# Repetition i runs parex before LAPACKE when i is odd (--parex-first), so an even REPS
# balances the two orders exactly; an odd REPS runs LAPACKE first once more.
set -eu
build=${1:-build}
n=${2:-4096}
tile=${3:-256}
workers=${4:-2}
reps=${5:-5}
bin=$build/bench/bench_cholesky
if [ ! -x "$bin" ]; then
    echo "bench_cholesky.sh: $bin not built (ninja -C $build bench_cholesky)" >&2
    exit 2
fi
starpu=${STARPU_CHOLESKY:-/usr/lib/x86_64-linux-gnu/starpu/examples/cholesky_implicit}
[ -x "$starpu" ] || starpu=""
spdag=$build/bench/bench_cholesky_starpu
[ -x "$spdag" ] || spdag=""
nblocks=$(( (n + tile - 1) / tile ))
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) { print "nan"; exit }
    if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
field() { sed -n "s/.*\"$1\": \([0-9.eE+-]*\).*/\1/p"; }

echo "== n=$n tile=$tile ($nblocks x $nblocks tiles) workers=$workers reps=$reps, load: $(cut -d' ' -f1-3 /proc/loadavg)"
i=0
while [ "$i" -lt "$reps" ]; do
    gemm=0
    [ "$i" -eq 0 ] && gemm=1
    # shellcheck disable=SC2086 # BENCH_ARGS is a list of words
    # --parex-first alternates: odd repetitions run parex before LAPACKE (order effects cancel).
    OPENBLAS_NUM_THREADS=1 PX_LOG_LEVEL=error "$bin" --n "$n" --tile "$tile" \
        --workers "$workers" --reps 1 --gemm "$gemm" --parex-first $((i % 2)) \
        ${BENCH_ARGS:-} > "$tmp/px"
    [ "$i" -eq 0 ] && sed '$d' "$tmp/px" | grep -v 'ratio\|LAPACKE\|parex tiled'
    json=$(tail -n 1 "$tmp/px")
    [ "$i" -eq 0 ] && echo "$json" | field dgemm_gflops > "$tmp/gemm"
    echo "$json" | field parex_gflops >> "$tmp/parex"
    echo "$json" | field lapacke_gflops >> "$tmp/lapacke"
    echo "$json" | field parex_gflops_per_cpu_s >> "$tmp/parex_cpu"
    echo "$json" | field lapacke_gflops_per_cpu_s >> "$tmp/lapacke_cpu"
    if [ -n "$spdag" ]; then
        STARPU_HOME=$tmp STARPU_NCPU=$workers STARPU_NCUDA=0 STARPU_NOPENCL=0 STARPU_SILENT=1 \
            OPENBLAS_NUM_THREADS=1 "$spdag" --n "$n" --tile "$tile" --reps 1 2>/dev/null |
            tail -n 1 > "$tmp/spdag.json" || true
        field starpu_gflops < "$tmp/spdag.json" >> "$tmp/spdag"
        field starpu_gflops_per_cpu_s < "$tmp/spdag.json" >> "$tmp/spdag_cpu"
    fi
    if [ -n "$starpu" ]; then
        STARPU_HOME=$tmp STARPU_NCPU=$workers STARPU_NCUDA=0 STARPU_NOPENCL=0 STARPU_SILENT=1 \
            OPENBLAS_NUM_THREADS=1 "$starpu" -size "$n" -nblocks "$nblocks" 2>/dev/null |
            awk '!/^#/ && NF >= 3 { r = $3 } END { if (r != "") print r }' >> "$tmp/starpu"
    fi
    i=$((i + 1))
done

px=$(median < "$tmp/parex")
lap=$(median < "$tmp/lapacke")
gemm=$(cat "$tmp/gemm")
pxc=$(median < "$tmp/parex_cpu")
lapc=$(median < "$tmp/lapacke_cpu")
echo "  parex runs   (GFLOP/s): $(tr '\n' ' ' < "$tmp/parex")"
echo "  LAPACKE runs (GFLOP/s): $(tr '\n' ' ' < "$tmp/lapacke")"
sd=nan
sdc=nan
if [ -n "$spdag" ]; then
    sd=$(median < "$tmp/spdag")
    sdc=$(median < "$tmp/spdag_cpu")
    echo "  StarPU, parex's DAG + kernels (GFLOP/s): $(tr '\n' ' ' < "$tmp/spdag")(bench_cholesky_starpu, double)"
fi
sp=nan
if [ -n "$starpu" ]; then
    sp=$(median < "$tmp/starpu")
    echo "  StarPU example runs (GFLOP/s): $(tr '\n' ' ' < "$tmp/starpu")(cholesky_implicit -size $n -nblocks $nblocks, STARPU_NCPU=$workers, single precision)"
else
    echo "  StarPU cholesky_implicit not found: apt-get install starpu-examples"
fi
echo "== medians (GFLOP/s, n^3/3 flops)"
awk -v px="$px" -v lap="$lap" -v gemm="$gemm" -v sp="$sp" -v pxc="$pxc" -v lapc="$lapc" \
    -v sd="$sd" -v sdc="$sdc" 'BEGIN {
    printf "  parex %.2f  LAPACKE_dpotrf %.2f  dgemm %.2f  StarPU-same-DAG %s  StarPU-example(float) %s\n",
        px, lap, gemm, sd, sp
    printf "  parex/LAPACKE %.3fx  parex/dgemm %.1f%%", px / lap, 100 * px / gemm
    if (sd != "nan") printf "  parex/StarPU-same-DAG %.3fx", px / sd
    printf "\n  per CPU-second (robust to other load): parex %.2f  LAPACKE %.2f", pxc, lapc
    if (sdc != "nan") printf "  StarPU-same-DAG %.2f", sdc
    printf " GFLOP/cpu-s; parex/LAPACKE %.3fx\n", pxc / lapc
}'
