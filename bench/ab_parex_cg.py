#!/usr/bin/env python3
"""bench/ab_parex_cg.py - two parex-cg binaries against each other on distributed HPCG rows.

For each row (RANKS:THREADS:GRID, weak scaling: GRID^3 points a rank) both binaries solve to
--tol 1e-8 under run_dcg.sh's launch options and environment for that row (bound ranks where
ranks x threads fit the cores, else --oversubscribe with mpi_yield_when_idle), interleaved, the
order alternated every round (the first program of a pair runs slower on these VMs). Prints min
and median seconds per iteration, the iterations and the median overlap of each.

  python3 bench/ab_parex_cg.py OLD NEW ROUNDS ROWS
  e.g. python3 bench/ab_parex_cg.py /tmp/parex-cg-old build-rel/examples/cg/parex-cg 7 \\
           4:1:32,2:1:32,4:2:32,2:2:32
"""
import statistics
import sys

from dcg_launch import oversubscribed, run_json

if len(sys.argv) != 5:
    sys.exit(__doc__)
old, new, rounds, rows = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
rows = [tuple(int(v) for v in r.split(":")) for r in rows.split(",")]



res = {}
for r in range(rounds):
    for p, t, g in rows:
        for x in ([old, new] if r % 2 == 0 else [new, old]):
            argv = [x, "--space", "threads", "--progress", "0", "--grid", str(g), "--json"]
            res.setdefault((p, t, g, x), []).append(
                run_json(p, t, argv, prefix=["nice", "-n", "-19"]))
print("| row | oversubscribed | binary | iterations | min ms | median ms | median overlap |")
print("|---|---|---|---:|---:|---:|---:|")
for p, t, g in rows:
    for x, label in ((old, "old"), (new, "new")):
        ds = res[(p, t, g, x)]
        s = [d["seconds_per_iter"] * 1e3 for d in ds]
        ov = [d["overlap"] for d in ds if d.get("overlap") is not None]
        print("| weak %dx%d, %d^3 | %s | %s | %d | %.3f | %.3f | %s |" % (
            p, t, g, "yes" if oversubscribed(p, t) else "no", label, ds[0]["iterations"], min(s),
            statistics.median(s), "%.2f" % statistics.median(ov) if ov else "-"))
print("\n%d rounds: python3 bench/ab_parex_cg.py %s" % (rounds, " ".join(sys.argv[1:])))
