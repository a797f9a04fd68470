#!/usr/bin/env bash
# bench/run_dcg.sh - issue 15's distributed-CG benchmark: parex-cg (halo messages as engine
# ops, interior SpMV overlapping them) against bench_cg_bsp (the same partition, blocking halo
# exchange, MPI_Allreduce), on RANKS x THREADS, weak and strong scaling, interleaved: one
# process per measurement, the pair's order alternating from one round and configuration to
# the next (on these VMs the first program of a back-to-back pair runs slower; bench/bench_cg.c),
# then the MPI ping-pong and allreduce latencies and the model (bench/cg_model.py).
# Calibration of the model's compute term, in every round beside the measured rows: K
# independent single-rank solves of a row's local box started together in the row's launch
# configuration (mpirun options, binding, environment), no communication between them
# (bench_cg_bsp --independent: one mpirun, a barrier; parex-cg: K mpirun -np 1 jobs bound by
# taskset as mpirun binds the row's ranks, waiting for each other, told the row's local rank
# count, in the row's code path: the shared-memory solver for 1-rank rows, --engine graph for
# the others), K = P for a row of P ranks x T threads (oversubscribed rows too: the
# calibration time-shares the cores as the row does) and K = min(P, cores / T) (the fallback
# and the analytic time-sharing check); K = 1 is the 1-rank row's own command line and
# stopping rule. The single-rank rate while K such ranks load the node (the slowest
# instance's time per iteration; bench/cg_model.py --calibration, minimum over rounds of rows
# and calibrations alike: --stat). Oversubscribed rows of P > 1 ranks (all of them with
# SYNC=all) also get a synchronized calibration: the row's launch solving P copies of the box as
# one block-diagonal system (bench/hpcg_mtx.py, --partition block: no halo, the allreduces over
# all P ranks).
# Smoke test (about 1 minute): WEAK_GRID=16 STRONG_GRID=16 MATRICES= CAL_ITERS=100
#   DATA=/tmp/d.txt CALIB=/tmp/c.txt PINGPONG=/tmp/p.txt ENGINE=/tmp/e.txt OUT=/tmp/r.md
#   bench/run_dcg.sh build-rel 1
# Tables only (no measuring: the model and tables again from DATA, CALIB, PINGPONG, ENGINE):
#   TABLES_ONLY=1 bench/run_dcg.sh [BUILD_DIR]
#
# Usage (from the repository root): bench/run_dcg.sh [BUILD_DIR [ROUNDS]]
#   BUILD_DIR   has bench/bench_cg_bsp and bench/bench_pingpong (default build/release)
#   ROUNDS      default 5
# Environment:
#   PAREX_CG=PATH      parex-cg to measure (default BUILD_DIR/examples/cg/parex-cg). When it does
#                      not run distributed (mpirun -np 2 gives no "ranks": 2 in its JSON) the
#                      script says so and measures its single-rank rows only.
#   RANKS="1 2 4"  THREADS="1 2"   ranks and OpenMP / parex threads per rank
#   WEAK_GRID=32       weak scaling: N^3 points per rank (parex-cg --grid N, bench_cg_bsp --grid N,
#                      HPCG's process grid)
#   STRONG_GRID=32     strong scaling: the global G^3 problem, cut into contiguous row blocks
#                      (z-slabs, procs 1x1xP; G must be divisible by every P): both programs
#                      --matrix (a Matrix Market file of the HPCG G^3 matrix, written once)
#                      --partition block (examples/cg/partition.c's cgp_from_csr in both)
#   MATRICES=FILES     Matrix Market files run as fixed problems on every RANKS x THREADS, both
#                      programs with --matrix FILE --partition PARTITION (default: bcsstk16 of
#                      ../shared/data/matrices when present; empty: none); not in the model
#   PARTITION=metis    block or metis, for MATRICES
#   SCALINGS="weak strong"
#   ITERS=             empty: both solve to --tol 1e-8 (iteration counts compared); K: exactly K
#                      iterations (bench_cg_bsp --iters K, parex-cg --max-iters K --tol 1e-300)
#   NET_LATENCY_US=1.5 NET_BANDWIDTH_GBS=12   the assumed interconnect of the model's second
#                      projection (empty: on-node parameters only)
#   PROJECT_GRID=      N per rank of the model's projection (default: WEAK_GRID)
#   DATA=bench/dcg_data.txt  PINGPONG=bench/dcg_pingpong.txt  OUT=bench/dcg_results.md
#   CALIB=bench/dcg_calib.txt  the calibration runs (JSON lines: impl, instances, threads,
#                      local, synchronized, oversubscribed, result with the slowest instance's
#                      seconds_per_iter and, independent ones, every instance's
#                      instance_seconds_per_iter)
#   MODEL_STAT=min     the statistic over rounds of the model's comparison (cg_model.py --stat:
#                      min, median or lower-half; the table prints the median's error beside)
#   CAL_ITERS=rows     iterations of calibration solves of K > 1 instances, fixed (their loops
#                      overlap whatever their start-up): "rows" (default), as many as the row of
#                      K ranks on the same local box took in the same round (or any round; 400
#                      without one), so that its first iteration weighs in the calibration as in
#                      the row; or a number (sessions up to 24: 400; past convergence the
#                      residual must stay clear of denormals: the HPCG 32x32x8 box is at relres
#                      1e-108 after 400). Session 25: parex-cg's first iteration of 32^3 a rank
#                      on 2 ranks takes about 2 ms more than a steady one (its first interior
#                      SpMV 1.7 ms against 0.39), 27 us an iteration over the row's 74 and 5
#                      over 400: the 2-rank rows were 24-26 % off the model with 400.
#   ENGINE=bench/dcg_engine.txt  the engine's per-op cost for the model: bench_engine's chain of
#                      empty ops (--only chain, PX_ENGINE_INLINE_NS=0 so that every op is handed
#                      to a worker, T workers pinned to T cores with taskset, as a bound rank of
#                      T threads), one JSON line per T of THREADS (skipped if bench_engine is not
#                      built), and bench_engine_pingpong's line (2 ranks bound to a core each,
#                      PX_ENGINE_INLINE_NS=0: the engine's extra time per MPI message and its op
#                      round trip); without both files' lines the model has no engine term
#   SYNC=oversubscribed  which rows of P > 1 ranks get the synchronized calibration (and the
#                      model's compute term from it, cg_model.py --sync): oversubscribed ones,
#                      or "all" (ranks on cores of their own meet at every allreduce too)
#   BENCH_PREFIX="nice -n -19"   prefix of every measured mpirun
# Binding: where ranks x threads <= cores each rank gets its own THREADS cores (mpirun --map-by
# slot:PE=T --bind-to core, threads bound close inside); more one-thread ranks than cores:
# --oversubscribe --map-by core --bind-to core:overload-allowed (each rank on one core, cores
# shared); otherwise mpirun --oversubscribe --bind-to none --mca mpi_yield_when_idle 1, OMP_WAIT_POLICY=passive (libgomp's spinning
# threads otherwise take the cores from the other ranks: 100x slower), and the row is
# labelled oversubscribed.
# Output: the raw JSON lines in DATA, a markdown table (parex/bsp ratio per row, halo share of the
# bulk-synchronous iteration, overlap fraction, the issue's target) and the model's tables in OUT
# and on stdout, ready for bench/RESULTS.md.
# shellcheck disable=SC2086,SC2206,SC2016  # $prefix and the option strings are split into words on purpose; the sh -c scripts expand in that shell
set -euo pipefail
sync=${SYNC:-oversubscribed}
case "$sync" in oversubscribed | all) ;; *)
  echo "run_dcg.sh: SYNC must be oversubscribed or all, not '$sync'" >&2
  exit 2
  ;;
esac
build=${1:-build/release}
rounds=${2:-5}
parex_cg=${PAREX_CG:-$build/examples/cg/parex-cg}
ranks_list=${RANKS:-"1 2 4"}
threads_list=${THREADS:-"1 2"}
weak_grid=${WEAK_GRID:-32}
strong_grid=${STRONG_GRID:-32}
scalings=${SCALINGS:-"weak strong"}
partition=${PARTITION:-metis}
iters=${ITERS:-}
net_lat=${NET_LATENCY_US-1.5}
net_bw=${NET_BANDWIDTH_GBS-12}
data=${DATA:-bench/dcg_data.txt}
pp=${PINGPONG:-bench/dcg_pingpong.txt}
engine_out=${ENGINE:-bench/dcg_engine.txt}
out=${OUT:-bench/dcg_results.md}
calib=${CALIB:-bench/dcg_calib.txt}
cal_iters=${CAL_ITERS:-rows}
case "$cal_iters" in rows | [1-9] | [1-9][0-9]*) ;; *)
  echo "run_dcg.sh: CAL_ITERS must be rows or a positive number, not '$cal_iters'" >&2
  exit 2
  ;;
esac
prefix=${BENCH_PREFIX:-}
here=$(cd "$(dirname "$0")" && pwd)
bsp=$build/bench/bench_cg_bsp
pingpong=$build/bench/bench_pingpong
bench_engine=$build/bench/bench_engine
engine_pp=$build/bench/bench_engine_pingpong
cores=$(nproc)
# ---- tables ---------------------------------------------------------------------------------------
# tables: the comparison and scaling tables of $data and the model (cg_model.py), into $out.
tables() {
{
  python3 - "$data" "$cores" <<'PY'
import collections, json, statistics, sys
rows = collections.defaultdict(lambda: collections.defaultdict(dict))
for line in open(sys.argv[1]):
    if line.startswith("{"):
        d = json.loads(line)
        local = tuple(d["local"]) if d.get("local") else (d["matrix"],)
        procs = tuple(d["procs"]) if d.get("procs") else (d["partition"],)
        key = (d["scaling"], d["ranks"], d["threads"], local, procs, d["oversubscribed"])
        rows[key][d["impl"]][d["round"]] = d["result"]
med = lambda v: statistics.median(v) if v else float("nan")
spi = lambda runs: med([r["seconds_per_iter"] for r in runs.values()])
print("## Distributed CG: parex-cg vs bulk-synchronous MPI+OpenMP (bench/run_dcg.sh)\n")
nr = len({r for v in rows.values() for runs in v.values() for r in runs})
print("%d rounds in %s. Medians over rounds;" % (nr, sys.argv[1]), end=" ")
print("ratio = parex / bsp time per iteration (ratio of the medians, then "
      "the median of the per-round ratios); halo % = the bulk-synchronous halo exchange's share "
      "of its iteration; target (issue 15): parex <= 0.9x bsp where halo % >= 10.\n")
print("| scaling | ranks x threads | local | procs | iterations parex/bsp | parex ms | bsp ms |"
      " ratio | per-round | bsp halo % | bsp allreduce % | parex overlap | target | oversubscribed |")
print("|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|")
order = sorted(rows, key=lambda k: (k[0] != "weak", k[0], k[3] if k[0] == "matrix" else (),
                                     k[2], k[1]))
for key in order:
    scaling, p, t, local, procs, over = key
    px, bs = rows[key].get("parex", {}), rows[key].get("bsp", {})
    it = lambda runs: "/".join(sorted({str(r["iterations"]) for r in runs.values()})) or "-"
    tp, tb = spi(px), spi(bs)
    ratio = tp / tb if px and bs else float("nan")
    per = med([px[r]["seconds_per_iter"] / bs[r]["seconds_per_iter"] for r in px if r in bs])
    halo = med([r["halo_seconds_per_iter"] / r["seconds_per_iter"] for r in bs.values()]) * 100
    ar = med([r["allreduce_seconds_per_iter"] / r["seconds_per_iter"] for r in bs.values()]) * 100
    ov = [r["overlap"] for r in px.values() if r.get("overlap") is not None]
    ovs = "%.2f" % med(ov) if ov else "-"
    if not (px and bs) or p == 1:
        target = "-"
    elif halo >= 10:
        target = "met" if ratio <= 0.9 else "MISSED"
    else:
        target = "n/a (halo < 10%)"
    f = lambda x, fmt: "-" if x != x else fmt % x
    print("| %s | %dx%d | %s | %s | %s / %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
        scaling, p, t, "x".join(map(str, local)), "x".join(map(str, procs)), it(px), it(bs),
        f(tp * 1e3, "%.3f"), f(tb * 1e3, "%.3f"), f(ratio, "%.3f"), f(per, "%.3f"),
        f(halo, "%.1f"), f(ar, "%.1f"), ovs, target, "yes" if over else ""))
print("\n### Scaling (weak: efficiency t(1)/t(P); strong and matrix: speedup t(1)/t(P); same "
      "threads per rank)\n")
ranks = sorted({k[1] for k in rows})
print("| scaling | impl | threads | " + " | ".join("P=%d" % p for p in ranks) + " |")
print("|---|---|---:|" + "---:|" * len(ranks))
series = lambda k: k[0] if k[0] != "matrix" else "matrix %s (%s)" % (k[3][0], k[4][0])
for name in sorted({series(k) for k in rows}, key=lambda s: (s != "weak", s)):
    for impl in ("parex", "bsp"):
        for t in sorted({k[2] for k in rows}):
            ts = {k[1]: spi(rows[k][impl]) for k in rows
                  if series(k) == name and k[2] == t and rows[k].get(impl)}
            if 1 not in ts:
                continue
            cells = ["%.2f%s" % (ts[1] / ts[p], "" if p * t <= int(sys.argv[2]) else "*")
                     if p in ts else "-" for p in ranks]
            print("| %s | %s | %d | %s |" % (name, impl, t, " | ".join(cells)))
print("\n\\* oversubscribed (more threads than cores)\n")
PY
  model_args=(--runs "$data" --pingpong "$pp" --cores "$cores" --stat "${MODEL_STAT:-min}"
    --sync "$sync")
  [ -s "$calib" ] && model_args+=(--calibration "$calib")
  [ -s "$engine_out" ] && model_args+=(--engine "$engine_out")
  [ -n "$net_lat" ] && [ -n "$net_bw" ] && model_args+=(--latency-us "$net_lat" --bandwidth-gbs "$net_bw")
  [ -n "${PROJECT_GRID:-}" ] && model_args+=(--project-grid "$PROJECT_GRID")
  python3 "$here/cg_model.py" "${model_args[@]}"
} | tee "$out"
}
if [ -n "${TABLES_ONLY:-}" ]; then
  for f in "$data" "$pp"; do [ -s "$f" ] || { echo "run_dcg.sh: TABLES_ONLY: $f is empty" >&2; exit 1; }; done
  tables
  exit 0
fi

# the model's own checks first: a broken model is found before the rounds, not after them
python3 "$here/cg_model.py" --self-test >&2 || exit 1
for f in "$bsp" "$pingpong"; do
  [ -x "$f" ] || { echo "run_dcg.sh: $f not built (needs MPI and OpenMP; bench/dcg.cmake)" >&2; exit 1; }
done
mpirun=(mpirun)
[ "$(id -u)" = 0 ] && mpirun+=(--allow-run-as-root) # CI and these VMs run as root
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

json_line() { grep '^{' | tail -1; }

# launch P T: the mpirun options and environment of P ranks x T threads, in $mpi_opts / $env_opts.
launch() {
  local p=$1 t=$2
  if ((p * t <= cores)); then
    over=false
    mpi_opts="--map-by slot:PE=$t --bind-to core"
    env_opts="OMP_NUM_THREADS=$t OMP_PROC_BIND=close OMP_PLACES=cores PX_NUM_THREADS=$t PX_BIND=close"
  elif ((t == 1)); then
    # More one-thread ranks than cores: each rank bound to one core, ranks sharing cores
    # (overload-allowed). A parex rank bound to one processor runs its ops and MPI progress on
    # the thread that waits (core/engine/calls.c); unbound it starts its engine workers and
    # progress thread on every core (bcsstk16 4x1: 3.4 ms/iteration unbound, 0.14-0.16 bound;
    # bench_cg_bsp 0.11 either way).
    over=true
    mpi_opts="--oversubscribe --map-by core --bind-to core:overload-allowed --mca mpi_yield_when_idle 1"
    env_opts="OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive PX_NUM_THREADS=1"
  else
    over=true
    mpi_opts="--oversubscribe --bind-to none --mca mpi_yield_when_idle 1"
    env_opts="OMP_NUM_THREADS=$t OMP_WAIT_POLICY=passive PX_NUM_THREADS=$t"
  fi
}

# ---- can parex-cg run distributed? --------------------------------------------------------------
parex_dist=false parex_ok=false parex_block=false dist_mode=graph
if [ -x "$parex_cg" ]; then
  parex_ok=true
  probe=$(timeout 120 "${mpirun[@]}" --oversubscribe --bind-to none -np 2 "$parex_cg" --grid 4 \
          --progress 0 --json 2>/dev/null | json_line || true)
  if grep -q '"ranks": *2' <<<"$probe"; then
    parex_dist=true
    # the engine mode of its P > 1 runs (graph or push), the code path of their calibration
    dist_mode=$(sed -n 's/.*"engine": *"\([a-z]*\)".*/\1/p' <<<"$probe")
  else
    echo "run_dcg.sh: $parex_cg does not run distributed (mpirun -np 2 gives no \"ranks\": 2" \
         "in its JSON): measuring its single-rank rows and the bulk-synchronous CG only" >&2
  fi
else
  echo "run_dcg.sh: $parex_cg not found (set PAREX_CG): measuring bench_cg_bsp only" >&2
fi

# ---- strong scaling: the global matrix as a Matrix Market file ---------------------------------
mtx=$work/hpcg-$strong_grid.mtx
if [[ " $scalings " == *" strong "* ]]; then
  for p in $ranks_list; do
    ((strong_grid % p == 0)) || { echo "run_dcg.sh: STRONG_GRID=$strong_grid is not divisible by $p ranks" >&2; exit 1; }
  done
  python3 "$here/hpcg_mtx.py" "$strong_grid" "$strong_grid" "$strong_grid" 1 "$mtx"
fi
# Can parex-cg solve a matrix file cut into row blocks on 2 ranks (strong scaling's rows and the
# synchronized calibrations)? Probed on a small two-block matrix.
if $parex_dist; then
  python3 "$here/hpcg_mtx.py" 4 4 4 2 "$work/probe.mtx"
  probe=$(timeout 120 "${mpirun[@]}" --oversubscribe --bind-to none -np 2 "$parex_cg" \
          --matrix "$work/probe.mtx" --partition block --progress 0 --json 2>/dev/null \
          | json_line || true)
  if grep -q '"ranks": *2' <<<"$probe"; then
    parex_block=true
  else
    echo "run_dcg.sh: $parex_cg --matrix --partition block does not run on 2 ranks: strong" \
         "scaling and the synchronized calibrations measure bench_cg_bsp only (and parex-cg" \
         "on 1 rank)" >&2
  fi
fi

# ---- the configurations ---------------------------------------------------------------------------
# One line each: "scaling ranks threads local(nx,ny,nz) procs(px,py,pz)".
configs=()
default_mtx=$here/../../shared/data/matrices/bcsstk16.mtx
[ -r "$default_mtx" ] || default_mtx=""
for f in ${MATRICES-$default_mtx}; do
  [ -r "$f" ] || { echo "run_dcg.sh: $f not readable" >&2; exit 1; }
  for p in $ranks_list; do
    for t in $threads_list; do configs+=("matrix $p $t $f $partition"); done
  done
done
for s in $scalings; do
  for p in $ranks_list; do
    if [ "$s" = weak ]; then
      procs=$(python3 -B -c "import sys; sys.path.insert(0, '$here'); import cg_model; print(','.join(map(str, cg_model.hpcg_shape($p))))")
      local_box="$weak_grid,$weak_grid,$weak_grid"
    else
      procs="1,1,$p"
      local_box="$strong_grid,$strong_grid,$((strong_grid / p))"
    fi
    for t in $threads_list; do configs+=("$s $p $t $local_box $procs"); done
  done
done

if [ -n "$iters" ]; then
  bsp_stop="--iters $iters" parex_stop="--max-iters $iters --tol 1e-300"
else
  bsp_stop="--tol 1e-8" parex_stop="--tol 1e-8"
fi

# measure IMPL CONFIG ROUND: one process, one JSON record appended to $data.
measure() {
  local impl=$1 round=$3 s p t box procs res args
  read -r s p t box procs <<<"$2"
  launch "$p" "$t"
  if [ "$s" = matrix ]; then # box: the file, procs: the partition
    if [ "$impl" = bsp ]; then
      args=("$bsp" --matrix "$box" --partition "$procs" $bsp_stop --json)
    else
      args=("$parex_cg" --space threads --progress 0 --matrix "$box" $parex_stop --json)
      [ "$p" -gt 1 ] && args+=(--partition "$procs")
    fi
  elif [ "$impl" = bsp ] && [ "$s" = weak ]; then
    args=("$bsp" --local "$box" --procs "$procs" $bsp_stop --json)
  elif [ "$impl" = bsp ]; then
    args=("$bsp" --matrix "$mtx" --partition block $bsp_stop --json)
  elif [ "$s" = weak ]; then
    args=("$parex_cg" --space threads --progress 0 --grid "${box%%,*}" $parex_stop --json)
  else
    args=("$parex_cg" --space threads --progress 0 --matrix "$mtx" $parex_stop --json)
    [ "$p" -gt 1 ] && args+=(--partition block)
  fi
  if [ "$impl" = parex ] && ! $parex_dist; then
    res=$(env $env_opts $prefix "${args[@]}" 2>/dev/null | json_line || true)
  else
    res=$(env $env_opts $prefix "${mpirun[@]}" $mpi_opts -np "$p" "${args[@]}" 2>/dev/null \
          | json_line || true)
  fi
  [ -n "$res" ] || { echo "run_dcg.sh: $impl ($2) gave no JSON" >&2; return 1; }
  if [ "$s" = matrix ]; then
    printf '{"round": %d, "impl": "%s", "scaling": "matrix", "ranks": %d, "threads": %d, "local": null, "procs": null, "matrix": "%s", "partition": "%s", "oversubscribed": %s, "result": %s}\n' \
      "$round" "$impl" "$p" "$t" "$(basename "$box")" "$procs" "$over" "$res" | tee -a "$data" >&2
    return 0
  fi
  printf '{"round": %d, "impl": "%s", "scaling": "%s", "ranks": %d, "threads": %d, "local": [%s], "procs": [%s], "oversubscribed": %s, "result": %s}\n' \
    "$round" "$impl" "$s" "$p" "$t" "$box" "$procs" "$over" "$res" | tee -a "$data" >&2
}

# parex_runs CONFIG: does parex-cg run this configuration?
parex_runs() {
  local s p t box procs
  read -r s p t box procs <<<"$1"
  $parex_ok || return 1
  ((p == 1)) && return 0
  $parex_dist || return 1
  [ "$s" = weak ] || [ "$s" = matrix ] || $parex_block
}

# ---- calibration: K single-rank solves of a row's box, launched together ----------------------
# One line each: "impl box threads instances mode how" (box NX,NY,NZ). A row of P ranks x T
# threads needs K = min(P, cores / T) (and K = P where P T > cores, as a cross-check); parex's
# mode is the code path of the row: "none" (the shared-memory solver parex-cg runs on one rank)
# for P = 1, the probe's engine mode (graph: examples/cg/dcg.c through the engine) for P > 1;
# the projection needs bsp's box at K = cores / T. how: "indep", K independent solves; "sync"
# (oversubscribed rows of P > 1 ranks), the row's P ranks solving the block-diagonal matrix of
# P copies of the box (bench/hpcg_mtx.py) cut into P row blocks: no halo, but every dot product
# an allreduce over the P ranks, which meet there as the row's do. On time-shared cores a rank
# that waits there waits for one descheduled behind another rank's kernel: bsp 4x1 weak, 4
# rounds, min 1.03 ms per iteration independent, 1.45 synchronized, 1.57 the row.
calibs=()
add_calib() { [[ " ${calibs[*]/%/;} " == *" $1; "* ]] || calibs+=("$1"); }
for s in $scalings; do
  for p in $ranks_list; do
    if [ "$s" = weak ]; then box="$weak_grid,$weak_grid,$weak_grid"; else box="$strong_grid,$strong_grid,$((strong_grid / p))"; fi
    for t in $threads_list; do
      kfit=$((cores / t)); ((kfit >= 1)) || kfit=1
      pmode=$( ((p == 1)) && echo none || echo "${dist_mode:-graph}")
      for k in $((p < kfit ? p : kfit)) $p; do
        add_calib "bsp $box $t $k - indep"
        if $parex_ok && { ((p == 1)) || $parex_dist; }; then add_calib "parex $box $t $k $pmode indep"; fi
      done
      if [ "$s" = weak ]; then add_calib "bsp $box $t $kfit - indep"; fi
      if ((p > 1)) && { ((p * t > cores)) || [ "$sync" = all ]; }; then
        add_calib "bsp $box $t $p - sync"
        if $parex_block; then add_calib "parex $box $t $p $pmode sync"; fi
      fi
    done
  done
done

# row_iters BOX K ROUND: the iterations of a measured row of K ranks on the local box BOX
# (NX,NY,NZ) in $data, that round's first, else any round's; 400 without one.
row_iters() {
  python3 - "$data" "$1" "$2" "$3" <<'PY'
import json, sys
path, box, k, rnd = sys.argv[1], [int(v) for v in sys.argv[2].split(",")], int(sys.argv[3]), int(sys.argv[4])
found = {}
for line in open(path):
    try:
        r = json.loads(line)
    except ValueError:
        continue
    it = (r.get("result") or {}).get("iterations")
    if r.get("local") == box and r.get("ranks") == k and it:
        found.setdefault(r.get("round"), it)
print(found.get(rnd) or next(iter(found.values()), 400))
PY
}

# calibrate "IMPL BOX T K MODE HOW" ROUND: K instances started together (HOW sync: K ranks of one
# block-diagonal solve), one JSON record appended to $calib (result: the slowest instance's,
# with every instance's seconds per iteration; a synchronized solve's slowest rank's).
# The launch is the row's: mpirun's options and environment of K ranks x T threads (launch);
# K = 1 is the 1-rank row's very command line and stopping rule (a second, independent sample
# of it, taken in the same round); K > 1 runs fixed iterations (CAL_ITERS: by default the
# row's, row_iters) so that the instances' loops overlap whatever their start-up.
calibrate() {
  local impl box t k mode how round=$2 res i gate aff stop_b stop_p bd n pids=() yield=()
  read -r impl box t k mode how <<<"$1"
  launch "$k" "$t"
  n=$cal_iters
  [ "$n" != rows ] || n=$(row_iters "$box" "$k" "$round")
  if ((k == 1)); then stop_b=$bsp_stop stop_p=$parex_stop
  else stop_b="--iters $n" stop_p="--max-iters $n --tol 1e-300"; fi
  # The problem: the row's box, solved once per instance (bsp --independent: MPI_COMM_SELF),
  # or with HOW sync the K-block matrix of the box (written once), one block a rank.
  local prob_b=(--independent --local "$box") prob_p=(--grid "${box//,/x}")
  if [ "$how" = sync ]; then
    bd=$work/blocks-${box//,/x}-$k.mtx
    [ -s "$bd" ] || python3 "$here/hpcg_mtx.py" ${box//,/ } "$k" "$bd"
    prob_b=(--matrix "$bd" --partition block) prob_p=("${prob_b[@]}")
  fi
  if [ "$impl" = bsp ]; then
    # one mpirun, the rows' binding, the loops started together after a barrier
    res=$(env $env_opts $prefix "${mpirun[@]}" $mpi_opts -np "$k" "$bsp" "${prob_b[@]}" \
          $stop_b --json 2>/dev/null | json_line || true)
  elif ((k == 1)) || [ "$how" = sync ]; then
    res=$(env $env_opts $prefix "${mpirun[@]}" $mpi_opts -np "$k" "$parex_cg" --space threads \
          --progress 0 --engine "$mode" "${prob_p[@]}" $stop_p --json 2>/dev/null \
          | json_line || true)
    [ -z "$res" ] || [ "$how" = sync ] || res=$(python3 -c 'import json, sys; r = json.loads(sys.argv[1])
r.update(instances=1, instance_seconds_per_iter=[r["seconds_per_iter"]]); print(json.dumps(r))' "$res")
  else
    # K one-rank jobs (mpirun -np 1 each: MPI initialized as in the rows, dcg's engine path
    # for mode graph), bound by taskset as mpirun binds the rows' ranks; each waits for the
    # others (a file each in $gate) before it starts parex-cg, and sees the K ranks of the
    # row in OMPI_COMM_WORLD_LOCAL_SIZE (mpirun -np 1 says 1), so that parex applies the node
    # rule of core/oversub.h as in the row (R x T > cores: passive waits, threads unbound).
    # Exit status 3 (not converged: the fixed iterations run past tol 1e-300) is no failure.
    # The wait is bounded (60 s): an instance whose mpirun failed to start (seen once in
    # session 16, four mpiruns launched at once) would otherwise leave the others waiting
    # forever. Then the calibration gives no JSON, says why, and the round goes on.
    gate=$(mktemp -d -p "$work")
    [[ " $mpi_opts " == *" mpi_yield_when_idle 1 "* ]] && yield=(--mca mpi_yield_when_idle 1)
    for ((i = 0; i < k; i++)); do
      if ((k * t <= cores)); then aff=(taskset -c "$((i * t))-$((i * t + t - 1))")
      elif ((t == 1)); then aff=(taskset -c "$((i % cores))")
      else aff=(); fi
      env $env_opts $prefix "${aff[@]}" "${mpirun[@]}" -np 1 --bind-to none "${yield[@]}" \
        sh -c 'g=$1 k=$2 n=0; : >"$g/r$3"; shift 3; export OMPI_COMM_WORLD_LOCAL_SIZE=$k
         while [ "$(ls "$g" | wc -l)" -lt "$k" ]; do
           n=$((n + 1)); [ "$n" -lt 12000 ] || { echo "waited 60 s for the other instances" >&2; exit 1; }
           sleep 0.005; done; exec "$@"' \
        sh "$gate" "$k" "$i" "$parex_cg" --space threads --progress 0 --engine "$mode" \
        "${prob_p[@]}" $stop_p --json >"$gate.out$i" 2>"$gate.err$i" &
      pids+=($!)
    done
    wait "${pids[@]}" || true
    res=$(cat "$gate".out* | python3 -c '
import json, sys
runs = [json.loads(l) for l in sys.stdin if l.startswith("{")]
if len(runs) == int(sys.argv[1]):
    per = [r["seconds_per_iter"] for r in runs]
    slow = max(runs, key=lambda r: r["seconds_per_iter"])
    slow.update(instances=len(runs), instance_seconds_per_iter=per)
    print(json.dumps(slow))' "$k" || true)
  fi
  if [ -z "$res" ]; then
    echo "run_dcg.sh: calibration ($1) gave no JSON" >&2
    [ -z "${gate:-}" ] || tail -n 3 "$gate".err* >&2 2>/dev/null
    return 1
  fi
  printf '{"round": %d, "calibration": true, "impl": "%s", "instances": %d, "threads": %d, "local": [%s], "engine": "%s", "synchronized": %s, "oversubscribed": %s, "result": %s}\n' \
    "$round" "$impl" "$k" "$t" "$box" "$mode" "$([ "$how" = sync ] && echo true || echo false)" \
    "$over" "$res" | tee -a "$calib" >&2
}

# ---- ping-pong and allreduce ----------------------------------------------------------------------
: >"$pp"
echo "run_dcg.sh: ping-pong (2 ranks) and allreduce (2..4 ranks)" >&2
$prefix "${mpirun[@]}" -np 2 "$pingpong" --json | tee -a "$pp" >&2
for p in 3 4; do
  # in the launch configuration of a row of p one-thread ranks (oversubscribed: ranks sharing
  # cores with mpi_yield_when_idle, the model's allreduce on time-shared cores)
  launch "$p" 1
  env $env_opts $prefix "${mpirun[@]}" $mpi_opts -np "$p" "$pingpong" --allreduce-only --json \
    | tee -a "$pp" >&2
done

# ---- the engine's per-op cost (the model's engine term) -------------------------------------------
: >"$engine_out"
if [ -x "$bench_engine" ]; then
  echo "run_dcg.sh: engine per-op cost (bench_engine chain, T workers on T cores)" >&2
  for t in $threads_list; do
    ((t <= cores)) || continue
    res=$(PX_ENGINE_INLINE_NS=0 $prefix taskset -c "0-$((t - 1))" "$bench_engine" --only chain \
          --workers "$t" --ops 20000 --reps 5 --no-starpu --no-omp --no-graph 2>/dev/null \
          | sed -n 's/^RESULT .*impl=parex_push .*ns_per_task=\([0-9.eE+-]*\).*/\1/p' | tail -1)
    [ -n "$res" ] || { echo "run_dcg.sh: bench_engine gave no RESULT line for $t worker(s)" >&2; continue; }
    printf '{"engine_op": {"threads": %d, "ns_per_op": %s, "source": "PX_ENGINE_INLINE_NS=0 taskset -c 0-%d bench_engine --only chain --workers %d --ops 20000 --reps 5"}}\n' \
      "$t" "$res" "$((t - 1))" "$t" | tee -a "$engine_out" >&2
  done
else
  echo "run_dcg.sh: $bench_engine not built: the model has no measured per-op cost" >&2
fi
if [ -x "$engine_pp" ] && ((cores >= 2)); then
  echo "run_dcg.sh: engine per-message cost (bench_engine_pingpong, 2 ranks x 1 core)" >&2
  res=$(PX_ENGINE_INLINE_NS=0 PX_NUM_THREADS=1 PX_BIND=close $prefix "${mpirun[@]}" -np 2 \
        --map-by slot:PE=1 --bind-to core "$engine_pp" --json 2>/dev/null | json_line || true)
  if [ -n "$res" ]; then
    echo "${res%\}}, \"source\": \"PX_ENGINE_INLINE_NS=0 mpirun -np 2 --map-by slot:PE=1 --bind-to core bench_engine_pingpong\"}" \
      | tee -a "$engine_out" >&2
  else
    echo "run_dcg.sh: bench_engine_pingpong gave no JSON: no per-message engine cost" >&2
  fi
else
  echo "run_dcg.sh: $engine_pp not built or fewer than 2 cores: no per-message engine cost" >&2
fi

# ---- the rounds -----------------------------------------------------------------------------------
: >"$data"
: >"$calib"
echo "run_dcg.sh: $rounds rounds, ${#configs[@]} configurations and ${#calibs[@]} calibrations" \
     "($cal_iters iterations a solve of K > 1), $cores cores, parex-cg" \
     "$parex_cg (distributed: $parex_dist); load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for ((r = 0; r < rounds; r++)); do
  # the configurations in a new order each round (seeded by the round: reproducible), so that
  # no row always follows the same one (session 9: weak bsp 1x2 ran 0.29-0.31 ms in all 5 rounds,
  # the same command 0.19 ms as its calibration and as strong bsp 1x2 placed elsewhere)
  mapfile -t perm < <(python3 -c 'import random, sys; n, r = map(int, sys.argv[1:]); p = list(range(n)); random.Random(r).shuffle(p); print("\n".join(map(str, p)))' "${#configs[@]}" "$r")
  for ((c = 0; c < ${#configs[@]}; c++)); do
    cfg=${configs[${perm[$c]}]}
    if parex_runs "$cfg"; then
      if (((r + c) % 2 == 0)); then order=(parex bsp); else order=(bsp parex); fi
    else
      order=(bsp)
    fi
    for impl in "${order[@]}"; do measure "$impl" "$cfg" "$r" || true; done
  done
  # the calibrations, forwards in even rounds and backwards in odd ones
  for ((c = 0; c < ${#calibs[@]}; c++)); do
    ((r % 2 == 0)) && i=$c || i=$((${#calibs[@]} - 1 - c))
    calibrate "${calibs[$i]}" "$r" || true
  done
done
echo "run_dcg.sh: load average at end $(cut -d' ' -f1-3 /proc/loadavg); raw lines in $data," \
     "calibration in $calib, ping-pong in $pp" >&2

tables
echo "run_dcg.sh: tables in $out; ${SECONDS} s in all" >&2
