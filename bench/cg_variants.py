#!/usr/bin/env python3
"""bench/cg_variants.py - does one synchronization point fewer per CG iteration help the
oversubscribed rows? (issue 15; bench/RESULTS.md, session 12)

Runs bench_cg_bsp's three loops, --cg plain (two MPI_Allreduce an iteration), pipelined
(Ghysels-Vanroose: one blocking allreduce of two sums) and pipelined-nb (that allreduce as an
MPI_Iallreduce waited for after the halo exchange and the SpMV), on the 4-rank rows of
bench/run_dcg.sh (weak 32^3 a rank, 4x1 and 4x2; bcsstk16 METIS parts, 4x1) and one row that
is not oversubscribed (weak 2x1), with run_dcg.sh's launch options and environment for each
row, fixed iterations (below convergence: pipelined CG breaks down on rounding noise past it),
the three variants interleaved and their order rotated every round.
Prints min and median seconds per iteration and the median halo and allreduce times.

  python3 bench/cg_variants.py BUILD [ROUNDS]    (BUILD: a build with bench_cg_bsp; ROUNDS 5)
"""
import os
import statistics
import sys

from dcg_launch import oversubscribed, run_json

here = os.path.dirname(os.path.abspath(__file__))
build = sys.argv[1] if len(sys.argv) > 1 else "build-rel"
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
bsp = os.path.join(build, "bench", "bench_cg_bsp")
matrix = os.path.join(here, "..", "..", "shared", "data", "matrices", "bcsstk16.mtx")
rows = [("weak 4x1", 4, 1, ["--grid", "32", "--iters", "80"]),
        ("weak 4x2", 4, 2, ["--grid", "32", "--iters", "80"]),
        ("bcsstk16 4x1", 4, 1, ["--matrix", matrix, "--partition", "metis", "--iters", "300"]),
        ("weak 2x1", 2, 1, ["--grid", "32", "--iters", "70"])]
variants = ["plain", "pipelined", "pipelined-nb"]



res = {}
for r in range(rounds):
    for name, p, t, args in rows:
        for v in variants[r % 3:] + variants[:r % 3]:
            res.setdefault((name, v), []).append(
                run_json(p, t, [bsp, "--cg", v, "--json"] + args))
print("| row | oversubscribed | --cg | min ms | median ms | halo ms | allreduce ms |")
print("|---|---|---|---:|---:|---:|---:|")
for name, p, t, _ in rows:
    for v in variants:
        ds = res[(name, v)]
        med = lambda k: statistics.median(d[k] for d in ds) * 1e3
        print("| %s | %s | %s | %.3f | %.3f | %.3f | %.3f |" % (
            name, "yes" if oversubscribed(p, t) else "no", v,
            min(d["seconds_per_iter"] for d in ds) * 1e3, med("seconds_per_iter"),
            med("halo_seconds_per_iter"), med("allreduce_seconds_per_iter")))
print("\n%d rounds, %s" % (rounds, " ".join(["python3", "bench/cg_variants.py"] + sys.argv[1:])))
