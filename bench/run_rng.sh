#!/usr/bin/env bash
# bench/run_rng.sh - issue 14's random-number benchmark: uniform doubles per second, every
# contender in its own process, the contenders' order rotated from one round to the next (on
# these VMs the first program of a back-to-back pair runs slower; bench/bench_cg.c).
#
# Usage (from the repository root): bench/run_rng.sh BUILD_DIR [ROUNDS]   (ROUNDS default 5)
# Environment:
#   THREADS=2        threads of every contender (PX_NUM_THREADS, OMP_NUM_THREADS,
#                    --kokkos-num-threads), bound close (PX_BIND=close; OMP_PROC_BIND=close
#                    OMP_PLACES=cores; Kokkos::Threads binds through hwloc)
#   ITEMS=4194304    work items (streams) per run;  DRAWS=16  doubles per item
#   REPS=10          timed runs per process (each process reports its median)
#   DATA=bench/rng_data.txt        raw RESULT lines, each prefixed with its round
#   BENCH_PREFIX="nice -n -19"     run every contender under this prefix
# Contenders (each skipped when its program was not built): parex and r123omp (bench_rng:
# px_rng in a PX_REDUCE, and Random123's philox4x32_R from an OpenMP loop: the same numbers),
# kokkos-threads and kokkos-openmp (BUILD_DIR/bench/kokkos-*/bench_rng_kokkos:
# Random_XorShift64_Pool). Printed: draws/s (median over rounds, and of the fastest run of any
# round: min of runs, the figure least disturbed by other load) and the ratios parex/peer
# (>= 1: parex as fast or faster), as the ratio of the medians and the median of the per-round
# ratios. Issue 14's expectations: parex/r123omp = 1 (same generator), parex/Kokkos >= 1.
set -euo pipefail
build=${1:?usage: bench/run_rng.sh BUILD_DIR [ROUNDS]}
rounds=${2:-5}
threads=${THREADS:-2}
items=${ITEMS:-4194304}
draws=${DRAWS:-16}
reps=${REPS:-10}
data=${DATA:-bench/rng_data.txt}
prefix=${BENCH_PREFIX:-}
b=$build/bench/bench_rng
[ -x "$b" ] || { echo "run_rng.sh: $b not built (needs OpenMP)" >&2; exit 1; }

omp_env=(env OMP_NUM_THREADS="$threads" OMP_PROC_BIND=close OMP_PLACES=cores)
px_env=(env -u OMP_PROC_BIND -u OMP_PLACES PX_NUM_THREADS="$threads" PX_BIND=close)
names=(parex r123omp)
cmds=("${px_env[*]} $b --impl parex" "${omp_env[*]} $b --impl r123omp")
for kb in threads openmp; do
  k=$build/bench/kokkos-$kb/bench_rng_kokkos
  if [ -x "$k" ]; then
    names+=("kokkos-$kb")
    if [ "$kb" = openmp ]; then
      cmds+=("${omp_env[*]} $k --kokkos-num-threads=$threads")
    else
      cmds+=("env -u OMP_PROC_BIND -u OMP_PLACES $k --kokkos-num-threads=$threads")
    fi
  else
    echo "run_rng.sh: $k not built (no Kokkos::$kb; bench/build_peers.sh)" >&2
  fi
done
n=${#names[@]}
echo "run_rng.sh: $rounds rounds, $threads threads, $items items x $draws draws, $reps runs" \
     "per process; contenders: ${names[*]}; load average $(cut -d' ' -f1-3 /proc/loadavg)"
: > "$data"
for ((r = 0; r < rounds; r++)); do
  for ((q = 0; q < n; q++)); do
    i=$(((q + r) % n)) # rotate: each contender takes each position in turn
    # shellcheck disable=SC2086  # the command strings are word-split on purpose
    out=$($prefix ${cmds[$i]} --items "$items" --draws "$draws" --reps "$reps") \
      || { echo "run_rng.sh: ${names[$i]} failed" >&2; exit 1; }
    grep '^RESULT' <<<"$out" | sed "s/^RESULT/RESULT round=$r/" | tee -a "$data" >&2
  done
done
echo "run_rng.sh: load average at end $(cut -d' ' -f1-3 /proc/loadavg); raw lines in $data"

python3 - "$data" "$threads" <<'PYEOF'
import collections, statistics, sys
path, threads = sys.argv[1], sys.argv[2]
runs = collections.defaultdict(dict)  # impl -> {round: draws/s}
peak = collections.defaultdict(float)  # impl -> draws/s of the fastest run of any round
for line in open(path):
    f = dict(kv.split("=", 1) for kv in line.split()[1:])
    if f["threads"] != threads:
        print("run_rng.sh: WARNING %s ran %s threads, not %s" % (f["impl"], f["threads"], threads))
    runs[f["impl"]][int(f["round"])] = float(f["draws_per_s"])
    peak[f["impl"]] = max(peak[f["impl"]],
                          float(f["items"]) * float(f["draws"]) / float(f["best"]))
med = {k: statistics.median(v.values()) for k, v in runs.items()}
print("\n%-15s %14s %14s   (uniform doubles per second: median over rounds; fastest run)"
      % ("contender", "draws/s", "best draws/s"))
for impl in ("parex", "r123omp", "kokkos-threads", "kokkos-openmp"):
    if impl in med:
        print("%-15s %14.4g %14.4g" % (impl, med[impl], peak[impl]))
print("\nratios parex/peer of draws/s (>= 1: parex as fast or faster): median ratio / median of"
      " per-round ratios")
for peer, target in (("r123omp", "= 1, same generator"), ("kokkos-threads", ">= 1"),
                     ("kokkos-openmp", ">= 1")):
    if "parex" in med and peer in med:
        q = [runs["parex"][r] / runs[peer][r] for r in runs["parex"] if r in runs[peer]]
        print("parex/%-14s %6.3f / %6.3f  (target %s); fastest runs: %.3f"
              % (peer, med["parex"] / med[peer], statistics.median(q), target,
                 peak["parex"] / peak[peer]))
PYEOF
