#!/usr/bin/env bash
# bench/run_mdrange.sh - issue 13's multi-dimensional benchmarks: every contender, interleaved,
# one process per (contender, case), the contenders' order rotated from one round to the next
# (on these VMs the first program of a back-to-back pair runs slower; bench/bench_cg.c).
#
# Usage (from the repository root): bench/run_mdrange.sh BUILD_DIR [ROUNDS]   (ROUNDS default 5)
# Environment:
#   THREADS=2         threads of every contender (OMP_NUM_THREADS, PX_NUM_THREADS,
#                     --kokkos-num-threads), bound close (OMP_PROC_BIND=close OMP_PLACES=cores,
#                     PX_BIND=close, Kokkos::Threads binds through hwloc)
#   REPS=10           timed runs per process (each process reports its median)
#   CASES="stencil:256x256x256 stencil:128x128x128 stencil:512x512x64 transpose:8192x8192
#          reduce:256x256x256"   (kernel:dims, extents slowest first)
#   DATA=bench/mdrange_data.txt   raw RESULT lines, each prefixed with its round
#   BENCH_PREFIX="nice -n -19"    run every contender under this prefix
#   PLOT=1            write bench/mdrange_stencil.dat and bench/mdrange_stencil.png (gnuplot,
#                     bench/plot_mdrange.gp) when gnuplot is installed
# Contenders (each skipped when its program was not built): omp, parex1d (bench_mdrange),
# parexmd (bench_mdrange with the mdrange API), kokkos-threads and kokkos-openmp
# (BUILD_DIR/bench/kokkos-*/bench_mdrange_kokkos). Every process runs its tile sweep
# (--tile-sweep); "default" is the runtime's automatic tile, "best" the tile with the highest
# median. Printed: GB/s (medians over rounds, by the byte counts in bench/bench_mdrange.c) and
# ratios parex/OpenMP and parex/Kokkos of GB/s (>= 1: parex as fast or faster): the ratio of
# the medians and the median of the per-round ratios.
set -euo pipefail
build=${1:?usage: bench/run_mdrange.sh BUILD_DIR [ROUNDS]}
rounds=${2:-5}
threads=${THREADS:-2}
reps=${REPS:-10}
cases=${CASES:-"stencil:256x256x256 stencil:128x128x128 stencil:512x512x64 transpose:8192x8192 reduce:256x256x256"}
data=${DATA:-bench/mdrange_data.txt}
prefix=${BENCH_PREFIX:-}
md=$build/bench/bench_mdrange
[ -x "$md" ] || { echo "run_mdrange.sh: $md not built (needs OpenMP)" >&2; exit 1; }

omp_env=(env OMP_NUM_THREADS="$threads" OMP_PROC_BIND=close OMP_PLACES=cores)
px_env=(env -u OMP_PROC_BIND -u OMP_PLACES PX_NUM_THREADS="$threads" PX_BIND=close)
names=(omp parex1d)
cmds=("${omp_env[*]} $md --impl omp" "${px_env[*]} $md --impl parex1d")
if "$md" --impl parexmd --kernel reduce --dims 3x3x3 --reps 1 --warmup 0 | grep -q '^RESULT'; then
  names+=(parexmd)
  cmds+=("${px_env[*]} $md --impl parexmd")
else
  echo "run_mdrange.sh: bench_mdrange has no parex MDRange contender (no mdrange API)" >&2
fi
for b in threads openmp; do
  k=$build/bench/kokkos-$b/bench_mdrange_kokkos
  if [ -x "$k" ]; then
    names+=("kokkos-$b")
    if [ "$b" = openmp ]; then
      cmds+=("${omp_env[*]} $k --kokkos-num-threads=$threads")
    else
      cmds+=("env -u OMP_PROC_BIND -u OMP_PLACES $k --kokkos-num-threads=$threads")
    fi
  else
    echo "run_mdrange.sh: $k not built (no Kokkos::$b; bench/build_peers.sh)" >&2
  fi
done
n=${#names[@]}
echo "run_mdrange.sh: $rounds rounds, $threads threads, $reps runs per process; contenders:" \
     "${names[*]}; load average $(cut -d' ' -f1-3 /proc/loadavg)"
: > "$data"
for ((r = 0; r < rounds; r++)); do
  for c in $cases; do
    kernel=${c%%:*} dims=${c#*:}
    for ((q = 0; q < n; q++)); do
      i=$(((q + r) % n)) # rotate: each contender takes each position in turn
      # shellcheck disable=SC2086  # the command strings are word-split on purpose
      out=$($prefix ${cmds[$i]} --kernel "$kernel" --dims "$dims" --reps "$reps" --tile-sweep) \
        || { echo "run_mdrange.sh: ${names[$i]} $kernel $dims failed" >&2; exit 1; }
      grep '^RESULT' <<<"$out" | sed "s/^RESULT/RESULT round=$r/" | tee -a "$data" >&2
    done
  done
done
echo "run_mdrange.sh: load average at end $(cut -d' ' -f1-3 /proc/loadavg); raw lines in $data"

python3 - "$data" "${PLOT:-1}" "$threads" <<'EOF'
import collections, statistics, sys
path, plot, threads = sys.argv[1], sys.argv[2] == "1", sys.argv[3]
runs = collections.defaultdict(dict)  # (kernel, dims, impl, tile) -> {round: gbs}
for line in open(path):
    f = dict(kv.split("=", 1) for kv in line.split()[1:])
    if f["threads"] != threads:
        print("run_mdrange.sh: WARNING %s ran %s threads, not %s" % (f["impl"], f["threads"], threads))
    runs[(f["kernel"], f["dims"], f["impl"], f["tile"])][int(f["round"])] = float(f["gbs"])
med = {k: statistics.median(v.values()) for k, v in runs.items()}
cases = sorted({(k[0], k[1]) for k in runs}, key=lambda c: (c[0], c[1]))
order = ["omp", "parex1d", "parexmd", "kokkos-threads", "kokkos-openmp"]

def pick(kernel, dims, impl, which):
    """(tile, median GB/s) of impl's default (automatic) tile, or of its best tile."""
    rows = [(k[3], m) for k, m in med.items() if k[:3] == (kernel, dims, impl)]
    if not rows:
        return None
    if which == "default":
        d = [r for r in rows if r[0] in ("default", "none")]
        return d[0] if d else max(rows, key=lambda r: r[1])
    return max(rows, key=lambda r: r[1])

def paired(kernel, dims, a, b):
    """Median over rounds of a's GB/s / b's GB/s, a and b = (impl, tile)."""
    ra = runs.get((kernel, dims) + a, {})
    rb = runs.get((kernel, dims) + b, {})
    q = [ra[r] / rb[r] for r in ra if r in rb]
    return statistics.median(q) if q else float("nan")

print("\n%-9s %-12s %-15s %9s | %-11s %9s   (GB/s, median over rounds)" %
      ("kernel", "dims", "contender", "default", "best tile", "best"))
for kernel, dims in cases:
    for impl in order:
        d, b = pick(kernel, dims, impl, "default"), pick(kernel, dims, impl, "best")
        if d:
            print("%-9s %-12s %-15s %9.2f | %-11s %9.2f" % (kernel, dims, impl, d[1], b[0], b[1]))
print("\nratios of GB/s (>= 1: parex as fast or faster): median ratio / median of per-round ratios")
targets = {"omp": 1.0, "kokkos-threads": 1.2, "kokkos-openmp": 1.2}
for kernel, dims in cases:
    for px in ("parexmd", "parex1d"):
        for peer in ("omp", "kokkos-threads", "kokkos-openmp"):
            last = None
            for which in ("default", "best"):
                # OpenMP has no automatic tile: parex's default and best against its best.
                a = pick(kernel, dims, px, which)
                b = pick(kernel, dims, peer, "best" if peer == "omp" else which)
                if not a or not b or (which == "best" and (a, b) == last):
                    continue  # absent, or no tile choice on either side: one row
                last = (a, b)
                t = targets[peer] if kernel == "stencil" else 1.0
                ratio = a[1] / b[1]
                print("%-9s %-12s %-7s/%-14s %-7s %6.3f / %6.3f  (tiles %s vs %s; target >= %.1f%s)"
                      % (kernel, dims, px, peer, which, ratio,
                         paired(kernel, dims, (px, a[0]), (peer, b[0])), a[0], b[0], t,
                         "" if ratio >= t else ", MISSED"))
if plot:
    st = sorted([c for c in cases if c[0] == "stencil"],
                key=lambda c: eval(c[1].replace("x", "*")))
    cols = [("omp", "default"), ("parex1d", "default"), ("parexmd", "default"),
            ("parexmd", "best"), ("kokkos-threads", "default"), ("kokkos-threads", "best"),
            ("kokkos-openmp", "default"), ("kokkos-openmp", "best")]
    with open("bench/mdrange_stencil.dat", "w") as f:
        f.write("# dims points " + " ".join("%s:%s" % c for c in cols) + "  (GB/s; ? = absent)\n")
        for _, dims in st:
            vals = [pick("stencil", dims, i, w) for i, w in cols]
            f.write("%s %d %s\n" % (dims, eval(dims.replace("x", "*")),
                                    " ".join("%.3f" % v[1] if v else "?" for v in vals)))
EOF
if [ "${PLOT:-1}" = 1 ] && command -v gnuplot >/dev/null; then
  gnuplot bench/plot_mdrange.gp && echo "run_mdrange.sh: wrote bench/mdrange_stencil.png"
fi
