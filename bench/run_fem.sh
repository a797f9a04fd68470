#!/usr/bin/env bash
# bench/run_fem.sh - issue 14's FEM assembly benchmark: every contender, interleaved, one
# process per contender and round, the order rotated from one round to the next (on these VMs
# the first program of a back-to-back pair runs slower; bench/bench_cg.c).
#
# Usage (from the repository root): bench/run_fem.sh BUILD_DIR [ROUNDS]   (ROUNDS default 5)
# Environment:
#   THREADS=2        threads of every contender (PX_NUM_THREADS, OMP_NUM_THREADS,
#                    --kokkos-num-threads), bound close
#   N=708            cells per side: 2 N^2 = 1,002,528 triangles at 708
#   REPS=10          timed assemblies per process (each process reports its median)
#   DATA=bench/fem_data.txt   raw RESULT lines, each prefixed with its round
#   BENCH_PREFIX="nice -n -19"   run every contender under this prefix
# Contenders (each skipped when not built): parex-atomic, parex-duplicated, parex-colored,
# parex-auto, omp-atomic (bench_fem), kokkos-{threads,openmp}-{default,duplicated,atomic}
# (BUILD_DIR/bench/kokkos-*/bench_fem_kokkos, Kokkos ScatterView).
# Printed: median assembly seconds, the fastest assembly of any round (min of runs: the figure
# least disturbed by other load) and 10^6 elements/s per contender, and the ratios
# time(contender) / time(parex-auto) (>= 1: parex AUTO as fast or faster), as the ratio of the
# medians and the median of the per-round ratios; the issue's target is parex AUTO >= the best
# of them on 2 threads.
set -euo pipefail
build=${1:?usage: bench/run_fem.sh BUILD_DIR [ROUNDS]}
rounds=${2:-5}
threads=${THREADS:-2}
n=${N:-708}
reps=${REPS:-10}
data=${DATA:-bench/fem_data.txt}
prefix=${BENCH_PREFIX:-}
fem=$build/bench/bench_fem
[ -x "$fem" ] || { echo "run_fem.sh: $fem not built (needs OpenMP)" >&2; exit 1; }

omp_env="env OMP_NUM_THREADS=$threads OMP_PROC_BIND=close OMP_PLACES=cores"
px_env="env -u OMP_PROC_BIND -u OMP_PLACES PX_NUM_THREADS=$threads PX_BIND=close"
names=() cmds=()
for m in atomic duplicated colored auto; do
  names+=("parex-$m")
  cmds+=("$px_env $fem --impl $m")
done
names+=(omp-atomic)
cmds+=("$omp_env $fem --impl omp-atomic")
for b in threads openmp; do
  k=$build/bench/kokkos-$b/bench_fem_kokkos
  if [ -x "$k" ]; then
    for m in default duplicated atomic; do
      names+=("kokkos-$b-$m")
      if [ "$b" = openmp ]; then
        cmds+=("$omp_env $k --kokkos-num-threads=$threads --mode $m")
      else
        cmds+=("env -u OMP_PROC_BIND -u OMP_PLACES $k --kokkos-num-threads=$threads --mode $m")
      fi
    done
  else
    echo "run_fem.sh: $k not built (no Kokkos::$b; bench/build_peers.sh)" >&2
  fi
done
nc=${#names[@]}
echo "run_fem.sh: $rounds rounds, $threads threads, n = $n, $reps assemblies per process;" \
     "contenders: ${names[*]}; load average $(cut -d' ' -f1-3 /proc/loadavg)"
: > "$data"
for ((r = 0; r < rounds; r++)); do
  for ((q = 0; q < nc; q++)); do
    i=$(((q + r) % nc)) # rotate: each contender takes each position in turn
    # shellcheck disable=SC2086  # the command strings are word-split on purpose
    out=$($prefix ${cmds[$i]} --n "$n" --reps "$reps") \
      || { echo "run_fem.sh: ${names[$i]} failed" >&2; exit 1; }
    grep '^RESULT' <<<"$out" | sed "s/^RESULT/RESULT round=$r name=${names[$i]}/" | tee -a "$data" >&2
  done
done
echo "run_fem.sh: load average at end $(cut -d' ' -f1-3 /proc/loadavg); raw lines in $data"

python3 - "$data" "$threads" <<'PY'
import collections, statistics, sys
path, threads = sys.argv[1], sys.argv[2]
runs = collections.defaultdict(dict)  # name -> {round: seconds}
best = collections.defaultdict(lambda: float("inf"))  # name -> fastest assembly of any round
info = {}
for line in open(path):
    f = dict(kv.split("=", 1) for kv in line.split()[1:])
    if f["threads"] != threads:
        print("run_fem.sh: WARNING %s ran %s threads, not %s" % (f["name"], f["threads"], threads))
    runs[f["name"]][int(f["round"])] = float(f["seconds"])
    best[f["name"]] = min(best[f["name"]], float(f["best"]))
    info[f["name"]] = f
med = {k: statistics.median(v.values()) for k, v in runs.items()}
print("\n%-26s %-11s %10s %10s %10s %9s" % ("contender", "mode", "seconds", "best", "Melem/s",
                                              "maxdiff"))
for name in sorted(med, key=med.get):
    f = info[name]
    print("%-26s %-11s %10.4f %10.4f %10.2f %9s" % (name, f["mode"], med[name], best[name],
                                                    float(f["elements"]) / med[name] * 1e-6,
                                                    f["maxdiff"]))
if "parex-auto" not in med:
    sys.exit(0)
auto = runs["parex-auto"]
print("\nratios time(contender) / time(parex-auto) (>= 1: parex AUTO as fast or faster):"
      " median ratio / median of per-round ratios")
for name in sorted(med, key=med.get):
    if name == "parex-auto":
        continue
    q = [runs[name][r] / auto[r] for r in runs[name] if r in auto]
    print("  %-26s %6.3f / %6.3f" % (name, med[name] / med["parex-auto"],
                                     statistics.median(q) if q else float("nan")))
others = {k: v for k, v in med.items() if k != "parex-auto"}
if others:
    top = min(others, key=others.get)
    r = others[top] / med["parex-auto"]
    print("\nparex-auto vs the best other (%s): %.3f (target >= 1.0%s)"
          % (top, r, "" if r >= 1.0 else ", MISSED"))
    top_b = min((k for k in best if k != "parex-auto"), key=best.get)
    print("fastest assemblies (min of every run, for a loaded machine): parex-auto %.4f s,"
          " best other %s %.4f s, ratio %.3f" % (best["parex-auto"], top_b, best[top_b],
                                                 best[top_b] / best["parex-auto"]))
PY
