#!/bin/sh
# bench/cholesky_trace.sh - run parex-cholesky under PX_PROFILE and summarize the timeline:
# per worker, the share of the factorization span spent inside tile ops (what the engine's
# scheduling leaves idle is the rest), and the median duration of each op kind.
#
#   bench/cholesky_trace.sh [BUILD_DIR] [N] [TILE] [WORKERS] [TRACE_FILE]
#   defaults:                build        4096 256   2         cholesky_trace.json
set -eu
build=${1:-build}
n=${2:-4096}
tile=${3:-256}
workers=${4:-2}
trace=${5:-cholesky_trace.json}
OPENBLAS_NUM_THREADS=1 PX_PROFILE=$trace "$build/examples/cholesky/parex-cholesky" \
    --n "$n" --tile "$tile" --workers "$workers" --residual none
python3 - "$trace" <<'PY'
import collections, json, statistics, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
names = {e["tid"]: e["args"]["name"] for e in events if e.get("ph") == "M"}
ops = [e for e in events if e.get("ph") == "X" and e["name"] in ("potrf", "trsm", "syrk", "gemm")]
t0 = min(e["ts"] for e in ops)
t1 = max(e["ts"] + e["dur"] for e in ops)
busy = collections.defaultdict(float)
dur = collections.defaultdict(list)
for e in ops:
    busy[names.get(e["tid"], e["tid"])] += e["dur"]
    dur[e["name"]].append(e["dur"])
print("trace %s: factorization span %.1f ms, %d tile ops" % (sys.argv[1], (t1 - t0) / 1e3, len(ops)))
for w in sorted(busy, key=str):
    print("  worker %-14s busy %5.1f%% of the span" % (w, 100.0 * busy[w] / (t1 - t0)))
for k in ("potrf", "trsm", "syrk", "gemm"):
    if dur[k]:
        print("  %-5s x%-4d median %7.0f us" % (k, len(dur[k]), statistics.median(dur[k])))
PY
