#!/usr/bin/env python3
"""bench/ab_parex_cg.py - two parex-cg runs against each other on distributed HPCG rows: two
binaries, or one binary with two sets of flags.

For each row (RANKS:THREADS:GRID, weak scaling: GRID^3 points a rank; or RANKS:THREADS:MATRIX,
a matrix of ../shared/data/matrices by name, e.g. 2:1:1138_bus, METIS parts) both solve under
run_dcg.sh's launch options and environment for that row (bound ranks where ranks x threads fit
the cores, else --oversubscribe with mpi_yield_when_idle), interleaved, the order alternated
every round (the first program of a pair runs slower on these VMs): to --tol 1e-8, or with
ITERS exactly ITERS iterations (--max-iters ITERS --tol 1e-300, for rows whose solves are too
short to time). Prints min and median milliseconds per iteration, the iterations and the
median overlap of each, and the ratio of the medians new / old.

OLD and NEW are a parex-cg binary, optionally followed by '::' and flags of its own; either
may be bench_cg_bsp instead (the bulk-synchronous baseline, run for ITERS iterations, which it
then needs).

  python3 bench/ab_parex_cg.py [--also SPEC]... OLD NEW ROUNDS ROWS [ITERS]

--also SPEC (repeatable) adds a third, fourth ... program to the rotation (the order rotates by
one every round), reported with its ratio to OLD as well: e.g. bench_cg_bsp as OLD, a parex-cg
before and after a change as NEW and --also, all measured in the same minutes.
  e.g. python3 bench/ab_parex_cg.py /tmp/parex-cg-old build-rel/examples/cg/parex-cg 7 \\
           4:1:32,2:1:32,4:2:32,2:2:32
       python3 bench/ab_parex_cg.py "build-rel/examples/cg/parex-cg::--interior-chunk 0" \\
           build-rel/examples/cg/parex-cg 10 2:1:32,2:1:48 200
       python3 bench/ab_parex_cg.py build-rel/bench/bench_cg_bsp \\
           "build-rel/examples/cg/parex-cg::--dots plain" 8 2:1:16,2:1:48 300
"""
import os
import statistics
import sys

from dcg_launch import oversubscribed, run_json

argv = sys.argv[1:]
also = []
while len(argv) >= 2 and argv[0] == "--also":
    also.append(argv[1])
    argv = argv[2:]
if len(argv) not in (4, 5):
    sys.exit(__doc__)
old, new, rounds, rows = argv[0], argv[1], int(argv[2]), argv[3]
iters = int(argv[4]) if len(argv) == 5 else 0
programs = [old, new] + also
if len(set(programs)) != len(programs):
    sys.exit("ab_parex_cg: the programs must differ (add flags to tell two runs of a binary apart)")
matrices = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data",
                        "matrices")


def parse_row(r):
    """(ranks, threads, grid or matrix name) of RANKS:THREADS:GRID|MATRIX."""
    p, t, g = r.split(":")
    if g.isdigit():
        return int(p), int(t), int(g)
    if not os.path.isfile(os.path.join(matrices, g + ".mtx")):
        sys.exit("ab_parex_cg: no matrix %s.mtx in %s" % (g, matrices))
    return int(p), int(t), g


def problem(grid):
    """The problem's arguments: an HPCG box of GRID^3 points a rank, or a matrix by name."""
    if isinstance(grid, int):
        return ["--grid", str(grid)]
    return ["--matrix", os.path.join(matrices, grid + ".mtx"), "--partition", "metis"]


def row_name(p, t, g):
    return "weak %dx%d, %d^3" % (p, t, g) if isinstance(g, int) else "%s %dx%d" % (g, p, t)


rows = [parse_row(r) for r in rows.split(",")]


def command(spec, grid):
    """The argv of run SPEC ('BINARY' or 'BINARY::FLAGS') on a row's problem (GRID)."""
    binary, _, flags = spec.partition("::")
    if os.path.basename(binary) == "bench_cg_bsp":
        if not iters:
            sys.exit("ab_parex_cg: bench_cg_bsp runs a fixed number of iterations: give ITERS")
        return [binary] + problem(grid) + ["--iters", str(iters), "--json"] + flags.split()
    argv = [binary, "--space", "threads", "--progress", "0"] + problem(grid) + ["--json"]
    if iters:
        argv += ["--max-iters", str(iters), "--tol", "1e-300"]
    return argv + flags.split()


res = {}
for r in range(rounds):
    for p, t, g in rows:
        k = r % len(programs)
        for x in programs[k:] + programs[:k]:
            res.setdefault((p, t, g, x), []).append(
                run_json(p, t, command(x, g), prefix=["nice", "-n", "-19"],
                         ok=(0, 3) if iters else (0,)))
labels = ["old", "new"] + ["also %d" % (i + 1) for i in range(len(also))]
print("| row | oversubscribed | run | iterations | min ms | median ms | median overlap | "
      "/ old |")
print("|---|---|---|---:|---:|---:|---:|---:|")
for p, t, g in rows:
    med = {}
    for x, label in zip(programs, labels):
        ds = res[(p, t, g, x)]
        s = [d["seconds_per_iter"] * 1e3 for d in ds]
        med[label] = statistics.median(s)
        ov = [d["overlap"] for d in ds if d.get("overlap") is not None]
        print("| %s | %s | %s | %d | %.4f | %.4f | %s | %s |" % (
            row_name(p, t, g), "yes" if oversubscribed(p, t) else "no", label,
            ds[0]["iterations"], min(s),
            med[label], "%.2f" % statistics.median(ov) if ov else "-",
            "%.3f" % (med[label] / med["old"]) if label != "old" else ""))
print("\n%d rounds: python3 bench/ab_parex_cg.py %s" % (rounds, " ".join(sys.argv[1:])))
