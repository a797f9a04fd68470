#!/usr/bin/env bash
# bench/compare_builds.sh - old against new build of parex in one run (issue 12, "Measure"):
# the same benchmark programs built from two revisions, run alternately (old first in even
# rounds, new first in odd ones: the first program of a back-to-back pair runs slower on these
# VMs), one process per measurement; prints old, new and new/old medians per metric.
#
# Usage (anywhere in the repository): bench/compare_builds.sh OLD_REV NEW [ROUNDS]
#   OLD_REV  a git revision, built in a temporary git worktree (e.g. 7b9a688)
#   NEW      a build directory (has CMakeCache.txt; its targets are built in place), a source
#            tree (has CMakeLists.txt; built into the work directory) or a git revision
#   ROUNDS   default 5
# Environment:
#   WORK=DIR          keep worktrees and builds in DIR and reuse them on the next call (default:
#                     a temporary directory, removed at exit)
#   THREADS_LIST="1 2 4"  thread counts of the latency and triad metrics
#   BENCH_PREFIX="nice -n -19"  prefix of every measured command
#   CHOL_N=2048 CHOL_TILE=256 CG_GRID=64   problem sizes
#   DATA=bench/compare_data.txt   raw values, one line "round metric old|new value" each
#   METRICS="m1 m2 ..."   only these metrics (names below), e.g. the engine rows alone
# Builds: Release, no CUDA, no MPI, no tests (examples and bench on: parex-cg and
# parex-cholesky are examples); only the four targets below are built.
#
# Metrics (each one value per process; the median over ROUNDS is printed):
#   empty_for_us@P, reduce_us@P  parex latency of an empty parallel_for over 2 indices / a
#                     reduce over 2 doubles, P threads (bench_threads --only empty_for_2|reduce_2,
#                     median of its 3 rounds; the parex column of its DATA line), lower is better
#   triad_gbs@P       STREAM triad over 2^24 doubles (bench_threads --only triad_2^24), higher
#   idle_cpu_ms       process CPU over 1 s idle after 20,000 launches, 2 threads (bench_threads
#                     --only idle: how bench/RESULTS.md "## Threads" measured it), lower
#   engine_{chain,independent}_ns[_noinline]  engine ns per empty op, 2 workers (bench_engine
#                     --only DAG --no-starpu --no-omp --reps 3; _noinline: PX_ENGINE_INLINE_NS=0),
#                     lower
#   cg_ms_per_iter, cg_min_iter_ms  parex-cg --grid 64 --space threads (2 threads, bound close):
#                     seconds_per_iter and min_iter_seconds, lower
#   cholesky_gflops   parex-cholesky --n 2048 --tile 256 --workers 2, higher
# Only flags that exist at 7b9a688 are used, so any later revision can be compared with it.
# shellcheck disable=SC2086  # $prefix (BENCH_PREFIX) is split into words on purpose
set -euo pipefail
old_rev=${1:?usage: bench/compare_builds.sh OLD_REV NEW_BUILD_DIR|NEW_SOURCE|NEW_REV [ROUNDS]}
new=${2:?usage: bench/compare_builds.sh OLD_REV NEW_BUILD_DIR|NEW_SOURCE|NEW_REV [ROUNDS]}
rounds=${3:-5}
threads_list=${THREADS_LIST:-"1 2 4"}
prefix=${BENCH_PREFIX:-}
chol_n=${CHOL_N:-2048} chol_tile=${CHOL_TILE:-256} cg_grid=${CG_GRID:-64}
root=$(git rev-parse --show-toplevel)
targets=(bench_threads bench_engine parex-cg parex-cholesky)

worktrees=()
if [ -n "${WORK:-}" ]; then
  work=$(mkdir -p "$WORK" && cd "$WORK" && pwd)
else
  work=$(mktemp -d)
fi
cleanup() {
  for w in "${worktrees[@]}"; do git -C "$root" worktree remove --force "$w" 2>/dev/null || true; done
  [ -n "${WORK:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

# checkout REV NAME: a detached worktree of REV at $work/NAME (reused when WORK is set), in
# $co_dir.
checkout() {
  co_dir=$work/$2
  if [ ! -f "$co_dir/CMakeLists.txt" ]; then
    git -C "$root" worktree add --detach "$co_dir" "$1" >/dev/null
  fi
  [ -n "${WORK:-}" ] || worktrees+=("$co_dir")
}

# build SOURCE BUILD_DIR: configure (once) and build the measured targets.
build() {
  local src=$1 dir=$2
  if [ ! -f "$dir/CMakeCache.txt" ]; then
    cmake -S "$src" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPX_ENABLE_CUDA=OFF \
      -DPX_ENABLE_MPI=OFF -DPX_BUILD_TESTS=OFF -DPX_BUILD_EXAMPLES=ON -DPX_BUILD_BENCH=ON \
      >"$dir.configure.log" 2>&1 || { tail -20 "$dir.configure.log"; exit 1; }
  fi
  cmake --build "$dir" -j"$(nproc)" --target "${targets[@]}" >"$dir.build.log" 2>&1 \
    || { tail -30 "$dir.build.log"; exit 1; }
}

echo "compare_builds.sh: building $old_rev (old) in $work" >&2
checkout "$old_rev" old
old_src=$co_dir
build "$old_src" "$work/old-build"
old_dir=$work/old-build
if [ -f "$new/CMakeCache.txt" ]; then
  new_dir=$(cd "$new" && pwd)
  echo "compare_builds.sh: building the targets in $new_dir (new)" >&2
  cmake --build "$new_dir" -j"$(nproc)" --target "${targets[@]}" >"$work/new-build.build.log" 2>&1 \
    || { tail -30 "$work/new-build.build.log"; exit 1; }
elif [ -f "$new/CMakeLists.txt" ]; then
  echo "compare_builds.sh: building source tree $new (new) in $work/new-build" >&2
  build "$(cd "$new" && pwd)" "$work/new-build"
  new_dir=$work/new-build
else
  echo "compare_builds.sh: building $new (new) in $work" >&2
  checkout "$new" new
  build "$co_dir" "$work/new-build"
  new_dir=$work/new-build
fi
for d in "$old_dir" "$new_dir"; do
  for f in bench/bench_threads bench/bench_engine examples/cg/parex-cg \
           examples/cholesky/parex-cholesky; do
    [ -x "$d/$f" ] || { echo "compare_builds.sh: $d/$f was not built" >&2; exit 1; }
  done
done

# measure METRIC BUILD_DIR: run one process, print one number.
json_num() { sed -n "s/.*\"$1\": *\([-0-9.eE+]*\).*/\1/p" | tail -1; }
measure() {
  local m=$1 b=$2 p v
  case $m in
    empty_for_us@* | reduce_us@* | triad_gbs@*)
      p=${m#*@}
      local name log2n=16
      case $m in
        empty*) name=empty_for_2 ;;
        reduce*) name=reduce_2 ;;
        *) name='triad_2^24' log2n=24 ;;
      esac
      v=$(OMP_PROC_BIND=close OMP_PLACES=cores PX_NUM_THREADS=$p $prefix \
          "$b/bench/bench_threads" --rounds 3 --log2n $log2n --only "$name" \
          | awk -v n="$name" '$1 == "DATA" && $3 == n { print $4 }') ;;
    idle_cpu_ms)
      v=$(OMP_PROC_BIND=close OMP_PLACES=cores PX_NUM_THREADS=2 $prefix \
          "$b/bench/bench_threads" --log2n 16 --only idle \
          | awk '$1 == "DATA" && $3 == "idle_cpu_ms" { print $4 }') ;;
    engine_*)
      local dag=${m#engine_} inline_ns=()
      dag=${dag%_ns*}
      case $m in *_noinline) inline_ns=(PX_ENGINE_INLINE_NS=0) ;; esac
      v=$(env "${inline_ns[@]}" STARPU_SILENT=1 $prefix "$b/bench/bench_engine" --workers 2 \
          --reps 3 --only "$dag" --no-starpu --no-omp | awk -v d="$dag" '$1 == d { print $3 }') ;;
    cg_ms_per_iter | cg_min_iter_ms)
      local key=seconds_per_iter
      [ "$m" = cg_min_iter_ms ] && key=min_iter_seconds
      v=$(PX_NUM_THREADS=2 PX_BIND=close $prefix "$b/examples/cg/parex-cg" --space threads \
          --progress 0 --grid "$cg_grid" --json 2>/dev/null | json_num "$key")
      v=$(awk -v s="$v" 'BEGIN { if (s != "") printf "%.6g", s * 1e3 }') ;;
    cholesky_gflops)
      v=$(PX_NUM_THREADS=2 $prefix "$b/examples/cholesky/parex-cholesky" --n "$chol_n" \
          --tile "$chol_tile" --workers 2 --json 2>/dev/null | json_num gflops) ;;
  esac
  [ -n "$v" ] || { echo "compare_builds.sh: $m on $b gave no value" >&2; exit 1; }
  echo "$v"
}

metrics=()
for p in $threads_list; do metrics+=("empty_for_us@$p" "reduce_us@$p"); done
for p in $threads_list; do metrics+=("triad_gbs@$p"); done
metrics+=(idle_cpu_ms engine_chain_ns engine_independent_ns engine_chain_ns_noinline
          engine_independent_ns_noinline cg_ms_per_iter cg_min_iter_ms cholesky_gflops)
# METRICS="engine_chain_ns empty_for_us@1 ..." measures only those (same names as above).
if [ -n "${METRICS:-}" ]; then read -r -a metrics <<< "$METRICS"; fi
data=${DATA:-$root/bench/compare_data.txt}
: > "$data"
echo "compare_builds.sh: old $old_dir ($(git -C "$old_src" rev-parse --short HEAD)), new $new_dir;" \
     "$rounds rounds; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for ((r = 0; r < rounds; r++)); do
  # cg_min_iter_ms comes from the same kind of run as cg_ms_per_iter: measured separately
  # anyway, so every metric is one process and the order alternation applies to each.
  for m in "${metrics[@]}"; do
    if ((r % 2 == 0)); then order=(old new); else order=(new old); fi
    for which in "${order[@]}"; do
      if [ "$which" = old ]; then dir=$old_dir; else dir=$new_dir; fi
      v=$(measure "$m" "$dir")
      echo "$r $m $which $v" | tee -a "$data" >&2
    done
  done
done
echo "compare_builds.sh: load average at end $(cut -d' ' -f1-3 /proc/loadavg); raw values in" \
     "$data" >&2

python3 - "$data" "${metrics[@]}" <<'EOF'
import collections, statistics, sys
vals = collections.defaultdict(list)
for line in open(sys.argv[1]):
    r, m, which, v = line.split()
    vals[(m, which)].append(float(v))
higher = ("triad_gbs", "cholesky_gflops")
print("%-32s %12s %12s %9s  %s" % ("metric", "old median", "new median", "new/old", "better"))
for m in sys.argv[2:]:
    o, n = statistics.median(vals[(m, "old")]), statistics.median(vals[(m, "new")])
    ratio = n / o if o else float("nan")
    print("%-32s %12.4g %12.4g %9.3f  %s (range old %.4g-%.4g, new %.4g-%.4g)" %
          (m, o, n, ratio, "higher" if m.startswith(higher) else "lower",
           min(vals[(m, "old")]), max(vals[(m, "old")]), min(vals[(m, "new")]),
           max(vals[(m, "new")])))
EOF
